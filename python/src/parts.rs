//! Parts and joins (docs/SPEC.md, "Parts and joins"): `hash_part` makes
//! part I of N of a file, in the library's binary format; `join_parts`
//! makes the digest of a whole set; `_check_split` checks a split's
//! parameters ahead of its parts and words the warning of short runs of an
//! LI tree (`treehash.dask` calls it once, before any part is sent out).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use treehash::gpu::KeepCurrentContext;
use treehash::parts::{self, MIN_RUN_BYTES, NameRule, Part, join_bytes};
use treehash::{BackendChoice, Params, TreeParams};

use crate::buffer::ReadBuffer;
use crate::errors::hash_error;
use crate::files::file_path;
use crate::objects::Digest;
use crate::options::{Args, hasher};

/// Parameters that have parts: TurboSHAKE, one sponge, is refused with the
/// command line's words.
fn split_params(params: Params) -> PyResult<Params> {
    match params.unsplittable() {
        Some(why) => Err(PyValueError::new_err(why)),
        None => Ok(params),
    }
}

/// `count` as a number of parts: 1 or more.
fn part_count(count: i64) -> PyResult<u64> {
    u64::try_from(count)
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| PyValueError::new_err(format!("count {count} is out of range (1 or more)")))
}

/// Part ``index`` of ``count`` of the file at ``path``: the outputs of the
/// leaves that part owns, read from the file's runs of those leaves alone
/// (for KT128, KT256, ParallelHash128 and ParallelHash256: the chaining
/// values of the chunks it owns, one range of the file), as the bytes of
/// the part format (docs/SPEC.md, "Parts and joins"; the same bytes as
/// ``treehash part --parts COUNT --index INDEX``). Hash every index from 0
/// to ``count - 1``, anywhere the file can be read at the same path, and
/// :func:`join_parts` makes the digest that :func:`file_digest` gives. The
/// parameters are :func:`file_digest`'s, for every function with a tree
/// (TurboSHAKE, one sponge, raises ``ValueError``); a standard function's
/// part is hashed on the CPU under ``backend="auto"``, on the GPU under
/// ``"gpu"``. The GIL is released meanwhile. A file whose size or modification time changes
/// meanwhile raises ``RuntimeError``; the part records both, and the join
/// refuses parts that differ.
#[pyfunction]
#[pyo3(
    signature = (
        path, index, count, *, algorithm = "sha3-256", height = None, degree = None,
        block_size = None, length = None, prefix = None, customization = None, domain = None,
        backend = "auto", threads = None
    ),
    text_signature = "(path, index, count, *, algorithm='sha3-256', height=8, degree=4, \
                      block_size=None, length=None, prefix=None, customization=None, \
                      domain=None, backend='auto', threads=None)"
)]
#[allow(clippy::too_many_arguments)]
pub fn hash_part<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    index: i64,
    count: i64,
    algorithm: &str,
    height: Option<i64>,
    degree: Option<i64>,
    block_size: Option<i64>,
    length: Option<i64>,
    prefix: Option<&Bound<'py, PyAny>>,
    customization: Option<&Bound<'py, PyAny>>,
    domain: Option<i64>,
    backend: &str,
    threads: Option<i64>,
) -> PyResult<Bound<'py, PyBytes>> {
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
    let params = split_params(options.params)?;
    let count = part_count(count)?;
    let index = u64::try_from(index)
        .ok()
        .filter(|&i| i < count)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "index {index} is not a part of count {count}: parts are numbered 0 to {}",
                count - 1
            ))
        })?;
    let file = file_path(path)?;
    let hasher = hasher(options.backend, options.threads)?;
    let may_use_gpu = options.backend != BackendChoice::Cpu;
    let out = py.detach(|| {
        // A GPU's context is bound to this thread while it hashes.
        let _kept = may_use_gpu.then(KeepCurrentContext::new);
        hasher.hash_part(&params, &file, index, count, &())
    });
    let out = out.map_err(|e| hash_error(e, Some(path)))?;
    Ok(PyBytes::new(py, &out.part.to_bytes()))
}

