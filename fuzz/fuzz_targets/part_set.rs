//! A small file split into parts, the set changed: a whole set joins to the
//! file's digest in any order, every other set is refused.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let scratch = treehash_fuzz::scratch_dir();
    std::fs::create_dir_all(&scratch).expect("the scratch folder is made");
    treehash_fuzz::part_set(data, &scratch);
    // Left behind only where an input fails.
    let _ = std::fs::remove_dir_all(&scratch);
});
