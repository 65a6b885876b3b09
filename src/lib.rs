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
//! [`parts::join`]), or, with the `gpu` feature, bytes already in GPU memory
//! (`Hasher::hash_device`). A [`Stream`] takes an input in `update`s, as
//! hashlib does. [`reference`](mod@reference) is the spec in code, slow and obvious, for
//! tests.
//!
//! ```
//! use treehash::{Algorithm, Hasher, HasherOptions, TreeParams};
//! use treehash::standard::{Standard, StandardParams};
//!
//! let hasher = Hasher::new(HasherOptions::default())?;
//! let data = vec![7u8; 100_000];
//! let params = TreeParams::new(Algorithm::Sha3_256, 2, 4)?; // 16 leaves
//! let out = hasher.hash_bytes(&params, &data)?;
//! assert_eq!(out.digest, treehash::reference::tree_hash(&params, &data));
//! println!("{}  {}", hex::encode(&out.digest), params.label());
//! let kt128 = StandardParams::new(Standard::Kt128);
//! let out = hasher.hash_bytes(&kt128, &data)?;
//! assert_eq!(out.digest, treehash::reference::kangaroo::kt128(&data, b"", 32));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Without the `gpu` feature the code that only the GPU backend calls (the
// kernels' tables, the leaf level's launch arguments) is unused; the
// default build, which has it, is the one that finds dead code.
#![cfg_attr(not(feature = "gpu"), allow(dead_code))]

// Linux only: the input path relies on Linux's mmap, madvise
// (MADV_POPULATE_READ), posix_fadvise and F_SETPIPE_SZ, SIGBUS recovery on
// its signal semantics, and the closed-standard-input probe on ELF's
// .init_array.
#[cfg(not(target_os = "linux"))]
compile_error!("treehash supports Linux only");

pub mod checkfile;
pub mod cpu;
mod engine;
pub mod error;
pub mod function;
pub mod gpu;
pub mod hasher;
pub mod input;
mod message;
pub mod output_file;
pub mod params;
pub mod parts;
pub mod progress;
pub mod reference;
mod schedule;
pub mod sigbus;
pub mod sponge;
pub mod standard;
mod stream;
#[cfg(test)]
mod test_rng;
mod threads;
pub mod timings;
mod trace;
mod tree;

pub use cpu::CpuPath;
pub use error::HashError;
pub use function::{AsParams, Function, Label, Params, ParamsRef};
pub use hasher::{BackendChoice, BackendUsed, HashOutput, Hasher, HasherOptions, MAX_THREADS};
pub use hasher::{ListInput, ListResult};
pub use params::{Algorithm, ParamError, TreeLabel, TreeParams};
pub use parts::{JoinError, Joined, Part, PartError, PartOutput};
pub use progress::{EngineId, EngineShare, NoProgress, Progress};
pub use standard::{Standard, StandardLabel, StandardParams};
pub use stream::Stream;
pub use timings::Timings;

/// The largest piece of input handed to a backend at once; larger
/// [`HasherOptions::piece_bytes`] are taken as this.
pub const MAX_PIECE_BYTES: usize = message::MAX_PIECE;

/// Sizes where the input path changes course, for tests that straddle them.
#[doc(hidden)]
pub mod thresholds {
    /// Files of one piece up to this size are read, not mapped.
    pub const SMALL_FILE_READ: usize = crate::input::SMALL_FILE_READ;
    /// Inputs of one piece up to this size are hashed inline, on the
    /// calling thread alone.
    pub const INLINE_MAX: u64 = crate::cpu::INLINE_MAX;
}
