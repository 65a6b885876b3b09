use super::*;

use std::sync::{Arc, Mutex};

use crate::cpu::CpuPath;

use crate::standard::{Standard, StandardParams, chunk_count};
use crate::test_reference;
use crate::test_rng::{Rng, bytes};

/// A chunk engine on the CPU that answers late: a submission's values
/// come back only `lag` takes after it was made, so the walk's order
/// and its waits are exercised as with a GPU's ring.
struct LateEngine {
    leaf: SpongeSpec,
    chunk_len: usize,
    lag: usize,
    /// Submissions not taken: their values and the takes they waited.
    queue: VecDeque<(Vec<u8>, usize)>,
    /// Every submission's bytes, for the test to check.
    seen: Arc<Mutex<u64>>,
}

impl ChunkEngine for LateEngine {
    fn id(&self) -> EngineId {
        EngineId::Gpu(7)
    }

    fn submit(&mut self, bytes: ChunkBytes<'_>) -> Result<(), HashError> {
        let mut buffer = Vec::new();
        let data = bytes.read(&mut buffer)?;
        assert_eq!(data.len() % self.chunk_len, 0, "whole chunks");
        let mut values = vec![0u8; data.len() / self.chunk_len * self.leaf.output_len()];
        crate::cpu::chunks::chaining_values(
            CpuPath::Portable,
            &self.leaf,
            data,
            self.chunk_len,
            &mut values,
        )?;
        *self.seen.lock().unwrap() += data.len() as u64;
        self.queue.push_back((values, 0));
        Ok(())
    }

    fn take(&mut self, wait: bool) -> Result<Option<Vec<u8>>, HashError> {
        let front = self.queue.front_mut().expect("a submission to take");
        if !wait && front.1 < self.lag {
            front.1 += 1;
            return Ok(None);
        }
        Ok(self.queue.pop_front().map(|(values, _)| values))
    }

    fn busy(&self) -> (Duration, Duration) {
        (Duration::ZERO, Duration::ZERO)
    }
}

/// One latecomer, which joins at a given piece.
struct LatecomerAt {
    at_piece: u32,
    polls: u32,
    engine: Option<Box<dyn ChunkEngine>>,
}

impl<'a> Latecomers<Box<dyn ChunkEngine + 'a>> for LatecomerAt {
    fn poll(&mut self, _now: &Standing) -> Result<Vec<Box<dyn ChunkEngine + 'a>>, HashError> {
        self.polls += 1;
        if self.polls > self.at_piece
            && let Some(engine) = self.engine.take()
        {
            return Ok(vec![engine]);
        }
        Ok(Vec::new())
    }
}

fn cases() -> Vec<StandardParams> {
    vec![
        StandardParams::new(Standard::Kt128),
        StandardParams::new(Standard::Kt256)
            .with_customization(vec![7; 9000])
            .unwrap(),
        StandardParams::new(Standard::ParallelHash128)
            .with_block_size(13)
            .unwrap(),
        StandardParams::new(Standard::ParallelHash256)
            .with_block_size(1000)
            .unwrap()
            .with_customization(b"S".to_vec())
            .unwrap(),
        StandardParams::new(Standard::ParallelHash128)
            .with_block_size(1)
            .unwrap(),
    ]
}

