//! The host side of the GPU pipeline (`gpu_host/bench.rs`: mapping,
//! pinning, staging and reader threads, without kernels), built where the
//! GPU backend is: Linux with the `gpu` feature (build.rs's `gpu_backend`).
//! Elsewhere (macOS) this says so and measures nothing.

#[cfg(gpu_backend)]
#[path = "gpu_host/bench.rs"]
mod bench;

fn main() {
    #[cfg(gpu_backend)]
    bench::main();
    #[cfg(not(gpu_backend))]
    println!("gpu_host: this build has no GPU backend (Linux with the `gpu` feature only)");
}
