//! Where the CPU engines' loops run: spread over the backend's pool, or one
//! after the other on the calling thread.
//!
//! A small input runs inline: waking a pool costs more than its hashing,
//! and a thread that waits for a pool it is not part of may, if it is a
//! worker of another rayon pool, take up that pool's next job meanwhile
//! (rayon's `install` lets a waiting worker steal). A caller's own
//! `par_iter` over thousands of inputs then nests one hash inside another
//! until the stack overflows. Inline loops call into no pool at all.

use rayon::prelude::*;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Workers<'a> {
    /// The backend's pool; the caller is one of its threads, or a thread
    /// that waits for it without stealing (not another pool's worker).
    Pool(&'a rayon::ThreadPool),
    /// The calling thread alone.
    Inline,
}

impl Workers<'_> {
    /// The threads that share the work.
    pub(crate) fn threads(self) -> usize {
        match self {
            Workers::Pool(pool) => pool.current_num_threads(),
            Workers::Inline => 1,
        }
    }

    /// Runs `work`, which holds no parallel loop of its own, on one of the
    /// workers.
    pub(crate) fn run<R: Send>(self, work: impl FnOnce() -> R + Send) -> R {
        match self {
            Workers::Pool(pool) => pool.install(work),
            Workers::Inline => work(),
        }
    }

    /// Runs `a` and `b` side by side: `a` (which holds no parallel loop) on
    /// one worker while `b`'s parallel loops take the others, and that worker
    /// joins them when `a` is done. Inline, one after the other.
    pub(crate) fn join<A: Send, B: Send>(
        self,
        a: impl FnOnce() -> A + Send,
        b: impl FnOnce() -> B + Send,
    ) -> (A, B) {
        match self {
            Workers::Pool(pool) => pool.install(|| rayon::join(a, b)),
            Workers::Inline => (a(), b()),
        }
    }

    /// Calls `f(k, chunk)` for every chunk `k` of `items`, `chunk_len` items
    /// each (the last may be shorter).
    pub(crate) fn for_each_chunk<T: Send>(
        self,
        items: &mut [T],
        chunk_len: usize,
        f: impl Fn(usize, &mut [T]) + Sync + Send,
    ) {
        let done = self.try_for_each_chunk(items, chunk_len, |k, chunk| {
            f(k, chunk);
            Ok::<(), std::convert::Infallible>(())
        });
        match done {
            Ok(()) => {}
            Err(never) => match never {},
        }
    }

    /// [`for_each_chunk`](Self::for_each_chunk) for an `f` that can fail:
    /// the first error seen, once the chunks under way are done (those not
    /// started yet may be left).
    pub(crate) fn try_for_each_chunk<T: Send, E: Send>(
        self,
        items: &mut [T],
        chunk_len: usize,
        f: impl Fn(usize, &mut [T]) -> Result<(), E> + Sync + Send,
    ) -> Result<(), E> {
        match self {
            Workers::Pool(pool) => pool.install(|| {
                items
                    .par_chunks_mut(chunk_len)
                    .enumerate()
                    .try_for_each(|(k, chunk)| f(k, chunk))
            }),
            Workers::Inline => items
                .chunks_mut(chunk_len)
                .enumerate()
                .try_for_each(|(k, chunk)| f(k, chunk)),
        }
    }

    /// Calls `f(k, out, input)` for every pair of the `k`-th chunk of `outs`
    /// (`out_len` items) and of `inputs` (`input_len` items), in tasks of at
    /// least `min_pairs` pairs.
    pub(crate) fn for_each_pair<O: Send, I: Sync>(
        self,
        (outs, out_len): (&mut [O], usize),
        (inputs, input_len): (&[I], usize),
        min_pairs: usize,
        f: impl Fn(usize, &mut [O], &[I]) + Sync + Send,
    ) {
        match self {
            Workers::Pool(pool) => pool.install(|| {
                outs.par_chunks_mut(out_len)
                    .zip(inputs.par_chunks(input_len))
                    .enumerate()
                    .with_min_len(min_pairs.max(1))
                    .for_each(|(k, (out, input))| f(k, out, input))
            }),
            Workers::Inline => outs
                .chunks_mut(out_len)
                .zip(inputs.chunks(input_len))
                .enumerate()
                .for_each(|(k, (out, input))| f(k, out, input)),
        }
    }
}
