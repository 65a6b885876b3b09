//! The two kinds of work an input can be, as the dispatch (`engines`) and
//! the latecomers (`auto`) see them:
//!
//! - [`Leaves`]: an LI tree's leaves, whose states move between engines at
//!   a piece boundary (`schedule::run`, which climbs on throughput), or
//!   which GPUs begun side by side on a file walk apart
//!   (`schedule::run_apart`);
//! - [`Chunks`]: a standard function's chunks, which hold no state between
//!   pieces and whose chaining values feed one final node in order
//!   (`schedule::chunks::hash`, which splits by the engines' rates).
//!
//! Each says which kernels a GPU needs, how a GPU's engine begins and which
//! scheduler runs the input. Everything else about placing an input (where
//! it runs, when GPUs start and join, the redo on the CPU after a GPU
//! fails, which backend it is reported as) is written once, over
//! [`Work`].

use super::Hasher;
use crate::engine::ChunkEngine;
use crate::error::HashError;
use crate::gpu::{GpuBackend, KernelSet, SideBySide};
use crate::message::{self, Input};
use crate::params::TreeParams;
use crate::progress::{EngineId, Progress};
use crate::schedule::chunks::{self, Engines, Split};
use crate::schedule::{self, Balance, Hashed, Latecomers, Member, NoLatecomers};
use crate::sponge::SpongeSpec;
use crate::standard::{self, StandardParams};
use crate::timings::{Timings, timed};

/// Which kind a [`Work`] is, for what differs by kind beyond it (what a
/// GPU's start must repay: `auto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WorkKind {
    Leaves,
    Chunks,
}

/// One kind of work of one input, on the engines of the hasher `'h`.
pub(super) trait Work<'h>: Copy + Send + Sync {
    /// A GPU's engine, as this work's scheduler takes it.
    type Engine: Send + 'h;

    const KIND: WorkKind;

    /// Whether the engine that holds the last of the work computes the
    /// digest (an LI tree's leaves are padded where they are: a GPU that
    /// owns every leaf finishes even an empty input), rather than the CPU
    /// (the final node of a standard function).
    const ENGINE_FINISHES: bool;

    /// The hasher whose engines take it.
    fn hasher(&self) -> &'h Hasher;

    /// The kernels a GPU needs for it; `None` where no GPU can take part
    /// (TurboSHAKE: one sponge).
    fn kernels(&self) -> Option<KernelSet>;

    /// Whether GPUs can share it with the CPU under `Auto` (an LI tree of
    /// two leaves or more; a function with chunks).
    fn shareable(&self) -> bool;

    /// The longest input the CPU hashes in one call (inline when small).
    fn one_call_len(&self) -> usize;

    /// The pieces an input is cut into when the CPU starts it and GPUs
    /// may join.
    fn piece_len(&self) -> usize;

    /// The engine of a GPU that takes the input from its first byte (whose
    /// length, if known, is `len`), alone or at its `place` among GPUs
    /// begun side by side, among which the schedule shares the work out at
    /// the first piece.
    fn begin(
        &self,
        gpu: &'h GpuBackend,
        len: Option<u64>,
        place: SideBySide,
        timings: &mut Timings,
    ) -> Result<Self::Engine, HashError>;

    /// The engine of a latecomer: a GPU that joins `message_len` bytes into
    /// the input, in pieces of `piece_len` bytes (taking no work until given
    /// some).
    fn begin_latecomer(
        &self,
        gpu: &'h GpuBackend,
        message_len: u64,
        piece_len: usize,
        timings: &mut Timings,
    ) -> Result<Self::Engine, HashError>;

    /// Hashes `input` on the CPU (if `cpu`), on `gpus`, and on those that
    /// `latecomers` bring while it runs.
    fn run(
        &self,
        input: &mut Input<'_>,
        cpu: bool,
        gpus: Vec<Self::Engine>,
        latecomers: Option<&mut dyn Latecomers<Self::Engine>>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError>;
}

