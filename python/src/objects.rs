//! The hash objects: `Hash` (hashlib's interface: `update`, `digest`,
//! `hexdigest`, `copy`), made by `new`; `Digest`, a finished digest, made by
//! `file_digest` and `device_digest`.

use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, TryLockError};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use treehash::gpu::KeepCurrentContext;
use treehash::parts::Joined;
use treehash::standard::Family;
use treehash::{
    BackendChoice, BackendUsed, HashError, HashOutput, NoProgress, Params, ParamsRef, Stream,
};

use crate::buffer::ReadBuffer;
use crate::errors::hash_error;
use crate::options::{Args, hasher};

/// Updates at least this long release the GIL while they run (hashlib's
/// threshold): shorter ones cost less than releasing it.
const GIL_RELEASE_MIN: usize = 2048;

/// What a hash object tells about itself, from its parameters.
#[derive(Clone)]
struct Facts {
    /// The label `treehash --tag` writes, e.g. `SHA3-256-LI(H=8,D=4,B=136)`.
    label: String,
    digest_size: usize,
    block_size: usize,
}

impl Facts {
    fn of(params: &Params) -> Facts {
        Facts {
            label: params.label(),
            digest_size: params.output_len(),
            block_size: block_size(params),
        }
    }
}

/// hashlib's `block_size`: the value of the `block_size` keyword where the
/// function takes one (LI's B, the rate by default; ParallelHash's B),
/// else the sponge's rate (KT's and TurboSHAKE's, as hashlib gives SHAKE's).
fn block_size(params: &Params) -> usize {
    match params.as_ref() {
        ParamsRef::Tree(p) => p.block_size(),
        ParamsRef::Standard(p) if p.standard().family() == Family::ParallelHash => p.block_size(),
        ParamsRef::Standard(p) => p.standard().rate(),
    }
}

/// A digest being computed, with hashlib's interface.
///
/// Made by :func:`treehash.new`. ``update`` appends bytes; ``digest`` and
/// ``hexdigest`` give the digest of everything so far and may be followed
/// by more updates; ``copy`` branches. Safe to share between threads
/// (updates are serialised, as in hashlib).
#[pyclass(module = "treehash", name = "Hash", frozen)]
pub struct Hash {
    stream: Mutex<Stream>,
    facts: Facts,
}

impl Hash {
    /// Runs `work` on the stream: at once where the lock is free and the
    /// work `short`, else with the GIL released (so another thread's long
    /// update never stalls the interpreter).
    fn with_stream<R: Send>(
        &self,
        py: Python<'_>,
        short: bool,
        work: impl FnOnce(&mut Stream) -> Result<R, HashError> + Send,
    ) -> PyResult<R> {
        let poisoned = || PyRuntimeError::new_err("internal error: an earlier update panicked");
        if short {
            match self.stream.try_lock() {
                Ok(mut stream) => return work(&mut stream).map_err(|e| hash_error(e, None)),
                Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
                Err(TryLockError::WouldBlock) => {}
            }
        }
        py.detach(|| {
            let mut stream: MutexGuard<'_, Stream> = self.stream.lock().map_err(|_| None)?;
            work(&mut stream).map_err(Some)
        })
        .map_err(|e| match e {
            Some(e) => hash_error(e, None),
            None => poisoned(),
        })
    }
}

#[pymethods]
impl Hash {
    /// Appends the bytes of ``data`` (any object with a contiguous buffer:
    /// bytes, bytearray, memoryview, array, NumPy array, mmap …), read
    /// where they are, without a copy; the GIL is released while a large
    /// update runs.
    fn update(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let buffer = ReadBuffer::get(data)?;
        let bytes = buffer.as_bytes();
        self.with_stream(py, bytes.len() < GIL_RELEASE_MIN, |s| s.update(bytes))
    }

