//! Reading any object that exports a buffer (bytes, bytearray, memoryview,
//! array.array, NumPy arrays, mmap …) without a copy, as hashlib does.
//!
//! PyO3 offers the buffer protocol only where the limited API has it, from
//! Python 3.11; this module is an abi3 wheel for 3.9 on. `PyObject_GetBuffer`
//! and `PyBuffer_Release` are exported by every CPython 3 (they joined the
//! stable ABI in 3.11 unchanged), and `Py_buffer`'s layout below has not
//! changed since 3.3: the extension finds them in the interpreter at load
//! time, like every other C-API function.

use std::ffi::{c_char, c_int, c_void};

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyString;

/// CPython's `Py_buffer`.
#[repr(C)]
struct RawBuffer {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

/// Contiguous bytes, no format: what hashlib asks for.
const PYBUF_SIMPLE: c_int = 0;

unsafe extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawBuffer, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawBuffer);
}

/// The bytes of an object's buffer, held (the exporter keeps them where
/// they are, and a bytearray cannot be resized) until this is dropped,
/// which needs the GIL: it is neither `Send` nor `Sync`.
pub struct ReadBuffer(Box<RawBuffer>);

impl ReadBuffer {
    /// The buffer of `obj`: a `TypeError` if it has none (a `str` is told
    /// to be encoded first, as hashlib tells it), a `BufferError` if it is
    /// not contiguous.
    pub fn get(obj: &Bound<'_, PyAny>) -> PyResult<ReadBuffer> {
        if obj.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err(
                "Strings must be encoded before hashing",
            ));
        }
        let mut raw = Box::new(RawBuffer {
            buf: std::ptr::null_mut(),
            obj: std::ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: std::ptr::null_mut(),
            shape: std::ptr::null_mut(),
            strides: std::ptr::null_mut(),
            suboffsets: std::ptr::null_mut(),
            internal: std::ptr::null_mut(),
        });
        // SAFETY: `obj` is a live object and the GIL is held (`Bound`);
        // `raw` is a `Py_buffer` that the call fills.
        if unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *raw, PYBUF_SIMPLE) } != 0 {
            return Err(PyErr::fetch(obj.py()));
        }
        Ok(ReadBuffer(raw))
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        if self.0.len <= 0 || self.0.buf.is_null() {
            return &[];
        }
        // SAFETY: a PyBUF_SIMPLE buffer is `len` contiguous bytes at `buf`,
        // valid while it is held (until drop). Another Python thread may
        // still write them meanwhile, as it may under hashlib; they only
        // feed Keccak, which any bytes are fine for.
        unsafe { std::slice::from_raw_parts(self.0.buf.cast::<u8>(), self.0.len as usize) }
    }
}

impl Drop for ReadBuffer {
    fn drop(&mut self) {
        // SAFETY: filled by `PyObject_GetBuffer` and released once; the
        // type is neither Send nor Sync, so this runs where it was made,
        // with the GIL (the callers never drop it inside `detach`).
        unsafe { PyBuffer_Release(&mut *self.0) };
    }
}
