//! The lab catalog: lab files, their validation and their texts.

mod load;
mod model;

pub use crate::text::{echo, fill, placeholders, printable, Text, Vars};
pub use load::{
    draft_ja_path, parse_lab, AsWritten, Catalog, LabBundle, LabError, SiteFill, Survey,
    UnknownLab, PROFILES, SITE_TOKEN,
};
pub use model::{lab_namespace, Check, Choice, Choices, Lab, LabStatus, Note, Quiz, Stage, Task};
