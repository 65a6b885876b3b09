//! A message given in parts, as hashlib's `update` gives it: [`Stream`],
//! for every function treehash computes.
//!
//! The parts are cut into pieces of whole blocks (LI's B; a standard
//! function's chunks: KT's 8192 bytes, ParallelHash's B, TurboSHAKE's
//! rate), absorbed as [`Hasher::hash_bytes`] absorbs them, on the hasher's
//! worker threads: an LI tree by the CPU backend's engine of one message, a
//! standard function by the walk over its chunks (`schedule::chunks::Walk`,
//! whose chunks of a piece are hashed side by side). A long part (2 MiB
//! per worker thread, or a piece: `IN_PLACE_PER_THREAD`) is absorbed
//! where it lies, in pieces, all its whole blocks, and only the bytes of
//! its unfinished last block are kept. Shorter parts are copied into a
//! buffer of one piece (on the worker threads when large), which is
//! absorbed when full: short parts cost one call into the pool per piece.
//!
//! A digest midway ends a copy of the state, never the state: for a
//! standard function the last node's sponge (a few hundred bytes), for a
//! tree a fork of its engine (`LeafEngine::fork`: the leaf states copied
//! side by side on the workers; copied one after the other, leaf by leaf,
//! they would take most of a digest's time, and that would not shrink with
//! more cores: docs/decisions/0021-stream-parts-absorbed-in-place.md).
//!
//! A tree's engine borrows the hasher's CPU backend and the parameters, and
//! a stream owns both: they are kept together in a self-referential cell
//! (`self_cell`), the owner on the heap, the engine beside it. An engine
//! that owned an `Arc` of what it borrows would need every CPU engine
//! changed for this one user.

use std::sync::Arc;

use rayon::prelude::*;
use self_cell::self_cell;

use crate::cpu::CpuBackend;
use crate::engine::LeafEngine;
use crate::error::HashError;
use crate::function::Params;
use crate::hasher::Hasher;
use crate::message::Piece;
use crate::params::TreeParams;
use crate::schedule::chunks::{self, Context, Walk};
use crate::standard::{self, StandardParams};
use crate::timings::Timings;

/// Bytes copied into the buffer at once from which the copy is shared by
/// the worker threads, a mebibyte per task (one thread copies slower than
/// all the cores hash: docs/decisions/0021-stream-parts-absorbed-in-place.md).
const PARALLEL_COPY_MIN: usize = 1 << 20;
/// A part of at least this many bytes per worker thread (or of a piece) is
/// absorbed where it lies; a shorter one is copied into the buffer, which
/// is absorbed when it holds a piece. An absorb costs a call into the pool
/// (its workers woken, and waited for) and touches only the leaves whose
/// blocks it holds; a copy costs a pass over the bytes. From about this
/// size per thread the absorb in place is the faster
/// (docs/decisions/0021-stream-parts-absorbed-in-place.md).
const IN_PLACE_PER_THREAD: usize = 2 << 20;
/// The buffer grows by doubling up to this size, then takes a whole piece:
/// a hash object of a short input never holds a piece's worth of memory.
const SMALL_BUFFER: usize = 1 << 20;

/// What a tree's engine borrows.
struct Owner {
    hasher: Arc<Hasher>,
    params: TreeParams,
}

/// The engine of the message, begun at the first piece absorbed.
type Engine<'a> = Option<Box<dyn LeafEngine + 'a>>;

self_cell!(
    /// The engine, beside what it borrows.
    struct EngineCell {
        owner: Owner,
        #[covariant]
        dependent: Engine,
    }
);

/// A standard function's message under way.
struct StandardWalk {
    hasher: Arc<Hasher>,
    params: StandardParams,
    walk: Walk,
}

/// What absorbs the whole blocks of the message.
enum Absorber {
    Tree(EngineCell),
    Standard(Box<StandardWalk>),
}

