//! How much trainlab reads: `--max-input-mib` bounds the files of one command together
//! (`--files`, `--snapshot`) and each API answer; `--max-objects` bounds the objects read from
//! those files together and from any one LIST (all its pages). A 4 GB sparse file, a 200 MB
//! answer, a million tiny documents or a server that pages on forever is refused with the limit
//! named instead of being read into memory. Memory then stays within about
//! [`BYTES_PER_OBJECT`] × `--max-objects` plus a few times `--max-input-mib`.

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

/// The default `--max-objects`: a room of 1,000 learners holds about 120,000 objects across
/// every kind, fewer than 40,000 of any one; a lab's files hold tens.
pub const DEFAULT_MAX_OBJECTS: u64 = 100_000;

/// What one object costs while it is judged, at most (measured: 115,000 tiny ConfigMaps read
/// from one file took 295 MB at the peak, about 2.6 KB each).
pub const BYTES_PER_OBJECT: u64 = 3 * 1024;

static MAX_OBJECTS: AtomicU64 = AtomicU64::new(DEFAULT_MAX_OBJECTS);

/// Sets the object limit for the rest of the process (the CLI does, once, from `--max-objects`).
pub fn set_max_objects(n: u64) {
    MAX_OBJECTS.store(n, Ordering::Relaxed);
}

/// The most objects read from the files of one command together, or from one LIST.
pub fn max_objects() -> usize {
    usize::try_from(MAX_OBJECTS.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
}
