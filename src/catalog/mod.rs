//! The lab catalog: lab files, their validation and their texts.

mod load;
mod model;

pub use crate::text::{echo, fill, placeholders, printable, Lang, Text, Vars};
pub use load::{parse_lab, Catalog, LabBundle, LabError, Survey, UnknownLab, PROFILES};
pub use model::{Check, Choice, Choices, Lab, LabStatus, Note, Quiz, Stage, Task};
