#![no_main]
//! Fuzz target `observe`: see `trainlab_fuzz::observe`.

use libfuzzer_sys::{fuzz_target, Corpus};
use trainlab_fuzz::Verdict;

fuzz_target!(|data: &[u8]| -> Corpus {
    match trainlab_fuzz::observe(data) {
        Verdict::Ignored => Corpus::Reject,
        Verdict::Accepted | Verdict::Rejected(_) => Corpus::Keep,
    }
});
