//! The parameters every function takes, read and checked in one place, with
//! the command line's names, defaults and messages; and the process's
//! hashers, one per backend and thread count.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use treehash::{Algorithm, BackendChoice, Hasher, HasherOptions, TreeParams};

use crate::buffer::ReadBuffer;
use crate::errors::hash_error;

/// What one call asks for.
pub struct Options {
    pub params: TreeParams,
    pub backend: BackendChoice,
    pub threads: Option<usize>,
}

/// The keyword arguments every function takes, as Python gave them.
pub struct Args<'a, 'py> {
    pub algorithm: &'a str,
    pub height: i64,
    pub degree: i64,
    pub block_size: Option<i64>,
    pub length: Option<i64>,
    pub prefix: Option<&'a Bound<'py, PyAny>>,
    pub customization: Option<&'a Bound<'py, PyAny>>,
    pub backend: &'a str,
    pub threads: Option<i64>,
}

impl Args<'_, '_> {
    /// The checked options; a `ValueError` naming the first bad one.
    pub fn options(&self) -> PyResult<Options> {
        let algorithm: Algorithm = self
            .algorithm
            .parse()
            .map_err(|e: treehash::ParamError| PyValueError::new_err(e.to_string()))?;
        if self.customization.is_some() {
            // The LI functions take none; the functions that do (issue 23)
            // are named here once the library has them.
            return Err(PyValueError::new_err(format!(
                "customization is not supported by {algorithm}"
            )));
        }
        let prefix = match self.prefix {
            None => Vec::new(),
            Some(prefix) => {
                let bytes = ReadBuffer::get(prefix)?.as_bytes().to_vec();
                // As on the command line: a prefix given is a key or salt.
                if bytes.is_empty() {
                    return Err(PyValueError::new_err(
                        "prefix: the prefix is empty; a key or salt needs at least one byte",
                    ));
                }
                bytes
            }
        };
        let height = u32::try_from(not_negative("height", self.height)?)
            .map_err(|_| PyValueError::new_err(format!("height {} is too large", self.height)))?;
        let degree = not_negative("degree", self.degree)?;
        let block_size = self
            .block_size
            .map(|b| not_negative("block_size", b).map(|b| b as usize))
            .transpose()?;
        let length = self
            .length
            .map(|n| not_negative("length", n).map(|n| n as usize))
            .transpose()?;
        let params =
            TreeParams::with_options(algorithm, height, degree, block_size, prefix, length)
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
            Some(n) if n >= 1 => Some(n as usize),
            Some(n) => {
                return Err(PyValueError::new_err(format!(
                    "threads {n} is out of range (1 or more)"
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

/// `value` as unsigned, or a `ValueError` naming `name`.
fn not_negative(name: &str, value: i64) -> PyResult<u64> {
    u64::try_from(value).map_err(|_| PyValueError::new_err(format!("{name} {value} is negative")))
}

/// A hasher made, and what it was made for.
struct Made {
    backend: BackendChoice,
    threads: Option<usize>,
    hasher: Arc<Hasher>,
}

/// The hashers made so far: each owns worker threads and, once started,
/// GPUs, so there is one per backend and thread count for the process.
static HASHERS: Mutex<Vec<Made>> = Mutex::new(Vec::new());

/// The process's hasher for `backend` and `threads`, made on first use.
pub fn hasher(backend: BackendChoice, threads: Option<usize>) -> PyResult<Arc<Hasher>> {
    let mut hashers = HASHERS
        .lock()
        .map_err(|_| PyRuntimeError::new_err("internal error: the hasher table is poisoned"))?;
    if let Some(made) = hashers
        .iter()
        .find(|m| m.backend == backend && m.threads == threads)
    {
        return Ok(Arc::clone(&made.hasher));
    }
    let options = HasherOptions {
        backend,
        threads,
        ..Default::default()
    };
    let hasher = Arc::new(Hasher::new(options).map_err(|e| hash_error(e, None))?);
    hashers.push(Made {
        backend,
        threads,
        hasher: Arc::clone(&hasher),
    });
    Ok(hasher)
}
