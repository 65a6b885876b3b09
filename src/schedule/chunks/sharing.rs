//! One input under way on the CPU and on GPUs: each piece's chunks shared
//! out by the split, the chaining values fed to the sink in the message's
//! order as the engines give them back.

use super::*;

/// Bytes hashed and time spent, per engine.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Tally {
    pub(super) bytes: u64,
    pub(super) busy: Duration,
}

/// Chaining values on their way to the last node, in the message's order.
pub(super) enum Pending {
    /// The CPU's, ready.
    Ready(Vec<u8>),
    /// The next submission of GPU `k`.
    Gpu(usize),
}

/// A GPU taking part.
pub(super) struct Gpu<'a> {
    pub(super) engine: Box<dyn ChunkEngine + 'a>,
    pub(super) tally: Tally,
}

/// One input under way on the CPU and on GPUs: the walk, what it runs
/// with, and the engines.
pub(super) struct Shared<'a, 'j, 'p, S: Sink> {
    pub(super) cx: Context<'p>,
    pub(super) walk: Walk<S>,
    pub(super) gpus: Vec<Gpu<'a>>,
    pub(super) latecomers: &'j mut dyn Latecomers<Box<dyn ChunkEngine + 'a>>,
    pub(super) split: Split,
    pub(super) cpu_tally: Tally,
    /// Values waiting for a GPU's before them.
    pub(super) pending: VecDeque<Pending>,
    /// A file's bytes read for the CPU (pieces that come unread).
    pub(super) buffer: Vec<u8>,
    pub(super) message_len: u64,
    pub(super) total_len: Option<u64>,
    pub(super) started: Instant,
    pub(super) progress: &'p dyn Progress,
}

impl<'a, 'j, 'p, S: Sink> Shared<'a, 'j, 'p, S> {
    pub(super) fn new(
        cx: Context<'p>,
        walk: Walk<S>,
        engines: Engines<'a, 'j>,
        total_len: Option<u64>,
        progress: &'p dyn Progress,
    ) -> Self {
        let gpus = engines
            .gpus
            .into_iter()
            .map(|engine| Gpu {
                engine,
                tally: Tally::default(),
            })
            .collect();
        Shared {
            walk,
            cx,
            gpus,
            latecomers: engines.latecomers,
            split: engines.split,
            cpu_tally: Tally::default(),
            pending: VecDeque::new(),
            buffer: Vec::new(),
            message_len: 0,
            total_len,
            started: Instant::now(),
            progress,
        }
    }

    /// Absorbs the next piece of M (which starts on a chunk boundary).
    pub(super) fn piece(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        let len = piece.len();
        if self.cx.leaf.is_some() {
            self.poll_latecomers()?;
        }
        let start = Instant::now();
        if self.gpus.is_empty() {
            // The CPU alone (TurboSHAKE always): the walk's own path.
            match piece {
                Piece::Unread { input, offset, len } if self.cx.leaf.is_some() => {
                    self.walk.piece_from_file(&self.cx, input, offset, len)?;
                }
                _ => {
                    let mut buffer = std::mem::take(&mut self.buffer);
                    let bytes = Bytes::of(piece).slice(0..len, &mut buffer)?;
                    self.walk.piece(&self.cx, bytes);
                    self.buffer = buffer;
                }
            }
            let time = start.elapsed();
            // The bytes of an unfinished last chunk are counted when the
            // walk finishes.
            self.cpu_tally.bytes += (len - self.walk.tail.len()) as u64;
            self.cpu_tally.busy += time;
            // The CPU's rate alone is the GPUs' first measure, if they join.
            self.split.record(&[len], &[time]);
            self.message_len += len as u64;
            return Ok(());
        }
        debug_assert!(
            self.walk.tail.is_empty(),
            "only the last piece is not whole chunks"
        );
        let bytes = Bytes::of(piece);
        let chunk_len = self.cx.chunk_len;
        let whole = len / chunk_len * chunk_len;
        if whole < len {
            let mut buffer = Vec::new();
            self.walk.tail = bytes.slice(whole..len, &mut buffer)?.to_vec();
        }
        let mut from = 0;
        if self.walk.wants_first_chunk() && whole > 0 {
            let mut buffer = Vec::new();
            let first = bytes.slice(0..chunk_len, &mut buffer)?;
            self.walk.node.absorb_message(first);
            self.cpu_tally.bytes += chunk_len as u64;
            from = chunk_len;
        }
        self.cpu_tally.busy += start.elapsed();
        // In waves whose chaining values fit MAX_VALUES_LEN: the CPU's may
        // wait for a GPU's before them.
        let wave = self.cx.chunks_per_wave() * chunk_len;
        while from < whole {
            let to = whole.min(from + wave);
            self.share_wave(bytes, from..to)?;
            from = to;
        }
        self.message_len += len as u64;
        self.progress.engines(&self.shares());
        Ok(())
    }