/// Whatever the split of each piece (weights scripted at random, zeros
/// included: the CPU alone, a GPU alone, any share), however late the
/// engines answer and whenever one joins, the digest is the reference's.
#[test]
fn any_split_of_the_chunks_gives_the_reference_digest() {
    let cpu = CpuBackend::new(Some(2), Some(8192), CpuPath::Auto).unwrap();
    for (case, params) in cases().into_iter().enumerate() {
        let b = chunk_len(&params);
        let leaf = params.standard().chunk_spec().unwrap();
        for (k, len) in [0, 1, b, 3 * b - 1, 40 * b + 3, 20_000, 150_000]
            .into_iter()
            .enumerate()
        {
            let message = bytes(len, (case * 100 + k) as u64);
            let want = test_reference::standard(&params, &message);
            for (lag, arrives_at) in [(0, 0), (2, 0), (1, 3), (5, 1)] {
                let seen = Arc::new(Mutex::new(0));
                let late = |lag| -> Box<dyn ChunkEngine> {
                    Box::new(LateEngine {
                        leaf,
                        chunk_len: b,
                        lag,
                        queue: VecDeque::new(),
                        seen: seen.clone(),
                    })
                };
                let mut latecomers = LatecomerAt {
                    at_piece: arrives_at,
                    polls: 0,
                    engine: Some(late(lag + 1)),
                };
                let mut split = Split::new(true);
                let mut mix = Rng((lag * 10) as u64 + u64::from(arrives_at) + len as u64);
                split.script = Some(Box::new(move |n| {
                    (0..n)
                        .map(|_| [0.0, 0.0, 1.0, 3.0, 0.5][(mix.next() % 5) as usize])
                        .collect()
                }));
                let engines = Engines {
                    gpus: vec![late(lag)],
                    latecomers: &mut latecomers,
                    split,
                };
                let mut input = Input::Bytes(&message);
                let out = hash(&params, &mut input, &cpu, engines, 8192, &()).unwrap();
                let what = format!("{} of {len} bytes, lag {lag}", params.label());
                assert_eq!(out.digest, want, "{what}");
                assert_eq!(out.bytes, len as u64);
                let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
                assert_eq!(shared, len as u64, "{what}: every byte in one share");
                let late_bytes: u64 = out
                    .shares
                    .iter()
                    .filter(|s| s.engine == EngineId::Gpu(7))
                    .map(|s| s.bytes)
                    .sum();
                assert_eq!(late_bytes, *seen.lock().unwrap(), "{what}");
            }
        }
    }
}

/// Pieces whose chaining values exceed `MAX_VALUES_LEN` (ParallelHash
/// with B = 1: 32 bytes a byte) are shared in waves, the engines
/// answering late: the reference's digest.
#[test]
fn pieces_of_many_small_chunks_are_shared_in_waves() {
    let cpu = CpuBackend::new(Some(2), None, CpuPath::Auto).unwrap();
    let params = StandardParams::new(Standard::ParallelHash128)
        .with_block_size(1)
        .unwrap();
    let leaf = params.standard().chunk_spec().unwrap();
    let wave = Context::new(&params, &cpu).chunks_per_wave();
    assert_eq!(wave, MAX_VALUES_LEN / 32);
    let message = bytes(3 * wave + 1234, 9);
    let seen = Arc::new(Mutex::new(0));
    let mut split = Split::new(true);
    let mut mix = Rng(5);
    split.script = Some(Box::new(move |n| {
        (0..n).map(|_| (mix.next() % 4) as f64).collect()
    }));
    let engines = Engines {
        gpus: vec![Box::new(LateEngine {
            leaf,
            chunk_len: 1,
            lag: 3,
            queue: VecDeque::new(),
            seen: seen.clone(),
        })],
        latecomers: &mut NoLatecomers,
        split,
    };
    let mut input = Input::Bytes(&message);
    let out = hash(&params, &mut input, &cpu, engines, 2 * wave + 7, &()).unwrap();
    assert_eq!(out.digest, test_reference::standard(&params, &message));
    assert!(*seen.lock().unwrap() > 0);
}

/// Under `--backend gpu` the CPU hashes no chunk: only KT's first one
/// and the last ones, and ParallelHash's last.
#[test]
fn a_split_without_the_cpu_gives_it_no_chunk() {
    let cpu = CpuBackend::new(Some(2), Some(16384), CpuPath::Auto).unwrap();
    for params in cases() {
        let b = chunk_len(&params);
        let leaf = params.standard().chunk_spec().unwrap();
        let message = bytes(30 * b + 5, 3);
        let seen = Arc::new(Mutex::new(0));
        let engines = Engines {
            gpus: vec![Box::new(LateEngine {
                leaf,
                chunk_len: b,
                lag: 1,
                queue: VecDeque::new(),
                seen: seen.clone(),
            })],
            latecomers: &mut NoLatecomers,
            split: Split::new(false),
        };
        let mut input = Input::Bytes(&message);
        let out = hash(&params, &mut input, &cpu, engines, 16384, &()).unwrap();
        assert_eq!(out.digest, test_reference::standard(&params, &message));
        let first = if params.standard().family() == Family::Kangaroo {
            b
        } else {
            0
        };
        let cpu_bytes = out.shares[0].bytes;
        assert_eq!(out.shares[0].engine, EngineId::Cpu);
        let tail = message.len() % b;
        assert_eq!(cpu_bytes as usize, first + tail, "{}", params.label());
        assert_eq!(*seen.lock().unwrap(), message.len() as u64 - cpu_bytes);
    }
}

