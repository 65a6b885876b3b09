//! The hash objects: `Hash` (hashlib's interface: `update`, `digest`,
//! `hexdigest`, `copy`), made by `new`; `Digest`, a finished digest, made by
//! `file_digest`, `device_digest` and `join_parts`, compared by value.

use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};

use pyo3::exceptions::{PyAttributeError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use treehash::parts::Joined;
use treehash::standard::Family;
use treehash::{BackendChoice, BackendUsed, HashError, HashOutput, Hasher, Params, Stream};

use crate::buffer::ReadBuffer;
use crate::errors::hash_error;
use crate::names::{Naming, Output};
use crate::options::{Args, hasher};

/// Updates at least this long release the GIL while they run (hashlib's
/// threshold): shorter ones cost less than releasing it.
const GIL_RELEASE_MIN: usize = 2048;

/// The longest digest of a function whose output length is free (SHAKE,
/// the standard functions): 65536 bytes.
const MAX_LENGTH: usize = treehash::StandardParams::MAX_OUTPUT_LEN;

/// What a hash object tells about itself, from its parameters.
#[derive(Clone)]
pub struct Facts {
    /// The label `treehash --tag` writes, e.g. `SHA3-256-LI(H=8,D=4,B=136)`.
    label: String,
    naming: Naming,
    /// The digest's length, as configured: `digest()` with no argument.
    length: usize,
    block_size: usize,
}

impl Facts {
    pub fn of(params: &Params) -> Facts {
        let label = params.label();
        Facts {
            naming: Naming::of_params(params, label.clone()),
            label,
            length: params.output_len(),
            block_size: block_size(params),
        }
    }

    /// The facts of `params` under `label` (a join's, which says `,P`
    /// where the parameters hold no prefix).
    fn labelled(label: String, params: &Params) -> Facts {
        Facts {
            naming: Naming::of(&label),
            label,
            length: params.output_len(),
            block_size: block_size(params),
        }
    }

    /// hashlib's `digest_size`: 0 for hashlib's SHAKE, whose length is
    /// `digest`'s argument; else the configured length.
    fn digest_size(&self) -> usize {
        match self.naming.hashlib {
            Some(algorithm) if algorithm.is_xof() => 0,
            _ => self.length,
        }
    }

    /// The length `digest(length)` asks for, where `available` bytes of
    /// the digest are at hand (a shorter digest of SHAKE, KT or
    /// TurboSHAKE is their start): the configured length when none is
    /// given; `TypeError` for a function of one length, as hashlib's
    /// `digest` takes no argument there; `ValueError` for one out of range.
    fn wanted(&self, length: Option<i64>, available: usize) -> PyResult<Wanted> {
        let Some(n) = length else {
            return Ok(Wanted::AtHand(self.length));
        };
        let name = self.naming.short_name();
        if self.naming.output == Output::Fixed {
            return Err(PyTypeError::new_err(format!(
                "{name} has one digest length ({} bytes): digest() and hexdigest() take no length",
                self.length
            )));
        }
        let n = usize::try_from(n)
            .map_err(|_| PyValueError::new_err(format!("length {n} is negative")))?;
        if n > MAX_LENGTH {
            return Err(PyValueError::new_err(format!(
                "length {n} is out of range for {name} (at most {MAX_LENGTH} bytes)"
            )));
        }
        Ok(match self.naming.output {
            _ if n == 0 || n == self.length => Wanted::AtHand(n),
            Output::Prefix if n <= available => Wanted::AtHand(n),
            _ => Wanted::Other(n),
        })
    }
}

/// A digest length asked for.
enum Wanted {
    /// The start of the digest at hand (all of it, or none).
    AtHand(usize),
    /// A digest of its own: ParallelHash's other lengths, or a start longer
    /// than the digest at hand.
    Other(usize),
}

/// hashlib's `block_size`: the value of the `block_size` keyword where the
/// function takes one (LI's B, the rate by default; ParallelHash's B),
/// else the sponge's rate (KT's and TurboSHAKE's, as hashlib gives SHAKE's).
fn block_size(params: &Params) -> usize {
    match params {
        Params::Tree(p) => p.block_size(),
        Params::Standard(p) if p.standard().family() == Family::ParallelHash => p.block_size(),
        Params::Standard(p) => p.standard().rate(),
    }
}

/// The length a stream of `params` squeezes: where a shorter digest is the
/// start of a longer one, at least the last sponge's rate, which its last
/// permutation gives at no cost (so `digest(n)` for any n up to the rate
/// reads the digest kept until the next update); else the configured
/// length. Other lengths are digests of their own
/// (`Stream::finalize_with_len`).
fn squeezed(params: &Params, output: Output) -> usize {
    let rate = match params {
        Params::Tree(p) => p.algorithm().rate(),
        Params::Standard(p) => p.standard().rate(),
    };
    match output {
        Output::Prefix => params.output_len().max(rate),
        Output::Fixed | Output::Encoded => params.output_len(),
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
    /// The bytes the stream's digest has (see `squeezed`).
    available: usize,
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

    /// The first `length` bytes of the digest so far (the configured
    /// length when `None`).
    fn digest_of(&self, py: Python<'_>, length: Option<i64>) -> PyResult<Vec<u8>> {
        match self.facts.wanted(length, self.available)? {
            Wanted::AtHand(0) => Ok(Vec::new()),
            Wanted::AtHand(n) => {
                let mut digest = self.with_stream(py, false, Stream::finalize)?;
                digest.truncate(n);
                Ok(digest)
            }
            Wanted::Other(n) => self.with_stream(py, false, |s| s.finalize_with_len(n)),
        }
    }

    /// The FIPS 202 function that the private attributes of hashlib's SHA-3
    /// objects describe: hashlib's functions only (H = 0, no prefix) have
    /// them.
    fn sponge(&self, attribute: &str) -> PyResult<treehash::Algorithm> {
        self.facts.naming.hashlib.ok_or_else(|| {
            PyAttributeError::new_err(format!(
                "{attribute}: only hashlib's functions (H = 0, no prefix) have it, not {}",
                self.facts.naming.short_name()
            ))
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
        self.update_bytes(py, buffer.as_bytes())
    }

    /// The digest of the bytes given so far: ``length`` bytes (0 to 65536)
    /// where the output length is free (SHAKE, KT, TurboSHAKE,
    /// ParallelHash), as hashlib's SHAKE takes it, else the one length;
    /// with no ``length``, the length the object was made with.
    #[pyo3(signature = (length = None))]
    fn digest<'py>(&self, py: Python<'py>, length: Option<i64>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &self.digest_of(py, length)?))
    }

    /// :meth:`digest` as lower-case hexadecimal.
    #[pyo3(signature = (length = None))]
    fn hexdigest(&self, py: Python<'_>, length: Option<i64>) -> PyResult<String> {
        Ok(hex::encode(self.digest_of(py, length)?))
    }

    /// A copy of this object, which goes on apart from it.
    fn copy(&self, py: Python<'_>) -> PyResult<Hash> {
        let stream = self.with_stream(py, false, Stream::try_clone)?;
        Ok(Hash {
            stream: Mutex::new(stream),
            facts: self.facts.clone(),
            available: self.available,
        })
    }

    /// The name :func:`treehash.new` rebuilds this function and its
    /// parameters from (all but a prefix, which no name holds, and the
    /// output length, which is :meth:`digest`'s argument): hashlib's name
    /// at H = 0 without a prefix (``sha3_256``, ``shake_128``), else the
    /// label ``treehash --tag`` writes (``SHA3-256-LI(H=8,D=4,B=136)``,
    /// ``…,P)`` with a prefix, ``SHA3-256-LI(H=0,P)``, ``KT128``,
    /// ``KT128(C=6162)``, ``ParallelHash256(B=8192)``,
    /// ``TurboSHAKE128(D=1F)``).
    #[getter]
    fn name(&self) -> &str {
        &self.facts.naming.name
    }

    /// The label ``treehash --tag`` writes, which check lines carry
    /// (``SHA3-256`` at H = 0, where :attr:`name` is hashlib's
    /// ``sha3_256``; else the same as :attr:`name`).
    #[getter]
    fn label(&self) -> &str {
        &self.facts.label
    }

    /// The digest's length in bytes: the length :meth:`digest` gives with
    /// no argument, but 0 for hashlib's ``shake_128`` and ``shake_256``
    /// (H = 0, no prefix), as hashlib has it.
    #[getter]
    fn digest_size(&self) -> usize {
        self.facts.digest_size()
    }

    /// The ``block_size`` parameter where the function takes one: an LI
    /// tree's leaf block size B (the rate by default, which is what
    /// hashlib's ``block_size`` is for SHA-3), ParallelHash's B; else the
    /// sponge's rate (KT, TurboSHAKE: 168 or 136, hashlib's for SHAKE).
    #[getter]
    fn block_size(&self) -> usize {
        self.facts.block_size
    }

    /// hashlib's private attribute of its SHA-3 objects: the sponge's
    /// capacity in bits (hashlib's functions only).
    #[getter]
    fn _capacity_bits(&self) -> PyResult<usize> {
        Ok(1600 - 8 * self.sponge("_capacity_bits")?.rate())
    }

    /// hashlib's private attribute: the sponge's rate in bits.
    #[getter]
    fn _rate_bits(&self) -> PyResult<usize> {
        Ok(8 * self.sponge("_rate_bits")?.rate())
    }

    /// hashlib's private attribute: the domain and padding byte.
    #[getter]
    fn _suffix<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, &[self.sponge("_suffix")?.domain_byte()]))
    }

    fn __repr__(&self) -> String {
        format!("<treehash.Hash {}>", self.facts.naming.name)
    }
}