/// The digest of the file that ``parts`` were made from (an iterable of
/// bytes-like objects, each made by :func:`hash_part` or ``treehash
/// part``), in any order: a :class:`Digest` equal to :func:`file_digest`'s
/// with the parts' parameters (``backend`` is ``"cpu"``, where the join
/// ran; ``nbytes`` the file's size). The set must be whole: parts of one
/// file (name, size, modification time), made with the same function,
/// parameters and prefix, each part of the split once. Otherwise
/// ``ValueError`` names the part (``parts[K]``, its position in ``parts``,
/// and its index in the split where it can be read) and the problem. The
/// parts' file names must agree in their last component (``big.img`` and
/// ``/lustre/x/big.img`` name one file); with ``any_name=True`` they are not
/// compared (parts made from copies under other names). The GIL is
/// released while the parts are joined.
#[pyfunction]
#[pyo3(signature = (parts, /, *, any_name = false))]
pub fn join_parts(py: Python<'_>, parts: &Bound<'_, PyAny>, any_name: bool) -> PyResult<Digest> {
    let mut all: Vec<Vec<u8>> = Vec::new();
    for (at, part) in parts.try_iter()?.enumerate() {
        let part = part?;
        let buffer = ReadBuffer::get(&part).map_err(|e| {
            if !e.is_instance_of::<PyTypeError>(py) {
                return e;
            }
            let kind = part
                .get_type()
                .name()
                .map_or_else(|_| "?".to_string(), |n| n.to_string());
            PyTypeError::new_err(format!(
                "parts[{at}] is {kind}: a part is bytes (as hash_part returns it, or a file \
                 `treehash part` wrote, read in binary mode)"
            ))
        })?;
        all.push(buffer.as_bytes().to_vec());
    }
    let names = if any_name {
        NameRule::Any
    } else {
        NameRule::BaseName
    };
    let joined = py.detach(|| join_bytes(&all, names)).map_err(|e| {
        // Name a part by its position, and by its place in the split where
        // it can be read (a refused part may be unreadable).
        let reason = e.reason(&|at| format!("parts[{at}]"));
        PyValueError::new_err(match e.part() {
            Some(at) => match Part::from_bytes(&all[at]) {
                Ok(part) => format!(
                    "parts[{at}] (part {} of {}): {reason}",
                    part.index(),
                    part.count()
                ),
                Err(_) => format!("parts[{at}]: {reason}"),
            },
            None => reason,
        })
    })?;
    Ok(Digest::joined(&joined))
}

/// Checks the parameters of a split into ``count`` parts as
/// :func:`hash_part` would (``ValueError`` with its words), and returns the
/// warning for an LI tree's runs shorter than 1 MiB per stripe, with the
/// part counts and parameters that avoid them, or ``None`` (always for a
/// standard function, whose parts read one range each).
#[pyfunction]
#[pyo3(
    signature = (
        count, *, algorithm = "sha3-256", height = None, degree = None, block_size = None,
        length = None, prefix = None, customization = None, domain = None, backend = "auto",
        threads = None
    )
)]
#[pyo3(name = "_check_split")]
#[allow(clippy::too_many_arguments)]
pub fn check_split(
    count: i64,
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
) -> PyResult<Option<String>> {
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
    let params = split_params(args.options()?.params)?;
    let count = part_count(count)?;
    Ok(match &params {
        Params::Tree(tree) => short_runs(tree, count),
        _ => None,
    })
}

/// The warning for a split whose parts read runs shorter than
/// [`MIN_RUN_BYTES`] (as `treehash part` gives it, the options spelled as
/// keywords).
fn short_runs(params: &TreeParams, count: u64) -> Option<String> {
    let short = parts::short_runs(params, count)?;
    let ways = short.ways(
        |most| format!("parts={most} or fewer"),
        |h| format!("height={h}"),
        |b| format!("block_size={b}"),
    );
    let mib = MIN_RUN_BYTES >> 20;
    Some(format!(
        "{count} parts read runs of {} bytes per stripe (under {mib} MiB), which a parallel \
         file system serves slowly; runs reach {mib} MiB with {ways} (another height or \
         block_size changes the digest; `treehash part --plan` shows a split)",
        short.run
    ))
}