/// GPUs alone share each wave evenly whatever rates they were measured
/// at; with the CPU, the split follows the rates.
#[test]
fn gpus_alone_share_chunks_evenly_and_with_the_cpu_by_rate() {
    let ms = Duration::from_millis;
    let mib = 1 << 20;
    for cpu_takes_chunks in [false, true] {
        let mut split = Split::new(cpu_takes_chunks);
        // The first piece of each engine is its warm-up, not measured.
        for _ in 0..3 {
            split.record(&[mib, mib, mib], &[ms(4), ms(1), ms(3)]);
        }
        let counts = split.counts(1200, 2);
        if cpu_takes_chunks {
            // Rates of 1/4, 1 and 1/3 MiB a millisecond.
            assert_eq!(counts, vec![189, 758, 253]);
        } else {
            assert_eq!(counts, vec![0, 600, 600]);
        }
    }
}

/// A `LateEngine` that fails, or panics, on its `at`-th submission.
struct FailsAt {
    inner: LateEngine,
    at: usize,
    panics: bool,
}

impl ChunkEngine for FailsAt {
    fn id(&self) -> EngineId {
        self.inner.id()
    }

    fn submit(&mut self, bytes: ChunkBytes<'_>) -> Result<(), HashError> {
        if self.at == 0 {
            assert!(!self.panics, "scripted panic");
            return Err(HashError::Internal("scripted failure".into()));
        }
        self.at -= 1;
        self.inner.submit(bytes)
    }

    fn take(&mut self, wait: bool) -> Result<Option<Vec<u8>>, HashError> {
        self.inner.take(wait)
    }

    fn busy(&self) -> (Duration, Duration) {
        self.inner.busy()
    }
}

/// Engines standing in for GPUs (`LateEngine`s, `n` of them) walking a
/// file's chunks apart, in waves of three chunks: the result, and the
/// bytes the engines hashed. With `fails`, engine k fails (or panics) on
/// its submission `fails.0[k]`.
fn walk_apart(
    params: &StandardParams,
    file: &crate::input::InputFile,
    n: usize,
    fails: Option<(&[usize], bool)>,
) -> Result<(Walked, u64), HashError> {
    let b = chunk_len(params);
    let cpu = CpuBackend::new(Some(2), Some(3 * b), CpuPath::Auto).unwrap();
    let leaf = params.standard().chunk_spec().unwrap();
    let seen = Arc::new(Mutex::new(0));
    let gpus: Vec<Box<dyn ChunkEngine>> = (0..n)
        .map(|k| {
            let inner = LateEngine {
                leaf,
                chunk_len: b,
                lag: k + 1,
                queue: VecDeque::new(),
                seen: seen.clone(),
            };
            match fails {
                Some((at, panics)) => Box::new(FailsAt {
                    inner,
                    at: at[k],
                    panics,
                }) as Box<dyn ChunkEngine>,
                None => Box::new(inner),
            }
        })
        .collect();
    assert!(can_walk_apart(&gpus));
    let out = hash_apart(params, file, &cpu, gpus, 3 * b, &())?;
    let seen = *seen.lock().unwrap();
    Ok((out, seen))
}

