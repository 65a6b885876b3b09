//! The GPU backend of a build without it (no `gpu` feature, or not Linux:
//! no CUDA bindings):
//! the same names as the real one, with no GPU behind them. Asking for one
//! is an error that says so; `Auto` runs on the CPU. A `GpuBackend` cannot
//! exist, so whatever would run on one is unreachable, and the compiler
//! knows it.

use std::time::Duration;

use crate::engine::ChunkEngine;
use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::params::TreeParams;
use crate::sponge::SpongeSpec;
use crate::timings::Timings;

use super::GpuError;
use super::info::GpuInfo;
use super::kernel_sets::KernelSet;
use super::options::{CopyMode, Devices, LeafKernel, Start};

/// Why no GPU can be used: none is built in.
pub(crate) const NO_DRIVER: &str = if cfg!(target_os = "linux") {
    "GPU support is not built in (treehash was built without its `gpu` feature)"
} else {
    "GPU support is not built in (the GPU backend is built for Linux only)"
};

/// Always false: no CUDA driver is looked for.
pub fn driver_present() -> bool {
    false
}

/// The calling thread's current CUDA context kept: with no CUDA binding
/// there is none to keep.
#[derive(Default)]
pub struct KeepCurrentContext(());

impl KeepCurrentContext {
    /// Notes nothing: no context can be current.
    pub fn new() -> KeepCurrentContext {
        KeepCurrentContext(())
    }
}

/// A GPU, of which this build has none: the type has no values.
pub enum GpuBackend {}

impl GpuBackend {
    /// What this GPU is (there is none).
    pub fn info(&self) -> &GpuInfo {
        match *self {}
    }

    pub(crate) fn stream_handle(&self) -> u64 {
        match *self {}
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn begin_side_by_side<'a>(
        &'a self,
        _params: &'a TreeParams,
        _len_hint: Option<u64>,
        _place: super::SideBySide,
        _mode: CopyMode,
        _leaf_kernel: Option<LeafKernel>,
        _pool: &'a rayon::ThreadPool,
        _times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        match *self {}
    }

    pub(crate) fn begin<'a>(
        &'a self,
        _params: &'a TreeParams,
        _len_hint: Option<u64>,
        _mode: CopyMode,
        _leaf_kernel: Option<LeafKernel>,
        _pool: &'a rayon::ThreadPool,
        _times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        match *self {}
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn begin_at<'a>(
        &'a self,
        _params: &'a TreeParams,
        _message_len: u64,
        _piece_len: usize,
        _mode: CopyMode,
        _leaf_kernel: Option<LeafKernel>,
        _pool: &'a rayon::ThreadPool,
        _times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        match *self {}
    }

    pub(crate) fn begin_chunks<'a>(
        &'a self,
        _spec: &SpongeSpec,
        _chunk_len: usize,
        _mode: CopyMode,
        _piece_len: usize,
        _pool: &'a rayon::ThreadPool,
        _times: &mut Timings,
    ) -> Result<Box<dyn ChunkEngine + 'a>, HashError> {
        match *self {}
    }
}

/// The GPUs of one hasher: none.
pub(crate) struct Fleet;

impl Fleet {
    pub(crate) fn new(_devices: Devices, _start: Start) -> Fleet {
        Fleet
    }

    fn absent() -> GpuError {
        GpuError::new(NO_DRIVER)
    }

    pub(crate) fn open_first(&self) -> Result<&GpuBackend, GpuError> {
        Err(Self::absent())
    }

    pub(crate) fn open_now(&self) -> Result<Vec<&GpuBackend>, crate::error::HashError> {
        Err(Self::absent().into())
    }

    pub(crate) fn open_device(&self, _ordinal: usize) -> Result<&GpuBackend, GpuError> {
        Err(Self::absent())
    }

    pub(crate) fn start_in_background(&self, _kernels: impl Into<KernelSet>, _piece_len: usize) {}

    pub(crate) fn side_by_side<'f, T: Send>(
        &'f self,
        _most: Option<usize>,
        _begin: impl Fn(usize, usize, &'f GpuBackend) -> Result<T, crate::error::HashError> + Sync,
    ) -> Result<Vec<T>, crate::error::HashError> {
        Err(Self::absent().into())
    }

    pub(crate) fn prepare_now(&self, _kernels: impl Into<KernelSet>, _piece_len: usize) {}

    /// Why no GPU could be used: none was started, so no start failed.
    pub(crate) fn unavailable(&self) -> Option<String> {
        None
    }

    pub(crate) fn asked(&self) -> bool {
        false
    }

    /// Never used to decide anything: no GPU starts.
    pub(crate) fn expected_startup(&self) -> Duration {
        Duration::MAX
    }

    pub(crate) fn ready(&self, _kernels: impl Into<KernelSet>) -> Vec<(usize, &GpuBackend)> {
        Vec::new()
    }

    pub(crate) fn is_ready(&self, _ordinal: usize, _kernels: impl Into<KernelSet>) -> bool {
        false
    }

    pub(crate) fn ordinals_ready(&self) -> Vec<usize> {
        Vec::new()
    }

    pub(crate) fn failure(&self) -> Option<String> {
        None
    }
}
