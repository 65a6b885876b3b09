//! One message's leaves on the GPU, behind the input path's interface: an
//! engine that begins a message (`begin`) or joins one under way
//! (`begin_at`), and what it does with each piece and at the end.
//!
//! The engine owns a range [lo, hi) of the leaves. In every stripe of M its
//! blocks are one run of bytes; packed one after the other, those runs are
//! the message of an LI tree of hi − lo leaves ([`Dealing`]). That packed
//! message is what the device absorbs, so the kernels know nothing of
//! sharing. Owning every leaf, the packed message is M itself.

use std::ops::Range;

use crate::engine::{LeafEngine, LeafStates, kept_after_taking, owned_after_giving, split_leaves};
use crate::error::HashError;
use crate::message::{self, Access, Piece};
use crate::params::TreeParams;
use crate::timings::{Timings, timed};
use crate::tree::Dealing;

use super::LeafKernel;
use super::kernels::TreeKernels;
use super::pipeline::{GpuLeaves, Ring, Staged};
use super::{CopyMode, GpuBackend, GpuError, SideBySide, guard, reduce};

impl GpuBackend {
    /// The leaves of one message of about `len_hint` bytes (unknown for a
    /// sequential input), ready to absorb its pieces, with the leaf kernel
    /// given or else the one for the tree's leaf count; `pool` copies staged
    /// transfers.
    pub(crate) fn begin<'a>(
        &'a self,
        params: &'a TreeParams,
        len_hint: Option<u64>,
        mode: CopyMode,
        leaf_kernel: Option<LeafKernel>,
        pool: &'a rayon::ThreadPool,
        times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        let piece_len = self.piece_len(params);
        // A small input needs only small buffers (cheaper to pin).
        let buffers = match len_hint {
            Some(len) => {
                let message_len = params.prefix().len() as u64 + len;
                (piece_len as u64).min(message_len.next_multiple_of(params.block_size() as u64))
                    as usize
            }
            None => piece_len,
        };
        let owned = 0..params.leaf_count();
        let start = Begin {
            buffers,
            mode,
            leaf_kernel,
            owned,
            message_len: 0,
            piece_len,
        };
        self.engine(params, start, pool, times)
    }

    /// The engine of one of `count` GPUs that begin one message side by
    /// side: each owns its part of an even split from the first piece
    /// ([`split_leaves`]), the split the schedule's balance asks for there,
    /// so that no leaf state moves before the first piece (a move drains
    /// both pipelines: tens of milliseconds). Pieces are `count` times one GPU's
    /// own (at most `message::MAX_PIECE`), so that a GPU's share of a piece
    /// is about what it stages from a piece alone: a share half a buffer
    /// long would cost a whole turn of the ring
    /// (docs/decisions/0011-gpu-staging-ring.md). Its buffers hold the most
    /// a share of a piece can be: the runs of ⌈L / count⌉ leaves (the
    /// largest share of an even split) in every stripe the piece touches
    /// (two more than it holds whole), or the whole piece if that is less.
    /// A copy mode of `Register` stages: a share of each stripe is no
    /// mapping's whole window.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn begin_side_by_side<'a>(
        &'a self,
        params: &'a TreeParams,
        len_hint: Option<u64>,
        place: SideBySide,
        mode: CopyMode,
        leaf_kernel: Option<LeafKernel>,
        pool: &'a rayon::ThreadPool,
        times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        let SideBySide { index, count } = place;
        let count = count.max(1);
        let block = params.block_size();
        let piece_len = message::piece_len(block, self.transfer_bytes.saturating_mul(count));
        let leaves = params.leaf_count();
        let stripe = leaves.saturating_mul(block as u64);
        let share_run = leaves.div_ceil(count as u64).saturating_mul(block as u64);
        let stripes = piece_len as u64 / stripe.max(1) + 2;
        let mut most = stripes.saturating_mul(share_run).min(piece_len as u64);
        // A small input needs only small buffers (cheaper to pin).
        if let Some(len) = len_hint {
            most = most.min(params.prefix().len() as u64 + len);
        }
        let start = Begin {
            buffers: (most as usize).max(1).next_multiple_of(block),
            mode: match mode {
                CopyMode::Register => CopyMode::Staging,
                mode => mode,
            },
            leaf_kernel,
            owned: {
                let bounds = split_leaves(1.0 / count as f64, count, leaves);
                bounds[index]..bounds[index + 1]
            },
            message_len: 0,
            piece_len,
        };
        self.engine(params, start, pool, times)
    }

    /// An engine that joins a message `message_len` bytes into it, owning no
    /// leaf yet (other engines hand it some). It copies as `mode` says,
    /// `Register` staging (it never owns every leaf of a window from its
    /// start).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn begin_at<'a>(
        &'a self,
        params: &'a TreeParams,
        message_len: u64,
        piece_len: usize,
        mode: CopyMode,
        leaf_kernel: Option<LeafKernel>,
        pool: &'a rayon::ThreadPool,
        times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        let buffers = self.buffer_len(piece_len);
        let mode = match mode {
            CopyMode::Register => CopyMode::Staging,
            mode => mode,
        };
        let start = Begin {
            buffers,
            mode,
            leaf_kernel,
            owned: 0..0,
            message_len,
            piece_len: self.piece_len(params),
        };
        self.engine(params, start, pool, times)
    }

    /// The engine `begin` and `begin_at` describe: fresh states for the
    /// leaves it owns, transfer buffers of `start.buffers` bytes.
    fn engine<'a>(
        &'a self,
        params: &'a TreeParams,
        start: Begin,
        pool: &'a rayon::ThreadPool,
        times: &mut Timings,
    ) -> Result<Box<dyn LeafEngine + 'a>, HashError> {
        guard("starting a GPU digest", || {
            let slots = timed(&mut times.gpu_init, || self.take_slots(start.buffers))?;
            let (kernels, compile_time) = self.kernels.get(params.algorithm())?;
            times.compile += compile_time;
            let owned = start.owned.end - start.owned.start;
            let kernel = start
                .leaf_kernel
                .unwrap_or_else(|| LeafKernel::for_leaves(owned));
            let ring = Ring::new(self, slots, pool, start.mode);
            let leaves = GpuLeaves::new(ring, params, kernels, kernel, owned)?;
            Ok(Box::new(GpuMessage {
                leaves,
                kernels,
                params,
                piece_len: start.piece_len,
                mode: start.mode,
                forced_kernel: start.leaf_kernel,
                range: start.owned,
                message_len: start.message_len,
            }) as Box<dyn LeafEngine + 'a>)
        })
    }
}

