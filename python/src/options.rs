//! The parameters every function takes, read and checked in one place, with
//! the command line's names, defaults and messages (the library's
//! `ParamOptions`, which the command line builds its parameters with too);
//! and the process's hashers, one per backend and thread count while any is
//! in use, the few used last kept idle.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, Weak};

use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use treehash::function::{OptionBytes, OptionNames, ParamOptions};
use treehash::{BackendChoice, Hasher, HasherOptions, Params};

use crate::buffer::ReadBuffer;
use crate::errors::hash_error;
use crate::names::{self, Fixed, Named};

/// The keywords, as the messages that refuse one name them.
const OPTION_NAMES: OptionNames = OptionNames {
    height: "height",
    degree: "degree",
    block_size: "block_size",
    prefix: "prefix",
    customization: "customization",
    domain: "domain",
};

/// The most CPU worker threads `threads=` takes, as `--threads` does.
const MAX_THREADS: i64 = treehash::HasherOptions::MAX_THREADS as i64;

/// What one call asks for.
pub struct Options {
    pub params: Params,
    pub backend: BackendChoice,
    pub threads: Option<usize>,
}

/// The keyword arguments every function takes, as Python gave them: `None`
/// where not given (or given as `None`), so that an option a function does
/// not take is refused only when given.
pub struct Args<'a, 'py> {
    pub algorithm: &'a str,
    pub height: Option<i64>,
    pub degree: Option<i64>,
    pub block_size: Option<i64>,
    pub length: Option<i64>,
    pub prefix: Option<&'a Bound<'py, PyAny>>,
    pub customization: Option<&'a Bound<'py, PyAny>>,
    pub domain: Option<i64>,
    pub backend: &'a str,
    pub threads: Option<i64>,
}

impl Args<'_, '_> {
    /// The checked options; a `ValueError` naming the first bad one (a
    /// `TypeError` for an argument of the wrong kind).
    pub fn options(&self) -> PyResult<Options> {
        let (function, fixed) = match names::parse(self.algorithm)? {
            Named::Function(function) => (function, Fixed::default()),
            Named::Recorded { function, fixed } => (function, fixed),
        };
        let prefix = self.prefix.map(prefix_bytes).transpose()?;
        let customization = self.customization.map(customization_bytes).transpose()?;
        let height = self
            .height
            .map(|h| {
                u32::try_from(not_negative("height", h)?)
                    .map_err(|_| PyValueError::new_err(format!("height {h} is too large")))
            })
            .transpose()?;
        let unsigned = |name, value: Option<i64>| value.map(|v| not_negative(name, v)).transpose();
        let domain = self
            .domain
            .map(|d| {
                u8::try_from(not_negative("domain", d)?).map_err(|_| {
                    PyValueError::new_err(format!(
                        "domain byte {d:#04x} is out of range for TurboSHAKE (0x01 to 0x7f)"
                    ))
                })
            })
            .transpose()?;
        let degree = unsigned("degree", self.degree)?;
        let block_size = unsigned("block_size", self.block_size)?.map(|b| b as usize);
        // What the name records, the keywords agreeing with it.
        let named = Agreement {
            name: self.algorithm,
        };
        let height = named.merge("height", height, fixed.height)?;
        let degree = named.merge("degree", degree, fixed.degree)?;
        let block_size = named.merge("block_size", block_size, fixed.block_size)?;
        let domain = named
            .merge("domain", domain.map(Domain), fixed.domain.map(Domain))?
            .map(|d| d.0);
        let customization = match (customization, fixed.customization) {
            (Some(given), Some(named_c)) if given != named_c => {
                return Err(named.differs("customization", "records another one"));
            }
            (given, named_c) => given.or(named_c.filter(|c| !c.is_empty())),
        };
        match (fixed.keyed, prefix.is_some()) {
            (Some(true), false) => {
                return Err(PyValueError::new_err(format!(
                    "'{}' is the name of a keyed digest (,P): give its prefix= (a name never \
                     holds the key)",
                    self.algorithm
                )));
            }
            (Some(false), true) => {
                return Err(named.differs("prefix", "names a digest without a prefix"));
            }
            _ => {}
        }
        let options = ParamOptions {
            height,
            degree,
            block_size,
            length: unsigned("length", self.length)?.map(|n| n as usize),
            prefix: prefix.map(|bytes| -> OptionBytes<'_> {
                Box::new(move || {
                    // As on the command line: a prefix given is a key or salt.
                    if bytes.is_empty() {
                        return Err("prefix: the prefix is empty; a key or salt needs at least \
                                    one byte"
                            .into());
                    }
                    Ok(bytes)
                })
            }),
            customization: customization
                .map(|bytes| -> OptionBytes<'_> { Box::new(move || Ok(bytes)) }),
            domain,
        };
        let params = options
            .build(function, &OPTION_NAMES)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        let backend = match self.backend {
            "auto" => BackendChoice::Auto,
            "cpu" => BackendChoice::Cpu,
            "gpu" => BackendChoice::Gpu,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown backend '{other}' (expected auto, cpu or gpu)"
                )));
            }
        };
        let threads = match self.threads {
            None => None,
            Some(n) if (1..=MAX_THREADS).contains(&n) => Some(n as usize),
            Some(n) => {
                return Err(PyValueError::new_err(format!(
                    "threads {n} is out of range (1 to {MAX_THREADS})"
                )));
            }
        };
        Ok(Options {
            params,
            backend,
            threads,
        })
    }
}