/// An LI tree's leaves.
#[derive(Clone, Copy)]
pub(super) struct Leaves<'h> {
    pub(super) hasher: &'h Hasher,
    pub(super) params: &'h TreeParams,
}

impl<'h> Work<'h> for Leaves<'h> {
    type Engine = Member<'h>;
    const KIND: WorkKind = WorkKind::Leaves;
    const ENGINE_FINISHES: bool = true;

    fn hasher(&self) -> &'h Hasher {
        self.hasher
    }

    fn kernels(&self) -> Option<KernelSet> {
        Some(self.params.algorithm().into())
    }

    fn shareable(&self) -> bool {
        self.params.leaf_count() > 1
    }

    fn one_call_len(&self) -> usize {
        self.hasher.cpu.piece_len(self.params)
    }

    fn piece_len(&self) -> usize {
        self.hasher.cpu.pool_piece_len(self.params)
    }

    fn begin(
        &self,
        gpu: &'h GpuBackend,
        len: Option<u64>,
        place: SideBySide,
        timings: &mut Timings,
    ) -> Result<Member<'h>, HashError> {
        let (hasher, options) = (self.hasher, &self.hasher.options);
        let kernel = options.testing.gpu_leaf_kernel;
        let pool = hasher.cpu.pool();
        let params = self.params;
        let engine = if place.count > 1 {
            let mode = options.copy_mode;
            gpu.begin_side_by_side(params, len, place, mode, kernel, pool, timings)?
        } else {
            gpu.begin(params, len, options.copy_mode, kernel, pool, timings)?
        };
        Ok(Member::new(gpu.info().engine_id(), engine))
    }

    fn begin_latecomer(
        &self,
        gpu: &'h GpuBackend,
        message_len: u64,
        piece_len: usize,
        timings: &mut Timings,
    ) -> Result<Member<'h>, HashError> {
        let kernel = self.hasher.options.testing.gpu_leaf_kernel;
        let pool = self.hasher.cpu.pool();
        let mode = self.hasher.options.copy_mode;
        let engine = gpu.begin_at(
            self.params,
            message_len,
            piece_len,
            mode,
            kernel,
            pool,
            timings,
        )?;
        Ok(Member::new(gpu.info().engine_id(), engine))
    }

    fn run(
        &self,
        input: &mut Input<'_>,
        cpu: bool,
        gpus: Vec<Member<'h>>,
        latecomers: Option<&mut dyn Latecomers<Member<'h>>>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let (hasher, params) = (self.hasher, self.params);
        let mut members = Vec::with_capacity(1 + gpus.len());
        if cpu {
            members.push(Member::new(EngineId::Cpu, hasher.cpu.begin(params)));
        }
        members.extend(gpus);
        let reduce = |outputs: Vec<u8>| hasher.cpu.reduce_leaf_outputs(params, outputs);
        // GPUs begun side by side on a file, with no latecomer, keep their
        // even split: each walks the file at its own pace.
        if let (false, None, Input::File(file)) = (cpu, &latecomers, &*input)
            && schedule::can_walk_apart(&members)
        {
            return schedule::run_apart(params, file, members, &reduce, progress, timings);
        }
        // GPUs alone begin side by side and keep an even split; with the
        // CPU the split is searched.
        let mut plan = if cpu {
            Balance::default()
        } else {
            Balance::even()
        };
        let mut none = NoLatecomers;
        let latecomers = latecomers.unwrap_or(&mut none);
        schedule::run(
            params, input, members, latecomers, &mut plan, &reduce, progress, timings,
        )
    }
}

/// A standard function's chunks.
#[derive(Clone, Copy)]
pub(super) struct Chunks<'h> {
    hasher: &'h Hasher,
    params: &'h StandardParams,
    /// The chunks' sponge; `None` for a function without chunks.
    spec: Option<SpongeSpec>,
    chunk_len: usize,
    /// The CPU's piece target, and the pieces of whole chunks about as
    /// long that GPU engines are sized for.
    piece_target: usize,
    piece_len: usize,
}

