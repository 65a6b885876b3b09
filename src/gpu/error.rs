//! A GPU failure as an error with context: every CUDA call's result, and a
//! panic inside the bindings, which is caught. Without the GPU backend (no
//! `gpu` feature, or not Linux) only the error itself is left: why no GPU can be used.

#[cfg(gpu_backend)]
use std::panic::{AssertUnwindSafe, catch_unwind};

#[cfg(gpu_backend)]
use cudarc::driver::DriverError;

use crate::error::HashError;

/// A failure of the GPU backend, with what was being done.
#[derive(Debug, Clone)]
pub struct GpuError(String);

impl GpuError {
    pub(crate) fn new(message: impl Into<String>) -> GpuError {
        GpuError(message.into())
    }

    /// The driver's own words, for example `looking for CUDA devices: no
    /// CUDA-capable device is detected (CUDA_ERROR_NO_DEVICE)`.
    #[cfg(gpu_backend)]
    pub(crate) fn driver(what: &str, e: DriverError) -> GpuError {
        match e.error_string() {
            Ok(text) => GpuError(format!("{what}: {} ({:?})", text.to_string_lossy(), e.0)),
            Err(_) => GpuError(format!("{what}: {:?}", e.0)),
        }
    }
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<GpuError> for HashError {
    fn from(e: GpuError) -> HashError {
        HashError::Gpu(e.0)
    }
}

/// Adds context to a CUDA result.
#[cfg(gpu_backend)]
pub(crate) trait Context<T> {
    fn context(self, what: &str) -> Result<T, GpuError>;
}

#[cfg(gpu_backend)]
impl<T> Context<T> for Result<T, DriverError> {
    fn context(self, what: &str) -> Result<T, GpuError> {
        self.map_err(|e| GpuError::driver(what, e))
    }
}

/// Runs `f`, turning a panic inside cudarc (a driver symbol missing from an
/// old libcuda, say) into an error instead of a crash.
#[cfg(gpu_backend)]
pub(crate) fn guard<T, E: From<GpuError>>(
    what: &str,
    f: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(panic) => {
            let reason = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("unexpected failure in the CUDA bindings");
            Err(GpuError::new(format!("{what}: {reason}")).into())
        }
    }
}
