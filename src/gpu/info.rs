//! What a GPU is, as found when it started.

use std::time::Duration;

/// What was found and how long starting it took.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GpuInfo {
    /// The device's CUDA ordinal (`--device`'s numbering).
    pub ordinal: usize,
    /// The device's name, as the driver gives it.
    pub name: String,
    /// The architecture the kernels were compiled for, e.g. `sm_90`.
    pub arch: String,
    /// The device's memory, in bytes.
    pub memory_bytes: usize,
    /// Driver initialisation, device count and context creation. (Kernels
    /// are compiled later, per algorithm, and charged to `Timings::compile`.)
    pub init: Duration,
}

impl GpuInfo {
    /// It as an engine sharing an input.
    pub(crate) fn engine_id(&self) -> crate::progress::EngineId {
        crate::progress::EngineId::Gpu(self.ordinal)
    }
}