/// A finished digest, as :func:`treehash.file_digest`,
/// :func:`treehash.device_digest` and :func:`treehash.join_parts` return
/// it. Two compare equal when they are the same function's (the same
/// ``name``) and the same bytes (compared in constant time).
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

    /// A digest of `params` computed here, on the CPU.
    pub fn computed(params: &Params, digest: Vec<u8>, bytes: u64) -> Digest {
        Digest {
            digest,
            facts: Facts::of(params),
            backend: BackendUsed::Cpu.to_string(),
            bytes,
        }
    }

    /// The digest a set of parts joined to: the parts' label (`,P` where
    /// they were keyed: they do not hold the prefix itself), and the join's
    /// backend, as `treehash join` reports it.
    pub fn joined(joined: &Joined) -> Digest {
        Digest {
            digest: joined.digest.clone(),
            facts: Facts::labelled(joined.label().to_string(), &joined.params),
            backend: BackendUsed::Cpu.to_string(),
            bytes: joined.file_len,
        }
    }

    /// The first `length` bytes (all when `None`).
    fn digest_of(&self, length: Option<i64>) -> PyResult<&[u8]> {
        match self.facts.wanted(length, self.digest.len())? {
            Wanted::AtHand(n) => Ok(&self.digest[..n.min(self.digest.len())]),
            Wanted::Other(n) => {
                let why = match self.facts.naming.output {
                    Output::Encoded => " (ParallelHash hashes its output length with the input)",
                    _ => "",
                };
                Err(PyValueError::new_err(format!(
                    "length {n}: this {} digest has {} bytes{why}; give length={n} to the \
                     function that computes it",
                    self.facts.naming.short_name(),
                    self.digest.len()
                )))
            }
        }
    }
}

