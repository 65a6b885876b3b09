//! Data already in GPU memory, hashed where it lies
//! ([`Hasher::hash_device`](crate::Hasher::hash_device)):
//! the leaf kernel reads the caller's device bytes in place, one launch per
//! span of up to [`LAUNCH_BYTES`], then the tree is reduced on the device as
//! for any other input (`reduce.rs`). Nothing is copied to the host but the
//! digest. The standard functions are device_standard.rs's, which takes
//! [`DeviceBytes`] and the wait for the producer's CUDA stream from here.
//!
//! Two cases copy on the device, never to the host: the blocks that hold
//! prefix bytes (the prefix comes from the host; the file's first bytes
//! complete those blocks in a small device buffer), and bytes whose address
//! is not a multiple of 8, which the kernels' 64-bit loads need: they are
//! copied device to device into an aligned buffer a span at a time.
//!
//! The memory must be in the device's primary context. CuPy, PyTorch and
//! Numba allocate there (the CUDA runtime uses the primary context), and so
//! does cudarc: `CudaContext::new(ordinal)` retains the primary context
//! (`cuDevicePrimaryCtxRetain`, cudarc 0.19's `safe/core.rs`), which is what
//! the backend opens. A pointer from another context is refused.

use std::ptr;

use cudarc::driver::{CudaSlice, DevicePtr, result, sys};

use crate::params::TreeParams;
use crate::timings::{Timings, timed};
use crate::tree::Dealing;

use super::LeafKernel;
use super::kernels::{TreeKernels, address};
use super::{Context, DeviceBytes, GpuBackend, GpuError, driver_present, reduce};

/// The most bytes one launch of the leaf kernel absorbs: each launch loads
/// and stores every leaf's state once (13 MB at H = 8), small beside a GiB,
/// so that launches of a GiB run at the kernel's own rate
/// (docs/decisions/0025-device-input-launches-of-1-gib.md;
/// docs/PERFORMANCE.md, "GPU").
const LAUNCH_BYTES: usize = 1 << 30;
/// Bytes copied at a time into the aligned buffer when the input's address
/// is not a multiple of 8.
const ALIGNED_SPAN_BYTES: usize = 256 << 20;

/// The GPU of this process's `open` that holds `bytes`, after the driver has
/// said they are device (or managed) memory, all in one allocation, of that
/// device's primary context. `first`, a started GPU, lends its context to
/// the pointer queries, which need a current one; empty input is `first`'s.
pub(crate) fn holder<'g>(
    first: &'g GpuBackend,
    bytes: &DeviceBytes,
    open: impl FnOnce(usize) -> Result<&'g GpuBackend, GpuError>,
) -> Result<&'g GpuBackend, GpuError> {
    if bytes.len == 0 {
        return Ok(first);
    }
    // Pointer queries need a current context (some drivers answer
    // CUDA_ERROR_INVALID_CONTEXT without one).
    first
        .ctx
        .bind_to_thread()
        .context("using the GPU's context")?;
    let residence = Residence::of(bytes)?;
    let gpu = open(residence.ordinal)
        .map_err(|e| GpuError::new(format!("the input is on GPU {}: {e}", residence.ordinal)))?;
    residence.check_context(gpu)?;
    Ok(gpu)
}

/// The address, length and CUDA stream of a cudarc slice or view, as
/// [`DeviceBytes`]: the slice's CUDA stream is made to wait for its last
/// write, where cudarc tracks them.
pub(crate) fn bytes_of<S: DevicePtr<u8>>(data: &S) -> DeviceBytes {
    let stream = data.stream();
    let (ptr, _read) = data.device_ptr(stream);
    DeviceBytes {
        ptr,
        len: data.len(),
        stream: Some(stream.cu_stream() as u64),
    }
}

/// Where the driver says a device address lies.
struct Residence {
    ordinal: usize,
    /// The context it was allocated in; null for memory of no one context
    /// (CUDA's stream-ordered pools, virtual memory management).
    context: sys::CUcontext,
}

