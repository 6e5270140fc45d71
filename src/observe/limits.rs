//! How much trainlab reads: `--max-input-mib` bounds the files of one command together
//! (`--files`, `--snapshot`) and each API answer; `--max-objects` bounds the objects read from
//! those files together and from any one LIST (all its pages). A 4 GB sparse file, a 200 MB
//! answer, a million tiny documents or a server that pages on forever is refused with the limit
//! named instead of being read into memory. Memory then stays within about
//! [`BYTES_PER_OBJECT`] × `--max-objects` plus a few times `--max-input-mib`.

/// The default: far above any lab's files or a LIST page of 500 objects, far below a machine's
/// memory.
pub const DEFAULT_MAX_INPUT_MIB: u64 = 64;

/// The default `--max-objects`: a room of 1,000 learners holds about 120,000 objects across
/// every kind, fewer than 40,000 of any one; a lab's files hold tens.
pub const DEFAULT_MAX_OBJECTS: u64 = 100_000;

/// What one object costs while it is judged, at most (measured: 115,000 tiny ConfigMaps read
/// from one file took 295 MB at the peak, about 2.6 KB each).
pub const BYTES_PER_OBJECT: u64 = 3 * 1024;

/// The bounds of one command, resolved once from `--max-input-mib` and `--max-objects` and
/// carried to what reads: the file sources ([`super::parse::Budget`]) and the cluster
/// connection (`cluster::ConnectOpts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes read from the files of one command together, and from one API answer.
    pub max_input_bytes: u64,
    /// The most objects read from the files of one command together, or from one LIST.
    pub max_objects: usize,
}

impl Limits {
    /// From the flags' values (MiB, objects).
    pub fn new(max_input_mib: u64, max_objects: u64) -> Limits {
        Limits {
            max_input_bytes: max_input_mib.saturating_mul(1024 * 1024),
            max_objects: usize::try_from(max_objects).unwrap_or(usize::MAX),
        }
    }

    /// `--max-input-mib` as given.
    pub fn max_input_mib(&self) -> u64 {
        self.max_input_bytes / (1024 * 1024)
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::new(DEFAULT_MAX_INPUT_MIB, DEFAULT_MAX_OBJECTS)
    }
}
