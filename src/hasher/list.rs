//! Many inputs side by side. An input that alone would not fill the engines
//! (one piece long, or a single sponge at height 0) is hashed on one worker
//! thread, inline, in a batch with the next such inputs, while other batches
//! run on the other workers; an input long enough to fill the engines is
//! hashed on every CPU core, one such input at a time, beside the small ones.
//! Under `Auto`, once the long inputs waiting would take the CPU more than
//! the GPUs' start-up repays, the GPUs start, and each takes whole long
//! inputs beside the CPU's. Results come back in the inputs' order, each as
//! soon as it and every one before it are done, and only a bounded number
//! of inputs is open, mapped or waiting to be given back at once.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc;

use crate::cpu::off_rayon_workers;
use crate::error::HashError;
use crate::function::Params;
use crate::hasher::{HashOutput, Hasher, Placement};
use crate::input::is_stdin_name;
use crate::progress::Progress;
use crate::standard::Family;
use crate::threads;

/// One input of a list: a file (`-` is standard input) and the parameters
/// its digest is made with.
#[derive(Clone, Debug)]
pub struct ListInput {
    /// The parameters of its digest.
    pub params: Params,
    /// The file; `-` is standard input.
    pub path: PathBuf,
}

impl ListInput {
    /// Whether the input's digest is one sponge over the whole message (LI
    /// at height 0, TurboSHAKE), which no more than one thread can hash.
    fn one_sponge(&self) -> bool {
        match &self.params {
            Params::Tree(p) => p.leaf_count() == 1,
            Params::Standard(p) => p.standard().family() == Family::TurboShake,
        }
    }

    /// An LI tree a GPU can share (of more than one leaf).
    fn gpu_tree(&self) -> Option<&crate::params::TreeParams> {
        match &self.params {
            Params::Tree(p) if p.leaf_count() > 1 => Some(p),
            _ => None,
        }
    }
}

/// What one item of a list came to: the digest or why there is none, or
/// nothing for an item that held no input.
pub(super) type ListResult = Option<Result<HashOutput, HashError>>;

/// Batches of inputs hashed alone at once, per worker thread: one more
/// than the workers keeps each busy while the caller hands out the next.
const BATCHES_PER_THREAD: usize = 2;
/// A batch of inputs hashed alone, one after the other by one worker, holds
/// at most this many inputs and about this many bytes: each batch costs a
/// hand-over to a worker and back (two thread wake-ups), which a small
/// file's hashing does not repay on its own.
const BATCH_INPUTS: usize = 64;
const BATCH_BYTES: u64 = 1 << 20;
/// Bytes of memory that the inputs hashed alone at once hold, at most (one
/// input may hold more): each holds its length, or its piece buffer where
/// it is longer (a single sponge reads a small piece at a time;
/// docs/decisions/0020-lists-inputs-alone.md).
const ALONE_BYTES: u64 = 256 << 20;
/// Items waiting to be given back in order, per worker thread: a slow input
/// holds back those after it, and this bounds how many.
const WAITING_PER_THREAD: usize = 4 * BATCH_INPUTS;

/// An item's allotment: where it runs, which the list turns into a
/// [`Placement`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Allotment {
    /// In a batch on one worker thread, inline.
    Alone,
    /// On every CPU core (and, for a list's only long input, its
    /// latecomers), one such input at a time.
    Engines,
    /// On the GPU of this ordinal alone, one input at a time.
    Gpu(usize),
}

/// An item that is not given back yet.
struct Waiting<T> {
    tag: T,
    result: Option<ListResult>,
}

/// Results sent to the list's driver: a batch's, or one long input's.
type Finished = Vec<(usize, Result<HashOutput, HashError>)>;

/// Sends results to the list's driver when dropped, with, for the inputs
/// whose hashing panicked before it could finish, an error that says so:
/// the driver waits for every input it started.
struct Reply {
    indices: Vec<usize>,
    to: mpsc::Sender<(Allotment, u64, Finished)>,
    allotment: Allotment,
    /// The inputs' bytes (those counted against [`ALONE_BYTES`]).
    bytes: u64,
    results: Finished,
    /// The error of an input whose result is missing when the reply drops.
    lost: fn() -> HashError,
}

