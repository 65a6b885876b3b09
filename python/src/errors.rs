//! Library errors as Python exceptions: `ValueError` for parameters (the
//! command line's words), `OSError` with `errno` and the file name for
//! input and output, `treehash.GpuError` for a GPU that was needed and
//! failed, `RuntimeError` for the rest.

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use treehash::HashError;
use treehash::error::io_reason;

pyo3::create_exception!(
    treehash,
    GpuError,
    PyRuntimeError,
    "A GPU was needed and could not be used: no CUDA driver or device, a start that failed, \
     or a failure while hashing."
);

/// The exception for `e`, met while hashing the file `file` (the object
/// the caller named it with), if any.
pub fn hash_error(e: HashError, file: Option<&Bound<'_, PyAny>>) -> PyErr {
    let filename = file.map(|f| f.clone().unbind());
    match e {
        HashError::Io(source) => os_error(&source, io_reason(&source), filename),
        HashError::ReadAt { offset, source } => {
            let reason = format!("read error at byte {offset}: {}", io_reason(&source));
            os_error(&source, reason, filename)
        }
        HashError::Gpu(reason) => GpuError::new_err(format!("GPU: {reason}")),
        HashError::Params(e) => PyValueError::new_err(e.to_string()),
        other => match file {
            Some(file) => PyRuntimeError::new_err(format!("{file}: {other}")),
            None => PyRuntimeError::new_err(other.to_string()),
        },
    }
}

/// `OSError(errno, reason, filename)`, which Python makes the subclass the
/// errno calls for (`FileNotFoundError` for ENOENT …); `errno` is None for
/// an error that has none.
fn os_error(source: &std::io::Error, reason: String, filename: Option<Py<PyAny>>) -> PyErr {
    let errno = source.raw_os_error();
    match filename {
        Some(name) => PyOSError::new_err((errno, reason, name)),
        None => PyOSError::new_err((errno, reason)),
    }
}