impl<'h> Chunks<'h> {
    pub(super) fn new(hasher: &'h Hasher, params: &'h StandardParams) -> Self {
        let piece_target = hasher.cpu.standard_piece_target();
        let chunk_len = standard::chunk_len(params);
        Chunks {
            hasher,
            params,
            spec: params.standard().chunk_spec(),
            chunk_len,
            piece_target,
            piece_len: message::piece_len(chunk_len, piece_target),
        }
    }

    /// The chunks' sponge, which a GPU is begun with.
    fn spec(&self) -> Result<SpongeSpec, HashError> {
        self.spec.ok_or_else(|| {
            HashError::Internal(format!("{} has no chunks for a GPU", self.params.label()))
        })
    }
}

impl<'h> Work<'h> for Chunks<'h> {
    type Engine = Box<dyn ChunkEngine + 'h>;
    const KIND: WorkKind = WorkKind::Chunks;
    const ENGINE_FINISHES: bool = false;

    fn hasher(&self) -> &'h Hasher {
        self.hasher
    }

    fn kernels(&self) -> Option<KernelSet> {
        self.spec.map(KernelSet::Chunks)
    }

    fn shareable(&self) -> bool {
        self.spec.is_some()
    }

    fn one_call_len(&self) -> usize {
        self.piece_target
    }

    fn piece_len(&self) -> usize {
        self.piece_len
    }

    fn begin(
        &self,
        gpu: &'h GpuBackend,
        _len: Option<u64>,
        _place: SideBySide,
        timings: &mut Timings,
    ) -> Result<Self::Engine, HashError> {
        self.begin_latecomer(gpu, 0, self.piece_len, timings)
    }

    fn begin_latecomer(
        &self,
        gpu: &'h GpuBackend,
        _message_len: u64,
        piece_len: usize,
        timings: &mut Timings,
    ) -> Result<Self::Engine, HashError> {
        let pool = self.hasher.cpu.pool();
        let mode = self.hasher.options.copy_mode;
        gpu.begin_chunks(
            &self.spec()?,
            self.chunk_len,
            mode,
            piece_len,
            pool,
            timings,
        )
    }

    fn run(
        &self,
        input: &mut Input<'_>,
        cpu: bool,
        gpus: Vec<Self::Engine>,
        latecomers: Option<&mut dyn Latecomers<Self::Engine>>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let (params, piece_target) = (self.params, self.piece_target);
        // GPUs alone on a file, with no latecomer, each walk its own waves
        // (docs/decisions/0044-gpus-walk-chunks-apart.md).
        if let (false, None, Input::File(file)) = (cpu, &latecomers, &*input)
            && self.spec.is_some()
            && chunks::can_walk_apart(&gpus)
        {
            let cpu = &self.hasher.cpu;
            let walked = timed(&mut timings.leaves, || {
                chunks::hash_apart(params, file, cpu, gpus, piece_target, progress)
            })?;
            return Ok(walked.into_hashed(timings));
        }
        let mut none = NoLatecomers;
        let engines = Engines {
            gpus,
            latecomers: latecomers.unwrap_or(&mut none),
            split: Split::new(cpu),
        };
        let cpu = &self.hasher.cpu;
        let walked = timed(&mut timings.leaves, || {
            chunks::hash(params, input, cpu, engines, piece_target, progress)
        })?;
        Ok(walked.into_hashed(timings))
    }
}

impl chunks::Walked {
    /// The input's result, the GPUs' busy times added to `timings`.
    fn into_hashed(self, timings: &mut Timings) -> Hashed {
        timings.copy_busy += self.copy_busy;
        timings.kernel_busy += self.kernel_busy;
        Hashed {
            digest: self.digest,
            bytes: self.bytes,
            shares: self.shares,
        }
    }
}