    /// Shares the whole chunks `range` of the piece between the engines by
    /// their rates.
    pub(super) fn share_wave(
        &mut self,
        bytes: Bytes<'_>,
        range: Range<usize>,
    ) -> Result<(), HashError> {
        let chunk_len = self.cx.chunk_len;
        let count = range.len() / chunk_len;
        let counts = self.split.counts(count, self.gpus.len());
        // Engine k (the CPU first) takes bytes [bounds[k], bounds[k + 1]).
        let mut bounds = vec![range.start];
        for c in &counts {
            bounds.push(bounds.last().expect("starts with one") + c * chunk_len);
        }
        let start = Instant::now();
        // The values ready now are fed to the last node beside this wave.
        let ready = self.take_ready(false)?;
        let (cpu_values, times) = self.absorb_shared(bytes, &bounds, ready)?;
        let sizes: Vec<usize> = bounds.windows(2).map(|w| w[1] - w[0]).collect();
        self.cpu_tally.busy += times[0];
        if sizes[0] > 0 {
            self.cpu_tally.bytes += sizes[0] as u64;
            self.pending.push_back(Pending::Ready(cpu_values));
        }
        for (k, gpu) in self.gpus.iter_mut().enumerate() {
            if sizes[k + 1] > 0 {
                gpu.tally.bytes += sizes[k + 1] as u64;
                gpu.tally.busy += times[k + 1];
                self.pending.push_back(Pending::Gpu(k));
            }
        }
        self.split.record(&sizes, &times);
        self.split.record_wave(range.len(), start.elapsed());
        self.trace(range.start, &sizes, &times);
        Ok(())
    }

    /// The chaining values at the front of `pending` that are ready, in
    /// order, taken out of it; with `wait`, all of them.
    pub(super) fn take_ready(&mut self, wait: bool) -> Result<Vec<Vec<u8>>, HashError> {
        let mut ready = Vec::new();
        while let Some(front) = self.pending.front_mut() {
            match front {
                Pending::Ready(values) => ready.push(std::mem::take(values)),
                Pending::Gpu(k) => match self.gpus[*k].engine.take(wait)? {
                    Some(values) => ready.push(values),
                    None => break,
                },
            }
            self.pending.pop_front();
        }
        Ok(ready)
    }

    /// Adds the latecomers that are ready.
    pub(super) fn poll_latecomers(&mut self) -> Result<(), HashError> {
        let standing = Standing {
            message_len: self.message_len,
            remaining: self.total_len.map(|t| t.saturating_sub(self.message_len)),
            elapsed: self.started.elapsed(),
        };
        for engine in self.latecomers.poll(&standing)? {
            trace::trace(|| format!("{} joins at {}", engine.id(), self.message_len));
            self.gpus.push(Gpu {
                engine,
                tally: Tally::default(),
            });
        }
        Ok(())
    }

    /// Hands each GPU its run of the piece (`bounds[k + 1]..bounds[k + 2]`
    /// to GPU k) and hashes the CPU's (`bounds[0]..bounds[1]`) meanwhile,
    /// while a thread of the global pool feeds the values `ready` to the
    /// last node (on the walk's thread, between waves, it would hold the
    /// GPUs' staging back:
    /// docs/decisions/0005-standard-pieces-read-per-task.md): the CPU's
    /// chaining values, and each engine's time.
    pub(super) fn absorb_shared(
        &mut self,
        bytes: Bytes<'_>,
        bounds: &[usize],
        ready: Vec<Vec<u8>>,
    ) -> Result<(Vec<u8>, Vec<Duration>), HashError> {
        let mut times = vec![Duration::ZERO; bounds.len() - 1];
        let (cpu_time, gpu_times) = times.split_first_mut().expect("the CPU's is there");
        let Shared {
            cx,
            walk,
            gpus,
            buffer,
            ..
        } = self;
        let cx = &*cx;
        let any_ready = !ready.is_empty();
        let mut feed = move || {
            let start = Instant::now();
            for values in &ready {
                walk.absorb_values(cx, values);
            }
            trace::trace(|| {
                let ms = start.elapsed().as_secs_f64() * 1e3;
                format!("last node fed {} runs of values in {ms:.3} ms", ready.len())
            });
        };
        let cpu_range = bounds[0]..bounds[1];
        let cv_len = cx.params.standard().chaining_len();
        let mut values = vec![0u8; cpu_range.len() / cx.chunk_len * cv_len];
        let mut cpu_part = || -> Result<(), HashError> {
            if cpu_range.is_empty() {
                return Ok(());
            }
            let start = Instant::now();
            match (bytes.mapped, bytes.chunks(cpu_range.clone())) {
                // Unread: each task reads its own chunks.
                (None, ChunkBytes::File { input, offset, .. }) => {
                    cx.chaining_values_of_file(input, offset, &mut values)?;
                }
                _ => {
                    let run = bytes.slice(cpu_range.clone(), buffer)?;
                    cx.chaining_values(run, &mut values);
                }
            }
            *cpu_time = start.elapsed();
            Ok(())
        };
        let mut submits: Vec<_> = gpus
            .iter_mut()
            .zip(gpu_times.iter_mut())
            .zip(bounds[1..].windows(2))
            .filter(|(_, w)| w[0] < w[1])
            .map(|((gpu, time), w)| {
                let run = bytes.chunks(w[0]..w[1]);
                move || -> Result<(), HashError> {
                    let start = Instant::now();
                    gpu.engine.submit(run)?;
                    *time = start.elapsed();
                    Ok(())
                }
            })
            .collect();
        let mut results: Vec<Result<(), HashError>> = submits.iter().map(|_| Ok(())).collect();
        let mut result = Ok(());
        rayon::in_place_scope(|s| {
            if any_ready {
                s.spawn(move |_| feed());
            }
            if submits.len() == 1 && cpu_range.is_empty() {
                // One GPU alone: staged from this thread.
                result = submits[0]();
                return;
            }
            // The GPUs' staging on the global rayon pool's long-lived
            // threads (a thread's first CUDA call sets up driver state for
            // it), the CPU's chunks on this one.
            for (submit, out) in submits.iter_mut().zip(results.iter_mut()) {
                s.spawn(move |_| *out = submit());
            }
            result = cpu_part();
        });
        results.into_iter().fold(result, Result::and)?;
        Ok((values, times))
    }

