//! The extension module of the Python package `treehash`
//! (`treehash._treehash`; python/treehash/ re-exports it): hashlib's
//! interface over the library's engines for every function the command line
//! computes (the LI trees, KT, ParallelHash, TurboSHAKE), files by the
//! command line's fast path, data already in GPU memory, and a file's parts
//! and their join (which `treehash.dask` spreads over a Dask cluster); and
//! an opt-in SIGBUS handler for files cut short while they are hashed.

mod buffer;
mod device;
mod errors;
mod files;
mod immutable;
mod names;
mod objects;
mod options;
mod parts;
mod truncation;

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use treehash::Function;

#[pymodule]
fn _treehash(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("GpuError", py.get_type::<errors::GpuError>())?;
    m.add(
        "algorithms",
        PyTuple::new(py, Function::all().map(Function::name).collect::<Vec<_>>())?,
    )?;
    m.add_class::<objects::Hash>()?;
    m.add_class::<objects::Digest>()?;
    // Immutable types, as CPython's own hash types are (immutable.rs).
    immutable::make_immutable(&py.get_type::<objects::Hash>())?;
    immutable::make_immutable(&py.get_type::<objects::Digest>())?;
    m.add_function(wrap_pyfunction!(objects::new, m)?)?;
    m.add_function(wrap_pyfunction!(files::file_digest, m)?)?;
    m.add_function(wrap_pyfunction!(device::device_digest, m)?)?;
    m.add_function(wrap_pyfunction!(parts::hash_part, m)?)?;
    m.add_function(wrap_pyfunction!(parts::join_parts, m)?)?;
    m.add_function(wrap_pyfunction!(parts::check_split, m)?)?;
    m.add_function(wrap_pyfunction!(objects::restore_digest, m)?)?;
    m.add_function(wrap_pyfunction!(truncation::handle_truncation, m)?)?;
    Ok(())
}
