//! What a run produced, as the reporters consume it: the engine (`plan`, `grade`) fills these
//! types and `report` renders them, importing neither.

/// A `check` run: each lab's result, the server's verdict on the files, the exit code.
pub mod check;
/// What a board shows of a judged lab without its report.
pub mod glance;
/// A learner's judged labs, kept compactly until shown.
pub mod packed;
/// A graded room: every learner's labs, how the room was read, the exit code.
pub mod room;