/// Whether `a` and `b` are the same bytes, in a time that does not depend
/// on where they differ (a keyed digest is a MAC).
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[pymethods]
impl Digest {
    /// The digest (``digest_size`` bytes); ``length`` bytes where the
    /// output length is free: the whole or, for SHAKE, KT and TurboSHAKE,
    /// its start (a longer digest is another call's ``length=``).
    #[pyo3(signature = (length = None))]
    fn digest<'py>(&self, py: Python<'py>, length: Option<i64>) -> PyResult<Bound<'py, PyBytes>> {
        Ok(PyBytes::new(py, self.digest_of(length)?))
    }

    /// :meth:`digest` as lower-case hexadecimal.
    #[pyo3(signature = (length = None))]
    fn hexdigest(&self, length: Option<i64>) -> PyResult<String> {
        Ok(hex::encode(self.digest_of(length)?))
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

    /// As :attr:`Hash.name`: hashlib's name at H = 0 without a prefix,
    /// else the label ``treehash --tag`` writes.
    #[getter]
    fn name(&self) -> &str {
        &self.facts.naming.name
    }

    /// As :attr:`Hash.label`: the label ``treehash --tag`` writes, which
    /// check lines carry (``,P`` for a keyed join).
    #[getter]
    fn label(&self) -> &str {
        &self.facts.label
    }

    /// The digest's length in bytes (for SHAKE too: a finished digest has
    /// one length).
    #[getter]
    fn digest_size(&self) -> usize {
        self.digest.len()
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

    /// Equal: the same function and parameters (``name``) and the same
    /// bytes; where it was computed does not count.
    fn __eq__(&self, other: &Bound<'_, Digest>) -> bool {
        let other = other.get();
        // Both compared, whatever the first gives.
        let same_label = self.facts.label == other.facts.label;
        same_bytes(&self.digest, &other.digest) & same_label
    }

    fn __hash__(&self) -> u64 {
        let mut state = DefaultHasher::new();
        (&self.facts.label, &self.digest).hash(&mut state);
        state.finish()
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
            self.digest.len(),
            self.facts.block_size,
            self.backend.clone(),
            self.bytes,
        );
        Ok((restore, (state,)))
    }

    fn __repr__(&self) -> String {
        format!(
            "<treehash.Digest {} {}>",
            self.facts.naming.name,
            hex::encode(&self.digest)
        )
    }
}

