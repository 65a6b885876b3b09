//! `cfg(treehash_test_cuda_driver)` for the tool's tests, as the library's
//! build.rs sets it for its own: the machine that builds the tests has a
//! CUDA driver (libcuda.so.1 in the dynamic linker's cache), so the tests
//! of a machine without one are listed as ignored there; where they run
//! and find a driver after all, they fail.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(treehash_test_cuda_driver)");
    let cache = ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]
        .iter()
        .find_map(|ldconfig| std::process::Command::new(ldconfig).arg("-p").output().ok());
    if cache.is_some_and(|out| String::from_utf8_lossy(&out.stdout).contains("libcuda.so.1")) {
        println!("cargo::rustc-cfg=treehash_test_cuda_driver");
    }
}
