#![no_main]
//! Fuzz target `shell`: see `trainlab_fuzz::shell`.

use libfuzzer_sys::{fuzz_target, Corpus};
use trainlab_fuzz::Verdict;

fuzz_target!(|data: &[u8]| -> Corpus {
    match trainlab_fuzz::shell(data) {
        Verdict::Ignored => Corpus::Reject,
        Verdict::Accepted | Verdict::Rejected(_) => Corpus::Keep,
    }
});
