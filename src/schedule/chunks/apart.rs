//! GPUs alone on a file of a standard function, each at its own pace
//! (docs/decisions/0044-gpus-walk-chunks-apart.md): the file's whole chunks
//! are cut into waves, dealt round-robin to the GPUs (an even share, as
//! LI's GPUs begun side by side keep), each GPU staging its next wave as
//! soon as it has staged its last and reading that wave's bytes itself;
//! the last node takes the waves' chaining values in the message's order
//! on the calling thread while the GPUs hash the next ones. No wave waits
//! for another GPU's, as each wave of the lockstep ([`super::hash`]) does.

use std::collections::{BTreeMap, VecDeque};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Condvar, Mutex};
use std::thread::Builder;

use super::sharing::Tally;
use super::*;
use crate::timings::ms;

/// Waves a GPU may stage beyond the last one fed to the last node, per
/// GPU: the values held for a slower GPU's stay few (a wave's are at most
/// [`MAX_VALUES_LEN`], 512 KiB for KT128's waves of 128 MiB).
const WAVES_AHEAD_PER_GPU: usize = 4;

/// The waves' state, shared by the walks and the last node; `stop` ends
/// every walk.
struct Gate {
    /// Each walk's place in the round-robin, once every thread is started
    /// (`None` for a walk whose thread the system refused).
    ranks: Option<Vec<Option<usize>>>,
    fed: usize,
    stop: bool,
}

/// The waves, dealt round-robin to the walks that started, none staged
/// more than `ahead` beyond the last one fed.
struct Waves {
    gate: Mutex<Gate>,
    moved: Condvar,
    count: usize,
    ahead: usize,
}

impl Waves {
    /// Walk `k`'s wave after its first `taken`, once it is no more than
    /// `ahead` beyond the last one fed; `None` when it has none left or
    /// the walks stop. A walk with values still to take (`waiting`) is not
    /// kept waiting here: it gets `Err(())`, takes them and asks again,
    /// since the last node may be waiting for them.
    fn next(&self, k: usize, taken: usize, waiting: bool) -> Result<Option<usize>, ()> {
        let mut gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if gate.stop {
                return Ok(None);
            }
            if let Some(ranks) = &gate.ranks {
                let walks = ranks.iter().flatten().count();
                let Some(rank) = ranks[k] else {
                    return Ok(None);
                };
                let i = rank + taken * walks;
                if i >= self.count {
                    return Ok(None);
                }
                if i < gate.fed + self.ahead {
                    return Ok(Some(i));
                }
                if waiting {
                    return Err(());
                }
            }
            gate = self.moved.wait(gate).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn set(&self, change: impl FnOnce(&mut Gate)) {
        change(&mut self.gate.lock().unwrap_or_else(|e| e.into_inner()));
        self.moved.notify_all();
    }
}

/// Stops every walk when dropped: the last node's loop ended, by its end,
/// an error or a panic, and no walk may wait for it any more.
struct StopWalks<'w>(&'w Waves);

impl Drop for StopWalks<'_> {
    fn drop(&mut self) {
        self.0.set(|gate| gate.stop = true);
    }
}

/// What a walk sends the last node.
enum Sent {
    /// The chaining values of wave `.0`.
    Values(usize, Vec<u8>),
    Failed(HashError),
}

/// What a walk did: its engine's share and its copies' and kernels' busy
/// times.
struct WalkEnd {
    share: EngineShare,
    busy: (Duration, Duration),
}

