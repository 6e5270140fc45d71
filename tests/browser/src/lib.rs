//! Nothing here: this package holds only the browser test of the HTML scoreboard
//! (`tests/scoreboard.rs`); a package needs a target of its own besides its tests.