/// A new hash object (:class:`Hash`) of any function the command line
/// computes, with its parameters and defaults, fed ``data`` if given.
/// ``algorithm`` is a name of :data:`algorithms` (any case), hashlib's name
/// of a FIPS 202 function (``sha3_256``, ``shake_128``: H = 0, as
/// ``hashlib.new`` takes it), or a hash object's :attr:`Hash.name`, whose
/// parameters the keywords must then agree with. It hashes on the CPU's
/// cores (``backend`` ``"auto"`` or ``"cpu"``; ``"gpu"`` is refused: use
/// :func:`file_digest` or :func:`device_digest` for a GPU).
/// ``usedforsecurity`` is taken as hashlib takes it, and changes nothing.
#[pyfunction]
#[pyo3(
    signature = (
        algorithm = "sha3-256", data = None, *, height = None, degree = None, block_size = None,
        length = None, prefix = None, customization = None, domain = None, backend = "auto",
        threads = None, usedforsecurity = None
    ),
    text_signature = "(algorithm='sha3-256', data=None, *, height=8, degree=4, block_size=None, \
                      length=None, prefix=None, customization=None, domain=None, \
                      backend='auto', threads=None, usedforsecurity=True)"
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
    usedforsecurity: Option<&Bound<'_, PyAny>>,
) -> PyResult<Hash> {
    // Every function is SHA-3's (FIPS 202, SP 800-185, RFC 9861): none is
    // kept from a use for security, whatever the flag's value (hashlib
    // takes any object for it, as its truth).
    let _ = usedforsecurity;
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
    let hash = new_hash(&options.params, hasher(options.backend, options.threads)?)?;
    if let Some(data) = data {
        hash.update(py, data)?;
    }
    Ok(hash)
}

/// An object of `params` on `hasher`, its stream squeezing what `digest`
/// may ask for.
pub fn new_hash(params: &Params, hasher: Arc<Hasher>) -> PyResult<Hash> {
    let facts = Facts::of(params);
    let available = squeezed(params, facts.naming.output);
    let squeezing = params
        .with_output_len(available)
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(Hash {
        stream: Mutex::new(Stream::new(hasher, squeezing)),
        facts,
        available,
    })
}

impl Hash {
    /// Appends `bytes`, the GIL released while a long update runs.
    pub fn update_bytes(&self, py: Python<'_>, bytes: &[u8]) -> PyResult<()> {
        self.with_stream(py, bytes.len() < GIL_RELEASE_MIN, |s| s.update(bytes))
    }

    /// The digest so far, of the configured length, as a :class:`Digest`
    /// of `bytes` bytes hashed here.
    pub fn finish(&self, py: Python<'_>, params: &Params, bytes: u64) -> PyResult<Digest> {
        Ok(Digest::computed(params, self.digest_of(py, None)?, bytes))
    }
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
            naming: Naming::of(&label),
            label,
            length: digest_size,
            block_size,
        },
        backend,
        bytes,
    }
}
