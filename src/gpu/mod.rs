//! The GPU backend (CUDA through cudarc, loaded at run time): leaves
//! absorbed transfer by transfer as the input is copied to the device,
//! parent levels and root reduced on the device, only the digest copied
//! back.
//!
//! Nothing here may panic or abort whatever the driver does: every CUDA call's
//! error becomes a [`GpuError`] with context, and a missing driver or device is
//! reported before any CUDA call is made.
//!
//! Built only with the `gpu` feature (on by default) on Linux (build.rs's
//! `cfg(gpu_backend)`). Without it, or on macOS, no CUDA binding is
//! compiled: `absent` stands in, with no GPU behind the same names, and
//! asking for one is an error that says why.

// Without CUDA: what a caller chooses, what a GPU is, what it is readied
// for, and the error type.
mod error;
mod info;
mod kernel_sets;
mod options;

#[cfg(not(gpu_backend))]
mod absent;

#[cfg(gpu_backend)]
mod backend;
#[cfg(gpu_backend)]
mod chunks;
#[cfg(gpu_backend)]
mod device_input;
#[cfg(gpu_backend)]
mod device_standard;
#[cfg(gpu_backend)]
mod driver;
#[cfg(gpu_backend)]
mod engine;
#[cfg(gpu_backend)]
mod fleet;
// Public, hidden, only for tests/kernels_compile.rs (another crate), which
// compiles the kernel source with NVRTC where there is no GPU.
#[cfg(gpu_backend)]
#[doc(hidden)]
pub mod kernels;
/// Measurements of the device for the repository's benchmarks (benches/),
/// built with the `measure` feature only; not part of the library's API.
#[cfg(all(gpu_backend, feature = "measure"))]
#[doc(hidden)]
pub mod measure;
#[cfg(gpu_backend)]
mod pipeline;
#[cfg(gpu_backend)]
mod reduce;

#[cfg(not(gpu_backend))]
pub(crate) use absent::Fleet;
#[cfg(not(gpu_backend))]
pub(crate) use absent::NO_DRIVER;
#[cfg(not(gpu_backend))]
pub use absent::{GpuBackend, driver_present};
// For the Python package, which hashes raw device pointers; not part of the API.
#[cfg(not(gpu_backend))]
#[doc(hidden)]
pub use absent::KeepCurrentContext;
#[cfg(gpu_backend)]
pub use backend::GpuBackend;
// For the Python package, which hashes raw device pointers; not part of the API.
#[cfg(gpu_backend)]
#[doc(hidden)]
pub use device_input::KeepCurrentContext;
#[cfg(gpu_backend)]
pub(crate) use device_input::{bytes_of, hash_tree, holder};
#[cfg(gpu_backend)]
pub(crate) use device_standard::hash_standard;
#[cfg(gpu_backend)]
pub(crate) use driver::NO_DRIVER;
#[cfg(gpu_backend)]
pub(crate) use driver::check_device;
#[cfg(gpu_backend)]
pub use driver::driver_present;
// Returned by the hidden modules above only; users see `HashError::Gpu`.
#[doc(hidden)]
pub use error::GpuError;
#[cfg(gpu_backend)]
pub(crate) use error::{Context, guard};
#[cfg(gpu_backend)]
pub(crate) use fleet::Fleet;
pub use info::GpuInfo;
pub(crate) use kernel_sets::KernelSet;
pub use options::{CopyMode, DeviceBytes, Devices};
pub(crate) use options::{SideBySide, Start};
// For the benchmarks; not part of the API.
#[doc(hidden)]
pub use options::DEFAULT_TRANSFER_BYTES;
// For the tests and benchmarks that force a leaf kernel
// (`HasherOptions::with_gpu_leaf_kernel`), no option of a user's.
#[doc(hidden)]
pub use options::{LeafKernel, WARP_PER_LEAF_MAX_LEAVES};
