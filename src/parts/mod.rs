//! Parts and joins: one file hashed by many processes or hosts (issue 25).
//!
//! The leaves of an LI tree are independent, so N processes can each own a
//! range of them: part I of N owns leaves [⌊I·L/N⌋, ⌊(I+1)·L/N⌋) and reads
//! only their run of bytes in every stripe of the file
//! ([`Hasher::hash_part`](crate::Hasher::hash_part)). A part stores the
//! roots of the whole subtrees that tile its range (the chaining values of
//! single leaves where no larger subtree fits), with the parameters, the
//! file's size, modification time and name, and a check value, in a small
//! versioned format ([`Part::to_bytes`], docs/SPEC.md "Parts and joins").
//! [`join`] takes a whole set, in any order, and returns the digest that
//! one process hashing the file would; it refuses a set with a part
//! missing or given twice, parts of another file or other parameters, or a
//! corrupt part.
//!
//! ```
//! use treehash::parts::{join_bytes, Part};
//! use treehash::{Algorithm, Hasher, HasherOptions, NoProgress, TreeParams};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("data");
//! std::fs::write(&path, vec![7u8; 100_000])?;
//! let params = TreeParams::new(Algorithm::Sha3_256, 2, 4)?;
//! let hasher = Hasher::new(HasherOptions::default())?;
//! // On three hosts, one part each; the bytes travel to one place.
//! let parts: Vec<Vec<u8>> = (0..3)
//!     .map(|i| hasher.hash_part(&params, &path, i, 3, &NoProgress).map(|p| p.part.to_bytes()))
//!     .collect::<Result<_, _>>()?;
//! let joined = join_bytes(&parts)?;
//! assert_eq!(joined.digest, hasher.hash_path(&params, &path, &NoProgress)?.digest);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod format;
mod join;
mod nodes;
mod plan;
mod read;

use std::fmt;
use std::ops::Range;

use crate::params::TreeParams;

pub use format::{FORMAT_VERSION, PartError};
pub use join::{JoinError, Joined, join, join_bytes};
pub use plan::{
    MIN_RUN_BYTES, PartPlan, longer_runs, max_parts_with_long_runs, part_leaves, plan,
    runs_are_short,
};
pub use read::PartOutput;

/// The key check of a prefix (`format::key_check`).
type KeyCheck = [u8; 16];

/// The result of hashing the leaves one part owns: see the module's
/// documentation. Made by [`Hasher::hash_part`](crate::Hasher::hash_part)
/// or read by [`Part::from_bytes`].
#[derive(Clone, PartialEq, Eq)]
pub struct Part {
    /// The parameters, without the prefix (which is never written).
    params: TreeParams,
    /// Where a prefix was used: its key check.
    key_check: Option<KeyCheck>,
    file_len: u64,
    /// The file's modification time, in nanoseconds since 1970.
    modified_ns: Option<i64>,
    count: u64,
    index: u64,
    leaves: Range<u64>,
    /// Leaves of the whole tree that hold a block (the first ones).
    holding: u64,
    /// The file's name as given (bytes).
    name: Vec<u8>,
    /// The values of its whole subtrees that hold a block, in order.
    values: Vec<u8>,
}

impl Part {
    /// The parameters it was made with, without the prefix.
    pub fn params(&self) -> &TreeParams {
        &self.params
    }
    /// Whether it was made with a prefix.
    pub fn keyed(&self) -> bool {
        self.key_check.is_some()
    }
    /// Whether `prefix` is the one it was made with (by its key check).
    pub fn prefix_matches(&self, prefix: &[u8]) -> bool {
        match self.key_check {
            Some(check) => format::key_check(prefix) == check,
            None => prefix.is_empty(),
        }
    }
    /// The file's size in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }
    /// The file's modification time in nanoseconds since 1970, if known.
    pub fn modified_ns(&self) -> Option<i64> {
        self.modified_ns
    }
    /// The number of parts in its split.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// Its index in the split, 0 ≤ index < count.
    pub fn index(&self) -> u64 {
        self.index
    }
    /// The leaves it owns.
    pub fn leaves(&self) -> Range<u64> {
        self.leaves.clone()
    }
    /// The file's name as given (bytes; empty if none).
    pub fn name(&self) -> &[u8] {
        &self.name
    }
    /// The values it stores.
    pub fn value_count(&self) -> u64 {
        self.subtrees()
            .iter()
            .map(|t| plan::stored(&self.params, t, self.holding))
            .sum()
    }
}

impl fmt::Debug for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Part")
            .field("params", &self.params)
            .field("keyed", &self.keyed())
            .field("file_len", &self.file_len)
            .field("modified_ns", &self.modified_ns)
            .field("index", &self.index)
            .field("count", &self.count)
            .field("leaves", &self.leaves)
            .field("name", &String::from_utf8_lossy(&self.name))
            .field("values", &self.value_count())
            .finish()
    }
}
