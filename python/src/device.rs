//! `device_digest`: an object in GPU memory (CuPy, PyTorch, Numba …),
//! hashed on the GPU where it lives, with no copy to the host. The object
//! is read through DLPack (`__dlpack__`, `__dlpack_device__`) where it has
//! it, else through `__cuda_array_interface__`. Both describe its bytes (an
//! address, a shape, strides and an item size); only contiguous bytes are
//! hashed, raw, whatever the item type.

use std::ffi::{CStr, c_void};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use treehash::gpu::DeviceBytes;
use treehash::{BackendChoice, HashError, Hasher, Params};

use crate::errors::hash_error;
use crate::objects::Digest;
use crate::options::{Args, hasher};

/// The digest of an object in GPU memory, computed on the GPU that holds it
/// without copying it to the host: any object with ``__dlpack__`` (a CUDA
/// device) or ``__cuda_array_interface__``. Its bytes must be contiguous (C
/// order); their item type does not matter (the raw bytes are hashed). Work
/// queued on the producer's CUDA stream is waited for on the device: DLPack
/// is handed the CUDA stream the hashing runs on, and the interface's
/// ``stream`` is waited for. Returns a :class:`Digest`, equal to the digest
/// of the same bytes hashed from the host. ``backend`` may be ``"auto"`` or
/// ``"gpu"`` (the same here). The object must not be written while it is
/// hashed. Raises ``ValueError`` for an object that is not contiguous or not
/// on a CUDA GPU, ``treehash.GpuError`` when the GPU fails. KT and
/// ParallelHash hash their chunks on the GPU in place; TurboSHAKE, one
/// sponge, is copied to the host in pieces and hashed there.
#[pyfunction]
#[pyo3(
    signature = (
        obj, *, algorithm = "sha3-256", height = None, degree = None, block_size = None,
        length = None, prefix = None, customization = None, domain = None, backend = "auto",
        threads = None
    ),
    text_signature = "(obj, *, algorithm='sha3-256', height=8, degree=4, block_size=None, \
                      length=None, prefix=None, customization=None, domain=None, \
                      backend='auto', threads=None)"
)]
#[allow(clippy::too_many_arguments)]
pub fn device_digest(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    algorithm: &str,
    height: Option<i64>,
    degree: Option<i64>,
    block_size: Option<i64>,
    length: Option<i64>,
    prefix: Option<&Bound<'_, PyAny>>,
    customization: Option<&Bound<'_, PyAny>>,
    domain: Option<i64>,
    backend: &str,
    threads: Option<i64>,
) -> PyResult<Digest> {
    let args = Args {
        algorithm,
        height,
        degree,
        block_size,
        length,
        prefix,
        customization,
        domain,
        backend,
        threads,
    };
    let options = args.options()?;
    if options.backend == BackendChoice::Cpu {
        return Err(PyValueError::new_err(
            "backend 'cpu': device_digest() hashes on the GPU that holds the data \
             (copy it to the host and use new() to hash it on the CPU)",
        ));
    }
    let hasher = hasher(BackendChoice::Gpu, options.threads)?;
    let params = &options.params;
    let has = |name| obj.hasattr(name);
    if has("__dlpack__")? && has("__dlpack_device__")? {
        return dlpack_digest(py, obj, &hasher, params);
    }
    if has("__cuda_array_interface__")? {
        let bytes = interface_bytes(&obj.getattr("__cuda_array_interface__")?)?;
        return hash(py, &hasher, params, bytes);
    }
    Err(PyTypeError::new_err(format!(
        "device_digest() needs an object in GPU memory, with __dlpack__ or \
         __cuda_array_interface__ (CuPy, PyTorch, Numba); got {}",
        obj.get_type().name()?
    )))
}