/// The name given as `algorithm`, for the messages that refuse a keyword
/// that disagrees with what it records.
struct Agreement<'a> {
    name: &'a str,
}

impl Agreement<'_> {
    /// The keyword's value, else the name's: both where they agree.
    fn merge<T: PartialEq + fmt::Display>(
        &self,
        keyword: &str,
        given: Option<T>,
        named: Option<T>,
    ) -> PyResult<Option<T>> {
        match (given, named) {
            (Some(given), Some(named)) if given != named => {
                let why = format!("records {keyword} {named}");
                Err(self.differs(&format!("{keyword}={given}"), &why))
            }
            (given, named) => Ok(given.or(named)),
        }
    }

    fn differs(&self, keyword: &str, why: &str) -> PyErr {
        PyValueError::new_err(format!(
            "{keyword} does not agree with the name '{}', which {why}",
            self.name
        ))
    }
}

/// TurboSHAKE's D, shown as the messages show it.
#[derive(PartialEq)]
struct Domain(u8);

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#04x}", self.0)
    }
}

/// The prefix's bytes: any object with a buffer (not a `str`: a key is
/// bytes).
fn prefix_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(ReadBuffer::get(obj)?.as_bytes().to_vec())
}

/// The customization string's bytes: a `str` as UTF-8, or any object with
/// a buffer.
fn customization_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if obj.is_instance_of::<PyString>() {
        return Ok(obj.extract::<String>()?.into_bytes());
    }
    match ReadBuffer::get(obj) {
        Ok(buffer) => Ok(buffer.as_bytes().to_vec()),
        Err(e) if e.is_instance_of::<PyTypeError>(obj.py()) => Err(PyTypeError::new_err(format!(
            "customization must be str or a bytes-like object, not {}",
            obj.get_type().name()?
        ))),
        Err(e) => Err(e),
    }
}

/// `value` as unsigned, or a `ValueError` naming `name`.
fn not_negative(name: &str, value: i64) -> PyResult<u64> {
    u64::try_from(value).map_err(|_| PyValueError::new_err(format!("{name} {value} is negative")))
}

/// Hashers kept while no call or object holds them: the ones asked for
/// last. Keeping none would start a pool, and under `backend="auto"` the
/// GPUs, again on every call; keeping every one would leave an idle pool
/// per thread count a program ever asked for. With a few, a program that
/// hashes with one or a few counts starts each pool (and each GPU) once,
/// and one that tries many leaves at most this many idle pools behind.
const KEPT: usize = 4;

/// A hasher alive, and what it was made for.
struct Made {
    backend: BackendChoice,
    threads: Option<usize>,
    hasher: Weak<Hasher>,
}

/// The process's hashers. A hasher lives while a call, a `Hash` object or
/// `kept` holds it, and ends with its worker threads and GPUs after that.
struct Hashers {
    /// Every live hasher, held weakly: while one is alive it is the only
    /// one for its backend and thread count, kept or not.
    made: Vec<Made>,
    /// The `KEPT` asked for last, the most recent first.
    kept: VecDeque<Arc<Hasher>>,
}

static HASHERS: Mutex<Hashers> = Mutex::new(Hashers {
    made: Vec::new(),
    kept: VecDeque::new(),
});

/// The process's hasher for `backend` and `threads`: the live one, else a
/// new one.
pub fn hasher(backend: BackendChoice, threads: Option<usize>) -> PyResult<Arc<Hasher>> {
    let mut hashers = HASHERS
        .lock()
        .map_err(|_| PyRuntimeError::new_err("internal error: the hasher table is poisoned"))?;
    hashers.made.retain(|m| m.hasher.strong_count() > 0);
    let live = hashers
        .made
        .iter()
        .find(|m| m.backend == backend && m.threads == threads)
        .and_then(|m| m.hasher.upgrade());
    let hasher = match live {
        Some(hasher) => hasher,
        None => {
            let options = HasherOptions::default()
                .with_backend(backend)
                .with_threads(threads);
            let hasher = Arc::new(Hasher::new(options).map_err(|e| hash_error(e, None))?);
            hashers.made.push(Made {
                backend,
                threads,
                hasher: Arc::downgrade(&hasher),
            });
            hasher
        }
    };
    hashers.kept.retain(|kept| !Arc::ptr_eq(kept, &hasher));
    hashers.kept.push_front(Arc::clone(&hasher));
    let held = hashers.kept.len().min(KEPT);
    let dropped = hashers.kept.split_off(held);
    // A hasher let go is dropped outside the lock: its GPUs, if started,
    // take a while to release.
    drop(hashers);
    drop(dropped);
    Ok(hasher)
}