/// Whether `gpus` can each walk a file's chunks apart: more than one.
pub(crate) fn can_walk_apart(gpus: &[Box<dyn ChunkEngine + '_>]) -> bool {
    gpus.len() > 1
}

/// The digest of `file` with `params`, its whole chunks on `gpus` (each
/// reading its waves itself, on a thread of its own), KT's first chunk,
/// the last bytes and the last node on this thread. A GPU that fails (or
/// panics) stops the others at their next wave, and its error is the
/// result. The waves are dealt among the walks whose threads started;
/// where the system refuses every one, or the file has no whole chunk for
/// a GPU, the lockstep ([`super::hash`]) runs instead.
pub(crate) fn hash_apart<'a>(
    params: &StandardParams,
    file: &InputFile,
    cpu: &CpuBackend,
    gpus: Vec<Box<dyn ChunkEngine + 'a>>,
    piece_target: usize,
    progress: &dyn Progress,
) -> Result<Walked, HashError> {
    let in_lockstep = |gpus| {
        let mut none = NoLatecomers;
        let engines = Engines {
            gpus,
            latecomers: &mut none,
            split: Split::new(false),
        };
        let mut input = Input::File(file);
        hash(params, &mut input, cpu, engines, piece_target, progress)
    };
    let cx = Context::new(params, cpu);
    let mut walk = Walk::new(params);
    let chunk_len = cx.chunk_len as u64;
    let file_len = file.len();
    let whole = file_len / chunk_len * chunk_len;
    let first = walk.wants_first_chunk() && whole > 0;
    let from = if first { chunk_len } else { 0 };
    // Whole chunks, and values of at most MAX_VALUES_LEN (ParallelHash
    // with a small B has more bytes of values than of input).
    let wave_len = file_piece_len(params, cpu).min(cx.chunks_per_wave() * cx.chunk_len) as u64;
    let count = (whole - from).div_ceil(wave_len) as usize;
    if count == 0 {
        // Nothing for a GPU: KT's first chunk and the last bytes.
        return in_lockstep(gpus);
    }
    let wave = |i: usize| {
        let offset = from + i as u64 * wave_len;
        (offset, wave_len.min(whole - offset))
    };
    let waves = Waves {
        gate: Mutex::new(Gate {
            ranks: None,
            fed: 0,
            stop: false,
        }),
        moved: Condvar::new(),
        count,
        ahead: WAVES_AHEAD_PER_GPU * gpus.len(),
    };
    let cells: Vec<Mutex<Option<Box<dyn ChunkEngine + 'a>>>> =
        gpus.into_iter().map(|g| Mutex::new(Some(g))).collect();
    let results: Vec<Mutex<Option<WalkEnd>>> = cells.iter().map(|_| Mutex::new(None)).collect();
    let (sender, receiver) = channel::<Sent>();
    // The CPU's time on KT's first chunk and the last bytes.
    let mut cpu_busy = Duration::ZERO;
    let walked = std::thread::scope(|s| -> Result<bool, HashError> {
        let mut ranks = Vec::with_capacity(cells.len());
        let mut started = 0;
        for (k, (cell, result)) in cells.iter().zip(&results).enumerate() {
            let (waves, sender, wave) = (&waves, sender.clone(), &wave);
            let walk_waves = move || {
                let Some(engine) = cell.lock().ok().and_then(|mut c| c.take()) else {
                    return;
                };
                let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    walk_waves(k, engine, file, waves, wave, &sender)
                }));
                match walked {
                    Ok(Ok(walked)) => {
                        if let Ok(mut r) = result.lock() {
                            *r = Some(walked);
                        }
                    }
                    Ok(Err(e)) => fail(waves, &sender, e),
                    Err(_) => fail(
                        waves,
                        &sender,
                        HashError::Internal("a GPU's walk over the chunks panicked".into()),
                    ),
                }
            };
            let name = "treehash-walk".to_string();
            if Builder::new()
                .name(name)
                .spawn_scoped(s, walk_waves)
                .is_ok()
            {
                ranks.push(Some(started));
                started += 1;
            } else {
                ranks.push(None);
            }
        }
        drop(sender);
        if started == 0 {
            return Ok(false);
        }
        let _stop = StopWalks(&waves);
        waves.set(|gate| gate.ranks = Some(ranks));
        if first {
            let start = Instant::now();
            let mut chunk = vec![0u8; cx.chunk_len];
            file.read_exact_at(&mut chunk, 0)?;
            walk.node.absorb_message(&chunk);
            progress.advance(chunk_len);
            cpu_busy += start.elapsed();
        }
        // Waves that came before the one the last node needs next.
        let mut early = BTreeMap::new();
        let mut fed = 0;
        while fed < count {
            match receiver.recv() {
                Ok(Sent::Values(i, values)) => {
                    early.insert(i, values);
                }
                Ok(Sent::Failed(e)) => return Err(e),
                Err(_) => {
                    return Err(HashError::Internal(
                        "every GPU's walk ended with chunks left".into(),
                    ));
                }
            }
            while let Some(values) = early.remove(&fed) {
                walk.absorb_values(&cx, &values);
                progress.advance(wave(fed).1);
                fed += 1;
                waves.set(|gate| gate.fed = fed);
            }
        }
        Ok(true)
    })?;
    if !walked {
        // The system refused every walk its thread: the lockstep, on this one.
        let gpus = cells
            .into_iter()
            .filter_map(|cell| cell.into_inner().ok().flatten())
            .collect();
        return in_lockstep(gpus);
    }
    // The last bytes, short of a whole chunk, and the suffix.
    let start = Instant::now();
    let mut tail = vec![0u8; (file_len - whole) as usize];
    file.read_exact_at(&mut tail, whole)?;
    progress.advance(tail.len() as u64);
    walk.tail = tail;
    let digest = walk.finish(&cx);
    let mut shares = vec![EngineShare {
        engine: EngineId::Cpu,
        bytes: from + (file_len - whole),
        busy: cpu_busy + start.elapsed(),
    }];
    let (mut copy_busy, mut kernel_busy) = (Duration::ZERO, Duration::ZERO);
    for end in results
        .into_iter()
        .filter_map(|r| r.into_inner().ok().flatten())
    {
        copy_busy += end.busy.0;
        kernel_busy += end.busy.1;
        if end.share.bytes > 0 {
            shares.push(end.share);
        }
    }
    progress.engines(&shares);
    Ok(Walked {
        digest,
        bytes: file_len,
        shares,
        copy_busy,
        kernel_busy,
    })
}

