//! Many inputs side by side. An input that alone would not fill the engines
//! (one piece long, or a single sponge at height 0) is hashed on one worker
//! thread, inline, while the next ones start on the others; an input long
//! enough to fill them is hashed on every engine, one such input at a time,
//! beside the small ones. Results come back in the inputs' order, each as
//! soon as it and every one before it are done, and only a bounded number
//! of inputs is open, mapped or waiting to be given back at once.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc;

use crate::cpu::off_rayon_workers;
use crate::error::HashError;
use crate::hasher::{HashOutput, Hasher, Placement};
use crate::input::is_stdin_name;
use crate::params::TreeParams;
use crate::progress::Progress;

/// One input of a list: a file (`-` is standard input) and the parameters
/// its digest is made with.
#[derive(Clone, Debug)]
pub struct ListInput {
    pub params: TreeParams,
    pub path: PathBuf,
}

/// What one item of a list came to: the digest or why there is none, or
/// nothing for an item that held no input.
pub type ListResult = Option<Result<HashOutput, HashError>>;

/// Batches of inputs hashed alone at once, per worker thread: one more
/// than the workers keeps each busy while the caller hands out the next.
const BATCHES_PER_THREAD: usize = 2;
/// A batch of inputs hashed alone, one after the other by one worker, holds
/// at most this many inputs and about this many bytes: each batch costs a
/// hand-over to a worker and back (two thread wake-ups), which a small
/// file's hashing does not repay on its own.
const BATCH_INPUTS: usize = 64;
const BATCH_BYTES: u64 = 1 << 20;
/// Bytes of the inputs hashed alone at once, at most (one input may be
/// larger): each is mapped or read whole, so this bounds memory.
const ALONE_BYTES: u64 = 256 << 20;
/// Items waiting to be given back in order, per worker thread: a slow input
/// holds back those after it, and this bounds how many.
const WAITING_PER_THREAD: usize = 4 * BATCH_INPUTS;

/// Where one item runs.
enum Lane {
    /// Nothing to hash: given back in its place.
    Nothing,
    /// In a batch on one worker thread, inline; `len` bytes long.
    Alone { len: u64 },
    /// On every engine, one such input at a time.
    Engines,
}

/// An item that is not given back yet.
struct Waiting<T> {
    tag: T,
    result: Option<ListResult>,
}

/// Results sent to the list's driver: a batch's, or an input's on every
/// engine.
type Finished = Vec<(usize, Result<HashOutput, HashError>)>;

/// Sends results to the list's driver, or, for those the hashing panicked
/// before it could send, says so: the driver waits for every input it started.
struct Reply {
    indices: Vec<usize>,
    to: mpsc::Sender<(Lane, u64, Finished)>,
    /// The batch's bytes, or `None` for an input on every engine.
    alone_bytes: Option<u64>,
    results: Finished,
}

impl Reply {
    fn push(&mut self, index: usize, out: Result<HashOutput, HashError>) {
        self.results.push((index, out));
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        let sent: Vec<usize> = self.results.iter().map(|(i, _)| *i).collect();
        for &index in self.indices.iter().filter(|i| !sent.contains(i)) {
            let bug = HashError::Threads("internal error: hashing this input panicked".into());
            self.results.push((index, Err(bug)));
        }
        let (lane, bytes) = match self.alone_bytes {
            Some(bytes) => (Lane::Alone { len: bytes }, bytes),
            None => (Lane::Engines, 0),
        };
        let _ = self
            .to
            .send((lane, bytes, std::mem::take(&mut self.results)));
    }
}

/// Inputs gathered into the next batch.
#[derive(Default)]
struct Batch {
    inputs: Vec<(usize, ListInput)>,
    bytes: u64,
}

/// The driver's account of a list under way.
struct Driver<T> {
    waiting: VecDeque<Waiting<T>>,
    /// The list index of `waiting`'s first item.
    first: usize,
    /// Batches hashed alone now, and their bytes.
    alone: (usize, u64),
    /// An input is on every engine now.
    engines_busy: bool,
    /// Inputs for every engine, waiting for the one before to end.
    for_engines: VecDeque<(usize, ListInput)>,
    batch: Batch,
    exhausted: bool,
}

impl<T> Driver<T> {
    fn under_way(&self) -> bool {
        self.alone.0 > 0 || self.engines_busy
    }

    /// Whether another item may be taken from the list.
    fn room(&self, threads: usize) -> bool {
        !self.exhausted
            && self.waiting.len() < WAITING_PER_THREAD * threads
            && self.alone.0 < BATCHES_PER_THREAD * threads
            && self.alone.1 + self.batch.bytes < ALONE_BYTES
    }