/// Hashes `bytes` with the GIL released.
fn hash(py: Python<'_>, hasher: &Hasher, params: &Params, bytes: DeviceBytes) -> PyResult<Digest> {
    // SAFETY: the caller holds the object that owns the memory (and, for
    // DLPack, its managed tensor) until this returns, which keeps it
    // allocated; not writing it meanwhile is the documented contract.
    let out = py.detach(|| unsafe { hasher.hash_device(params, bytes) });
    Ok(Digest::new(params, out.map_err(|e| hash_error(e, None))?))
}

/// The bytes a `__cuda_array_interface__` (version 2 or 3) describes.
fn interface_bytes(interface: &Bound<'_, PyAny>) -> PyResult<DeviceBytes> {
    let bad = |what: String| PyValueError::new_err(format!("__cuda_array_interface__: {what}"));
    let interface = interface
        .cast::<PyDict>()
        .map_err(|_| bad("not a dict".into()))?;
    let field = |name: &str| interface.get_item(name);
    let required = |name: &str| field(name)?.ok_or_else(|| bad(format!("no '{name}'")));
    let shape: Vec<i64> = required("shape")?
        .extract()
        .map_err(|_| bad("'shape' is not a tuple of integers".into()))?;
    let typestr: String = required("typestr")?
        .extract()
        .map_err(|_| bad("'typestr' is not a string".into()))?;
    let itemsize = typestr
        .get(2..)
        .and_then(|digits| digits.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| bad(format!("typestr '{typestr}' names no item size")))?;
    let (ptr, _readonly): (u64, bool) = required("data")?
        .extract()
        .map_err(|_| bad("'data' is not a (pointer, read-only) pair".into()))?;
    let strides: Option<Vec<i64>> = match field("strides")? {
        Some(s) if !s.is_none() => Some(
            s.extract()
                .map_err(|_| bad("'strides' is not a tuple of integers".into()))?,
        ),
        _ => None,
    };
    if field("mask")?.is_some_and(|m| !m.is_none()) {
        return Err(bad(
            "a masked array cannot be hashed (only plain arrays)".into()
        ));
    }
    let stream = match field("stream")? {
        Some(s) if !s.is_none() => {
            let stream: u64 = s
                .extract()
                .map_err(|_| bad("'stream' is not an integer".into()))?;
            if stream == 0 {
                // The protocol forbids 0: it is ambiguous.
                return Err(bad("'stream' is 0, which the protocol disallows".into()));
            }
            Some(stream)
        }
        // Version 2 has no CUDA stream; None means nothing to wait for.
        _ => None,
    };
    let len = contiguous_len(&shape, strides.as_deref(), itemsize as i64, 1)?;
    Ok(DeviceBytes { ptr, len, stream })
}

/// The byte length of an array of `shape` whose strides (in units of
/// `stride_unit` bytes; `None`: C-contiguous) must be C-contiguous: a
/// `ValueError` for any other layout.
fn contiguous_len(
    shape: &[i64],
    strides: Option<&[i64]>,
    itemsize: i64,
    stride_unit: i64,
) -> PyResult<usize> {
    if shape.iter().any(|&n| n < 0) {
        return Err(PyValueError::new_err(format!(
            "the array's shape {shape:?} has a negative dimension"
        )));
    }
    let items = shape
        .iter()
        .try_fold(1i64, |n, &d| n.checked_mul(d))
        .ok_or_else(|| {
            PyValueError::new_err(format!("the array's shape {shape:?} is too large"))
        })?;
    let len = items.checked_mul(itemsize).ok_or_else(|| {
        PyValueError::new_err(format!("the array's shape {shape:?} is too large"))
    })?;
    if let Some(strides) = strides
        && items > 0
    {
        if strides.len() != shape.len() {
            return Err(PyValueError::new_err(format!(
                "the array's strides {strides:?} do not match its shape {shape:?}"
            )));
        }
        // Dimensions of one item may have any stride.
        let mut expected = itemsize;
        for (&dim, &stride) in shape.iter().zip(strides).rev() {
            if dim != 1 && stride.saturating_mul(stride_unit) != expected {
                let unit = if stride_unit == 1 { "bytes" } else { "items" };
                return Err(PyValueError::new_err(format!(
                    "the array is not contiguous (strides {strides:?} {unit} for shape \
                     {shape:?} of {itemsize}-byte items): device_digest() hashes contiguous \
                     bytes in C order; make a contiguous copy first \
                     (cupy.ascontiguousarray(a), tensor.contiguous())"
                )));
            }
            expected *= dim;
        }
    }
    usize::try_from(len).map_err(|_| PyValueError::new_err("the array is too large"))
}

