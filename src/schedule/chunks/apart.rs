//! GPUs alone on a file of a standard function, each at its own pace
//! (docs/decisions/0044-gpus-walk-chunks-apart.md): the file's whole chunks
//! are cut into waves, each GPU takes the next wave whenever it has staged
//! its last and reads that wave's bytes itself, and the last node takes the
//! waves' chaining values in the message's order on the calling thread
//! while the GPUs hash the next ones. No wave waits for another GPU's, as
//! each wave of the lockstep ([`super::hash`]) does.

use std::collections::BTreeMap;
use std::sync::mpsc::{Sender, channel};
use std::sync::{Condvar, Mutex};
use std::thread::Builder;

use super::sharing::Tally;
use super::*;

/// Waves each GPU may take beyond the last one fed to the last node: the
/// values waiting for a slower GPU's stay few (512 KiB a wave for KT128).
const WAVES_AHEAD_PER_GPU: usize = 4;

/// Which waves are taken and fed; set `stop` to end every walk.
struct Gate {
    next: usize,
    fed: usize,
    stop: bool,
}

/// The waves, handed out in order, no more than `ahead` beyond the last
/// one fed.
struct Waves {
    gate: Mutex<Gate>,
    moved: Condvar,
    count: usize,
    ahead: usize,
}

impl Waves {
    /// The next wave for a walk, once it is no more than `ahead` beyond the
    /// last one fed; `None` when none is left or the walks stop. A walk
    /// with values still to take (`waiting`) is not kept waiting here: it
    /// gets `Err(())`, takes them, and asks again, since the last node may
    /// be waiting for them.
    fn next(&self, waiting: bool) -> Result<Option<usize>, ()> {
        let mut gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if gate.stop || gate.next >= self.count {
                return Ok(None);
            }
            if gate.next < gate.fed + self.ahead {
                gate.next += 1;
                return Ok(Some(gate.next - 1));
            }
            if waiting {
                return Err(());
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
/// result. Walks whose threads the system refuses take no wave; where it
/// refuses every one, the lockstep ([`super::hash`]) runs instead.
pub(crate) fn hash_apart<'a>(
    params: &StandardParams,
    file: &InputFile,
    cpu: &CpuBackend,
    gpus: Vec<Box<dyn ChunkEngine + 'a>>,
    piece_target: usize,
    progress: &dyn Progress,
) -> Result<Walked, HashError> {
    let cx = Context::new(params, cpu);
    let mut walk = Walk::new(params);
    let chunk_len = cx.chunk_len as u64;
    let file_len = file.len();
    let whole = file_len / chunk_len * chunk_len;
    let first = walk.wants_first_chunk() && whole > 0;
    let from = if first { chunk_len } else { 0 };
    let wave_len = file_piece_len(params, cpu) as u64;
    let count = (whole - from).div_ceil(wave_len) as usize;
    let wave = |i: usize| {
        let offset = from + i as u64 * wave_len;
        (offset, wave_len.min(whole - offset))
    };
    let waves = Waves {
        gate: Mutex::new(Gate {
            next: 0,
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
    let fed = std::thread::scope(|s| -> Result<Option<()>, HashError> {
        let mut started = 0;
        for (cell, result) in cells.iter().zip(&results) {
            let (waves, sender, wave) = (&waves, sender.clone(), &wave);
            let walk_waves = move || {
                let Some(engine) = cell.lock().ok().and_then(|mut c| c.take()) else {
                    return;
                };
                let walked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    walk_waves(engine, file, waves, wave, &sender)
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
                started += 1;
            }
        }
        drop(sender);
        if started == 0 {
            return Ok(None);
        }
        let _stop = StopWalks(&waves);
        if first {
            let mut chunk = vec![0u8; cx.chunk_len];
            file.read_exact_at(&mut chunk, 0)?;
            walk.node.absorb_message(&chunk);
            progress.advance(chunk_len);
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
        Ok(Some(()))
    })?;
    let mut gpus_left = Vec::new();
    if fed.is_none() {
        // The system refused every walk its thread: the lockstep, on this one.
        for cell in cells {
            if let Some(engine) = cell.into_inner().ok().flatten() {
                gpus_left.push(engine);
            }
        }
        let mut none = NoLatecomers;
        let engines = Engines {
            gpus: gpus_left,
            latecomers: &mut none,
            split: Split::new(false),
        };
        return hash(
            params,
            &mut Input::File(file),
            cpu,
            engines,
            piece_target,
            progress,
        );
    }
    // The last bytes, short of a whole chunk, and the suffix.
    let mut tail = vec![0u8; (file_len - whole) as usize];
    file.read_exact_at(&mut tail, whole)?;
    progress.advance(tail.len() as u64);
    walk.tail = tail;
    let mut shares = vec![EngineShare {
        engine: EngineId::Cpu,
        bytes: from + (file_len - whole),
        busy: Duration::ZERO,
    }];
    let (mut copy_busy, mut kernel_busy) = (Duration::ZERO, Duration::ZERO);
    for walked in results
        .into_iter()
        .filter_map(|r| r.into_inner().ok().flatten())
    {
        shares.push(walked.share);
        copy_busy += walked.busy.0;
        kernel_busy += walked.busy.1;
    }
    progress.engines(&shares);
    Ok(Walked {
        digest: walk.finish(&cx),
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

/// One GPU's walk: the next wave whenever it has staged its last, each
/// wave's values sent as they come back.
fn walk_waves(
    mut engine: Box<dyn ChunkEngine + '_>,
    file: &InputFile,
    waves: &Waves,
    wave: &(dyn Fn(usize) -> (u64, u64) + Sync),
    sender: &Sender<Sent>,
) -> Result<WalkEnd, HashError> {
    let began = Instant::now();
    let mut tally = Tally::default();
    // Waves submitted whose values are not taken yet, oldest first.
    let mut submitted = std::collections::VecDeque::new();
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
        let i = match waves.next(!submitted.is_empty()) {
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
    }
    for i in submitted {
        send(i, taken(engine.as_mut())?);
    }
    let id = engine.id();
    trace::trace(|| {
        format!(
            "{id} walked the chunks apart: {} B, busy {:.3} ms, in {:.3} ms",
            tally.bytes,
            tally.busy.as_secs_f64() * 1e3,
            began.elapsed().as_secs_f64() * 1e3
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