/// GPUs alone on a file (here two and three engines standing in for them)
/// each walk its waves at their own pace: the digest is the reference's at
/// every edge of a chunk and a wave, and the shares add up to the file.
#[test]
fn a_file_walked_apart_by_several_gpus_gives_the_reference_digest() {
    use crate::input::Source;
    let dir = tempfile::tempdir().unwrap();
    for params in cases() {
        let b = chunk_len(&params);
        let lens = [1, b - 1, b, b + 1, 3 * b, 4 * b + 1, 7 * b - 1, 40 * b + 5];
        // An empty file is a sequential input, never walked apart.
        for len in lens.into_iter().filter(|&len| len > 0) {
            let message = bytes(len, len as u64 + 3);
            let path = dir.path().join("m");
            std::fs::write(&path, &message).unwrap();
            let Source::File(file) = Source::open(&path).unwrap() else {
                panic!("a file of {len} bytes is a file");
            };
            let want = test_reference::standard(&params, &message);
            for n in [2, 3] {
                let what = format!("{}, {len} bytes, {n} engines", params.label());
                let (out, seen) = walk_apart(&params, &file, n, None).unwrap();
                assert_eq!(out.digest, want, "{what}");
                assert_eq!(out.bytes, len as u64, "{what}");
                let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
                assert_eq!(shared, len as u64, "{what}: {:?}", out.shares);
                let whole = (len / b * b) as u64;
                let first = if params.standard().family() == Family::Kangaroo && whole > 0 {
                    b as u64
                } else {
                    0
                };
                assert_eq!(seen, whole - first, "{what}");
                assert_eq!(out.shares[0].bytes, first + (len as u64 - whole), "{what}");
                // Dealt round-robin: the GPUs' shares differ by a wave at most.
                let gpus: Vec<u64> = out.shares[1..].iter().map(|s| s.bytes).collect();
                let (most, least) = (gpus.iter().max(), gpus.iter().min());
                if let (Some(most), Some(least)) = (most, least) {
                    assert!(most - least <= 3 * b as u64, "{what}: {gpus:?}");
                }
                if whole - first >= (3 * b * n) as u64 {
                    assert_eq!(gpus.len(), n, "{what}: every engine takes a wave");
                }
            }
        }
    }
}

/// GPUs that fail or panic on a wave, first or later, while walking
/// apart: an error, never a digest, and every walk ends. The file has 13
/// waves (39 chunks after KT's first), and the engines' failures come at
/// submissions adding up to fewer, so that one of them is reached however
/// the waves fall.
#[test]
fn a_gpu_that_fails_walking_chunks_apart_is_an_error_not_a_digest() {
    use crate::input::Source;
    let dir = tempfile::tempdir().unwrap();
    let params = StandardParams::new(Standard::Kt128);
    let b = chunk_len(&params);
    let path = dir.path().join("m");
    std::fs::write(&path, bytes(40 * b + 5, 1)).unwrap();
    let Source::File(file) = Source::open(&path).unwrap() else {
        panic!("a file");
    };
    let cases: [(&[usize], bool); 4] = [
        (&[0, 0, 0], false),
        (&[1, 3, 5], false),
        (&[0, 4, 4], true),
        (&[4, 4, 4], true),
    ];
    for (at, panics) in cases {
        let got = walk_apart(&params, &file, 3, Some((at, panics)));
        let what = format!("engines failing at submissions {at:?}, panics {panics}");
        match got {
            Err(HashError::Internal(m)) => assert!(
                m.contains(if panics {
                    "panicked"
                } else {
                    "scripted failure"
                }),
                "{what}: {m}"
            ),
            Err(e) => panic!("{what}: {e}"),
            Ok(_) => panic!("{what}: a digest"),
        }
    }
}

/// Files: mapped pieces shared (the CPU hashes from the mapping, the
/// engines read their runs with pread), and unread pieces where the CPU
/// takes no chunk (it reads KT's first chunk and the last bytes itself).
#[test]
fn files_shared_or_read_by_the_engines_give_the_reference_digest() {
    use crate::input::Source;
    let cpu = CpuBackend::new(Some(2), Some(3 * 8192), CpuPath::Auto).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for params in cases() {
        let b = chunk_len(&params);
        let leaf = params.standard().chunk_spec().unwrap();
        for len in [0, b - 1, 7 * b + 1, 300_001] {
            let message = bytes(len, len as u64);
            let path = dir.path().join("m");
            std::fs::write(&path, &message).unwrap();
            let want = test_reference::standard(&params, &message);
            for cpu_takes_chunks in [true, false] {
                let Source::File(file) = Source::open(&path).unwrap() else {
                    // An empty file is a sequential input.
                    assert_eq!(len, 0);
                    continue;
                };
                let seen = Arc::new(Mutex::new(0));
                let engines = Engines {
                    gpus: vec![Box::new(LateEngine {
                        leaf,
                        chunk_len: b,
                        lag: 2,
                        queue: VecDeque::new(),
                        seen: seen.clone(),
                    })],
                    latecomers: &mut NoLatecomers,
                    split: Split::new(cpu_takes_chunks),
                };
                let mut input = Input::File(&file);
                let out = hash(&params, &mut input, &cpu, engines, 3 * 8192, &());
                let out = out.unwrap();
                let what = format!("{} file of {len}, CPU {cpu_takes_chunks}", params.label());
                assert_eq!(out.digest, want, "{what}");
                let shared: u64 = out.shares.iter().map(|s| s.bytes).sum();
                assert_eq!(shared, len as u64, "{what}");
            }
        }
    }
}