/// The error of an input whose hashing panicked.
fn panicked() -> HashError {
    HashError::Internal("hashing this input panicked".into())
}

/// The error of an input whose thread the system refused.
fn no_thread() -> HashError {
    threads::refused(&std::io::Error::from_raw_os_error(libc::EAGAIN))
}

impl Drop for Reply {
    fn drop(&mut self) {
        let sent: Vec<usize> = self.results.iter().map(|(i, _)| *i).collect();
        for &index in self.indices.iter().filter(|i| !sent.contains(i)) {
            self.results.push((index, Err((self.lost)())));
        }
        let results = std::mem::take(&mut self.results);
        let _ = self.to.send((self.allotment, self.bytes, results));
    }
}

/// Inputs gathered into the next batch.
#[derive(Default)]
struct Batch {
    inputs: Vec<(usize, ListInput)>,
    bytes: u64,
}

/// A long input waiting to be allotted.
struct Long {
    index: usize,
    input: ListInput,
    /// Its length when known.
    len: Option<u64>,
}

/// The driver's account of a list under way.
struct Driver<T> {
    waiting: VecDeque<Waiting<T>>,
    /// The list index of `waiting`'s first item.
    first: usize,
    /// Batches hashed alone now, and their bytes.
    alone: (usize, u64),
    batch: Batch,
    /// Long inputs, waiting to be allotted in the list's order.
    long: VecDeque<Long>,
    /// A long input is on every CPU core now.
    cpu_busy: bool,
    /// The GPUs were asked to start, and those hashing an input now.
    gpus_asked: bool,
    gpus_busy: Vec<usize>,
    /// The CPU's rate on long inputs so far, in bytes a second.
    cpu_rate: Option<f64>,
    exhausted: bool,
}

impl<T> Driver<T> {
    fn under_way(&self) -> bool {
        self.alone.0 > 0 || self.cpu_busy || !self.gpus_busy.is_empty()
    }

    /// Whether another item may be taken from the list.
    fn room(&self, threads: usize) -> bool {
        !self.exhausted
            && self.waiting.len() < WAITING_PER_THREAD * threads
            && self.alone.0 < BATCHES_PER_THREAD * threads
            && self.alone.1 + self.batch.bytes < ALONE_BYTES
    }

    /// Takes in finished results.
    fn finished(&mut self, allotment: Allotment, bytes: u64, results: Finished) {
        match allotment {
            Allotment::Alone => self.alone = (self.alone.0 - 1, self.alone.1 - bytes),
            Allotment::Engines => {
                self.cpu_busy = false;
                if let [(_, Ok(out))] = results.as_slice() {
                    let secs = out.timings.total.as_secs_f64();
                    if secs > 0.0 && out.bytes > 0 {
                        self.cpu_rate = Some(out.bytes as f64 / secs);
                    }
                }
            }
            Allotment::Gpu(ordinal) => self.gpus_busy.retain(|&o| o != ordinal),
        }
        for (index, out) in results {
            if let Some(item) = self.waiting.get_mut(index - self.first) {
                item.result = Some(Some(out));
            }
        }
    }
}

