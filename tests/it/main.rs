//! The integration tests, one binary (as ripgrep keeps `tests/tests.rs`): each module below was
//! its own test crate, and every one linked the whole library and compiled its own copy of the
//! support code. One binary compiles and links that once.
//!
//! The real-tool conformance suite (`tests/conformance.rs`) and the browser test of the HTML
//! scoreboard (`tests/browser/`, a package of its own) stay apart: `.ci/run` runs them as
//! their own steps.

// The example verifier of docs/adding-a-lab.md is written as it sits in src/labs/hello_gpu/
// (`crate::verify::…`, `crate::observe::…`); these re-exports make those paths resolve here.
pub use trainlab::{observe, verify};

#[path = "../support/mod.rs"]
mod support;

// The room helpers the grade tests share with `cargo bench --bench room`.
#[path = "../grade_support/room.rs"]
mod room;

mod adding_a_lab;
mod architecture;
mod bad_input;
mod catalog_lint;
mod cli_live;
mod cli_offline;
mod cli_writes;
mod client;
mod doctor_eks;
mod dry_run;
mod eks_capacity;
mod eks_doctor;
mod eks_drafts;
mod eks_token;
mod emulator;
mod expert_static;
mod fuzz_regressions;
mod grade;
mod grade_serve;
mod grader_rbac;
mod interrupt;
mod japanese;
mod kind_profile;
// Each lab's verifier tests: every file of tests/it/labs/ (nothing to add for a new lab).
mod labs;
mod newcomer;
mod params;
mod quiz_tty;
mod report_render;
mod room_follow;
mod room_run;
mod round_trip;
mod setup_eks;
mod setup_kind_live;
mod sources;
mod trainer_standin;
