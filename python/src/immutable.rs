//! The package's classes as immutable types on CPython 3.10 and later, as
//! CPython's own hash types are: setting an attribute on `treehash.Hash`
//! raises `TypeError` ("cannot set 'x' attribute of immutable type …"),
//! which test_hashlib's `test_readonly_types` checks. PyO3's
//! `#[pyclass(immutable_type)]` needs a non-abi3 build below 3.14, and the
//! wheel is one abi3 build for 3.9 on, so the module does it at import with
//! what the running interpreter has
//! (docs/decisions/0038-python-types-immutable.md):
//!
//! - `PyType_Freeze` (public from 3.14), looked up at run time: linking it
//!   would keep the wheel from loading on 3.9 to 3.13;
//! - else on 3.10 to 3.13, what PyO3 does for a non-abi3 build there: the
//!   flag `Py_TPFLAGS_IMMUTABLETYPE` set in the type's `tp_flags`, then
//!   `PyType_Modified`, where the field is found where it should be;
//! - nothing on 3.9 (no such flag) or under another Python than CPython.

use std::ffi::{c_int, c_ulong, c_void};
use std::mem::size_of;

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyType;

/// `Py_TPFLAGS_IMMUTABLETYPE` (CPython 3.10 on).
const IMMUTABLE_TYPE: c_ulong = 1 << 8;
/// `Py_TPFLAGS_HEAPTYPE`: a type made at run time (`PyType_FromSpec`, as
/// PyO3 makes every class), whose object is a `PyHeapTypeObject`.
const HEAP_TYPE: c_ulong = 1 << 9;

/// The offset of `tp_flags` in CPython's `PyTypeObject`
/// (Include/cpython/object.h, the same from 3.8 to 3.14): after
/// `PyObject_VAR_HEAD`'s three words (`ob_refcnt`, `ob_type`, `ob_size`)
/// and 18 fields of one word each, `tp_name` … `tp_as_buffer`. A build with
/// `Py_TRACE_REFS` (up to 3.12) has two more words in the head;
/// `set_immutable_flag` finds another value there and writes nothing.
const TP_FLAGS_OFFSET: usize = 21 * size_of::<*const c_void>();

/// `int PyType_Freeze(PyTypeObject *type)`.
type TypeFreeze = unsafe extern "C" fn(*mut ffi::PyTypeObject) -> c_int;

/// Makes `ty`, one of the module's classes, an immutable type where the
/// running CPython has them. A failure of `PyType_Freeze` is the error;
/// on 3.10 to 3.13 a `tp_flags` not found where it should be leaves the
/// type as it is (mutable).
pub fn make_immutable(ty: &Bound<'_, PyType>) -> PyResult<()> {
    let py = ty.py();
    let implementation = py.import("sys")?.getattr("implementation")?;
    if !implementation.getattr("name")?.eq("cpython")? {
        return Ok(());
    }
    let version = py.version_info();
    if version >= (3, 14) {
        // An interpreter whose symbols are not global (libpython loaded
        // with RTLD_LOCAL by an embedding program) shows none: its types
        // stay mutable, as on 3.9.
        if let Some(freeze) = type_freeze() {
            // SAFETY: `freeze` is the running CPython's `PyType_Freeze`
            // (`type_freeze`, looked up on 3.14 and later only), called with
            // the GIL held (`Bound`) on a live type object.
            if unsafe { freeze(ty.as_type_ptr()) } < 0 {
                return Err(PyErr::fetch(py));
            }
        }
    } else if version >= (3, 10) {
        set_immutable_flag(ty)?;
    }
    Ok(())
}

/// CPython's `PyType_Freeze`, where the running interpreter (3.14 or
/// later) exports it.
fn type_freeze() -> Option<TypeFreeze> {
    // SAFETY: dlsym(3) with RTLD_DEFAULT and a NUL-terminated name only
    // looks the name up among the process's global symbols.
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"PyType_Freeze".as_ptr()) };
    // SAFETY: the symbol of that name is CPython's function
    // `int PyType_Freeze(PyTypeObject *)`, whose signature `TypeFreeze` is.
    (!symbol.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, TypeFreeze>(symbol) })
}

/// Sets `Py_TPFLAGS_IMMUTABLETYPE` in the `tp_flags` of `ty` (a heap type)
/// and tells CPython the type changed, as PyO3 does for a non-abi3 build on
/// 3.10 to 3.13; where the word at `TP_FLAGS_OFFSET` is not `ty`'s flags,
/// writes nothing.
fn set_immutable_flag(ty: &Bound<'_, PyType>) -> PyResult<()> {
    // Every object is at least its type's `tp_basicsize` bytes (CPython
    // allocates `tp_basicsize` plus the items): here the type's metatype,
    // `type` (`sizeof(PyHeapTypeObject)`) or a subclass of it.
    let object_size: usize = ty.get_type().getattr("__basicsize__")?.extract()?;
    if object_size < TP_FLAGS_OFFSET + size_of::<c_ulong>() {
        return Ok(());
    }
    let object = ty.as_type_ptr();
    let field = object
        .cast::<u8>()
        .wrapping_add(TP_FLAGS_OFFSET)
        .cast::<c_ulong>();
    // SAFETY: `object` is a live type object and the GIL is held (`Bound`),
    // on a build with the GIL (an abi3 module is not loaded by a
    // free-threaded CPython), so no other thread reads or writes the type
    // meanwhile. The read is in bounds: `object` is at least
    // `object_size` bytes (its metatype's `tp_basicsize`), checked above to
    // hold the word at `TP_FLAGS_OFFSET`, a multiple of the word size from
    // an object's start, so aligned. `PyType_GetFlags` (stable ABI) returns
    // the type's `tp_flags`; the write happens only where the word read
    // equals it and has `Py_TPFLAGS_HEAPTYPE` (a type of ours, not a static
    // one), i.e. where that word is `tp_flags` at the offset CPython's
    // headers give it, and it only adds one flag bit to it; `PyType_Modified`
    // then drops what CPython cached about the type.
    unsafe {
        let flags = ffi::PyType_GetFlags(object);
        if flags & HEAP_TYPE != 0 && flags & IMMUTABLE_TYPE == 0 && field.read() == flags {
            field.write(flags | IMMUTABLE_TYPE);
            ffi::PyType_Modified(object);
        }
    }
    Ok(())
}
