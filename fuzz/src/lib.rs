//! The properties the fuzz targets check. They live in
//! tests/fuzz_properties/, which tests/fuzz_regressions.rs also runs on
//! stable Rust over the kept inputs: one definition for both.

#[path = "../../tests/fuzz_properties/mod.rs"]
mod properties;

pub use properties::*;

/// A folder of this process's own for the files `part_set` hashes: on
/// /dev/shm (memory) where there is one, so that an input costs no disk.
pub fn scratch_dir() -> std::path::PathBuf {
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!("treehash-fuzz-{}", std::process::id()))
}