/// DLPack's device types that are not memory of a CUDA GPU, by name, for
/// the message that refuses them.
fn device_type_name(device_type: i32) -> &'static str {
    match device_type {
        1 => "the CPU",
        3 => "pinned host memory (kDLCUDAHost)",
        4 => "an OpenCL device",
        7 => "a Vulkan device",
        8 => "a Metal device",
        10 => "a ROCm GPU",
        _ => "a device that is not a CUDA GPU",
    }
}

const KDL_CUDA: i32 = 2;
const KDL_CUDA_MANAGED: i32 = 13;

/// Hashes an object through DLPack: asks for its capsule with the CUDA
/// stream the hashing runs on (the producer orders its work before it),
/// hashes the tensor's bytes, then gives the tensor back (its deleter).
fn dlpack_digest(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    hasher: &Hasher,
    params: &Params,
) -> PyResult<Digest> {
    let (device_type, device_id): (i32, i32) = obj
        .call_method0("__dlpack_device__")?
        .extract()
        .map_err(|_| PyValueError::new_err("__dlpack_device__() did not return (type, id)"))?;
    if device_type != KDL_CUDA && device_type != KDL_CUDA_MANAGED {
        return Err(PyValueError::new_err(format!(
            "the object lives on {} (DLPack device type {device_type}), not on a CUDA GPU: \
             hash host memory with new() or file_digest()",
            device_type_name(device_type)
        )));
    }
    let ordinal = usize::try_from(device_id)
        .map_err(|_| PyValueError::new_err(format!("DLPack device id {device_id} is negative")))?;
    let stream = py
        .detach(|| hasher.device_stream(ordinal))
        .map_err(|e: HashError| hash_error(e, None))?;
    let capsule = dlpack_capsule(py, obj, stream)?;
    let tensor = Consumed::take(&capsule)?;
    let bytes = tensor.bytes()?;
    // Ordered by the producer before `stream`: nothing more to wait for.
    hash(py, hasher, params, bytes)
}

/// `obj.__dlpack__(stream=…)`, asking for a versioned capsule (DLPack 1)
/// where the producer takes `max_version`.
fn dlpack_capsule<'py>(
    py: Python<'py>,
    obj: &Bound<'py, PyAny>,
    stream: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("stream", stream)?;
    kwargs.set_item("max_version", (1, 0))?;
    match obj.call_method("__dlpack__", (), Some(&kwargs)) {
        Err(e) if e.is_instance_of::<PyTypeError>(py) => {
            // A producer older than DLPack 1 knows no `max_version`.
            kwargs.del_item("max_version")?;
            obj.call_method("__dlpack__", (), Some(&kwargs))
        }
        other => other,
    }
}

/// DLPack's C structures (dlpack.h, version 1.x; the unversioned
/// `DLManagedTensor` of earlier versions too).
#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

/// A tensor taken from its capsule (renamed `used_…`, as the protocol
/// asks), given back through its deleter when dropped, with the GIL held
/// (a deleter may release Python objects).
enum Consumed {
    Legacy(*mut DLManagedTensor),
    Versioned(*mut DLManagedTensorVersioned),
}

