#![no_main]
//! Fuzz target `judge`: see `trainlab_fuzz::judge`.

use libfuzzer_sys::{fuzz_target, Corpus};
use trainlab_fuzz::Verdict;

fuzz_target!(|data: &[u8]| -> Corpus {
    match trainlab_fuzz::judge(data) {
        Verdict::Ignored => Corpus::Reject,
        Verdict::Accepted | Verdict::Rejected(_) => Corpus::Keep,
    }
});
