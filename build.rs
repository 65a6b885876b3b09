//! Joins the CUDA sources under kernels/ into the one translation unit that
//! NVRTC compiles at run time (NVRTC has no file system to resolve includes
//! from). No CUDA toolkit is needed to build the crate.

use std::path::Path;
use std::{env, fs};

/// In dependency order: each file may use what the ones before it define.
const KERNEL_FILES: [&str; 3] = [
    "kernels/keccak.cuh",
    "kernels/few_leaves.cu",
    "kernels/treehash.cu",
];

fn main() {
    let mut source = String::new();
    for file in KERNEL_FILES {
        println!("cargo::rerun-if-changed={file}");
        let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
        source.push_str(&format!("// ---- {file}\n#line 1 \"{file}\"\n{text}\n"));
    }
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("kernels.cu");
    fs::write(&out, source).unwrap_or_else(|e| panic!("writing {}: {e}", out.display()));
}
