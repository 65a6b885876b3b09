//! Where an input's hashing runs: inline on the calling thread (a small
//! input, or one of many side by side), on the pool, or from a thread of its
//! own when the caller is a rayon worker (which must never wait on the pool).

use super::CpuBackend;
use super::workers::Workers;
use crate::error::HashError;
use crate::threads;

/// Inputs up to this size are hashed inline, on the calling thread alone:
/// below it waking the pool costs more than it saves, above it the pool's
/// cores win. Where between 16 and 256 KiB the bound lies matters less than
/// a host's noise (docs/decisions/0007-small-inputs-inline.md).
pub(crate) const INLINE_MAX: u64 = 64 << 10;

thread_local! {
    /// Set while this thread hashes an input inline: the engines begun
    /// meanwhile loop on it alone.
    static INLINE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `work` with [`INLINE`] set to `inline` on this thread, and restores
/// the value it had (also when `work` panics).
fn with_inline<R>(inline: bool, work: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            INLINE.set(self.0);
        }
    }
    let _restore = Restore(INLINE.replace(inline));
    work()
}

/// Runs `work` on a thread of its own and waits for it: a rayon worker that
/// waited for another pool (or for windows and GPUs) itself would either
/// take a worker from the hashing or, if it is another pool's, run that
/// pool's next jobs while it waits, nesting the caller's work inside ours.
/// A plain thread's join waits without running anything. An error where
/// the system refuses the thread.
pub(crate) fn off_rayon_workers<T: Send, E: From<HashError> + Send>(
    work: impl FnOnce() -> Result<T, E> + Send,
) -> Result<T, E> {
    if rayon::current_thread_index().is_none() {
        return work();
    }
    std::thread::scope(|s| match threads::spawn_scoped(s, work)?.join() {
        Ok(out) => out,
        Err(panic) => std::panic::resume_unwind(panic),
    })
}

impl CpuBackend {
    /// Runs `work`, the hashing of an input of one piece (`len` bytes), in
    /// one call: up to [`INLINE_MAX`] bytes inline on the calling thread,
    /// where the engines begun inside `work` loop on it alone; larger, on
    /// the pool (started here), where the steps' own calls into the pool
    /// are then direct. Called step by step from outside, each step (the
    /// piece, the leaves' padding, each parent level) would wake the pool's
    /// workers and leave them spinning, which costs more than a small
    /// file's hashing (docs/decisions/0007-small-inputs-inline.md;
    /// docs/PERFORMANCE.md, "Lists and small files").
    pub(crate) fn run_one_piece<T: Send, E: From<HashError> + Send>(
        &self,
        len: u64,
        work: impl FnOnce() -> Result<T, E> + Send,
    ) -> Result<T, E> {
        if len <= INLINE_MAX {
            return with_inline(true, work);
        }
        let pool = self.start_pool()?;
        if pool.current_thread_index().is_some() {
            return with_inline(false, work);
        }
        off_rayon_workers(|| pool.install(|| with_inline(false, work)))
    }

    /// Runs `work`, the hashing of an input of several pieces, which waits
    /// for windows, GPUs and the pool (started here): from the calling
    /// thread, or from a thread of its own when the caller is a rayon
    /// worker; its engines use the pool.
    pub(crate) fn run_pieces<T: Send, E: From<HashError> + Send>(
        &self,
        work: impl FnOnce() -> Result<T, E> + Send,
    ) -> Result<T, E> {
        self.start_pool()?;
        off_rayon_workers(|| with_inline(false, work))
    }

    /// Runs `work`, the hashing of an input of any length, on the calling
    /// thread alone, its engines looping there (one input of many hashed
    /// side by side, each on its own thread).
    pub(crate) fn run_alone<R>(&self, work: impl FnOnce() -> R) -> R {
        with_inline(true, work)
    }

    /// The threads the engines hash on: the calling thread alone for an
    /// input that [`CpuBackend::run_one_piece`] runs inline, else the pool.
    pub(crate) fn workers(&self) -> Workers<'_> {
        if INLINE.get() {
            Workers::Inline
        } else {
            Workers::Pool(self.pool())
        }
    }
}
