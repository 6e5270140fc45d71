//! Test support shared by the integration tests (never shipped in the binary).
#![allow(dead_code)]

pub mod emulator;
pub mod live;
pub mod moto;
pub mod pty;
pub mod run_clm;
pub mod state;
pub mod test_site;

pub use live::cache_beside;