/// A file's chunks read per task on the CPU, each wave's chaining
/// values fed to the last node beside the next wave, in pieces of a
/// few chunks, on the pool and inline: the reference's digest, on
/// lengths around the chunk and across many pieces.
#[test]
fn a_file_read_per_task_gives_the_reference_digest() {
    use crate::input::Source;
    let dir = tempfile::tempdir().unwrap();
    for (case, params) in cases().into_iter().enumerate() {
        let b = chunk_len(&params);
        let lens = [1, b - 1, b, b + 1, 3 * b - 1, 40 * b + 3, 300_001];
        // (An empty file is a sequential input.)
        for (k, len) in lens.into_iter().filter(|&n| n > 0).enumerate() {
            let message = bytes(len, (case * 100 + k) as u64);
            let path = dir.path().join("m");
            std::fs::write(&path, &message).unwrap();
            let want = test_reference::standard(&params, &message);
            for (piece, inline) in [(3 * 8192, false), (5 * b, false), (3 * 8192, true)] {
                let cpu = CpuBackend::new(Some(2), Some(piece), CpuPath::Auto).unwrap();
                let Source::File(file) = Source::open(&path).unwrap() else {
                    panic!("a regular file");
                };
                let run = || {
                    let mut input = Input::File(&file);
                    let mut none = NoLatecomers;
                    let engines = Engines::cpu_only(&mut none);
                    hash(&params, &mut input, &cpu, engines, piece, &())
                };
                let out = if inline { cpu.run_alone(run) } else { run() };
                let what = format!(
                    "{} of {len} bytes, pieces of {piece}, inline {inline}",
                    params.label()
                );
                let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(out.digest, want, "{what}");
                assert_eq!(out.bytes, len as u64, "{what}");
                assert_eq!(out.shares[0].bytes, len as u64, "{what}");
            }
        }
    }
}

/// Cuts the file to `to` bytes once the first piece is absorbed.
struct CutAfterFirstPiece {
    path: std::path::PathBuf,
    to: u64,
    done: std::sync::atomic::AtomicBool,
}

impl Progress for CutAfterFirstPiece {
    fn advance(&self, _bytes: u64) {
        if !self.done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            let file = std::fs::File::options()
                .write(true)
                .open(&self.path)
                .unwrap();
            file.set_len(self.to).unwrap();
        }
    }
}

/// A file cut short after its first piece: the chunks beyond the cut
/// are read short, and the input ends in an error, not a digest and not
/// a crash.
#[test]
fn a_file_cut_while_its_chunks_are_hashed_gets_an_error() {
    use crate::input::Source;
    let (len, piece, cut) = (8usize << 20, 1usize << 20, 3u64 << 19);
    let cpu = CpuBackend::new(Some(2), Some(piece), CpuPath::Auto).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let params = StandardParams::new(Standard::Kt128);
    let path = dir.path().join("cut.bin");
    std::fs::write(&path, bytes(len, 5)).unwrap();
    let Source::File(file) = Source::open(&path).unwrap() else {
        panic!("a regular file");
    };
    let progress = CutAfterFirstPiece {
        path: path.clone(),
        to: cut,
        done: std::sync::atomic::AtomicBool::new(false),
    };
    let mut input = Input::File(&file);
    let mut none = NoLatecomers;
    let engines = Engines::cpu_only(&mut none);
    let result = hash(&params, &mut input, &cpu, engines, piece, &progress);
    let err = result.err().expect("an error, not a digest");
    assert!(
        err.to_string().contains("shrank from 8388608 to 1572864"),
        "{err}"
    );
}