impl Hasher {
    /// [`Hasher::hash_list`]'s work.
    pub(crate) fn hash_items<T: Send, E: Send>(
        &self,
        items: impl IntoIterator<Item = (T, Option<ListInput>), IntoIter: Send>,
        progress: &dyn Progress,
        mut done: impl FnMut(T, ListResult) -> Result<(), E> + Send,
    ) -> Result<(), E> {
        let mut items = items.into_iter();
        // A list of one input (a command line naming one file) is that input
        // on every engine, from this thread: a small one is hashed inline
        // without starting the pool (which cost more than its hashing), a
        // longer one on every core rather than on one worker.
        let mut items = match (items.next(), items.next()) {
            (Some((tag, input)), None) => {
                let result = input.map(|input| {
                    let progress = &Advance(progress);
                    self.hash_path_on(&input.params, &input.path, progress, Placement::Engines)
                });
                return done(tag, result);
            }
            (first, second) => first.into_iter().chain(second).chain(items),
        };
        let threads = self.cpu().threads();
        let mut list = Driver {
            waiting: VecDeque::new(),
            first: 0,
            alone: (0, 0),
            batch: Batch::default(),
            long: VecDeque::new(),
            cpu_busy: false,
            gpus_asked: false,
            gpus_busy: Vec::new(),
            cpu_rate: None,
            exhausted: false,
        };
        let mut failure = None;
        let driven = self.cpu().start_pool().map(drop).and_then(|()| {
            off_rayon_workers(|| {
                let (to_driver, results) = mpsc::channel();
                std::thread::scope(|long_threads| {
                    self.cpu().pool().in_place_scope(|workers| {
                        let reply = |indices: Vec<usize>, allotment: Allotment, bytes: u64| Reply {
                            results: Vec::with_capacity(indices.len()),
                            indices,
                            to: to_driver.clone(),
                            allotment,
                            bytes,
                            lost: panicked,
                        };
                        let hash = move |input: &ListInput, placement: Placement| {
                            let progress = &Advance(progress);
                            self.hash_path_on(&input.params, &input.path, progress, placement)
                        };
                        // Hands the batch gathered so far to a worker.
                        let send_batch = |list: &mut Driver<T>| {
                            let Batch { inputs, bytes } = std::mem::take(&mut list.batch);
                            if inputs.is_empty() {
                                return;
                            }
                            list.alone = (list.alone.0 + 1, list.alone.1 + bytes);
                            let indices = inputs.iter().map(|(i, _)| *i).collect();
                            let mut reply = reply(indices, Allotment::Alone, bytes);
                            workers.spawn(move |_| {
                                for (index, input) in inputs {
                                    reply.results.push((index, hash(&input, Placement::Alone)));
                                }
                            });
                        };
                        // Starts a long input on its allotment: where the
                        // system refuses the thread, the reply drops unrun and
                        // gives the input that error.
                        let start_long =
                            |long: Long, allotment: Allotment, placement: Placement| {
                                let mut reply = reply(vec![long.index], allotment, 0);
                                reply.lost = no_thread;
                                let _ = threads::spawn_scoped(long_threads, move || {
                                    reply.lost = panicked;
                                    reply
                                        .results
                                        .push((long.index, hash(&long.input, placement)));
                                });
                            };
                        loop {
                            // Take items while the bounds allow.
                            while failure.is_none() && list.room(threads) {
                                let Some((tag, input)) = items.next() else {
                                    list.exhausted = true;
                                    break;
                                };
                                let index = list.first + list.waiting.len();
                                let mut item = Waiting { tag, result: None };
                                match input.map(|input| (self.allotment_of(&input), input)) {
                                    None => item.result = Some(None),
                                    Some(((Allotment::Alone, Some(len)), input)) => {
                                        list.batch.inputs.push((index, input));
                                        list.batch.bytes += len;
                                        if list.batch.inputs.len() >= BATCH_INPUTS
                                            || list.batch.bytes >= BATCH_BYTES
                                        {
                                            send_batch(&mut list);
                                        }
                                    }
                                    Some(((_, len), input)) => {
                                        list.long.push_back(Long { index, input, len })
                                    }
                                }
                                list.waiting.push_back(item);
                            }
                            if failure.is_some() {
                                list.long.clear();
                                list.batch = Batch::default();
                            }
                            // Nothing more to take for now: what is gathered goes.
                            send_batch(&mut list);
                            self.start_gpus_if_worth_it(&mut list);
                            for ordinal in self.idle_gpus(&list) {
                                let gpu_can_take = |l: &Long| {
                                    l.input.gpu_tree().is_some_and(|p| {
                                        self.fleet().is_ready(ordinal, p.algorithm())
                                    })
                                };
                                if let Some(at) = list.long.iter().position(gpu_can_take)
                                    && let Some(long) = list.long.remove(at)
                                {
                                    list.gpus_busy.push(ordinal);
                                    start_long(
                                        long,
                                        Allotment::Gpu(ordinal),
                                        Placement::Gpu(ordinal),
                                    );
                                }
                            }
                            if !list.cpu_busy
                                && let Some(long) = list.long.pop_front()
                            {
                                list.cpu_busy = true;
                                // Once the GPUs take inputs of their own, the
                                // CPU's are its own too.
                                let placement = match list.gpus_asked {
                                    true => Placement::Cpu,
                                    false => Placement::Engines,
                                };
                                start_long(long, Allotment::Engines, placement);
                            }
                            // Give back, in order, what is done.
                            while list.waiting.front().is_some_and(|w| w.result.is_some()) {
                                let Some(Waiting {
                                    tag,
                                    result: Some(result),
                                }) = list.waiting.pop_front()
                                else {
                                    unreachable!("the front item has its result");
                                };
                                list.first += 1;
                                if failure.is_none()
                                    && let Err(e) = done(tag, result)
                                {
                                    failure = Some(e);
                                }
                            }
                            if !list.under_way() {
                                if list.exhausted || failure.is_some() {
                                    break;
                                }
                                continue;
                            }
                            match results.recv() {
                                Ok((allotment, bytes, results)) => {
                                    list.finished(allotment, bytes, results)
                                }
                                Err(_) => unreachable!("the driver holds a sender"),
                            }
                        }
                    });
                });
                Ok::<_, HashError>(())
            })
        });
        // No thread for the list at all: each item gets the refusal.
        if let Err(refused) = driven {
            let why = refused.to_string();
            for (tag, input) in items {
                let result = input.map(|_| Err(HashError::Threads(why.clone())));
                done(tag, result)?;
            }
        }
        failure.map_or(Ok(()), Err)
    }