impl Residence {
    /// Asks the driver about `bytes` (a context must be current): an error
    /// unless they are device or managed memory, all in one allocation
    /// (where the driver tells the allocation's range).
    fn of(bytes: &DeviceBytes) -> Result<Residence, GpuError> {
        use sys::CUpointer_attribute::*;
        let at = format!("address {:#x}", bytes.ptr);
        let memory_type = pointer_attribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE, bytes.ptr, 0u32)
            .map_err(|e| {
                GpuError::driver(&format!("{at} is not memory the CUDA driver knows"), e)
            })?;
        let managed = pointer_attribute(CU_POINTER_ATTRIBUTE_IS_MANAGED, bytes.ptr, 0u32)
            .context(&format!("asking where {at} lies"))?;
        if memory_type != sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32 && managed == 0 {
            return Err(GpuError::new(format!(
                "{at} is host memory, not device memory: hash it from the host"
            )));
        }
        let ordinal = pointer_attribute(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, bytes.ptr, 0i32)
            .context(&format!("asking which GPU holds {at}"))?;
        let context = pointer_attribute(CU_POINTER_ATTRIBUTE_CONTEXT, bytes.ptr, ptr::null_mut())
            .unwrap_or(ptr::null_mut());
        // The allocation's range, where the driver tells it (memory mapped
        // through the virtual memory API may not have one to tell).
        let range = pointer_attribute(CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, bytes.ptr, 0u64)
            .and_then(|start| {
                pointer_attribute(CU_POINTER_ATTRIBUTE_RANGE_SIZE, bytes.ptr, 0usize)
                    .map(|size| (start, size))
            });
        if let Ok((start, size)) = range {
            let end = bytes.ptr.checked_add(bytes.len as u64);
            if end.is_none_or(|end| end > start.saturating_add(size as u64)) {
                return Err(GpuError::new(format!(
                    "{at}: {} bytes run past the end of its allocation ({size} bytes from {start:#x})",
                    bytes.len
                )));
            }
        }
        Ok(Residence {
            ordinal: ordinal.max(0) as usize,
            context,
        })
    }

    /// An error unless the memory is `gpu`'s (its primary context's).
    fn check_context(&self, gpu: &GpuBackend) -> Result<(), GpuError> {
        if self.context.is_null() || self.context == gpu.ctx.cu_ctx() {
            return Ok(());
        }
        Err(GpuError::new(format!(
            "the input was allocated in a CUDA context other than GPU {}'s primary context, \
             which treehash (like CuPy and PyTorch) uses",
            self.ordinal
        )))
    }
}

/// One pointer attribute of `ptr`, written over `value`, which must be of
/// the type the driver writes for `attribute`.
fn pointer_attribute<T>(
    attribute: sys::CUpointer_attribute,
    ptr: u64,
    mut value: T,
) -> Result<T, result::DriverError> {
    // SAFETY: `value` is of the type the driver writes for `attribute`
    // (each caller names the type its attribute's documentation gives).
    unsafe { sys::cuPointerGetAttribute((&raw mut value).cast(), attribute, ptr) }.result()?;
    Ok(value)
}

/// The calling thread's current CUDA context, made current again when this
/// is dropped: hashing binds the GPU's context to the calling thread, and a
/// caller that uses CUDA itself (PyTorch, CuPy, through the runtime, which
/// takes the current context as its current device) must find its own.
pub struct KeepCurrentContext(Option<sys::CUcontext>);

impl KeepCurrentContext {
    /// Notes the current context (nothing when there is no driver, or it
    /// was never started).
    pub fn new() -> KeepCurrentContext {
        if !driver_present() {
            return KeepCurrentContext(None);
        }
        match result::ctx::get_current() {
            Ok(current) => KeepCurrentContext(Some(current.unwrap_or(ptr::null_mut()))),
            Err(_) => KeepCurrentContext(None),
        }
    }
}

impl Default for KeepCurrentContext {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for KeepCurrentContext {
    fn drop(&mut self) {
        if let Some(context) = self.0 {
            // SAFETY: `context` was current on this thread (or null, for
            // none); a context is destroyed only by its owner, which is
            // still using it on this thread.
            let _ = unsafe { result::ctx::set_current(context) };
        }
    }
}

/// The digest of `bytes` on `gpu`, which holds them, under an LI tree.
pub(crate) fn hash_tree(
    gpu: &GpuBackend,
    params: &TreeParams,
    bytes: &DeviceBytes,
    timings: &mut Timings,
) -> Result<Vec<u8>, GpuError> {
    gpu.ctx
        .bind_to_thread()
        .context("using the GPU's context")?;
    // First, on the calling thread: a per-thread default CUDA stream is its
    // own.
    if let Some(stream) = bytes.stream {
        wait_for(gpu, stream)?;
    }
    let (kernels, compile) = gpu.kernels.get(params.algorithm())?;
    timings.compile += compile;
    let mut leaves = DeviceLeaves::new(gpu, kernels, params)?;
    timed(&mut timings.leaves, || leaves.absorb_all(bytes))?;
    let DeviceLeaves {
        states,
        message_len,
        ..
    } = leaves;
    timed(&mut timings.reduce, || {
        reduce::finish_tree(gpu, kernels, params, &states, message_len)
    })
}

/// Makes the compute stream wait, on the device, for the work queued on
/// the CUDA stream `producer` so far.
pub(super) fn wait_for(gpu: &GpuBackend, producer: u64) -> Result<(), GpuError> {
    let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
        .context("creating an event")?;
    // SAFETY: `event` was just created in the current context, and
    // `producer` is a CUDA stream of that context (or one of the special
    // handles) as the caller said.
    let waited = unsafe {
        result::event::record(event, producer as sys::CUstream).and_then(|()| {
            result::stream::wait_event(
                gpu.compute.cu_stream(),
                event,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        })
    };
    // SAFETY: created above; a destroyed event still orders the waits
    // already queued on it.
    let _ = unsafe { result::event::destroy(event) };
    waited.context("waiting for the producer's CUDA stream")
}

/// The leaves of one tree on the device while the input's spans are
/// absorbed, all on the backend's compute stream (so each copy into the
/// aligned buffer follows the launch that read it before).
struct DeviceLeaves<'a> {
    gpu: &'a GpuBackend,
    kernels: &'a TreeKernels,
    params: &'a TreeParams,
    kernel: LeafKernel,
    /// Lane-major leaf states.
    states: CudaSlice<u64>,
    /// Bytes of M absorbed.
    message_len: u64,
}

impl<'a> DeviceLeaves<'a> {
    fn new(
        gpu: &'a GpuBackend,
        kernels: &'a TreeKernels,
        params: &'a TreeParams,
    ) -> Result<Self, GpuError> {
        let leaf_count = params.leaf_count();
        let states = gpu
            .compute
            .alloc_zeros::<u64>(25 * leaf_count as usize)
            .map_err(|e| GpuError::driver(&format!("allocating {leaf_count} leaf states"), e))?;
        Ok(DeviceLeaves {
            gpu,
            kernels,
            params,
            kernel: LeafKernel::for_leaves(leaf_count),
            states,
            message_len: 0,
        })
    }

