//! The GPU backend (CUDA through cudarc, loaded at run time): leaves absorbed
//! chunk by chunk as the input streams to the device, parent levels and root
//! reduced on the device, only the digest copied back.
//!
//! Nothing here may panic or abort whatever the driver does: every CUDA call's
//! error becomes a [`GpuError`] with context, and a missing driver or device is
//! reported before any CUDA call is made.

mod backend;
mod chunks;
mod device_input;
mod device_standard;
mod driver;
mod engine;
mod error;
mod fleet;
// Public, hidden, only for tests/kernels_compile.rs (another crate), which
// compiles the kernel source with NVRTC where there is no GPU.
#[doc(hidden)]
pub mod kernels;
/// Measurements of the device for the repository's benchmarks (benches/),
/// built with the `measure` feature only; not part of the library's API.
#[cfg(feature = "measure")]
#[doc(hidden)]
pub mod measure;
mod options;
mod pipeline;
mod reduce;

pub use backend::{GpuBackend, GpuInfo};
pub use device_input::{DeviceBytes, KeepCurrentContext};
pub(crate) use driver::check_device;
pub use driver::{NO_DRIVER, driver_present};
// Returned by the hidden modules above only; users see `HashError::Gpu`.
#[doc(hidden)]
pub use error::GpuError;
pub(crate) use error::{Context, guard};
pub(crate) use fleet::{Fleet, Start};
pub(crate) use kernels::KernelSet;
pub use options::{CopyMode, DEFAULT_CHUNK_BYTES, Devices};
// For the tests and benchmarks that force a leaf kernel
// (`HasherOptions::with_gpu_leaf_kernel`), no option of a user's.
#[doc(hidden)]
pub use options::{LeafKernel, WARP_PER_LEAF_MAX_LEAVES};
