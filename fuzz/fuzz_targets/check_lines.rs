//! Any bytes as a check-file line, and lines written from drawn digests,
//! names and labels: every line reads back as what was written.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| treehash_fuzz::check_lines(data));
