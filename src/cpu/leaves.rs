//! One message's leaves on a CPU leaf kernel, behind the input path's
//! interface (`LeafEngine`): pieces absorbed, leaves handed over to other
//! engines or taken from them, and the leaves' outputs or the digest.

use std::marker::PhantomData;
use std::ops::Range;

#[cfg(any(
    target_arch = "x86_64",
    all(target_arch = "aarch64", target_endian = "little")
))]
use super::lanes;
use super::platform::{Kernel, with_kernel};
use super::walk::{Absorb, Leaves};
use super::workers::Workers;
use super::{CpuBackend, fast_sponge, reduce, sponges};
use crate::engine::{LeafEngine, LeafStates, kept_after_taking, owned_after_giving};
use crate::error::HashError;
use crate::message::{Access, Piece};
use crate::params::TreeParams;
use crate::sponge::Sponge;
use crate::timings::{Timings, timed};
use crate::tree::Dealing;

/// Where a new engine starts: its leaves, the bytes of M behind it, and the
/// piece length it asks for.
pub(super) struct Position {
    pub(super) owned: Range<u64>,
    pub(super) message_len: u64,
    pub(super) piece_len: usize,
}

/// One message's leaves on a CPU leaf kernel `A`, and what finishing it
/// needs (the function of the RustCrypto sponge `S`), behind the input
/// path's interface.
struct CpuLeaves<'a, S: Sponge, A: Absorb> {
    leaves: Leaves<'a, A>,
    params: &'a TreeParams,
    workers: Workers<'a>,
    piece_len: usize,
    /// Where an unread piece's own runs are read to.
    unread: Vec<u8>,
    /// The first piece, read into `unread` and not absorbed yet (its
    /// length): an engine that loops on one thread keeps it until it knows
    /// whether it is the only one, which `finish_leaves` then absorbs and
    /// pads in one pass (`Leaves::finish_with`).
    deferred: Option<usize>,
    /// The kernel of the parent levels.
    nodes: Kernel,
    node: PhantomData<S>,
}

impl<S: Sponge, A: Absorb> CpuLeaves<'_, S, A> {
    /// Whether a piece read now may wait for `finish_leaves`: the first
    /// piece of an engine that loops on one thread (one input of a list,
    /// beside others), of more than one leaf (a single sponge absorbs a
    /// piece in one call anyway).
    fn may_defer(&self) -> bool {
        matches!(self.workers, Workers::Inline)
            && self.leaves.message_len() == 0
            && self.params.leaf_count() > 1
    }

    /// Absorbs the deferred piece, before anything else is done.
    fn absorb_deferred(&mut self) -> Result<(), HashError> {
        if let Some(len) = self.deferred.take() {
            self.leaves.absorb(&self.unread[..len])?;
        }
        Ok(())
    }
}

/// A caller broke the `LeafEngine` contract (a bug, never the input's fault).
fn contract_broken(what: &str) -> HashError {
    HashError::Internal(what.to_string())
}