/// The digest of a message given in parts: `update` any number of times,
/// `finalize` whenever a digest is wanted (the stream goes on afterwards),
/// `try_clone` to branch. Any function: an LI tree ([`TreeParams`]) or a
/// standard function ([`StandardParams`]).
///
/// ```
/// use std::sync::Arc;
/// use treehash::{Algorithm, Hasher, HasherOptions, Standard, StandardParams, Stream, TreeParams};
///
/// let hasher = Arc::new(Hasher::new(HasherOptions::default())?);
/// let params = TreeParams::new(Algorithm::Sha3_256, 2, 4)?;
/// let mut stream = Stream::new(hasher.clone(), params.clone());
/// stream.update(b"hello, ")?;
/// stream.update(b"world")?;
/// let whole = hasher.hash_bytes(&params, b"hello, world")?;
/// assert_eq!(stream.finalize()?, whole.digest);
///
/// let kt = StandardParams::new(Standard::Kt128);
/// let mut stream = Stream::new(hasher.clone(), kt.clone());
/// stream.update(b"hello, ")?;
/// stream.update(b"world")?;
/// assert_eq!(stream.finalize()?, hasher.hash_bytes(&kt, b"hello, world")?.digest);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Stream {
    params: Params,
    absorber: Absorber,
    /// Bytes of M not absorbed yet are `buffer[..buffered]`: the LI prefix
    /// at first, then an unfinished block, or short parts. Never a whole
    /// piece: a full buffer is absorbed at once.
    buffer: Vec<u8>,
    buffered: usize,
    /// Bytes of M absorbed: a whole number of blocks.
    absorbed: u64,
    /// The digest of everything so far, until the next update.
    digest: Option<Vec<u8>>,
}