    /// Takes in finished results.
    fn finished(&mut self, lane: Lane, bytes: u64, results: Finished) {
        match lane {
            Lane::Alone { .. } => self.alone = (self.alone.0 - 1, self.alone.1 - bytes),
            _ => self.engines_busy = false,
        }
        for (index, out) in results {
            if let Some(item) = self.waiting.get_mut(index - self.first) {
                item.result = Some(Some(out));
            }
        }
    }
}

impl Hasher {
    /// Hashes every item of `items` that holds an input, side by side, and
    /// calls `done` with each item's tag and result in the items' order,
    /// from one thread (the calling thread, unless that is a rayon worker,
    /// which must not wait on this hasher's pool). Items are taken from
    /// `items` only as the hashing gets to them, so a long list costs no
    /// memory. `progress` is told the bytes hashed, from all inputs at once.
    /// If `done` returns an error, no further item is started, and that
    /// error is returned once the inputs under way have ended.
    pub fn hash_list<T: Send, E: Send>(
        &self,
        items: impl IntoIterator<Item = (T, Option<ListInput>), IntoIter: Send>,
        progress: &dyn Progress,
        mut done: impl FnMut(T, ListResult) -> Result<(), E> + Send,
    ) -> Result<(), E> {
        let threads = self.cpu().threads();
        let mut items = items.into_iter();
        let mut list = Driver {
            waiting: VecDeque::new(),
            first: 0,
            alone: (0, 0),
            engines_busy: false,
            for_engines: VecDeque::new(),
            batch: Batch::default(),
            exhausted: false,
        };
        let mut failure = None;
        off_rayon_workers(|| {
            let (to_driver, results) = mpsc::channel();
            std::thread::scope(|engines_thread| {
                self.cpu().pool().in_place_scope(|workers| {
                    // Hands the batch gathered so far to a worker.
                    let send_batch = |list: &mut Driver<T>| {
                        let Batch { inputs, bytes } = std::mem::take(&mut list.batch);
                        if inputs.is_empty() {
                            return;
                        }
                        list.alone = (list.alone.0 + 1, list.alone.1 + bytes);
                        let mut reply = Reply {
                            indices: inputs.iter().map(|(i, _)| *i).collect(),
                            to: to_driver.clone(),
                            alone_bytes: Some(bytes),
                            results: Vec::with_capacity(inputs.len()),
                        };
                        workers.spawn(move |_| {
                            for (index, input) in inputs {
                                let out = self.hash_path_on(
                                    &input.params,
                                    &input.path,
                                    &Advance(progress),
                                    Placement::Alone,
                                );
                                reply.push(index, out);
                            }
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
                            let lane = input.as_ref().map_or(Lane::Nothing, |i| self.lane_of(i));
                            let mut item = Waiting { tag, result: None };
                            match (lane, input) {
                                (Lane::Alone { len }, Some(input)) => {
                                    list.batch.inputs.push((index, input));
                                    list.batch.bytes += len;
                                    if list.batch.inputs.len() >= BATCH_INPUTS
                                        || list.batch.bytes >= BATCH_BYTES
                                    {
                                        send_batch(&mut list);
                                    }
                                }
                                (Lane::Engines, Some(input)) => {
                                    list.for_engines.push_back((index, input))
                                }
                                _ => item.result = Some(None),
                            }
                            list.waiting.push_back(item);
                        }
                        if failure.is_some() {
                            list.for_engines.clear();
                            list.batch = Batch::default();
                        }
                        // Nothing more to take for now: what is gathered goes.
                        send_batch(&mut list);
                        if !list.engines_busy
                            && let Some((index, input)) = list.for_engines.pop_front()
                        {
                            list.engines_busy = true;
                            let mut reply = Reply {
                                indices: vec![index],
                                to: to_driver.clone(),
                                alone_bytes: None,
                                results: Vec::with_capacity(1),
                            };
                            engines_thread.spawn(move || {
                                let out = self.hash_path_on(
                                    &input.params,
                                    &input.path,
                                    &Advance(progress),
                                    Placement::Engines,
                                );
                                reply.push(index, out);
                            });
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
                            Ok((lane, bytes, results)) => list.finished(lane, bytes, results),
                            Err(_) => unreachable!("the driver holds a sender"),
                        }
                    }
                });
            });
        });
        failure.map_or(Ok(()), Err)
    }

    /// Where an input runs: alone when it would not fill the engines.
    fn lane_of(&self, input: &ListInput) -> Lane {
        let cpu = self.cpu();
        if is_stdin_name(&input.path) {
            return Lane::Engines;
        }
        // A name that cannot be looked up fails the same way when opened.
        let Ok(meta) = std::fs::metadata(&input.path) else {
            return Lane::Alone { len: 0 };
        };
        if !meta.is_file() {
            return Lane::Alone { len: 0 };
        }
        let len = meta.len();
        let one_piece = len <= cpu.piece_len(&input.params) as u64;
        if self.hashes_alone() && (one_piece || input.params.leaf_count() == 1) {
            Lane::Alone { len }
        } else {
            Lane::Engines
        }
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