    /// An input's allotment, and its length when known (alone, the bytes it
    /// holds in memory, as [`ALONE_BYTES`] counts them): alone when it
    /// would not fill the engines.
    fn allotment_of(&self, input: &ListInput) -> (Allotment, Option<u64>) {
        if is_stdin_name(&input.path) {
            return (Allotment::Engines, None);
        }
        // A name that cannot be looked up fails the same way when opened.
        let Ok(meta) = std::fs::metadata(&input.path) else {
            return (Allotment::Alone, Some(0));
        };
        if !meta.is_file() {
            return (Allotment::Alone, Some(0));
        }
        let len = meta.len();
        let (piece, alone_piece) = match &input.params {
            Params::Tree(p) => (self.cpu().piece_len(p), self.cpu().alone_piece_len(p)),
            Params::Standard(_) => {
                let piece = self.cpu().standard_piece_target();
                (piece, piece)
            }
        };
        if self.hashes_alone() && (len <= piece as u64 || input.one_sponge()) {
            // Charged what it holds in memory: its piece buffer at most.
            (Allotment::Alone, Some(len.min(alone_piece as u64)))
        } else {
            (Allotment::Engines, Some(len))
        }
    }

    /// Under `Auto`, asks the GPUs to start once the long inputs waiting
    /// would keep the CPU busy for longer than their start-up repays, at
    /// the CPU's rate on the list's long inputs so far (the rule of one
    /// long input: `auto`).
    fn start_gpus_if_worth_it<T>(&self, list: &mut Driver<T>) {
        if list.gpus_asked || !self.lists_may_use_gpus() {
            return;
        }
        if self.waits_for_gpus()
            && let Some(params) = list.long.iter().find_map(|l| l.input.gpu_tree())
        {
            // Tests: every GPU ready before the first long input.
            self.fleet()
                .prepare_now(params.algorithm(), self.cpu().piece_len(params));
            list.gpus_asked = true;
            return;
        }
        let Some(rate) = list.cpu_rate else { return };
        let shareable = || list.long.iter().filter(|l| l.input.gpu_tree().is_some());
        let waiting: u64 = shareable().filter_map(|l| l.len).sum();
        if self.list_repays_gpus(waiting, rate)
            && let Some(params) = list.long.iter().find_map(|l| l.input.gpu_tree())
        {
            let piece_len = self.cpu().piece_len(params);
            self.fleet()
                .start_in_background(params.algorithm(), piece_len);
            list.gpus_asked = true;
        }
    }

