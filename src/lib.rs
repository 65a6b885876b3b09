//! treehash: Keccak/SHA-3 digests of large inputs at the speed of the
//! hardware, on every CPU core (AVX2 and AVX-512 where the CPU has them) and
//! on NVIDIA GPUs.
//!
//! - **The LI tree** (leaf-interleaving, `docs/SPEC.md`): the message
//!   M = P ‖ F (prefix, then file) is cut into blocks of B bytes, dealt
//!   round-robin onto L = D^H leaves; each leaf is hashed, then the parent
//!   levels, up to the root. At height 0 the digest is plain SHA-3 / SHAKE.
//!   [`TreeParams`] describes one.
//! - **The standard functions**: KT128 and KT256 (RFC 9861), TurboSHAKE128
//!   and TurboSHAKE256 (RFC 9861), ParallelHash128 and ParallelHash256
//!   (SP 800-185), on the same engines. [`StandardParams`] describes one.
//!
//! A [`Hasher`] hashes a file ([`Hasher::hash_path`]), bytes, a reader, a
//! list of files side by side ([`Hasher::hash_list`]), one part of a file
//! split across processes or hosts ([`Hasher::hash_part`], joined by
//! [`parts::join`]), or, with the GPU backend (the `gpu` feature, on
//! Linux), bytes already in GPU memory ([`Hasher::hash_device`]). A
//! [`Stream`] takes an input in `update`s, as hashlib does. Under [`BackendChoice::Auto`] (the default) each input
//! starts on the CPU, and GPUs start and join where the input repays them.
//!
//! ```
//! use treehash::{Algorithm, Hasher, HasherOptions, TreeParams};
//! use treehash::standard::{Standard, StandardParams};
//!
//! let hasher = Hasher::new(HasherOptions::default())?;
//! let data = vec![7u8; 100_000];
//! let params = TreeParams::new(Algorithm::Sha3_256, 2, 4)?; // 16 leaves
//! let out = hasher.hash_bytes(&params, &data)?;
//! assert_eq!(
//!     hex::encode(&out.digest),
//!     "67ea51da5a858b5fa610a780eddc40314fb55625089d2ea4e6487ac02f6c6a82"
//! );
//! println!("{}  {}", hex::encode(&out.digest), params.label());
//! let kt128 = StandardParams::new(Standard::Kt128);
//! let out = hasher.hash_bytes(&kt128, &data)?;
//! assert_eq!(
//!     hex::encode(&out.digest),
//!     "27de01be64759f4aebee7c8648695c14ca8ac5b7736dc206b76484d4712d3595"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # The API
//!
//! 38 items, as rustdoc lists them with the default features: 32 types
//! and traits and 6 functions, at the root and in five modules.
//! The parameters' defaults and limits are associated constants of the type
//! they limit, as `u32::MAX` is (`TreeParams::MAX_LEAVES`,
//! `HasherOptions::MAX_THREADS`): rustdoc lists them on the type's page
//! (docs/decisions/0027, 0034 and 0036 say how the API came to this).
//!
//! | for | items |
//! |---|---|
//! | hashing | [`Hasher`], [`HasherOptions`] (its limits [`HasherOptions::MAX_THREADS`], [`HasherOptions::MAX_PIECE_BYTES`]), [`BackendChoice`], [`CpuPath`]; what came out: [`HashOutput`], [`BackendUsed`], [`Timings`] |
//! | a message in parts | [`Stream`] |
//! | many files | [`ListInput`] |
//! | parameters | [`Params`] (tree or standard; every entry point takes `impl Into<Params>`, and labels parse into it: `"KT128".parse()`, [`Params::from_label`]), [`Function`]; [`params`]: [`TreeParams`] (the LI defaults and limits: [`TreeParams::DEFAULT_HEIGHT`], [`TreeParams::MAX_LEAVES`], …), [`Algorithm`], [`ParamError`]; [`standard`]: [`StandardParams`] (the standard functions' defaults and limits: [`StandardParams::DEFAULT_BLOCK_SIZE`], [`StandardParams::MAX_CUSTOMIZATION_LEN`], …), [`Standard`], [`standard::Family`] |
//! | parts and joins | [`parts`]: [`Part`] ([`Part::FORMAT_VERSION`]), [`PartOutput`], [`Joined`], [`parts::join`], [`parts::join_bytes`], [`parts::NameRule`], [`parts::read_part`]; [`Params::unsplittable`] |
//! | progress | [`Progress`] (`&()` shows none), [`EngineShare`], [`EngineId`] |
//! | errors | [`HashError`], [`ParamError`] (a label's too), [`PartError`], [`JoinError`] |
//! | GPUs | [`gpu`]: [`gpu::Devices`], [`gpu::CopyMode`], [`gpu::GpuBackend`], [`gpu::GpuInfo`], [`gpu::driver_present`], [`gpu::DeviceBytes`] |
//! | a file truncated while mapped | [`sigbus`]: [`sigbus::recover`], [`sigbus::raised_by_an_access`], for a program's SIGBUS handler |
//!
//! Modules hidden from this documentation (`checkfile`, `input`,
//! `label`, `output_file`, `function`'s option parsing, `sponge`, …) are public
//! only for the treehash tool (`cli/`), the Python package, the tests and
//! the benchmarks: they are no part of the API and may change at any
//! release (docs/decisions/0027-cli-crate-and-public-api.md). The reference
//! implementation, the spec in plain code that the tests, the benchmarks
//! and the tool's `--verify` hold the library to, is no module of it but a
//! crate of its own, `treehash-reference` (`reference/`).