impl<S: Sponge, A: Absorb> LeafEngine for CpuLeaves<'_, S, A> {
    fn piece_len(&self) -> usize {
        self.piece_len
    }

    /// Mapped windows, but where the engine loops on one thread alone (one
    /// input of a list, hashed beside others on every core), its own reads:
    /// unmapping a window interrupts every thread of the process to flush
    /// its TLB, which thousands of inputs side by side paid over and over.
    fn access(&self) -> Access {
        match self.workers {
            Workers::Pool(_) => Access::Map,
            Workers::Inline => Access::Read,
        }
    }

    fn leaves(&self) -> Range<u64> {
        self.leaves.owned()
    }

    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        self.absorb_deferred()?;
        match piece {
            Piece::Memory(bytes) | Piece::Mapped { bytes, .. } => self.leaves.absorb(bytes)?,
            // Owning no leaf (a GPU has them all), it reads nothing.
            Piece::Unread { len, .. } if self.leaves.owned().is_empty() => self.leaves.skip(len),
            // Given leaves while the pieces ahead were left unread for a
            // GPU, or a part's: each task reads its own leaves' runs.
            Piece::Unread { input, offset, len } if self.leaves.reads_per_task(len) => {
                self.leaves.absorb_unread(input, offset, len)?
            }
            // Else (one thread, a single sponge, a few units in slices) only
            // the runs of its own leaves are read, in parallel, into a buffer
            // kept for the next such piece (the walk looks at nothing else).
            Piece::Unread { input, offset, len } => {
                let mut runs: Vec<Range<usize>> = Vec::new();
                let owned = self.leaves.owned();
                let dealing = Dealing::of(self.params);
                for run in dealing.owned_runs(&owned, self.leaves.message_len(), len) {
                    // Neighbouring runs (every leaf owned) are read at once.
                    match runs.last_mut() {
                        Some(last) if last.end == run.start => last.end = run.end,
                        _ => runs.push(run),
                    }
                }
                self.unread.resize(len, 0);
                let mut parts = Vec::with_capacity(runs.len());
                let (mut rest, mut at) = (&mut self.unread[..len], 0);
                for run in runs {
                    let (part, after) =
                        std::mem::take(&mut rest)[run.start - at..].split_at_mut(run.len());
                    parts.push((part, offset + run.start as u64));
                    (rest, at) = (after, run.end);
                }
                match self.workers {
                    Workers::Pool(pool) => pool.install(|| input.read_parts_at(parts))?,
                    Workers::Inline => {
                        for (part, at) in parts {
                            input.read_exact_at(part, at)?;
                        }
                    }
                }
                if self.may_defer() {
                    self.deferred = Some(len);
                } else {
                    self.leaves.absorb(&self.unread[..len])?;
                }
            }
        }
        Ok(())
    }

    // Migrations are rare: every own state is taken out, and the walk is
    // rebuilt over the leaves the engine owns afterwards.
    fn take_leaves(&mut self, leaves: Range<u64>) -> Result<LeafStates, HashError> {
        self.absorb_deferred()?;
        let own = self.leaves.owned();
        let Some(kept) = kept_after_taking(&own, &leaves) else {
            return Err(contract_broken(&format!(
                "leaves {leaves:?} taken from an engine that owns {own:?}"
            )));
        };
        // `states` has one entry per own leaf that holds a block: fewer than
        // the own leaves when the last of them hold none yet.
        let mut states = self.leaves.states();
        let from_start = leaves.start == own.start;
        let cut = (if from_start { leaves.end } else { leaves.start }) - own.start;
        let after = states.split_off((cut as usize).min(states.len()));
        let (kept_states, taken) = if from_start {
            (after, states)
        } else {
            (states, after)
        };
        self.leaves.set_states(kept, &kept_states)?;
        Ok(taken)
    }

    fn give_leaves(&mut self, leaves: Range<u64>, states: LeafStates) -> Result<(), HashError> {
        self.absorb_deferred()?;
        let own = self.leaves.owned();
        let count = leaves.end.saturating_sub(leaves.start);
        if leaves.start > leaves.end
            || leaves.end > self.params.leaf_count()
            || states.len() as u64 > count
        {
            return Err(contract_broken(&format!(
                "{} states given for leaves {leaves:?} of {}",
                states.len(),
                self.params.leaf_count()
            )));
        }
        let Some(all) = owned_after_giving(&own, &leaves) else {
            return Err(contract_broken(&format!(
                "leaves {leaves:?} given to an engine that owns {own:?}"
            )));
        };
        let joined = if own.is_empty() {
            states
        } else if leaves.end == own.start {
            join_states(states, count, self.leaves.states())
        } else {
            join_states(self.leaves.states(), own.end - own.start, states)
        };
        self.leaves.set_states(all, &joined)?;
        Ok(())
    }

    fn fork(&self) -> Result<Box<dyn LeafEngine + '_>, HashError> {
        // A deferred piece goes with the copy too.
        let unread = match self.deferred {
            Some(len) => self.unread[..len].to_vec(),
            None => Vec::new(),
        };
        Ok(Box::new(CpuLeaves::<S, A> {
            leaves: self.leaves.fork()?,
            params: self.params,
            workers: self.workers,
            piece_len: self.piece_len,
            unread,
            deferred: self.deferred,
            nodes: self.nodes,
            node: PhantomData,
        }))
    }

    fn finish_leaves(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        let CpuLeaves {
            leaves,
            unread,
            deferred,
            ..
        } = *self;
        Ok(timed(&mut times.leaves, || match deferred {
            Some(len) => Ok::<_, std::io::Error>(leaves.finish_with(&unread[..len])),
            None => leaves.finish(),
        })?)
    }

    fn finish(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        let (params, workers, nodes) = (self.params, self.workers, self.nodes);
        let own = self.leaves.owned();
        if own != (0..params.leaf_count()) {
            return Err(contract_broken(&format!(
                "finish on an engine that owns leaves {own:?} of {}",
                params.leaf_count()
            )));
        }
        let outputs = self.finish_leaves(times)?;
        Ok(timed(&mut times.reduce, || {
            digest_of_leaves::<S>(nodes, params, workers, outputs)
        }))
    }
}