/// A part's chunks ranges of a file, walked on the CPU alone and with an
/// engine that answers late (as a GPU's) taking any share: KT's first
/// chunk whole where the range starts at chunk 0, and every other
/// chunk's chaining value as the reference computes it, whatever the
/// range (the chunks of S past the file's end hold KT's suffix).
#[test]
fn a_part_keeps_its_chunks_values_on_any_engines() {
    use crate::input::Source;
    let cpu = CpuBackend::new(Some(2), Some(3 * 8192), CpuPath::Auto).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut late_bytes = 0;
    for (case, params) in cases().into_iter().enumerate() {
        let b = chunk_len(&params);
        let leaf = params.standard().chunk_spec().unwrap();
        for len in [0, 1, b, 7 * b + 3, 150_000] {
            let message = bytes(len, (case * 10 + len) as u64);
            let path = dir.path().join("m");
            std::fs::write(&path, &message).unwrap();
            // An empty file is a sequential input: a part has nothing to
            // read.
            let opened = Source::open(&path).unwrap();
            let file = match &opened {
                Source::File(file) => Some(file),
                Source::Sequential(_) => None,
            };
            let s = [&message[..], &suffix(&params)].concat();
            let n = chunk_count(&params, len as u64);
            assert_eq!(n, s.len().div_ceil(b) as u64);
            let ranges = [0..n, 0..n / 2, n / 3..n, n / 2..n / 2, n.min(1)..n];
            for chunks in ranges {
                let kt = params.standard().family() == Family::Kangaroo;
                let first = kt && chunks.start == 0 && !chunks.is_empty();
                let first_want = if first { &s[..s.len().min(b)] } else { &[][..] };
                let values_want: Vec<u8> = (chunks.start + u64::from(first)..chunks.end)
                    .flat_map(|i| {
                        let at = i as usize * b;
                        reference_value(&params, &s[at..(at + b).min(s.len())])
                    })
                    .collect();
                for late in [false, true] {
                    let seen = Arc::new(Mutex::new(0));
                    let mut split = Split::new(true);
                    let mut mix = Rng(len as u64 + chunks.start);
                    split.script = Some(Box::new(move |n| {
                        (0..n).map(|_| (mix.next() % 3) as f64).collect()
                    }));
                    let (gpus, piece_len): (Vec<Box<dyn ChunkEngine>>, usize) = if late {
                        let engine = LateEngine {
                            leaf,
                            chunk_len: b,
                            lag: 2,
                            queue: VecDeque::new(),
                            seen: seen.clone(),
                        };
                        (vec![Box::new(engine)], 3 * b)
                    } else {
                        (Vec::new(), file_piece_len(&params, &cpu))
                    };
                    let engines = Engines {
                        gpus,
                        latecomers: &mut NoLatecomers,
                        split,
                    };
                    let walked = hash_part_chunks(
                        &params,
                        file,
                        chunks.clone(),
                        &cpu,
                        engines,
                        piece_len,
                        &(),
                    )
                    .unwrap();
                    let what = format!(
                        "{} of {len} bytes, chunks {chunks:?}, late {late}",
                        params.label()
                    );
                    assert_eq!(walked.sink.first_chunk, first_want, "{what}");
                    assert_eq!(
                        hex::encode(&walked.sink.values),
                        hex::encode(&values_want),
                        "{what}"
                    );
                    let shared: u64 = walked.shares.iter().map(|s| s.bytes).sum();
                    let range_len = (chunks.end as usize * b).min(s.len())
                        - (chunks.start as usize * b).min(s.len());
                    assert_eq!(shared, range_len as u64, "{what}");
                    late_bytes += *seen.lock().unwrap();
                }
            }
        }
    }
    assert!(late_bytes > 0, "the late engine took no chunk");
}

/// The chaining value of one chunk by the reference: KT's
/// TurboSHAKE(S_i, 0B, c), ParallelHash's SHAKE of the block.
fn reference_value(p: &StandardParams, chunk: &[u8]) -> Vec<u8> {
    use treehash_reference::turboshake::{turboshake128, turboshake256};
    let c = p.standard().chaining_len();
    match p.standard() {
        Standard::Kt128 => turboshake128(chunk, 0x0b, c),
        Standard::Kt256 => turboshake256(chunk, 0x0b, c),
        other => treehash_reference::node_function(test_reference::node(other.shake()), chunk, c),
    }
}