/// The oldest submission's values, waited for.
fn taken(engine: &mut dyn ChunkEngine) -> Result<Vec<u8>, HashError> {
    engine
        .take(true)?
        .ok_or_else(|| HashError::Internal("a GPU gave no chaining values when waited for".into()))
}

/// Stops every walk and tells the last node why.
fn fail(waves: &Waves, sender: &Sender<Sent>, e: HashError) {
    waves.set(|gate| gate.stop = true);
    // The last node may have stopped listening already.
    let _ = sender.send(Sent::Failed(e));
}

/// Walk `k`'s GPU: its next wave whenever it has staged its last, each
/// wave's values sent as they come back.
fn walk_waves(
    k: usize,
    mut engine: Box<dyn ChunkEngine + '_>,
    file: &InputFile,
    waves: &Waves,
    wave: &(dyn Fn(usize) -> (u64, u64) + Sync),
    sender: &Sender<Sent>,
) -> Result<WalkEnd, HashError> {
    let began = Instant::now();
    let mut tally = Tally::default();
    // Waves submitted whose values are not taken yet, oldest first.
    let mut submitted = VecDeque::new();
    let mut taken_waves = 0;
    let send = |i: usize, values: Vec<u8>| {
        // The last node may have stopped listening (another walk failed).
        let _ = sender.send(Sent::Values(i, values));
    };
    loop {
        while let Some(&i) = submitted.front() {
            let Some(values) = engine.take(false)? else {
                break;
            };
            send(i, values);
            submitted.pop_front();
        }
        let i = match waves.next(k, taken_waves, !submitted.is_empty()) {
            Ok(Some(i)) => i,
            Ok(None) => break,
            Err(()) => {
                // Too far ahead: the last node may be waiting for these.
                let i = submitted.pop_front().expect("a wave is waiting");
                send(i, taken(engine.as_mut())?);
                continue;
            }
        };
        let (offset, len) = wave(i);
        let start = Instant::now();
        engine.submit(ChunkBytes::File {
            input: file,
            offset,
            len: len as usize,
        })?;
        tally.busy += start.elapsed();
        tally.bytes += len;
        submitted.push_back(i);
        taken_waves += 1;
    }
    for i in submitted {
        send(i, taken(engine.as_mut())?);
    }
    let id = engine.id();
    trace::trace(|| {
        format!(
            "{id} walked the chunks apart: {} B, busy {:.3} ms, in {:.3} ms",
            tally.bytes,
            ms(tally.busy),
            ms(began.elapsed())
        )
    });
    Ok(WalkEnd {
        share: EngineShare {
            engine: id,
            bytes: tally.bytes,
            busy: tally.busy,
        },
        busy: engine.busy(),
    })
}