    /// The digest of the bytes given so far (``digest_size`` bytes).
    fn digest<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let digest = self.with_stream(py, false, Stream::finalize)?;
        Ok(PyBytes::new(py, &digest))
    }

    /// :meth:`digest` as lower-case hexadecimal.
    fn hexdigest(&self, py: Python<'_>) -> PyResult<String> {
        Ok(hex::encode(self.with_stream(
            py,
            false,
            Stream::finalize,
        )?))
    }

    /// A copy of this object, which goes on apart from it.
    fn copy(&self, py: Python<'_>) -> PyResult<Hash> {
        let stream = self.with_stream(py, false, Stream::try_clone)?;
        Ok(Hash {
            stream: Mutex::new(stream),
            facts: self.facts.clone(),
        })
    }

    /// The function's label, as ``treehash --tag`` writes it:
    /// ``SHA3-256-LI(H=8,D=4,B=136)`` (``,P`` when there is a prefix),
    /// ``KT128``, ``ParallelHash256(B=8192)``, ``TurboSHAKE128(D=1F)``.
    #[getter]
    fn name(&self) -> &str {
        &self.facts.label
    }

    /// The digest's length in bytes.
    #[getter]
    fn digest_size(&self) -> usize {
        self.facts.digest_size
    }

    /// The ``block_size`` parameter where the function takes one: an LI
    /// tree's leaf block size B (the rate by default, which is what
    /// hashlib's ``block_size`` is for SHA-3), ParallelHash's B; else the
    /// sponge's rate (KT, TurboSHAKE: 168 or 136, hashlib's for SHAKE).
    #[getter]
    fn block_size(&self) -> usize {
        self.facts.block_size
    }

    fn __repr__(&self) -> String {
        format!("<treehash.Hash {}>", self.facts.label)
    }
}

/// A finished digest, as :func:`treehash.file_digest` and
/// :func:`treehash.device_digest` return it.
#[pyclass(module = "treehash", name = "Digest", frozen)]
pub struct Digest {
    digest: Vec<u8>,
    facts: Facts,
    backend: String,
    bytes: u64,
}

impl Digest {
    pub fn new(params: &Params, out: HashOutput) -> Digest {
        Digest {
            digest: out.digest,
            facts: Facts::of(params),
            backend: out.backend.to_string(),
            bytes: out.bytes,
        }
    }

    /// The digest a set of parts joined to: the parts' label (`,P` where
    /// they were keyed: they do not hold the prefix itself), and the join's
    /// backend, as `treehash join` reports it.
    pub fn joined(joined: &Joined) -> Digest {
        Digest {
            digest: joined.digest.clone(),
            facts: Facts {
                label: joined.label().to_string(),
                ..Facts::of(&joined.params)
            },
            backend: BackendUsed::Cpu.to_string(),
            bytes: joined.file_len,
        }
    }
}

#[pymethods]
impl Digest {
    /// The digest (``digest_size`` bytes).
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.digest)
    }

    /// :meth:`digest` as lower-case hexadecimal.
    fn hexdigest(&self) -> String {
        hex::encode(&self.digest)
    }

    /// The same digest (a finished digest does not change).
    fn copy(&self) -> Digest {
        Digest {
            digest: self.digest.clone(),
            facts: self.facts.clone(),
            backend: self.backend.clone(),
            bytes: self.bytes,
        }
    }

    /// The function's label, as ``treehash --tag`` writes it.
    #[getter]
    fn name(&self) -> &str {
        &self.facts.label
    }

    /// The digest's length in bytes.
    #[getter]
    fn digest_size(&self) -> usize {
        self.facts.digest_size
    }

    /// As :attr:`Hash.block_size`: LI's or ParallelHash's B, else the rate.
    #[getter]
    fn block_size(&self) -> usize {
        self.facts.block_size
    }

    /// Where it was computed: ``"cpu"``, ``"gpu"`` or ``"cpu+gpu"``.
    #[getter]
    fn backend(&self) -> &str {
        &self.backend
    }

    /// Bytes of input hashed (the prefix not counted).
    #[getter]
    fn nbytes(&self) -> u64 {
        self.bytes
    }

    /// Pickling (a digest computed by a Dask worker travels back so): the
    /// fields, given back to `_restore_digest`.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, DigestState)> {
        let restore = py
            .import("treehash._treehash")?
            .getattr("_restore_digest")?;
        let state = (
            PyBytes::new(py, &self.digest).unbind(),
            self.facts.label.clone(),
            self.facts.digest_size,
            self.facts.block_size,
            self.backend.clone(),
            self.bytes,
        );
        Ok((restore, (state,)))
    }

    fn __repr__(&self) -> String {
        format!(
            "<treehash.Digest {} {}>",
            self.facts.label,
            self.hexdigest()
        )
    }
}