/// What an engine starts with: its transfer buffers' size, how it copies, its
/// leaf kernel if forced, its leaves (fresh), where in M it starts and the
/// pieces it asks for.
struct Begin {
    buffers: usize,
    mode: CopyMode,
    leaf_kernel: Option<LeafKernel>,
    owned: std::ops::Range<u64>,
    message_len: u64,
    piece_len: usize,
}

/// Some or all leaves of one message on the GPU.
pub(super) struct GpuMessage<'a> {
    pub(super) leaves: GpuLeaves<'a>,
    pub(super) kernels: &'a TreeKernels,
    pub(super) params: &'a TreeParams,
    pub(super) piece_len: usize,
    pub(super) mode: CopyMode,
    /// The leaf kernel asked for; `None` picks it from the leaves owned.
    pub(super) forced_kernel: Option<LeafKernel>,
    /// The leaves owned.
    pub(super) range: Range<u64>,
    /// Bytes of M absorbed so far (the other engines' blocks included).
    pub(super) message_len: u64,
}

impl GpuMessage<'_> {
    fn owns_every_leaf(&self) -> bool {
        self.range == (0..self.params.leaf_count())
    }

    /// Leaf `j` of the owned range as the engines exchange it, from
    /// lane-major states of `owned` leaves.
    fn state_of(lane_major: &[u64], owned: usize, j: usize) -> [u64; 25] {
        std::array::from_fn(|w| lane_major[w * owned + j])
    }

    /// Owns `range` from now on, whose states (leaf-major, missing ones
    /// fresh) `state` gives; the device gets them lane-major.
    fn rebuild(
        &mut self,
        range: Range<u64>,
        state: impl Fn(u64) -> Option<[u64; 25]>,
    ) -> Result<(), GpuError> {
        let owned = (range.end - range.start) as usize;
        let mut lane_major = vec![0u64; 25 * owned];
        for (j, leaf) in range.clone().enumerate() {
            if let Some(s) = state(leaf) {
                for (w, word) in s.into_iter().enumerate() {
                    lane_major[w * owned + j] = word;
                }
            }
        }
        let packed = Dealing::of(self.params).packed_len(&range, self.message_len);
        self.leaves
            .upload_states(owned as u64, &lane_major, packed)?;
        let kernel = self
            .forced_kernel
            .unwrap_or_else(|| LeafKernel::for_leaves(owned as u64));
        self.leaves.set_leaf_kernel(kernel);
        self.range = range;
        Ok(())
    }

    /// Absorbs the owned runs of a piece of `len` bytes, transfer by
    /// transfer: `stage` gives the staged form of a list of byte ranges of
    /// the piece.
    fn absorb_runs(
        &mut self,
        len: usize,
        stage: impl Fn(&mut GpuLeaves<'_>, &[Range<usize>]) -> Result<(), HashError>,
    ) -> Result<(), HashError> {
        let b = self.params.block_size();
        let capacity = self.leaves.transfer_capacity() / b * b;
        if capacity == 0 {
            return Err(GpuError::new("transfer buffers smaller than a block").into());
        }
        let runs = Dealing::of(self.params).owned_runs(&self.range, self.message_len, len);
        let mut transfer: Vec<Range<usize>> = Vec::new();
        let mut filled = 0;
        for run in runs {
            let mut at = run.start;
            while at < run.end {
                let take = (run.end - at).min(capacity - filled);
                transfer.push(at..at + take);
                (at, filled) = (at + take, filled + take);
                if filled == capacity {
                    stage(&mut self.leaves, &transfer)?;
                    (transfer, filled) = (Vec::new(), 0);
                }
            }
        }
        if filled > 0 {
            stage(&mut self.leaves, &transfer)?;
        }
        Ok(())
    }
}

