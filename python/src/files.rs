//! `file_digest`: a file by its path, by the command line's fast path, or
//! a binary file object read as `hashlib.file_digest` reads it.

use std::path::PathBuf;

use pyo3::exceptions::{PyBlockingIOError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};
use treehash::BackendChoice;
use treehash::gpu::KeepCurrentContext;

use crate::buffer::ReadBuffer;
use crate::errors::hash_error;
use crate::objects::{Digest, new_hash};
use crate::options::{Args, Options, hasher};

/// The bytes read from a file object at once: at first hashlib's 256 KiB
/// (a short file costs no more), doubled while reads fill the buffer up to
/// a few pieces of a tree's stripe, which the stream absorbs where they lie
/// on every core.
const FIRST_READ: usize = 256 << 10;
const MOST_READ: usize = 8 << 20;

/// The digest of a file: ``path`` is its path (str, bytes or
/// os.PathLike), or a file object opened for binary reading, as
/// ``hashlib.file_digest`` takes it. A path is hashed by the command
/// line's fast path: read in windows on every core, and under
/// ``backend="auto"`` the GPUs joining for a file long enough to repay
/// their start; the GIL is released meanwhile. A path is always a file
/// (``"-"`` is the file named ``-``; use ``"/dev/stdin"`` for standard
/// input). A file whose size or modification time changes meanwhile
/// raises ``RuntimeError``, not a digest; one truncated while a window of
/// it is being hashed ends the process with SIGBUS, as with any mapped
/// file, unless :func:`handle_truncation` was called (then
/// ``RuntimeError`` too). A file object is read as hashlib reads it: an
/// ``io.BytesIO``'s whole buffer, else ``readinto`` from where it stands
/// to its end, hashed on the CPU's cores (``ValueError`` for an object
/// that is not a binary file open for reading, and for ``backend="gpu"``).
/// Returns a :class:`Digest`.
#[pyfunction]
#[pyo3(
    signature = (
        path, algorithm = "sha3-256", *, height = None, degree = None, block_size = None,
        length = None, prefix = None, customization = None, domain = None, backend = "auto",
        threads = None
    ),
    text_signature = "(path, algorithm='sha3-256', *, height=8, degree=4, block_size=None, \
                      length=None, prefix=None, customization=None, domain=None, \
                      backend='auto', threads=None)"
)]
#[allow(clippy::too_many_arguments)]
pub fn file_digest(
    py: Python<'_>,
    path: &Bound<'_, PyAny>,
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
    if !is_path(path)? {
        return object_digest(py, path, &options);
    }
    let file = file_path(path)?;
    let hasher = hasher(options.backend, options.threads)?;
    let params = &options.params;
    let may_use_gpu = options.backend != BackendChoice::Cpu;
    let out = py.detach(|| {
        // A GPU's context is bound to this thread while it hashes.
        let _kept = may_use_gpu.then(KeepCurrentContext::new);
        hasher.hash_path(params, &file, &())
    });
    let out = out.map_err(|e| hash_error(e, Some(path)))?;
    Ok(Digest::new(params, out))
}

/// Whether `obj` names a file by its path (rather than being a file).
fn is_path(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyBytes>()
        || obj.hasattr("__fspath__")?)
}

/// The digest of the file object `file`, read as `hashlib.file_digest`
/// reads one, hashed by a stream on the CPU.
fn object_digest(py: Python<'_>, file: &Bound<'_, PyAny>, options: &Options) -> PyResult<Digest> {
    if options.backend == BackendChoice::Gpu {
        return Err(PyValueError::new_err(
            "backend 'gpu' hashes a file by its path: give file_digest() the path, not a file \
             object",
        ));
    }
    let hash = new_hash(&options.params, hasher(options.backend, options.threads)?)?;
    if file.hasattr("getbuffer")? {
        // An io.BytesIO: its whole buffer, where it lies, as hashlib does.
        let view = file.call_method0("getbuffer")?;
        let len = {
            let buffer = ReadBuffer::get(&view)?;
            hash.update_bytes(py, buffer.as_bytes())?;
            buffer.as_bytes().len()
        };
        // The BytesIO may be resized again.
        view.call_method0("release")?;
        return hash.finish(py, &options.params, len as u64);
    }
    let readable = file.hasattr("readinto")?
        && file.hasattr("readable")?
        && file.call_method0("readable")?.is_truthy()?;
    if !readable {
        return Err(PyValueError::new_err(format!(
            "'{}' is not a file-like object in binary reading mode.",
            file.repr()?
        )));
    }
    let mut chunk = PyByteArray::new_with(py, FIRST_READ, |_| Ok(()))?;
    let mut total = 0u64;
    loop {
        let room = chunk.len();
        let read = file.call_method1("readinto", (&chunk,))?;
        if read.is_none() {
            return Err(PyBlockingIOError::new_err("I/O operation would block."));
        }
        let read: usize = read.extract()?;
        if read == 0 {
            break;
        }
        let buffer = ReadBuffer::get(&chunk)?;
        let bytes = buffer.as_bytes().get(..read).ok_or_else(|| {
            PyValueError::new_err(format!(
                "readinto() returned {read}, more than the {room} bytes it was given"
            ))
        })?;
        hash.update_bytes(py, bytes)?;
        total += read as u64;
        drop(buffer);
        if read == room && room < MOST_READ {
            chunk = PyByteArray::new_with(py, 2 * room, |_| Ok(()))?;
        }
    }
    hash.finish(py, &options.params, total)
}

/// The file `obj` names: a str, bytes (as they are) or an os.PathLike,
/// `-` being the file named `-` (the library reads standard input there).
pub fn file_path(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    let file = path_of(obj)?;
    Ok(if treehash::input::is_stdin_name(&file) {
        PathBuf::from(".").join(file)
    } else {
        file
    })
}

/// The path `obj` names: a str, bytes (as they are) or an os.PathLike.
fn path_of(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    let path = obj.py().import("os")?.call_method1("fspath", (obj,))?;
    match path.cast::<PyBytes>() {
        Ok(bytes) => Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes.as_bytes()))),
        Err(_) => path.extract(),
    }
}
