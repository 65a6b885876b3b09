//! Whether the CUDA driver and a device are there, asked before any other
//! CUDA call: cudarc panics on a missing library.

use std::sync::OnceLock;

use cudarc::driver::CudaContext;

use super::{Context, GpuError};

/// What every path says when the driver library cannot be loaded.
pub(crate) const NO_DRIVER: &str = "no CUDA driver found";

/// True when the CUDA driver library can be loaded (says nothing of devices).
/// Asked once per process: each answer costs a dlopen of libcuda.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen the library.
    *PRESENT.get_or_init(|| unsafe { cudarc::driver::sys::is_culib_present() })
}

/// An error unless the driver is there and has a device `ordinal`.
pub(crate) fn check_device(ordinal: usize) -> Result<(), GpuError> {
    if !driver_present() {
        return Err(GpuError::new(NO_DRIVER));
    }
    let count = CudaContext::device_count().context("looking for CUDA devices")?;
    if count <= 0 {
        return Err(GpuError::new("no CUDA device found"));
    }
    if ordinal >= count as usize {
        return Err(GpuError::new(format!(
            "there is no CUDA device {ordinal} (devices: 0 to {})",
            count - 1
        )));
    }
    Ok(())
}