/// The states of two neighbouring leaf ranges, `first` of the `first_len`
/// leaves before `second`'s: where `first` stops early its leaves are
/// fresh, which matters only when `second` holds states after them.
fn join_states(mut first: LeafStates, first_len: u64, second: LeafStates) -> LeafStates {
    if !second.is_empty() {
        first.resize(first_len as usize, [0; 25]);
        first.extend(second);
    }
    first
}

/// The digest from the outputs of the leaves that hold a block, in leaf
/// order, for the function of the RustCrypto sponge `S`, the parent levels
/// on `nodes`.
pub(super) fn digest_of_leaves<S: Sponge>(
    nodes: Kernel,
    params: &TreeParams,
    workers: Workers<'_>,
    outputs: Vec<u8>,
) -> Vec<u8> {
    if params.height() > 0 {
        return reduce_on::<S>(nodes, params, workers, outputs);
    }
    if outputs.is_empty() {
        // The empty message: its one leaf is empty.
        let mut out = vec![0u8; params.output_len()];
        fast_sponge::Fast::<S>::hash_into(&[], &mut out);
        return out;
    }
    outputs
}

/// The root digest from the outputs of the leaves that hold a block (H ≥ 1),
/// for the function of the RustCrypto sponge `S`: the parent levels on
/// `nodes`, the root on one core.
pub(super) fn reduce_on<S: Sponge>(
    nodes: Kernel,
    params: &TreeParams,
    workers: Workers<'_>,
    outputs: Vec<u8>,
) -> Vec<u8> {
    type Node<S> = fast_sponge::Fast<S>;
    with_kernel!(
        nodes,
        |kernel, W| {
            let nodes = lanes::Lanes::<_, W>::for_nodes(kernel, params.algorithm());
            reduce::reduce_levels::<Node<S>, _>(params, workers, &nodes, outputs)
        },
        || {
            let nodes = sponges::Sponges::<S>::default();
            reduce::reduce_levels::<Node<S>, _>(params, workers, &nodes, outputs)
        }
    )
}

impl CpuBackend {
    /// The leaves of one message on leaf kernel `A`, with the function of
    /// the RustCrypto sponge `S`.
    pub(super) fn leaves<'a, S: Sponge + 'a, A: Absorb + 'a>(
        &'a self,
        params: &'a TreeParams,
        kernel: A,
        at: Position,
    ) -> Box<dyn LeafEngine + 'a> {
        Box::new(CpuLeaves::<S, A> {
            leaves: Leaves::new(params, self.workers(), kernel, at.owned, at.message_len),
            params,
            workers: self.workers(),
            piece_len: at.piece_len,
            unread: Vec::new(),
            deferred: None,
            nodes: self.platform.node_kernel(),
            node: PhantomData,
        })
    }
}
