//! How much trainlab reads from one input: one manifest or snapshot file, or one API answer.
//! A 4 GB sparse file or a 200 MB answer is refused with this limit named instead of being read
//! into memory whole. `--max-input-mib` raises it for the whole process.

use std::sync::atomic::{AtomicU64, Ordering};

/// The default: far above any lab's files or a LIST page of 500 objects, far below a machine's
/// memory.
pub const DEFAULT_MAX_INPUT_MIB: u64 = 64;

static MAX_INPUT_BYTES: AtomicU64 = AtomicU64::new(DEFAULT_MAX_INPUT_MIB * 1024 * 1024);

/// Sets the limit for the rest of the process (the CLI does, once, from `--max-input-mib`).
pub fn set_max_input_mib(mib: u64) {
    MAX_INPUT_BYTES.store(mib.saturating_mul(1024 * 1024), Ordering::Relaxed);
}

/// The most bytes read from one input.
pub fn max_input_bytes() -> u64 {
    MAX_INPUT_BYTES.load(Ordering::Relaxed)
}