    /// Feeds the last node every value still pending, in order.
    pub(super) fn drain(&mut self) -> Result<(), HashError> {
        for values in self.take_ready(true)? {
            self.walk.absorb_values(&self.cx, &values);
        }
        Ok(())
    }

    /// Each engine's share so far, the CPU first.
    pub(super) fn shares(&self) -> Vec<EngineShare> {
        let cpu = EngineShare {
            engine: EngineId::Cpu,
            bytes: self.cpu_tally.bytes,
            busy: self.cpu_tally.busy,
        };
        let gpus = self.gpus.iter().map(|g| EngineShare {
            engine: g.engine.id(),
            bytes: g.tally.bytes,
            busy: g.tally.busy,
        });
        std::iter::once(cpu).chain(gpus).collect()
    }

    /// `TREEHASH_TRACE=1`: each engine's bytes and time in a wave.
    pub(super) fn trace(&self, at: usize, sizes: &[usize], times: &[Duration]) {
        trace::trace(|| {
            let mut line = format!("chunks from {}:", self.message_len + at as u64);
            let names =
                std::iter::once(EngineId::Cpu).chain(self.gpus.iter().map(|g| g.engine.id()));
            for ((name, size), time) in names.zip(sizes).zip(times) {
                line += &format!(" {name} {size} B {:.3} ms;", time.as_secs_f64() * 1e3);
            }
            line
        });
    }

    /// Every chaining value fed in order, the last chunk's bytes counted:
    /// each engine's share, and the GPUs' copies and kernels, busy.
    pub(super) fn settle(&mut self) -> Result<(Vec<EngineShare>, Duration, Duration), HashError> {
        self.drain()?;
        self.cpu_tally.bytes += self.walk.tail.len() as u64;
        let shares = self
            .shares()
            .into_iter()
            .filter(|s| s.engine == EngineId::Cpu || s.bytes > 0)
            .collect();
        let (mut copy_busy, mut kernel_busy) = (Duration::ZERO, Duration::ZERO);
        for gpu in &self.gpus {
            let (copies, kernels) = gpu.engine.busy();
            copy_busy += copies;
            kernel_busy += kernels;
        }
        Ok((shares, copy_busy, kernel_busy))
    }
}

impl Shared<'_, '_, '_, LastNode> {
    /// The digest: every chaining value fed in order, then the last chunks
    /// and the last node.
    pub(super) fn finish(mut self, bytes: u64) -> Result<Walked, HashError> {
        let (shares, copy_busy, kernel_busy) = self.settle()?;
        let digest = self.walk.finish(&self.cx);
        Ok(Walked {
            digest,
            bytes,
            shares,
            copy_busy,
            kernel_busy,
        })
    }
}

impl Shared<'_, '_, '_, PartSink> {
    /// What the part keeps: every chaining value in order, the last chunk's too.
    pub(super) fn finish_part(mut self) -> Result<PartWalked, HashError> {
        let (shares, copy_busy, kernel_busy) = self.settle()?;
        let sink = self.walk.finish_part(&self.cx);
        Ok(PartWalked {
            sink,
            shares,
            copy_busy,
            kernel_busy,
        })
    }
}
