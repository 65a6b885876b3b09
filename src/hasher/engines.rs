//! Where one input runs: on the CPU's pool, inline on one thread, on the
//! GPUs, or on the CPU with the GPUs joining it; and the digest it comes to.

use std::sync::atomic::Ordering;
use std::time::Instant;

use super::auto::{ChunkGpuJoiners, GpuJoiners, Resumed};
use super::{BackendChoice, BackendUsed, HashOutput, Hasher, Placement};
use crate::error::HashError;
use crate::gpu::KernelSet;
use crate::message::{self, Input};
use crate::params::TreeParams;
use crate::progress::Progress;
use crate::schedule::{self, Balance, Hashed, Joiners, Member, NoJoiners};
use crate::sponge::SpongeSpec;
use crate::standard::StandardParams;
use crate::standard::run::{self, Engines, NoChunkJoiners, Split, Walked};
use crate::timings::{Timings, timed};

impl Hasher {
    /// The digest of one input with a standard function where `placement`
    /// says: its chunks on the CPU's workers, on the GPUs, or shared between
    /// them piece by piece (`standard::run`). TurboSHAKE, one sequential
    /// sponge, is the CPU's under every backend. Under `Auto`, if a GPU
    /// fails, an input that can be read again is redone on the CPU, and
    /// `Auto` leaves the GPUs alone for later inputs.
    pub(super) fn hash_standard(
        &self,
        params: &StandardParams,
        mut input: Input<'_>,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let piece_target = self.cpu.standard_piece_target();
        let len = input.known_len();
        let backend = self.options.backend;
        let spec = params.standard().chunk_spec();
        let first_try = Resumed::new(progress, 0);
        let on_engines = || -> Result<Walked, HashError> {
            let Some(spec) = spec else {
                return self.standard_on_cpu(params, &mut input, progress, &mut timings);
            };
            match (placement, backend) {
                (Placement::Engines, BackendChoice::Gpu) => {
                    self.standard_on_gpus(params, &spec, &mut input, progress, &mut timings)
                }
                (Placement::Engines, BackendChoice::Auto) => {
                    self.standard_on_all(params, &spec, &mut input, &first_try, &mut timings)
                }
                (Placement::Gpu(ordinal), _) => self.standard_on_gpu(
                    ordinal,
                    params,
                    &spec,
                    &mut input,
                    &first_try,
                    &mut timings,
                ),
                _ => self.standard_on_cpu(params, &mut input, progress, &mut timings),
            }
        };
        // As for LI: an input of one piece in one call (inline when small),
        // a longer one from a thread that is no rayon worker.
        let gpu_only = spec.is_some()
            && match placement {
                Placement::Gpu(_) => true,
                Placement::Engines => backend == BackendChoice::Gpu,
                _ => false,
            };
        let result = match (placement, len) {
            (Placement::Alone, _) => self.cpu.run_alone(on_engines),
            (_, Some(len)) if !gpu_only && len <= piece_target as u64 => {
                self.cpu.run_one_piece(len, on_engines)
            }
            _ => self.cpu.run_pieces(on_engines),
        };
        let can_reread = input.can_reread();
        let (walked, note) = self.or_redo_on_cpu(result, can_reread, &first_try, |redo| {
            timings = Timings::default();
            self.standard_on_cpu(params, &mut input, redo, &mut timings)
        })?;
        timings.total = start.elapsed();
        timings.copy_busy += walked.copy_busy;
        timings.kernel_busy += walked.kernel_busy;
        let gpu_used = walked
            .shares
            .iter()
            .any(|s| s.engine.starts_with("gpu") && s.bytes > 0);
        let backend = match (gpu_used, placement, backend) {
            (false, _, _) => BackendUsed::Cpu,
            (true, Placement::Gpu(_), _) | (true, _, BackendChoice::Gpu) => BackendUsed::Gpu,
            (true, _, _) => BackendUsed::CpuGpu,
        };
        Ok(HashOutput {
            digest: walked.digest,
            bytes: walked.bytes,
            backend,
            timings,
            shares: walked.shares,
            fallback_note: note,
        })
    }

    /// A standard function's piece target, chunk length and piece length
    /// (whole chunks, about the target), as its GPU engines are sized.
    fn chunk_pieces(&self, params: &StandardParams) -> (usize, usize, usize) {
        let piece_target = self.cpu.standard_piece_target();
        let chunk_len = run::chunk_len(params);
        (
            piece_target,
            chunk_len,
            message::piece_len(chunk_len, piece_target),
        )
    }

