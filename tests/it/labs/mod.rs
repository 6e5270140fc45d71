//! One module per lab, `tests/it/labs/<id_with_underscores>.rs`: every file in this folder is a
//! module (automod), so a new lab's tests need no line anywhere else.

automod::dir!("tests/it/labs");
