//! How a backend reports the bytes it has hashed, for a progress bar, and
//! what each engine did.

use std::fmt;
use std::time::Duration;

/// Told how far hashing has got. Backends call it once per piece (tens of
/// megabytes), never from the inner loop.
pub trait Progress: Sync {
    /// Hashing of an input starts; `total` is its size when known.
    fn start(&self, _total: Option<u64>) {}
    /// `bytes` more bytes of the input have been hashed.
    fn advance(&self, bytes: u64);
    /// Several engines share the input: each one's bytes so far and the
    /// time it took (told once per piece).
    fn engines(&self, _shares: &[EngineShare]) {}
}

/// How one engine took part in one input (`--timings`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct EngineShare {
    /// The engine: the CPU's workers, or a GPU.
    pub engine: EngineId,
    /// Bytes of M that were its leaves' blocks.
    pub bytes: u64,
    /// Time it spent absorbing them (for a GPU: staging its transfers and
    /// waiting for free buffers; the device works on behind it).
    pub busy: Duration,
}

/// Ignores progress: `&()` is the progress of a caller that shows none.
impl Progress for () {
    fn advance(&self, _bytes: u64) {}
}

/// Counts the bytes it is told about (for tests).
#[cfg(test)]
#[derive(Default)]
pub(crate) struct CountingProgress(pub(crate) std::sync::atomic::AtomicU64);

#[cfg(test)]
impl Progress for CountingProgress {
    fn advance(&self, bytes: u64) {
        self.0
            .fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Which engine took part in an input. Shown as `cpu`, or `gpu` and the
/// device's ordinal (`gpu0`), as `--timings` and `--json` print it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EngineId {
    /// The CPU's workers.
    Cpu,
    /// The CUDA device of this ordinal.
    Gpu(usize),
}

impl EngineId {
    /// Whether it is a GPU.
    pub fn is_gpu(self) -> bool {
        matches!(self, EngineId::Gpu(_))
    }
}

impl fmt::Display for EngineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // `pad`, so that a width (`{:<8}` in tables) applies.
            EngineId::Cpu => f.pad("cpu"),
            EngineId::Gpu(ordinal) => f.pad(&format!("gpu{ordinal}")),
        }
    }
}