    /// The GPUs ready (for some algorithm) and free to take a whole input.
    fn idle_gpus<T>(&self, list: &Driver<T>) -> Vec<usize> {
        if !list.gpus_asked || !self.lists_may_use_gpus() {
            return Vec::new();
        }
        self.fleet()
            .ordinals_ready()
            .into_iter()
            .filter(|o| !list.gpus_busy.contains(o))
            .collect()
    }
}

/// Passes on the bytes hashed and the engines' shares, not the start of
/// each input: a list's progress knows its own totals.
struct Advance<'p>(&'p dyn Progress);

impl Progress for Advance<'_> {
    fn advance(&self, bytes: u64) {
        self.0.advance(bytes);
    }

    fn engines(&self, shares: &[crate::EngineShare]) {
        self.0.engines(shares);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::standard::{Standard, StandardParams};
    use crate::{BackendChoice, HasherOptions};

    fn hasher() -> Hasher {
        Hasher::new(HasherOptions {
            backend: BackendChoice::Cpu,
            threads: Some(2),
            ..Default::default()
        })
        .unwrap()
    }

    /// The results of a list, in order.
    fn results(hasher: &Hasher, items: Vec<Option<ListInput>>) -> Vec<Option<Vec<u8>>> {
        let mut out = Vec::new();
        let items = items.into_iter().enumerate();
        hasher
            .hash_list(items, &(), |k, result| {
                assert_eq!(k, out.len(), "in the list's order");
                // An error as an empty digest (no digest is empty).
                out.push(result.map(|r| r.map(|o| o.digest).unwrap_or_default()));
                Ok::<(), ()>(())
            })
            .unwrap();
        out
    }

    /// A list of one small input is hashed without starting the pool; one
    /// of a longer input starts it (every core takes part); lists of one
    /// item that holds no input, or names no file, come back as such; a
    /// list of two goes through the driver. Each digest is the input's own.
    #[test]
    fn a_lone_input_is_hashed_from_the_calling_thread() {
        let dir = tempfile::tempdir().unwrap();
        let params: Params = StandardParams::new(Standard::Kt128).into();
        let file = |name: &str, len: usize| {
            let path = dir.path().join(name);
            let bytes: Vec<u8> = (0..len).map(|i| (i * 31 + 7) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            let want = treehash_reference::kangaroo::kt128(&bytes, &[], 32);
            let input = ListInput {
                params: params.clone(),
                path,
            };
            (input, want)
        };
        let (small, small_digest) = file("small", 1024);
        let (long, long_digest) = file("long", 300_000);

        let lone_small = hasher();
        let got = results(&lone_small, vec![Some(small.clone())]);
        assert_eq!(got, vec![Some(small_digest.clone())]);
        assert!(!lone_small.cpu().pool_started(), "no pool for 1 KiB");

        let lone_long = hasher();
        let got = results(&lone_long, vec![Some(long.clone())]);
        assert_eq!(got, vec![Some(long_digest.clone())]);
        assert!(lone_long.cpu().pool_started(), "every core for 300 KB");

        let h = hasher();
        assert_eq!(results(&h, vec![None]), vec![None]);
        let missing = ListInput {
            params: params.clone(),
            path: dir.path().join("missing"),
        };
        assert_eq!(results(&h, vec![Some(missing)]), vec![Some(Vec::new())]);
        let got = results(&h, vec![Some(small), None, Some(long)]);
        assert_eq!(got, vec![Some(small_digest), None, Some(long_digest)]);
    }
}