impl Consumed {
    fn take(capsule: &Bound<'_, PyAny>) -> PyResult<Consumed> {
        const LEGACY: &CStr = c"dltensor";
        const VERSIONED: &CStr = c"dltensor_versioned";
        let p = capsule.as_ptr();
        // SAFETY: `p` is a live object (the GIL is held); a capsule's
        // pointer is read only under the name the protocol gives it, and
        // renamed at once so that its destructor no longer frees it.
        unsafe {
            if ffi::PyCapsule_IsValid(p, VERSIONED.as_ptr()) == 1 {
                let tensor = ffi::PyCapsule_GetPointer(p, VERSIONED.as_ptr());
                let tensor = tensor.cast::<DLManagedTensorVersioned>();
                if tensor.is_null()
                    || ffi::PyCapsule_SetName(p, c"used_dltensor_versioned".as_ptr()) != 0
                {
                    return Err(PyErr::fetch(capsule.py()));
                }
                return Ok(Consumed::Versioned(tensor));
            }
            if ffi::PyCapsule_IsValid(p, LEGACY.as_ptr()) == 1 {
                let tensor =
                    ffi::PyCapsule_GetPointer(p, LEGACY.as_ptr()).cast::<DLManagedTensor>();
                if tensor.is_null() || ffi::PyCapsule_SetName(p, c"used_dltensor".as_ptr()) != 0 {
                    return Err(PyErr::fetch(capsule.py()));
                }
                return Ok(Consumed::Legacy(tensor));
            }
        }
        Err(PyValueError::new_err(
            "__dlpack__() did not return an unused DLPack capsule",
        ))
    }

    /// The tensor's bytes: an error unless they are contiguous, of whole
    /// bytes, in a DLPack version this reads.
    fn bytes(&self) -> PyResult<DeviceBytes> {
        // SAFETY: the producer keeps the managed tensor valid until its
        // deleter is called, which only `drop` does.
        let tensor = unsafe {
            match *self {
                Consumed::Legacy(t) => &(*t).dl_tensor,
                Consumed::Versioned(t) => {
                    let major = (*t).version.major;
                    if major != 1 {
                        return Err(PyValueError::new_err(format!(
                            "DLPack version {major} is not supported (1 is)"
                        )));
                    }
                    &(*t).dl_tensor
                }
            }
        };
        let bits = u64::from(tensor.dtype.bits) * u64::from(tensor.dtype.lanes);
        if bits == 0 || !bits.is_multiple_of(8) {
            return Err(PyValueError::new_err(format!(
                "items of {bits} bits are not whole bytes"
            )));
        }
        let ndim = usize::try_from(tensor.ndim)
            .map_err(|_| PyValueError::new_err("the tensor has a negative ndim"))?;
        // SAFETY: `shape` holds `ndim` entries, and `strides`, when not
        // null, too (DLPack's contract; null stands for compact C order).
        let (shape, strides) = unsafe {
            let shape = if ndim == 0 {
                &[][..]
            } else {
                std::slice::from_raw_parts(tensor.shape, ndim)
            };
            let strides = (!tensor.strides.is_null() && ndim > 0)
                .then(|| std::slice::from_raw_parts(tensor.strides, ndim));
            (shape, strides)
        };
        let itemsize = (bits / 8) as i64;
        // DLPack's strides count items.
        let len = contiguous_len(shape, strides, itemsize, itemsize)?;
        Ok(DeviceBytes {
            ptr: (tensor.data as u64).wrapping_add(tensor.byte_offset),
            len,
            stream: None,
        })
    }
}

impl Drop for Consumed {
    fn drop(&mut self) {
        // SAFETY: the tensor was taken from its capsule (which will not
        // free it) and is given back once, to the deleter its producer set.
        unsafe {
            match *self {
                Consumed::Legacy(t) => {
                    if let Some(deleter) = (*t).deleter {
                        deleter(t);
                    }
                }
                Consumed::Versioned(t) => {
                    if let Some(deleter) = (*t).deleter {
                        deleter(t);
                    }
                }
            }
        }
    }
}