/// A new hash object (:class:`Hash`) of any function the command line
/// computes, with its parameters and defaults, fed ``data`` if given. It
/// hashes on the CPU's cores (``backend`` ``"auto"`` or ``"cpu"``;
/// ``"gpu"`` is refused: use :func:`file_digest` or :func:`device_digest`
/// for a GPU).
#[pyfunction]
#[pyo3(
    signature = (
        algorithm = "sha3-256", data = None, *, height = None, degree = None, block_size = None,
        length = None, prefix = None, customization = None, domain = None, backend = "auto",
        threads = None
    ),
    text_signature = "(algorithm='sha3-256', data=None, *, height=8, degree=4, block_size=None, \
                      length=None, prefix=None, customization=None, domain=None, \
                      backend='auto', threads=None)"
)]
#[allow(clippy::too_many_arguments)]
pub fn new(
    py: Python<'_>,
    algorithm: &str,
    data: Option<&Bound<'_, PyAny>>,
    height: Option<i64>,
    degree: Option<i64>,
    block_size: Option<i64>,
    length: Option<i64>,
    prefix: Option<&Bound<'_, PyAny>>,
    customization: Option<&Bound<'_, PyAny>>,
    domain: Option<i64>,
    backend: &str,
    threads: Option<i64>,
) -> PyResult<Hash> {
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
    if options.backend == BackendChoice::Gpu {
        return Err(PyValueError::new_err(
            "backend 'gpu': new() hashes on the CPU; for a GPU use file_digest() or device_digest()",
        ));
    }
    let hasher = hasher(options.backend, options.threads)?;
    let hash = Hash {
        facts: Facts::of(&options.params),
        stream: Mutex::new(Stream::new(hasher, options.params)),
    };
    if let Some(data) = data {
        hash.update(py, data)?;
    }
    Ok(hash)
}

/// The digest of the file at ``path`` (str, bytes or os.PathLike) by the
/// command line's fast path: read in windows on every core, and under
/// ``backend="auto"`` the GPUs joining for a file long enough to repay
/// their start. Returns a :class:`Digest`. The GIL is released meanwhile.
/// A path is always a file (``"-"`` is the file named ``-``; use
/// ``"/dev/stdin"`` for standard input).
/// A file whose size or modification time changes meanwhile raises
/// ``RuntimeError``, not a digest; one truncated while a window of it is
/// being hashed ends the process with SIGBUS, as with any mapped file,
/// unless :func:`handle_truncation` was called (then ``RuntimeError`` too).
#[pyfunction]
#[pyo3(
    signature = (
        path, *, algorithm = "sha3-256", height = None, degree = None, block_size = None,
        length = None, prefix = None, customization = None, domain = None, backend = "auto",
        threads = None
    ),
    text_signature = "(path, *, algorithm='sha3-256', height=8, degree=4, block_size=None, \
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
    let file = file_path(path)?;
    let hasher = hasher(options.backend, options.threads)?;
    let params = &options.params;
    let may_use_gpu = options.backend != BackendChoice::Cpu;
    let out = py.detach(|| {
        // A GPU's context is bound to this thread while it hashes.
        let _kept = may_use_gpu.then(KeepCurrentContext::new);
        hasher.hash_path(params, &file, &NoProgress)
    });
    let out = out.map_err(|e| hash_error(e, Some(path)))?;
    Ok(Digest::new(params, out))
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

/// A pickled :class:`Digest`'s fields: digest, label, digest size, block
/// size, backend, bytes hashed.
type DigestState = ((Py<PyBytes>, String, usize, usize, String, u64),);

/// The :class:`Digest` that ``Digest.__reduce__`` pickled (not for other
/// use: its fields are not checked against each other).
#[pyfunction]
#[pyo3(name = "_restore_digest")]
pub fn restore_digest(state: (Bound<'_, PyBytes>, String, usize, usize, String, u64)) -> Digest {
    let (digest, label, digest_size, block_size, backend, bytes) = state;
    Digest {
        digest: digest.as_bytes().to_vec(),
        facts: Facts {
            label,
            digest_size,
            block_size,
        },
        backend,
        bytes,
    }
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