impl Stream {
    /// A stream of an empty input, hashed with `params` (a [`TreeParams`],
    /// [`StandardParams`] or [`Params`]) on `hasher`'s CPU backend
    /// (whatever backend the hasher was asked for).
    pub fn new(hasher: Arc<Hasher>, params: impl Into<Params>) -> Stream {
        let params = params.into();
        let absorber = match &params {
            Params::Tree(p) => {
                let owner = Owner {
                    hasher,
                    params: p.clone(),
                };
                Absorber::Tree(EngineCell::new(owner, |_| None))
            }
            Params::Standard(p) => Absorber::Standard(Box::new(StandardWalk {
                hasher,
                params: p.clone(),
                walk: Walk::new(p),
            })),
        };
        let buffer = params.prefix().to_vec();
        Stream {
            params,
            absorber,
            buffered: buffer.len(),
            buffer,
            absorbed: 0,
            digest: None,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Bytes of input given so far (the prefix not counted).
    pub fn len(&self) -> u64 {
        self.absorbed + self.buffered as u64 - self.params.prefix().len() as u64
    }

    /// Whether no input was given yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `data` to the input.
    pub fn update(&mut self, data: &[u8]) -> Result<(), HashError> {
        if data.is_empty() {
            return Ok(());
        }
        self.digest = None;
        let (block, piece) = (self.absorber.block_size(), self.absorber.piece_len());
        let in_place = self.absorber.in_place_min(piece).max(block);
        let mut data = data;
        while !data.is_empty() {
            // The bytes that complete the buffered unfinished block.
            let fill = (block - self.buffered % block) % block;
            if data.len() >= in_place.max(fill + block) {
                // A long part: what completes the buffer's last block goes
                // with the buffer, the rest is absorbed where it lies.
                let (head, rest) = data.split_at(fill);
                self.copy_in(head)?;
                self.absorb_buffer()?;
                let whole = rest.len() / block * block;
                self.absorbed += self.absorber.absorb(&rest[..whole], piece)?;
                data = &rest[whole..];
            } else {
                let take = data.len().min(piece - self.buffered);
                self.copy_in(&data[..take])?;
                if self.buffered == piece {
                    self.absorb_buffer()?;
                }
                data = &data[take..];
            }
        }
        Ok(())
    }

    /// The digest of the input so far. The stream goes on: more updates
    /// may follow, and a later `finalize` includes them.
    pub fn finalize(&mut self) -> Result<Vec<u8>, HashError> {
        if let Some(digest) = &self.digest {
            return Ok(digest.clone());
        }
        let pending = &self.buffer[..self.buffered];
        let digest = self.absorber.finish(pending, None, self.absorbed)?;
        self.digest = Some(digest.clone());
        Ok(digest)
    }

    /// The digest of the input so far with another output length, where
    /// the function's is free (SHAKE and its trees, KT, TurboSHAKE,
    /// ParallelHash): the digest a stream made with that length gives, at
    /// the cost of a digest. The stream goes on with its own length.
    pub fn finalize_with_len(&mut self, output_len: usize) -> Result<Vec<u8>, HashError> {
        if output_len == self.params.output_len() {
            return self.finalize();
        }
        let params = self.params.with_output_len(output_len)?;
        let pending = &self.buffer[..self.buffered];
        self.absorber.finish(pending, Some(&params), self.absorbed)
    }

    /// A second stream of the same input so far, which goes on apart.
    /// (It needs `&mut self`: a tree's leaf states are taken out of the
    /// engine to be copied, and put back.)
    pub fn try_clone(&mut self) -> Result<Stream, HashError> {
        Ok(Stream {
            params: self.params.clone(),
            absorber: self.absorber.try_clone(self.absorbed)?,
            buffer: self.buffer[..self.buffered].to_vec(),
            buffered: self.buffered,
            absorbed: self.absorbed,
            digest: self.digest.clone(),
        })
    }

    /// Appends `bytes` to the buffer, which has room for them; an error,
    /// nothing appended, where the system refuses the threads of a long copy.
    fn copy_in(&mut self, bytes: &[u8]) -> Result<(), HashError> {
        let end = self.buffered + bytes.len();
        if end > self.buffer.len() {
            let room = if end <= SMALL_BUFFER {
                end.next_power_of_two()
            } else {
                self.absorber.piece_len()
            };
            // Zeroed pages from the allocator: only those written are touched.
            let mut grown = vec![0u8; room];
            grown[..self.buffered].copy_from_slice(&self.buffer[..self.buffered]);
            self.buffer = grown;
        }
        let to = &mut self.buffer[self.buffered..end];
        if bytes.len() < PARALLEL_COPY_MIN {
            to.copy_from_slice(bytes);
        } else {
            let cpu = self.absorber.cpu();
            cpu.run_pieces(|| {
                cpu.pool().install(|| {
                    to.par_chunks_mut(PARALLEL_COPY_MIN)
                        .zip(bytes.par_chunks(PARALLEL_COPY_MIN))
                        .for_each(|(to, from)| to.copy_from_slice(from))
                });
                Ok::<_, HashError>(())
            })?;
        }
        self.buffered = end;
        Ok(())
    }

    /// Absorbs the buffered bytes, a whole number of blocks.
    fn absorb_buffer(&mut self) -> Result<(), HashError> {
        let piece = self.absorber.piece_len();
        let bytes = &self.buffer[..self.buffered];
        self.absorbed += self.absorber.absorb(bytes, piece)?;
        self.buffered = 0;
        Ok(())
    }
}

impl Absorber {
    /// The hasher's CPU backend.
    fn cpu(&self) -> &CpuBackend {
        match self {
            Absorber::Tree(cell) => cell.borrow_owner().hasher.cpu(),
            Absorber::Standard(s) => s.hasher.cpu(),
        }
    }

    /// The blocks that pieces are whole numbers of: LI's B, or a standard
    /// function's chunk.
    fn block_size(&self) -> usize {
        match self {
            Absorber::Tree(cell) => cell.borrow_owner().params.block_size(),
            Absorber::Standard(s) => standard::chunk_len(&s.params),
        }
    }

    /// The piece length the CPU backend wants for these parameters.
    fn piece_len(&self) -> usize {
        match self {
            Absorber::Tree(cell) => {
                let owner = cell.borrow_owner();
                owner.hasher.cpu().piece_len(&owner.params)
            }
            Absorber::Standard(s) => {
                chunks::piece_len(&s.params, s.hasher.cpu().standard_piece_target())
            }
        }
    }

    /// The shortest part absorbed where it lies (shorter ones are copied):
    /// [`IN_PLACE_PER_THREAD`] for each worker thread, or a piece.
    fn in_place_min(&self, piece: usize) -> usize {
        piece.min(self.cpu().threads().saturating_mul(IN_PLACE_PER_THREAD))
    }

    /// Absorbs `bytes`, a whole number of blocks that follow what was
    /// absorbed, in pieces of `piece` bytes: their length.
    fn absorb(&mut self, bytes: &[u8], piece: usize) -> Result<u64, HashError> {
        if bytes.is_empty() {
            return Ok(0);
        }
        match self {
            Absorber::Tree(cell) => absorb_tree(cell, bytes, piece)?,
            Absorber::Standard(s) => {
                let (cpu, params, walk) = (s.hasher.cpu(), &s.params, &mut s.walk);
                // From a thread that is no rayon worker, as `Hasher` drives
                // an input of several pieces.
                cpu.run_pieces(|| {
                    let cx = Context::new(params, cpu);
                    bytes.chunks(piece).for_each(|piece| walk.piece(&cx, piece));
                    Ok::<_, HashError>(())
                })?;
            }
        }
        Ok(bytes.len() as u64)
    }

    /// The digest of the `absorbed` bytes and then `pending`, from a copy
    /// of the state; with the parameters `other` (another output length)
    /// where given.
    fn finish(
        &mut self,
        pending: &[u8],
        other: Option<&Params>,
        absorbed: u64,
    ) -> Result<Vec<u8>, HashError> {
        match (self, other) {
            (Absorber::Tree(cell), None) => finish_tree(cell, pending, None, absorbed),
            (Absorber::Tree(cell), Some(Params::Tree(p))) => {
                finish_tree(cell, pending, Some(p), absorbed)
            }
            (Absorber::Standard(s), other) => {
                let params = match other {
                    Some(Params::Standard(p)) => p,
                    _ => &s.params,
                };
                let (cpu, mut last) = (s.hasher.cpu(), s.walk.clone());
                // Hashed as `hash_bytes` hashes one piece (inline when small).
                cpu.run_one_piece(pending.len() as u64, || {
                    let cx = Context::new(params, cpu);
                    last.piece(&cx, pending);
                    Ok(last.finish(&cx))
                })
            }
            // `with_output_len` keeps the parameters' kind.
            (Absorber::Tree(_), Some(_)) => Err(HashError::Internal(
                "a tree's stream asked for a standard function's digest".into(),
            )),
        }
    }

    /// A second absorber in the same state after `absorbed` bytes of M.
    fn try_clone(&mut self, absorbed: u64) -> Result<Absorber, HashError> {
        Ok(match self {
            Absorber::Tree(cell) => Absorber::Tree(clone_tree(cell, absorbed)?),
            Absorber::Standard(s) => Absorber::Standard(Box::new(StandardWalk {
                hasher: Arc::clone(&s.hasher),
                params: s.params.clone(),
                walk: s.walk.clone(),
            })),
        })
    }
}

/// Absorbs `bytes`, a whole number of blocks that follow what was absorbed,
/// in pieces of `piece` bytes, beginning the engine at the first.
fn absorb_tree(cell: &mut EngineCell, bytes: &[u8], piece: usize) -> Result<(), HashError> {
    cell.with_dependent_mut(|owner, engine| {
        let cpu = owner.hasher.cpu();
        // From a thread that is no rayon worker, as `Hasher` drives an
        // input of several pieces.
        cpu.run_pieces(|| {
            let engine = engine.get_or_insert_with(|| cpu.begin(&owner.params));
            bytes
                .chunks(piece)
                .try_for_each(|piece| engine.absorb(Piece::Memory(piece)))
        })
    })
}

/// A tree's digest of the `absorbed` bytes and then `pending`; with the
/// parameters `other` (another output length, the same tree) where given.
fn finish_tree(
    cell: &mut EngineCell,
    pending: &[u8],
    other: Option<&TreeParams>,
    absorbed: u64,
) -> Result<Vec<u8>, HashError> {
    cell.with_dependent_mut(|owner, engine| {
        let cpu = owner.hasher.cpu();
        let params = other.unwrap_or(&owner.params);
        let finish = |mut last: Box<dyn LeafEngine + '_>| {
            if !pending.is_empty() {
                last.absorb(Piece::Memory(pending))?;
            }
            last.finish(&mut Timings::default())
        };
        match engine {
            // All of M is pending: one piece, hashed as `hash_bytes`
            // hashes one (inline when small).
            None => cpu.run_one_piece(pending.len() as u64, || finish(cpu.begin(params))),
            // The pending bytes go to a copy, which pads its leaves.
            Some(engine) => {
                // Moved in as `&mut` (`Send`): the engine is not `Sync`.
                let engine = engine.as_mut();
                match other {
                    None => cpu.run_pieces(move || finish(engine.fork()?)),
                    // A copy that ends with the other parameters.
                    Some(params) => {
                        cpu.run_pieces(move || finish(fork(cpu, params, engine, absorbed)?))
                    }
                }
            }
        }
    })
}

/// A second cell whose engine's leaves hold what `cell`'s hold after
/// `absorbed` bytes of M.
fn clone_tree(cell: &mut EngineCell, absorbed: u64) -> Result<EngineCell, HashError> {
    let owner = Owner {
        hasher: Arc::clone(&cell.borrow_owner().hasher),
        params: cell.borrow_owner().params.clone(),
    };
    EngineCell::try_new(owner, |copy| -> Result<Engine<'_>, HashError> {
        cell.with_dependent_mut(|_, engine| match engine {
            None => Ok(None),
            Some(engine) => {
                let cpu = copy.hasher.cpu();
                cpu.run_pieces(|| fork(cpu, &copy.params, engine.as_mut(), absorbed))
                    .map(Some)
            }
        })
    })
}