impl LeafEngine for GpuMessage<'_> {
    fn piece_len(&self) -> usize {
        self.piece_len
    }

    /// Staging reads the file with pread into pinned buffers: that leaves it
    /// unmapped, which spares page faults and munmap
    /// (docs/decisions/0011-gpu-staging-ring.md).
    fn access(&self) -> Access {
        match self.mode {
            CopyMode::Register => Access::Map,
            _ => Access::Read,
        }
    }

    fn leaves(&self) -> Range<u64> {
        self.range.clone()
    }

    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        let len = piece.len();
        let result = guard("hashing on the GPU", || {
            self.leaves.bind()?;
            match piece {
                _ if self.range.is_empty() => Ok(()),
                Piece::Mapped { bytes, .. }
                    if self.mode == CopyMode::Register && self.owns_every_leaf() =>
                {
                    // SAFETY: `Piece::Mapped` holds bytes of a read-only file
                    // mapping that lives until this piece has been absorbed.
                    Ok(unsafe { self.leaves.absorb_registered(bytes) }?)
                }
                Piece::Memory(bytes) => self.absorb_runs(len, |leaves, ranges| {
                    let runs: Vec<&[u8]> = ranges.iter().map(|r| &bytes[r.clone()]).collect();
                    leaves.absorb_staged(Staged::Memory(&runs))
                }),
                // Read from the file, not through the mapping: pread into
                // the pinned buffers runs several times as fast as copies
                // out of the mapping (docs/decisions/0011-gpu-staging-ring.md).
                Piece::Mapped { input, offset, .. } | Piece::Unread { input, offset, .. } => self
                    .absorb_runs(len, |leaves, ranges| {
                        let runs: Vec<(u64, usize)> = ranges
                            .iter()
                            .map(|r| (offset + r.start as u64, r.len()))
                            .collect();
                        leaves.absorb_staged(Staged::File(input, &runs))
                    }),
            }
        });
        self.message_len += len as u64;
        result
    }

    fn take_leaves(&mut self, leaves: Range<u64>) -> Result<LeafStates, HashError> {
        guard("moving leaves off the GPU", || {
            let own = self.range.clone();
            let Some(rest) = kept_after_taking(&own, &leaves) else {
                return Err(HashError::Internal(format!(
                    "leaves {leaves:?} taken from a GPU engine that owns {own:?}"
                )));
            };
            let lane_major = self.leaves.download_states()?;
            let owned = (own.end - own.start) as usize;
            let holding = Dealing::of(self.params).leaves_with_blocks(self.message_len);
            let state = |leaf: u64| Self::state_of(&lane_major, owned, (leaf - own.start) as usize);
            let taken = (leaves.start..leaves.end.min(holding).max(leaves.start))
                .map(state)
                .collect();
            self.rebuild(rest, |leaf| Some(state(leaf)))?;
            Ok(taken)
        })
    }

    fn give_leaves(&mut self, leaves: Range<u64>, states: LeafStates) -> Result<(), HashError> {
        guard("moving leaves to the GPU", || {
            let own = self.range.clone();
            let Some(joined) = owned_after_giving(&own, &leaves) else {
                return Err(HashError::Internal(format!(
                    "leaves {leaves:?} given to a GPU engine that owns {own:?}"
                )));
            };
            let lane_major = self.leaves.download_states()?;
            let owned = (own.end - own.start) as usize;
            self.rebuild(joined, |leaf| {
                if own.contains(&leaf) {
                    Some(Self::state_of(
                        &lane_major,
                        owned,
                        (leaf - own.start) as usize,
                    ))
                } else {
                    states.get((leaf - leaves.start) as usize).copied()
                }
            })?;
            Ok(())
        })
    }

    fn finish_leaves(mut self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        guard("finishing on the GPU", || {
            let own = self.range.clone();
            let holding = Dealing::of(self.params).leaves_with_blocks(self.message_len);
            let outputs = holding.clamp(own.start, own.end) - own.start;
            if outputs == 0 {
                return Ok(Vec::new());
            }
            self.leaves.wait_absorbed()?;
            let (copies, kernels) = self.leaves.busy();
            times.copy_busy += copies;
            times.kernel_busy += kernels;
            Ok(timed(&mut times.leaves, || {
                reduce::leaf_outputs(
                    self.leaves.gpu(),
                    self.kernels,
                    self.params,
                    self.leaves.states(),
                    self.leaves.leaf_count(),
                    self.leaves.message_len(),
                    outputs,
                )
            })?)
        })
    }

    fn finish(mut self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        guard("finishing on the GPU", || {
            if !self.owns_every_leaf() {
                return Err(HashError::Internal(
                    "finish on a GPU engine that shares the tree with others".into(),
                ));
            }
            self.leaves.wait_absorbed()?;
            let (copies, kernels) = self.leaves.busy();
            times.copy_busy += copies;
            times.kernel_busy += kernels;
            let digest = timed(&mut times.reduce, || {
                reduce::finish_tree(
                    self.leaves.gpu(),
                    self.kernels,
                    self.params,
                    self.leaves.states(),
                    self.leaves.message_len(),
                )
            })?;
            Ok(digest)
        })
    }
}
