//! Any text as a label, a function name and an algorithm: a label read
//! writes as text that reads as the same label and the same parameters.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| treehash_fuzz::labels(data));
