//! Joins the CUDA sources under kernels/ into the translation units that
//! NVRTC compiles at run time (NVRTC has no file system to resolve includes
//! from): the LI kernels, and the standard functions' chunk kernel. No CUDA toolkit is needed to build the crate.
//!
//! Also says which SIMD paths the tests must test (see `simd_test_cfgs`).

use std::path::Path;
use std::{env, fs};

/// The LI kernels, in dependency order: each file may use what the ones
/// before it define.
const KERNEL_FILES: [&str; 4] = [
    "kernels/keccak.cuh",
    "kernels/tree.cuh",
    "kernels/few_leaves.cu",
    "kernels/treehash.cu",
];
/// The standard functions' chunk kernel, a translation unit of its own.
const CHUNK_KERNEL_FILES: [&str; 2] = ["kernels/keccak.cuh", "kernels/chunks.cu"];

fn main() {
    join_sources(&KERNEL_FILES, "kernels.cu");
    join_sources(&CHUNK_KERNEL_FILES, "chunk_kernels.cu");
    simd_test_cfgs();
    cuda_driver_cfg();
    gpu_backend_cfg();
}

/// Writes `files`, joined, to `name` in OUT_DIR.
fn join_sources(files: &[&str], name: &str) {
    let mut source = String::new();
    for file in files {
        println!("cargo::rerun-if-changed={file}");
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
        source.push_str(&format!("// ---- {file}\n#line 1 \"{file}\"\n{text}\n"));
    }
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join(name);
    fs::write(&out, source).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}

/// `cfg(gpu_backend)`: the GPU backend is compiled: the `gpu` feature is on
/// and the target is Linux, the only system with NVIDIA's CUDA driver that
/// cudarc loads. Elsewhere (macOS) the feature still builds, with `absent`
/// standing in: `auto` hashes on the CPU and asking for a GPU says why
/// there is none (docs/PLATFORMS.md).
fn gpu_backend_cfg() {
    println!("cargo::rustc-check-cfg=cfg(gpu_backend)");
    let gpu = env::var_os("CARGO_FEATURE_GPU").is_some();
    let linux = env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if gpu && linux {
        println!("cargo::rustc-cfg=gpu_backend");
    }
}

/// `cfg(treehash_test_cuda_driver)`: the machine that builds the tests has
/// a CUDA driver (libcuda.so.1 in the dynamic linker's cache), so the tests
/// of a machine without one are listed as ignored there; where they run
/// and find a driver after all, they fail.
fn cuda_driver_cfg() {
    println!("cargo::rustc-check-cfg=cfg(treehash_test_cuda_driver)");
    let cache = ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"]
        .iter()
        .find_map(|ldconfig| std::process::Command::new(ldconfig).arg("-p").output().ok());
    if cache.is_some_and(|out| String::from_utf8_lossy(&out.stdout).contains("libcuda.so.1")) {
        println!("cargo::rustc-cfg=treehash_test_cuda_driver");
    }
}

/// `cfg(treehash_test_avx2)`, `cfg(treehash_test_avx512)` and
/// `cfg(treehash_test_sha3)`: the tests of a SIMD path run in this build.
/// libtest can mark a test ignored only when it is compiled, so it is
/// decided here: a path's tests run where the target is the path's
/// architecture and the CPU that builds them has its feature (the CPU that
/// runs them, unless the test binaries are carried to another machine), or
/// where a variable requires them: `TREEHASH_REQUIRE_AVX2` (or `CI`),
/// `TREEHASH_REQUIRE_AVX512` and `TREEHASH_REQUIRE_SHA3` (aarch64, set by
/// scripts/ci-cross.sh). Elsewhere they are listed as ignored. A test that
/// runs on a CPU without its feature fails; none passes unchecked.
fn simd_test_cfgs() {
    const PATHS: [(&str, &str, &str, &[&str]); 3] = [
        (
            "treehash_test_avx2",
            "x86_64",
            "avx2",
            &["TREEHASH_REQUIRE_AVX2", "CI"],
        ),
        (
            "treehash_test_avx512",
            "x86_64",
            "avx512f",
            &["TREEHASH_REQUIRE_AVX512"],
        ),
        (
            "treehash_test_sha3",
            "aarch64",
            "sha3",
            &["TREEHASH_REQUIRE_SHA3"],
        ),
    ];
    let target_arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let native = env::var("HOST") == env::var("TARGET");
    for (cfg, arch, feature, required_by) in PATHS {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        for var in required_by {
            println!("cargo::rerun-if-env-changed={var}");
        }
        let required = required_by.iter().any(|var| env::var_os(var).is_some());
        if target_arch == arch && (required || (native && cpu_has(feature))) {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

/// Whether the CPU running this build script has `feature`.
fn cpu_has(feature: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match feature {
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            _ => false,
        }
    }
    #[cfg(target_arch = "aarch64")]
    {
        feature == "sha3" && std::arch::is_aarch64_feature_detected!("sha3")
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = feature;
        false
    }
}
