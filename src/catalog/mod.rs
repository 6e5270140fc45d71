//! The lab catalog: lab files, their validation and their texts.

mod load;
mod model;
mod text;

pub use load::{parse_lab, Catalog, LabBundle, LabError, Survey, PROFILES};
pub use model::{Check, Choice, Choices, Lab, LabStatus, Note, Quiz, Stage, Task};
pub use text::{echo, fill, placeholders, printable, Lang, Text, Vars};
