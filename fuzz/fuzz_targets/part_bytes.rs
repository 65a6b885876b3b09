//! Any bytes as a part, as they are and with a valid check value appended:
//! a part that is read writes back as the same bytes, and joins alone
//! exactly when it is a split of one.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| treehash_fuzz::part_bytes(data));
