#![no_main]
//! Fuzz target `selector`: see `trainlab_fuzz::selector`.

use libfuzzer_sys::{fuzz_target, Corpus};
use trainlab_fuzz::Verdict;

fuzz_target!(|data: &[u8]| -> Corpus {
    match trainlab_fuzz::selector(data) {
        Verdict::Ignored => Corpus::Reject,
        Verdict::Accepted | Verdict::Rejected(_) => Corpus::Keep,
    }
});
