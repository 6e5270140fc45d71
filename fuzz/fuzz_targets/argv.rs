#![no_main]
//! Fuzz target `argv`: see `trainlab_fuzz::argv`.

use libfuzzer_sys::{fuzz_target, Corpus};
use trainlab_fuzz::Verdict;

fuzz_target!(|data: &[u8]| -> Corpus {
    match trainlab_fuzz::argv(data) {
        Verdict::Ignored => Corpus::Reject,
        Verdict::Accepted | Verdict::Rejected(_) => Corpus::Keep,
    }
});