    /// Absorbs M = P ‖ `bytes`: the blocks that hold prefix bytes from a
    /// small buffer, the rest in place, or through the aligned buffer.
    fn absorb_all(&mut self, bytes: &DeviceBytes) -> Result<(), GpuError> {
        let (prefix, block) = (self.params.prefix(), self.params.block_size());
        let mut from = 0;
        if !prefix.is_empty() {
            let head = prefix.len().next_multiple_of(block);
            let taken = (head - prefix.len()).min(bytes.len);
            let mut buffer = self.buffer(prefix.len() + taken)?;
            self.gpu
                .compute
                .memcpy_htod(prefix, &mut buffer.slice_mut(..prefix.len()))
                .context("copying the prefix to the device")?;
            let dst = address(&buffer, &self.gpu.compute) + prefix.len() as u64;
            self.copy(dst, bytes.ptr, taken)?;
            self.launch(address(&buffer, &self.gpu.compute), prefix.len() + taken)?;
            from = taken;
        }
        let (start, len) = (bytes.ptr + from as u64, bytes.len - from);
        if start.is_multiple_of(8) {
            let span = LAUNCH_BYTES / block * block;
            for at in (0..len).step_by(span.max(block)) {
                self.launch(start + at as u64, span.min(len - at))?;
            }
        } else if len > 0 {
            let span = (ALIGNED_SPAN_BYTES / block).max(1) * block;
            let buffer = self.buffer(span.min(len))?;
            let aligned = address(&buffer, &self.gpu.compute);
            for at in (0..len).step_by(span) {
                let n = span.min(len - at);
                self.copy(aligned, start + at as u64, n)?;
                self.launch(aligned, n)?;
            }
        }
        Ok(())
    }

    /// A device buffer of `len` bytes (at least one), freed in the compute
    /// stream's order when dropped.
    fn buffer(&self, len: usize) -> Result<CudaSlice<u8>, GpuError> {
        // SAFETY: every byte the kernels read is written first.
        unsafe { self.gpu.compute.alloc::<u8>(len.max(1)) }
            .map_err(|e| GpuError::driver(&format!("allocating {len} bytes on the device"), e))
    }

    /// Copies `len` bytes from `src` to `dst` on the device.
    fn copy(&self, dst: u64, src: u64, len: usize) -> Result<(), GpuError> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: `src` holds `len` readable bytes (the caller's input) and
        // `dst` a buffer of at least `len` bytes that this message owns.
        unsafe { result::memcpy_dtod_async(dst, src, len, self.gpu.compute.cu_stream()) }
            .context("copying on the device")
    }

    /// Absorbs the next `len` bytes of M, which lie at `span` (8-byte
    /// aligned): one launch of the leaf kernel.
    fn launch(&mut self, span: u64, len: usize) -> Result<(), GpuError> {
        if len == 0 {
            return Ok(());
        }
        let stream = &self.gpu.compute;
        let len = len as u64;
        let states = address(&self.states, stream);
        let dealing = Dealing::of(self.params);
        // SAFETY: `span` holds `len` readable bytes, 8-byte aligned: the
        // caller's input, valid for the whole call (which waits for the
        // digest), or a buffer of this message's, freed in the compute
        // stream's order after the launch; the states hold 25·L words.
        unsafe {
            self.kernels.absorb_span(
                stream,
                self.kernel,
                dealing,
                states,
                (span, len),
                self.message_len,
            )
        }?;
        self.message_len += len;
        Ok(())
    }
}