// Without the GPU backend (no `gpu` feature, or not Linux) the code that only the GPU backend calls (the
// kernels' tables, the leaf level's launch arguments) is unused; the
// default build, which has it, is the one that finds dead code.
#![cfg_attr(not(gpu_backend), allow(dead_code))]
#![warn(unreachable_pub, missing_docs)]

// Unix only (Linux on any architecture, macOS on the CPU): the input path
// reads files with pread and mmap, and SIGBUS recovery rests on POSIX
// signals. Windows would need another input path (docs/PLATFORMS.md).
#[cfg(not(unix))]
compile_error!(
    "treehash supports Linux and macOS only; Windows lacks pread on descriptors, \
     mmap/madvise and SIGBUS, which its input path needs (see docs/PLATFORMS.md)"
);

// The library's API is what the crate root re-exports and the public
// modules below hold. A module marked `#[doc(hidden)]` is for the treehash
// tool, the Python package, the tests and the benchmarks; not part of the
// API (docs/decisions/0027-cli-crate-and-public-api.md).
#[doc(hidden)] // for the treehash tool and tests; not part of the API
pub mod checkfile;
#[doc(hidden)] // for the benchmarks (chunks, measure); `CpuPath` is re-exported
pub mod cpu;
mod engine;
#[doc(hidden)] // for the treehash tool and tests; `HashError` is re-exported
pub mod error;
#[doc(hidden)] // for the treehash tool and tests; its types are re-exported
pub mod function;
pub mod gpu;
mod hasher;
#[doc(hidden)] // for the treehash tool and tests; not part of the API
pub mod input;
#[doc(hidden)] // for the treehash tool and tests; `Params` reads labels
pub mod label;
mod message;
#[doc(hidden)] // for the treehash tool and tests; not part of the API
pub mod output_file;
pub mod params;
pub mod parts;
mod progress;
mod schedule;
pub mod sigbus;
#[doc(hidden)] // for the tests and benchmarks; not part of the API
pub mod sponge;
pub mod standard;
mod stream;
#[cfg(test)]
mod test_reference;
#[cfg(test)]
mod test_rng;
mod threads;
mod timings;
mod trace;
mod tree;

pub use cpu::CpuPath;
pub use error::HashError;
pub use function::{Function, Params};
pub use hasher::ListInput;
pub use hasher::{BackendChoice, BackendUsed, HashOutput, Hasher, HasherOptions};
pub use params::{Algorithm, ParamError, TreeParams};
pub use parts::{JoinError, Joined, Part, PartError, PartOutput};
pub use progress::{EngineId, EngineShare, Progress};
pub use standard::{Standard, StandardParams};
pub use stream::Stream;
pub use timings::Timings;

/// Sizes where the input path changes course, for tests that straddle them.
#[doc(hidden)]
pub mod thresholds {
    /// Files of one piece up to this size are read, not mapped.
    pub const SMALL_FILE_READ: usize = crate::input::SMALL_FILE_READ;
    /// Inputs of one piece up to this size are hashed inline, on the
    /// calling thread alone.
    pub const INLINE_MAX: u64 = crate::cpu::INLINE_MAX;
}
