//! The GPU benchmarks (`gpu/bench.rs`: the kernels on resident data, copy
//! rates, the pipeline's phases), built where the GPU backend is: Linux with
//! the `gpu` feature (build.rs's `gpu_backend`). Elsewhere (macOS) this
//! says so and measures nothing.

#[cfg(gpu_backend)]
#[path = "gpu/bench.rs"]
mod bench;

fn main() {
    #[cfg(gpu_backend)]
    bench::main();
    #[cfg(not(gpu_backend))]
    println!("gpu benchmark: this build has no GPU backend (Linux with the `gpu` feature only)");
}