/// A second engine whose leaves hold what `engine`'s hold after `absorbed`
/// bytes of M (the states are taken out of `engine`, copied and put back).
fn fork<'a>(
    cpu: &'a CpuBackend,
    params: &'a TreeParams,
    engine: &mut (dyn LeafEngine + '_),
    absorbed: u64,
) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
    let every = 0..params.leaf_count();
    let states = engine.take_leaves(every.clone())?;
    engine.give_leaves(every.clone(), states.clone())?;
    let mut copy = cpu.begin_at(params, absorbed);
    copy.give_leaves(every, states)?;
    Ok(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::CpuPath;
    use crate::hasher::HasherOptions;
    use crate::params::Algorithm;
    use crate::standard::Standard;
    use crate::test_reference::digest as reference_digest;
    use crate::test_rng::{Rng, bytes};

    /// Pieces of `piece_bytes` (the shortest that the parameters allow for
    /// 1: a short input crosses many), two threads.
    fn hasher_with(path: CpuPath, piece_bytes: usize) -> Arc<Hasher> {
        let options = HasherOptions {
            threads: Some(2),
            piece_bytes: Some(piece_bytes),
            cpu_path: path,
            ..Default::default()
        };
        Arc::new(Hasher::new(options).unwrap())
    }

    fn hasher(path: CpuPath) -> Arc<Hasher> {
        hasher_with(path, 1)
    }

    /// Trees that reach every engine: B below, at and above the rate,
    /// prefixes longer than a block, XOF output, H = 0.
    fn tree_cases() -> Vec<Params> {
        let p = |a, h, d, b, prefix: &[u8], n| {
            TreeParams::with_options(a, h, d, b, prefix.to_vec(), n)
                .unwrap()
                .into()
        };
        vec![
            p(Algorithm::Sha3_256, 2, 4, None, b"", None),
            p(Algorithm::Sha3_256, 0, 4, None, b"", None),
            p(Algorithm::Sha3_512, 1, 4, Some(64), b"k", None),
            p(Algorithm::Shake128, 3, 2, Some(336), &[9; 200], Some(50)),
            p(Algorithm::Sha3_224, 4, 4, None, b"salt", None),
            p(Algorithm::Shake256, 0, 2, Some(8), &[1; 255], Some(100)),
        ]
    }

    /// Every standard function, with its defaults and with each of its
    /// parameters: customization strings (one longer than a chunk of
    /// ParallelHash's), blocks of 1 byte and of an odd length, domain bytes,
    /// long outputs.
    fn standard_cases() -> Vec<Params> {
        let new = StandardParams::new;
        let c = |p: StandardParams, c: &[u8]| p.with_customization(c.to_vec()).unwrap();
        let b = |p: StandardParams, b| p.with_block_size(b).unwrap();
        let n = |p: StandardParams, n| p.with_output_len(n).unwrap();
        let d = |p: StandardParams, d| p.with_domain(d).unwrap();
        let cases = vec![
            new(Standard::Kt128),
            c(new(Standard::Kt128), b"stream"),
            n(c(new(Standard::Kt256), &[7; 9000]), 100),
            new(Standard::ParallelHash128),
            c(b(new(Standard::ParallelHash128), 1), b"S"),
            n(c(b(new(Standard::ParallelHash256), 1013), &[3; 1500]), 7),
            new(Standard::TurboShake128),
            n(d(new(Standard::TurboShake256), 0x01), 300),
        ];
        cases.into_iter().map(Params::from).collect()
    }

    fn cases() -> Vec<Params> {
        tree_cases().into_iter().chain(standard_cases()).collect()
    }

    /// Lengths around the blocks (a tree's stripe, a standard function's
    /// chunk), and one of many pieces and parts copied by the workers
    /// (where the reference is fast enough: not for blocks of a few bytes).
    fn lengths(params: &Params) -> Vec<usize> {
        let mut lens = match params {
            Params::Tree(p) => {
                let stripe = p.stripe_len() as usize;
                vec![0, 1, p.block_size() + 1, 3 * stripe + 5]
            }
            Params::Standard(p) => {
                let chunk = standard::chunk_len(p);
                vec![0, 1, chunk - 1, chunk, chunk + 1, 3 * chunk + 5, 70_000]
            }
        };
        let few_bytes = matches!(params, Params::Standard(p) if standard::chunk_len(p) < 64);
        if !few_bytes {
            lens.push(PARALLEL_COPY_MIN * 9 + 77);
        }
        lens
    }

    /// Feeds `input` to `stream` in parts that end at random points: most
    /// short, some empty, some copied by the worker threads (or longer than
    /// a piece, absorbed in place).
    fn feed(stream: &mut Stream, input: &[u8], rng: &mut Rng) {
        let mut at = 0;
        while at < input.len() {
            let most = match rng.up_to_len(3) {
                0 => 0,
                1 => 300,
                2 => 5000,
                _ => PARALLEL_COPY_MIN + 4000,
            };
            let end = (at + rng.up_to_len(most)).min(input.len());
            stream.update(&input[at..end]).unwrap();
            at = end;
        }
    }

    #[test]
    fn random_parts_give_the_reference_digest() {
        let mut rng = Rng(7);
        // Short pieces on each path (parts absorbed in place), and pieces of
        // 4 MiB (parts of a mebibyte copied by the worker threads).
        let hashers = [
            (hasher(CpuPath::Portable), CpuPath::Portable),
            (hasher(CpuPath::Auto), CpuPath::Auto),
            (hasher_with(CpuPath::Auto, 4 << 20), CpuPath::Auto),
        ];
        for params in cases() {
            for len in lengths(&params) {
                let input = bytes(len, len as u64);
                let want = reference_digest(&params, &input);
                for (hasher, path) in &hashers {
                    for round in 0..2 {
                        let mut stream = Stream::new(hasher.clone(), params.clone());
                        feed(&mut stream, &input, &mut rng);
                        let case = format!("{} {path}, {len} bytes, round {round}", params.label());
                        assert_eq!(stream.len(), len as u64, "{case}");
                        assert_eq!(stream.finalize().unwrap(), want, "{case}");
                        // Again, from the kept digest.
                        assert_eq!(stream.finalize().unwrap(), want, "{case}");
                    }
                }
            }
        }
    }

    /// A digest in the middle, then more input; a copy that goes on apart
    /// from the original; both give their own input's digest.
    #[test]
    fn digests_midway_and_copies_go_on_apart() {
        let mut rng = Rng(11);
        let hasher = hasher(CpuPath::Auto);
        for params in cases() {
            let span = match &params {
                Params::Tree(p) => 2 * p.stripe_len() as usize,
                Params::Standard(p) => 2 * standard::chunk_len(p),
            };
            let len = span + PARALLEL_COPY_MIN + 999;
            let input = bytes(len, 3);
            let label = params.label();
            for _ in 0..3 {
                let cut = rng.up_to_len(len);
                let mut stream = Stream::new(hasher.clone(), params.clone());
                feed(&mut stream, &input[..cut], &mut rng);
                let midway = reference_digest(&params, &input[..cut]);
                assert_eq!(stream.finalize().unwrap(), midway, "{label}");
                let mut copy = stream.try_clone().unwrap();
                feed(&mut stream, &input[cut..], &mut rng);
                let other = bytes(rng.up_to_len(3 * PARALLEL_COPY_MIN), 5);
                feed(&mut copy, &other, &mut rng);
                let branch: Vec<u8> = input[..cut].iter().chain(&other).copied().collect();
                assert_eq!(
                    copy.finalize().unwrap(),
                    reference_digest(&params, &branch),
                    "{label}"
                );
                let whole = reference_digest(&params, &input);
                assert_eq!(stream.finalize().unwrap(), whole, "{label}");
            }
        }
    }

    /// Parts longer than `in_place_min` but shorter than a piece are
    /// absorbed where they lie (only an unfinished block is kept), and
    /// digests midway fork the engine, whose leaf states fill a mapping of
    /// their own at H = 8 (13 MiB): every digest is the reference's.
    #[test]
    fn long_parts_absorbed_in_place_and_digests_midway() {
        let mut rng = Rng(13);
        // Two threads, pieces of the default length (8 stripes at H = 8).
        let hasher = Arc::new(
            Hasher::new(HasherOptions {
                threads: Some(2),
                ..Default::default()
            })
            .unwrap(),
        );
        let tree = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
        let stripe = tree.stripe_len() as usize;
        let cases = [
            (Params::from(tree), 2 * stripe + 777),
            (StandardParams::new(Standard::Kt128).into(), 3 * stripe),
        ];
        for (params, len) in cases {
            let label = params.label();
            let input = bytes(len, 17);
            let mut stream = Stream::new(hasher.clone(), params.clone());
            let (block, piece) = (stream.absorber.block_size(), stream.absorber.piece_len());
            let in_place = stream.absorber.in_place_min(piece);
            assert!(in_place < piece && 3 * in_place < len, "{label}");
            let mut at = 0;
            while at < len {
                // A short part now and then leaves an unfinished block.
                let most = if rng.up_to_len(3) == 0 {
                    5000
                } else {
                    2 * in_place
                };
                let end = (at + rng.up_to_len(most)).min(len);
                stream.update(&input[at..end]).unwrap();
                if end - at >= in_place {
                    assert!(stream.buffered < block, "{label}: {} kept", stream.buffered);
                }
                at = end;
                if rng.up_to_len(2) == 0 {
                    let midway = reference_digest(&params, &input[..at]);
                    assert_eq!(stream.finalize().unwrap(), midway, "{label}, {at} bytes");
                }
            }
            let whole = reference_digest(&params, &input);
            assert_eq!(stream.finalize().unwrap(), whole, "{label}");
        }
    }

    /// A digest of another output length, midway and at the end, before
    /// any piece was absorbed and after many: the reference's digest with
    /// that length, and the stream goes on with its own.
    #[test]
    fn digests_of_other_lengths_are_the_references() {
        let mut rng = Rng(19);
        let hasher = hasher(CpuPath::Auto);
        let free = cases().into_iter().filter(Params::free_output_len);
        for params in free {
            let label = params.label();
            let span = match &params {
                Params::Tree(p) => 2 * p.stripe_len() as usize,
                Params::Standard(p) => 2 * standard::chunk_len(p),
            };
            let input = bytes(span + 999, 23);
            let mut stream = Stream::new(hasher.clone(), params.clone());
            for cut in [0, 1, span / 2, input.len()] {
                let from = stream.len() as usize;
                feed(&mut stream, &input[from..cut], &mut rng);
                for n in [1, 32, 200, 1000] {
                    let other = params.with_output_len(n).unwrap();
                    let want = reference_digest(&other, &input[..cut]);
                    let got = stream.finalize_with_len(n).unwrap();
                    assert_eq!(got, want, "{label}, {cut} bytes, length {n}");
                }
                let own = reference_digest(&params, &input[..cut]);
                assert_eq!(stream.finalize().unwrap(), own, "{label}, {cut} bytes");
            }
            let too_long = stream.finalize_with_len(crate::params::TreeParams::MAX_OUTPUT_LEN + 1);
            assert!(matches!(too_long, Err(HashError::Params(_))), "{label}");
        }
    }

    /// Updated from a worker of another rayon pool (a caller's `par_iter`),
    /// streams never nest one inside another, and give the right digests.
    #[test]
    fn streams_fed_from_another_pools_workers() {
        use rayon::prelude::*;
        let hasher = hasher(CpuPath::Auto);
        let input = bytes(3 * PARALLEL_COPY_MIN, 9);
        let foreign = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let tree = TreeParams::new(Algorithm::Sha3_256, 3, 4).unwrap().into();
        let kt = StandardParams::new(Standard::Kt128).into();
        for params in [tree, kt] {
            let want = reference_digest(&params, &input);
            let digests: Vec<Vec<u8>> = foreign.install(|| {
                (0..4)
                    .into_par_iter()
                    .map(|k| {
                        let mut stream = Stream::new(hasher.clone(), params.clone());
                        for part in input.chunks(PARALLEL_COPY_MIN / 2 + k * 1000) {
                            stream.update(part).unwrap();
                        }
                        stream.finalize().unwrap()
                    })
                    .collect()
            });
            assert!(digests.iter().all(|d| *d == want), "{}", params.label());
        }
    }
}