    /// A standard function's input on the CPU alone.
    fn standard_on_cpu(
        &self,
        params: &StandardParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Walked, HashError> {
        let piece_target = self.cpu.standard_piece_target();
        let mut none = NoChunkJoiners;
        let engines = Engines::cpu_only(&mut none);
        timed(&mut timings.leaves, || {
            run::hash(params, input, &self.cpu, engines, piece_target, progress)
        })
    }

    /// A standard function's chunks on the GPUs asked for, which must all
    /// start, as for LI (`on_gpus`): the first from the first piece, the
    /// others joining when they are ready (or from the first piece, when
    /// the options wait for them). The CPU takes KT's first chunk, the last
    /// chunks and the last node.
    fn standard_on_gpus(
        &self,
        params: &StandardParams,
        spec: &SpongeSpec,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Walked, HashError> {
        let open = || {
            if self.options.testing.wait_for_gpus {
                self.gpus()
            } else {
                self.gpu().map(|gpu| vec![gpu])
            }
        };
        let gpus = match input {
            Input::File(file) => message::reading_ahead_during(file, open),
            _ => open(),
        }?;
        self.charge_startup(gpus[0], timings);
        let (piece_target, chunk_len, piece_len) = self.chunk_pieces(params);
        let pool = self.cpu.pool();
        let mut engines = Vec::with_capacity(gpus.len());
        for gpu in &gpus {
            engines.push(gpu.begin_chunks(spec, chunk_len, piece_len, pool, timings)?);
        }
        let mut joiners = ChunkGpuJoiners::new(self, spec, chunk_len, piece_len, true);
        joiners.joined = gpus.iter().map(|gpu| gpu.info().ordinal).collect();
        if !self.options.testing.wait_for_gpus {
            self.gpus
                .start_others_in_background(KernelSet::Chunks(*spec), piece_len);
        }
        let engines = Engines {
            gpus: engines,
            joiners: &mut joiners,
            split: Split::new(false),
        };
        let walked = timed(&mut timings.leaves, || {
            run::hash(params, input, &self.cpu, engines, piece_target, progress)
        })?;
        // A device that failed to start after the last piece's look is an
        // error too (one still starting is not waited for).
        joiners.finish(timings)?;
        Ok(walked)
    }

    /// A standard function's chunks on the GPU of ordinal `ordinal` alone,
    /// which is ready for them.
    fn standard_on_gpu(
        &self,
        ordinal: usize,
        params: &StandardParams,
        spec: &SpongeSpec,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Walked, HashError> {
        let kernels = KernelSet::Chunks(*spec);
        let gpu = self
            .gpus
            .ready(kernels)
            .into_iter()
            .find_map(|(o, gpu)| (o == ordinal).then_some(gpu))
            .ok_or_else(|| {
                HashError::Internal(format!("GPU {ordinal} is not ready for {kernels}"))
            })?;
        self.charge_startup(gpu, timings);
        let (piece_target, chunk_len, piece_len) = self.chunk_pieces(params);
        let engine = gpu.begin_chunks(spec, chunk_len, piece_len, self.cpu.pool(), timings)?;
        let engines = Engines {
            gpus: vec![engine],
            joiners: &mut NoChunkJoiners,
            split: Split::new(false),
        };
        timed(&mut timings.leaves, || {
            run::hash(params, input, &self.cpu, engines, piece_target, progress)
        })
    }

    /// A standard function's chunks on the CPU from the first piece, and on
    /// every GPU that is ready in time (started in the background once the
    /// rest of the input repays their start-up), shared by measured rates.
    fn standard_on_all(
        &self,
        params: &StandardParams,
        spec: &SpongeSpec,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Walked, HashError> {
        if self.gpu_failed.load(Ordering::Relaxed) {
            return self.standard_on_cpu(params, input, progress, timings);
        }
        self.shareable_input.store(true, Ordering::Relaxed);
        let (piece_target, chunk_len, piece_len) = self.chunk_pieces(params);
        if self.options.testing.wait_for_gpus {
            self.gpus.prepare_now(KernelSet::Chunks(*spec), piece_len);
        }
        let mut joiners = ChunkGpuJoiners::new(self, spec, chunk_len, piece_len, false);
        let engines = Engines {
            gpus: Vec::new(),
            joiners: &mut joiners,
            split: Split::new(true),
        };
        let walked = timed(&mut timings.leaves, || {
            run::hash(params, input, &self.cpu, engines, piece_target, progress)
        })?;
        joiners.finish(timings)?;
        Ok(walked)
    }

    /// The digest of one input where `placement` says. Under `Auto`, if a
    /// GPU fails, an input that can be read again is redone on the CPU, and
    /// `Auto` leaves the GPUs alone for later inputs.
    pub(super) fn hash_input(
        &self,
        params: &TreeParams,
        mut input: Input<'_>,
        progress: &dyn Progress,
        placement: Placement,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let len = input.known_len();
        let first_try = Resumed::new(progress, 0);
        let backend = self.options.backend;
        // For `-v`: an input a GPU could have shared was met, wherever it
        // ran (one of a list's, hashed alone, too).
        if backend == BackendChoice::Auto && params.leaf_count() > 1 {
            self.shareable_input.store(true, Ordering::Relaxed);
        }
        let on_engines = || match (placement, backend) {
            (Placement::Engines, BackendChoice::Gpu) => {
                self.on_gpus(params, &mut input, progress, &mut timings)
            }
            (Placement::Engines, BackendChoice::Auto) => {
                self.on_all(params, &mut input, &first_try, &mut timings)
            }
            (Placement::Gpu(ordinal), _) => {
                self.on_gpu(ordinal, params, &mut input, &first_try, &mut timings)
            }
            _ => self.on_cpu(params, &mut input, progress, &mut timings),
        };
        // An input of one piece is hashed by the CPU in one call
        // (`CpuBackend::run_one_piece`: inline when small). Larger inputs
        // are driven from a thread that is no rayon worker, which would
        // otherwise hold a worker (or steal its own pool's jobs) while it
        // waits for windows and GPUs.
        let one_piece = |len: u64| len <= self.cpu.piece_len(params) as u64;
        let result = match (placement, len) {
            (Placement::Alone, _) => self.cpu.run_alone(on_engines),
            (Placement::Engines, Some(len)) if backend != BackendChoice::Gpu && one_piece(len) => {
                self.cpu.run_one_piece(len, on_engines)
            }
            (Placement::Cpu, Some(len)) if one_piece(len) => {
                self.cpu.run_one_piece(len, on_engines)
            }
            _ => self.cpu.run_pieces(on_engines),
        };
        let can_reread = input.can_reread();
        let (hashed, note) = self.or_redo_on_cpu(result, can_reread, &first_try, |redo| {
            timings = Timings::default();
            self.on_cpu(params, &mut input, redo, &mut timings)
        })?;
        timings.total = start.elapsed();
        let used = |prefix: &str| {
            hashed
                .shares
                .iter()
                .any(|s| s.engine.starts_with(prefix) && s.bytes > 0)
        };
        let backend = match (used("cpu"), used("gpu")) {
            (true, true) => BackendUsed::CpuGpu,
            (false, true) => BackendUsed::Gpu,
            _ if backend == BackendChoice::Gpu => BackendUsed::Gpu,
            _ => BackendUsed::Cpu,
        };
        Ok(HashOutput {
            digest: hashed.digest,
            bytes: hashed.bytes,
            backend,
            timings,
            shares: hashed.shares,
            fallback_note: note,
        })
    }

    /// A first try's result, or under `Auto`, where a GPU failed and the
    /// input can be read again, `redo`'s on the CPU (given the progress to
    /// report to, which already shows what the first try got through), with
    /// a note. Auto does not come back to a GPU that failed.
    fn or_redo_on_cpu<T>(
        &self,
        result: Result<T, HashError>,
        can_reread: bool,
        first_try: &Resumed<'_>,
        redo: impl FnOnce(&dyn Progress) -> Result<T, HashError>,
    ) -> Result<(T, Option<String>), HashError> {
        match result {
            Ok(done) => Ok((done, None)),
            Err(HashError::Gpu(e)) if self.options.backend == BackendChoice::Auto && can_reread => {
                self.gpu_failed.store(true, Ordering::Relaxed);
                let done = redo(&first_try.next_try())?;
                Ok((
                    done,
                    Some(format!("the GPU failed ({e}); hashing on the CPU")),
                ))
            }
            Err(e) => Err(e),
        }
    }

    /// The input on the CPU alone.
    fn on_cpu(
        &self,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let members = vec![Member::new("cpu", self.cpu.begin(params))];
        self.run_without_joiners(params, input, members, progress, timings)
    }

    /// The input on the GPUs asked for, which must all start. The first
    /// hashes from the first piece; the others start in the background and
    /// join when they are ready (contexts opened one after the other would
    /// hold the first piece back:
    /// docs/decisions/0017-joiners-take-every-leaf.md), unless the options
    /// ask to wait for them all.
    fn on_gpus(
        &self,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let open = || {
            if self.options.testing.wait_for_gpus {
                self.gpus()
            } else {
                self.gpu().map(|gpu| vec![gpu])
            }
        };
        let gpus = match input {
            Input::File(file) => message::reading_ahead_during(file, open),
            _ => open(),
        }?;
        self.charge_startup(gpus[0], timings);
        let pool = self.cpu.pool();
        let kernel = self.options.testing.gpu_leaf_kernel;
        let len = input.known_len();
        let first = gpus[0].begin(params, len, self.options.copy_mode, kernel, pool, timings)?;
        let piece_len = first.piece_len();
        let mut members = vec![Member::new(gpus[0].info().engine_name(), first)];
        for gpu in &gpus[1..] {
            // The others join at once, owning nothing: the plan splits the
            // leaves evenly at the first piece.
            let engine = gpu.begin_at(params, 0, piece_len, kernel, pool, timings)?;
            members.push(Member::new(gpu.info().engine_name(), engine));
        }
        if self.options.testing.wait_for_gpus {
            return self.run_without_joiners(params, input, members, progress, timings);
        }
        self.gpus
            .start_others_in_background(params.algorithm(), piece_len);
        let mut joiners = GpuJoiners {
            hasher: self,
            params,
            started: true,
            baseline: None,
            joined: vec![gpus[0].info().ordinal],
            startup: Timings::default(),
            piece_len,
            required: true,
        };
        // A GPU that joins starts with no leaf, and is given some only
        // where that measures faster
        // (docs/decisions/0017-joiners-take-every-leaf.md).
        let plan = Balance::first_keeps_all();
        let hashed = self.run(
            params,
            input,
            members,
            &mut joiners,
            plan,
            progress,
            timings,
        )?;
        // A device that failed to start after the last piece's look is an
        // error too (one still starting is not waited for).
        joiners.finish(timings)?;
        Ok(hashed)
    }

    /// The input on the GPU of ordinal `ordinal` alone, which is ready for
    /// its algorithm (a list's input under `Auto`, beside the CPU's).
    fn on_gpu(
        &self,
        ordinal: usize,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let gpu = self
            .gpus
            .ready(params.algorithm())
            .into_iter()
            .find_map(|(o, gpu)| (o == ordinal).then_some(gpu))
            .ok_or_else(|| {
                HashError::Internal(format!(
                    "GPU {ordinal} is not ready for {}",
                    params.algorithm()
                ))
            })?;
        self.charge_startup(gpu, timings);
        let engine = gpu.begin(
            params,
            input.known_len(),
            self.options.copy_mode,
            self.options.testing.gpu_leaf_kernel,
            self.cpu.pool(),
            timings,
        )?;
        let members = vec![Member::new(gpu.info().engine_name(), engine)];
        self.run_without_joiners(params, input, members, progress, timings)
    }

    /// The input on the CPU from the first byte, and on every GPU that is
    /// ready in time (they start in the background).
    fn on_all(
        &self,
        params: &TreeParams,
        input: &mut Input<'_>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        // One leaf (plain SHA-3) cannot be shared.
        if params.leaf_count() < 2 || self.gpu_failed.load(Ordering::Relaxed) {
            return self.on_cpu(params, input, progress, timings);
        }
        if self.options.testing.wait_for_gpus {
            self.gpus
                .prepare_now(params.algorithm(), self.cpu.piece_len(params));
        }
        let members = vec![Member::new("cpu", self.cpu.begin(params))];
        let mut joiners = GpuJoiners {
            hasher: self,
            params,
            started: false,
            baseline: None,
            joined: Vec::new(),
            startup: Timings::default(),
            piece_len: self.cpu.piece_len(params),
            required: false,
        };
        let hashed = self.run(
            params,
            input,
            members,
            &mut joiners,
            Balance::default(),
            progress,
            timings,
        )?;
        joiners.finish(timings)?;
        Ok(hashed)
    }

    /// Runs the scheduler on `members` alone.
    fn run_without_joiners<'a>(
        &'a self,
        params: &'a TreeParams,
        input: &mut Input<'_>,
        members: Vec<Member<'a>>,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let plan = Balance::default();
        self.run(
            params,
            input,
            members,
            &mut NoJoiners,
            plan,
            progress,
            timings,
        )
    }

    /// Runs the scheduler with the balance `plan`, the CPU reducing trees
    /// that engines shared.
    #[allow(clippy::too_many_arguments)]
    fn run<'a>(
        &'a self,
        params: &'a TreeParams,
        input: &mut Input<'_>,
        members: Vec<Member<'a>>,
        joiners: &mut dyn Joiners<'a>,
        mut plan: Balance,
        progress: &dyn Progress,
        timings: &mut Timings,
    ) -> Result<Hashed, HashError> {
        let reduce = |outputs: Vec<u8>| self.cpu.reduce_leaf_outputs(params, outputs);
        schedule::run(
            params, input, members, joiners, &mut plan, &reduce, progress, timings,
        )
    }
}
