//! The scheduler against the reference: random splits, latecomers at
//! random pieces, and GPUs where there are some.

use super::migrate::{difference, gather};
use super::*;

use crate::cpu::{CpuBackend, CpuPath};
use crate::input::Source;
use crate::params::Algorithm;
use crate::progress::CountingProgress;
use crate::test_reference::tree;
use treehash_reference::tree_hash;

/// A small deterministic generator (xorshift64*), so that a failure
/// can be replayed from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Makes an engine that joins `message_len` bytes into M.
type Begin<'a> = Box<dyn Fn(u64) -> Box<dyn LeafEngine + 'a> + 'a>;

/// Latecomers (CPU engines standing in for GPUs, or GPUs) that each join
/// before a given piece.
struct Scripted<'a> {
    /// (piece index, name, how it begins), in order of the pieces.
    arrivals: Vec<(u64, EngineId, Begin<'a>)>,
    piece: u64,
}

impl<'a> Latecomers<Member<'a>> for Scripted<'a> {
    fn poll(&mut self, now: &Standing) -> Result<Vec<Member<'a>>, HashError> {
        let mut ready = Vec::new();
        while self.arrivals.first().is_some_and(|j| j.0 <= self.piece) {
            let (_, name, begin) = self.arrivals.remove(0);
            ready.push(Member::new(name, begin(now.message_len)));
        }
        self.piece += 1;
        Ok(ready)
    }
}

/// A CPU engine as a latecomer, standing in for a GPU.
fn cpu_latecomer<'a>(cpu: &'a CpuBackend, params: &'a TreeParams) -> Begin<'a> {
    Box::new(move |at| cpu.begin_at(params, at))
}

/// Moves the boundaries to random places before random pieces: leaves
/// go both ways, engines sometimes own nothing or everything.
struct RandomPlan {
    rng: Rng,
    moves: u32,
}

impl Plan for RandomPlan {
    fn boundaries(&mut self, now: &Moment) -> Option<Vec<u64>> {
        if self.rng.below(3) != 0 {
            return None;
        }
        let l = now.leaf_count;
        let n = now.ranges.len();
        let mut cuts: Vec<u64> = (1..n).map(|_| self.rng.below(l + 1)).collect();
        cuts.sort_unstable();
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(l);
        self.moves += 1;
        Some(bounds)
    }
}

/// The parameter sets of the tests: every kernel's shapes, B below,
/// at and off the rate, a prefix, few and many leaves.
fn cases() -> Vec<TreeParams> {
    let p = |a, h, d, b: Option<usize>, prefix: &[u8]| {
        TreeParams::with_options(a, h, d, b, prefix.to_vec(), None).unwrap()
    };
    vec![
        p(Algorithm::Sha3_256, 1, 2, None, b""),
        p(Algorithm::Sha3_256, 2, 2, None, b""),
        p(Algorithm::Sha3_256, 2, 4, None, b"key"),
        p(Algorithm::Sha3_256, 5, 2, Some(136 * 2), b""),
        p(Algorithm::Sha3_512, 3, 3, Some(48), b""),
        p(Algorithm::Shake128, 4, 4, Some(168), b"prefix bytes"),
        p(Algorithm::Sha3_224, 10, 2, Some(144), b""),
        p(Algorithm::Shake256, 2, 5, Some(8), b"p"),
    ]
}

fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = Rng(seed | 1);
    (0..len).map(|_| rng.next() as u8).collect()
}

/// The sizes around a case's edges: 0, 1, the rate ± 1, a block, a
/// stripe ± 1, several stripes and a bit.
fn sizes(params: &TreeParams) -> Vec<usize> {
    let (r, b) = (params.algorithm().rate(), params.block_size());
    let stripe = params.stripe_len() as usize;
    let mut sizes = vec![0, 1, r - 1, r, r + 1, b, stripe - 1, stripe, stripe + 1];
    sizes.extend([3 * stripe + b / 2 + 5, 20_000]);
    sizes
}

fn backends(piece: usize) -> Vec<CpuBackend> {
    let mut paths = vec![CpuPath::Portable, CpuPath::Auto];
    if CpuBackend::new(Some(1), None, CpuPath::Avx2).is_ok() {
        paths.push(CpuPath::Avx2);
    }
    paths
        .into_iter()
        .map(|path| CpuBackend::new(Some(2), Some(piece), path).unwrap())
        .collect()
}

/// Runs the scheduler over `input` with a random plan and latecomers at
/// random pieces: the digest.
fn shared_digest(
    params: &TreeParams,
    input: &mut Input<'_>,
    cpus: &[CpuBackend],
    seed: u64,
) -> (Vec<u8>, u32) {
    let mut rng = Rng(seed);
    let first = &cpus[rng.below(cpus.len() as u64) as usize];
    let members = vec![Member::new(EngineId::Cpu, first.begin(params))];
    let mut arrivals: Vec<(u64, EngineId, Begin<'_>)> = (0..1 + rng.below(3))
        .map(|k| {
            let cpu = &cpus[rng.below(cpus.len() as u64) as usize];
            (
                rng.below(6),
                EngineId::Gpu(k as usize),
                cpu_latecomer(cpu, params),
            )
        })
        .collect();
    arrivals.sort_by_key(|j| j.0);
    let mut latecomers = Scripted { arrivals, piece: 0 };
    let mut plan = RandomPlan {
        rng: Rng(rng.next() | 1),
        moves: 0,
    };
    let reduce = |outputs: Vec<u8>| first.reduce_leaf_outputs(params, outputs);
    let mut times = Timings::default();
    let hashed = run(
        params,
        input,
        members,
        &mut latecomers,
        &mut plan,
        &reduce,
        &(),
        &mut times,
    )
    .unwrap();
    (hashed.digest, plan.moves)
}

#[test]
fn any_split_and_any_hand_over_give_the_reference_digest() {
    let cpus = backends(300);
    let mut moves = 0;
    for (c, params) in cases().iter().enumerate() {
        for (s, len) in sizes(params).into_iter().enumerate() {
            let file = data(len, (c * 100 + s) as u64);
            let want = tree_hash(&tree(params), &file);
            for round in 0..3u64 {
                let seed = (c as u64) << 32 | (s as u64) << 8 | round | 1;
                let (got, moved) = shared_digest(params, &mut Input::Bytes(&file), &cpus, seed);
                moves += moved;
                assert_eq!(
                    hex::encode(got),
                    hex::encode(&want),
                    "{} {len} bytes, seed {seed:#x}",
                    params.label()
                );
            }
        }
    }
    // The plans did move leaves (else the test would prove little).
    assert!(moves > 100, "only {moves} migrations");
}

#[test]
fn files_and_sequential_inputs_are_shared_the_same_way() {
    let cpus = backends(1000);
    let params = &cases()[3];
    let file = data(150_000, 7);
    let want = tree_hash(&tree(params), &file);
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut tmp, &file).unwrap();
    for seed in 1..6 {
        let Source::File(input) = Source::open(tmp.path()).unwrap() else {
            panic!("a regular file is not a sequential input");
        };
        let (got, _) = shared_digest(params, &mut Input::File(&input), &cpus, seed);
        assert_eq!(got, want, "file, seed {seed}");
        let mut reader = std::io::Cursor::new(file.clone());
        let (got, _) = shared_digest(params, &mut Input::Sequential(&mut reader), &cpus, seed);
        assert_eq!(got, want, "sequential, seed {seed}");
    }
}

/// The search on a machine whose throughput peaks when the first
/// engine has `best` of the leaves: the engine that joins starts with
/// every leaf, the search finds the peak within a few steps, then keeps
/// the split. Engines there from the start split evenly.
#[test]
#[allow(clippy::single_range_in_vec_init)] // one engine owning every leaf
fn balance_climbs_to_the_fastest_split() {
    for best in [0.0, 0.1, 0.3, 0.5, 0.8] {
        let leaf_count = 1 << 16;
        let throughput = |share: f64| 50.0 - 40.0 * (share - best).abs();
        let mut plan = Balance::default();
        let mut ranges = vec![0..leaf_count];
        let moment = |ranges: &Vec<Range<u64>>, pieces, t| Moment {
            leaf_count,
            remaining: None,
            piece_len: 1 << 20,
            ranges: ranges.clone(),
            pieces,
            throughput: t,
        };
        // Alone: nothing to split.
        assert_eq!(plan.boundaries(&moment(&ranges, 9, Some(1.0))), None);
        // A second engine joins: it takes every leaf.
        ranges.push(leaf_count..leaf_count);
        let all_to_it = plan.boundaries(&moment(&ranges, 0, None)).unwrap();
        assert_eq!(all_to_it, vec![0, 0, leaf_count]);
        let mut bounds = all_to_it;
        let mut moves = 0;
        for _ in 0..100 {
            ranges = bounds.windows(2).map(|w| w[0]..w[1]).collect();
            let share = bounds[1] as f64 / leaf_count as f64;
            // Too few pieces measured: kept.
            assert_eq!(
                plan.boundaries(&moment(&ranges, 2, Some(throughput(share)))),
                None
            );
            match plan.boundaries(&moment(&ranges, 9, Some(throughput(share)))) {
                Some(next) => {
                    bounds = next;
                    moves += 1;
                }
                None => break,
            }
        }
        let share = bounds[1] as f64 / leaf_count as f64;
        // Within a few per cent of the fastest (the search takes only
        // gains of more than BETTER as gains).
        assert!(
            throughput(share) >= 0.97 * throughput(best),
            "best {best}: ended at {share}"
        );
        assert!(moves < 20, "best {best}: {moves} moves");
        // Settled: no more moves.
        assert_eq!(plan.boundaries(&moment(&ranges, 50, Some(1.0))), None);
    }
    // Latecomers at least as fast as the first engine alone keep every
    // leaf; slower ones are searched as above.
    for (joined, moves) in [(25.0, false), (10.0, false), (8.0, true)] {
        let mut plan = Balance::default();
        let moment = moment_of_64_leaves;
        assert_eq!(plan.boundaries(&moment(vec![0..64], 9, Some(10.0))), None);
        let all_to_it = plan.boundaries(&moment(vec![0..64, 64..64], 9, Some(10.0)));
        assert_eq!(all_to_it, Some(vec![0, 0, 64]));
        let next = plan.boundaries(&moment(vec![0..0, 0..64], 9, Some(joined)));
        assert_eq!(next.is_some(), moves, "latecomers at {joined}");
        if !moves {
            let later = moment(vec![0..0, 0..64], 50, Some(1.0));
            assert_eq!(plan.boundaries(&later), None);
        }
    }
    let mut plan = Balance::default();
    let from_the_start = Moment {
        leaf_count: 90,
        remaining: None,
        piece_len: 1 << 20,
        ranges: vec![0..90, 90..90, 90..90],
        pieces: 0,
        throughput: None,
    };
    assert_eq!(plan.boundaries(&from_the_start), Some(vec![0, 30, 60, 90]));
    // The last pieces are not worth a move.
    let mut plan = Balance::default();
    let last = Moment {
        leaf_count: 100,
        remaining: Some(3 << 20),
        piece_len: 1 << 20,
        ranges: vec![0..100, 100..100],
        pieces: 0,
        throughput: None,
    };
    assert_eq!(plan.boundaries(&last), None);
}

/// What a plan sees of a tree of 64 leaves, the input's end not known.
fn moment_of_64_leaves(ranges: Vec<Range<u64>>, pieces: u32, throughput: Option<f64>) -> Moment {
    Moment {
        leaf_count: 64,
        remaining: None,
        piece_len: 1 << 20,
        ranges,
        pieces,
        throughput,
    }
}

/// Under `even` the engines there from the first piece split the leaves
/// evenly at it and keep that split, whatever the throughput does.
#[test]
fn gpus_begun_side_by_side_keep_an_even_split() {
    let moment = moment_of_64_leaves;
    let mut plan = Balance::even();
    let first = plan.boundaries(&moment(vec![0..64, 64..64], 0, None));
    assert_eq!(first, Some(vec![0, 32, 64]));
    for (pieces, throughput) in [(9, 10.0), (18, 5.0), (27, 20.0), (100, 1.0)] {
        let later = moment(vec![0..32, 32..64], pieces, Some(throughput));
        assert_eq!(plan.boundaries(&later), None, "{pieces} pieces");
    }
    let mut three = Balance::even();
    let first = three.boundaries(&moment(vec![0..64, 64..64, 64..64], 0, None));
    assert_eq!(first, Some(vec![0, 21, 42, 64]));
}

/// GPUs begun side by side own `split_leaves(1/n, n, L)` from the start
/// (`GpuBackend::begin_side_by_side`): the split `even` asks for at the
/// first piece, so that no state moves there; and no share is longer than
/// ⌈L / n⌉ leaves, which their transfer buffers are sized for.
#[test]
fn gpus_begun_side_by_side_start_from_the_first_split() {
    use crate::engine::split_leaves;
    assert_eq!(split_leaves(0.5, 2, 64), vec![0, 32, 64]);
    assert_eq!(split_leaves(1.0 / 3.0, 3, 64), vec![0, 21, 42, 64]);
    assert_eq!(split_leaves(0.5, 2, 7), vec![0, 4, 7]);
    assert_eq!(split_leaves(1.0 / 3.0, 3, 7), vec![0, 2, 4, 7]);
    assert_eq!(split_leaves(0.5, 2, 1), vec![0, 1, 1]);
    for n in 2..=8usize {
        for leaf_count in [1u64, 2, 3, 7, 64, 65, 4096, 65_536, 1_000_003] {
            let begun = split_leaves(1.0 / n as f64, n, leaf_count);
            let ranges = begun.windows(2).map(|w| w[0]..w[1]).collect();
            let first = Moment {
                leaf_count,
                remaining: None,
                piece_len: 1 << 20,
                ranges,
                pieces: 0,
                throughput: None,
            };
            let asked = Balance::even().boundaries(&first);
            assert_eq!(
                asked.as_ref(),
                Some(&begun),
                "{n} GPUs, {leaf_count} leaves"
            );
            assert_eq!((begun[0], begun[n]), (0, leaf_count));
            for w in begun.windows(2) {
                assert!(w[0] <= w[1] && w[1] - w[0] <= leaf_count.div_ceil(n as u64));
            }
        }
    }
}

#[test]
fn a_splits_throughput_leaves_out_the_warm_up_pieces() {
    let mut span = Span::default();
    for _ in 0..WARM_UP_PIECES {
        assert_eq!(span.rate(), None);
        span.count(1 << 20);
    }
    // Warm: nothing measured yet.
    assert_eq!(span.rate(), None);
    std::thread::sleep(Duration::from_millis(20));
    span.count(1 << 20);
    let rate = span.rate().unwrap();
    // One mebibyte over at least 20 ms: the warm-up's bytes are not counted.
    assert!(rate <= (1 << 20) as f64 / 0.020, "{rate}");
    assert_eq!(span.pieces, WARM_UP_PIECES + 1);
}

#[test]
fn hand_over_ranges_and_states() {
    assert_eq!(difference(&(0..10), &(0..10)), Vec::<Range<u64>>::new());
    assert_eq!(difference(&(0..10), &(3..7)), vec![0..3, 7..10]);
    assert_eq!(difference(&(0..10), &(20..30)), vec![0..10]);
    assert_eq!(difference(&(5..10), &(0..0)), vec![5..10]);
    assert_eq!(difference(&(0..0), &(0..5)), Vec::<Range<u64>>::new());
    let state = |k: u64| [k; 25];
    // Leaves 2..4 from one engine, 4..6 from another (leaf 5 fresh).
    let moving = vec![(2..4, vec![state(2), state(3)]), (4..6, vec![state(4)])];
    assert_eq!(gather(&moving, &(3..6)), vec![state(3), state(4)]);
    assert_eq!(gather(&moving, &(5..6)), Vec::<[u64; 25]>::new());
    let gap = vec![(2..3, vec![]), (3..4, vec![state(3)])];
    assert_eq!(gather(&gap, &(2..4)), vec![[0; 25], state(3)]);
}

#[test]
fn progress_counts_every_byte_once_whatever_the_split() {
    let cpus = backends(256);
    let params = &cases()[1];
    let file = data(10_000, 3);
    let bar = CountingProgress::default();
    let first = &cpus[0];
    let members = vec![Member::new(EngineId::Cpu, first.begin(params))];
    let mut latecomers = Scripted {
        arrivals: vec![(1, EngineId::Gpu(1), cpu_latecomer(&cpus[1], params))],
        piece: 0,
    };
    let mut plan = RandomPlan {
        rng: Rng(5),
        moves: 0,
    };
    let reduce = |outputs: Vec<u8>| first.reduce_leaf_outputs(params, outputs);
    let hashed = run(
        params,
        &mut Input::Bytes(&file),
        members,
        &mut latecomers,
        &mut plan,
        &reduce,
        &bar,
        &mut Timings::default(),
    )
    .unwrap();
    assert_eq!(bar.0.into_inner(), 10_000);
    assert_eq!(hashed.bytes, 10_000);
    assert_eq!(hashed.digest, tree_hash(&tree(params), &file));
    // Every byte of M was some engine's.
    let shared: u64 = hashed.shares.iter().map(|s| s.bytes).sum();
    assert_eq!(shared, 10_000);
}

/// GPUs and CPUs side by side on the GPU machine: any split, any
/// hand-over, either kernel, = the reference.
#[cfg(gpu_backend)]
#[test]
#[ignore = "needs a CUDA GPU (scripts/gpu-check.sh runs it)"]
fn gpus_and_cpus_share_leaves_in_any_split() {
    use crate::gpu::{GpuBackend, LeafKernel};
    let gpu = GpuBackend::open(0, Some(4096)).expect("a usable CUDA GPU");
    let cpus = backends(300);
    let pool = cpus[0].pool();
    let mut moves = 0;
    for (c, params) in cases().iter().enumerate() {
        for (s, len) in sizes(params).into_iter().enumerate() {
            let file = data(len, (c * 100 + s) as u64);
            let want = tree_hash(&tree(params), &file);
            for round in 0..4u64 {
                let seed = (c as u64) << 32 | (s as u64) << 8 | round | 1;
                let mut rng = Rng(seed);
                let kernel = [
                    None,
                    Some(LeafKernel::ThreadPerLeaf),
                    Some(LeafKernel::WarpPerLeaf),
                ][rng.below(3) as usize];
                let gpu_first = rng.below(2) == 0;
                let mut t = Timings::default();
                let first: Box<dyn LeafEngine + '_> = if gpu_first {
                    gpu.begin(
                        params,
                        Some(len as u64),
                        Default::default(),
                        kernel,
                        pool,
                        &mut t,
                    )
                    .unwrap()
                } else {
                    cpus[0].begin(params)
                };
                let piece_len = first.piece_len();
                let gpu_latecomer: Begin<'_> = Box::new(|at| {
                    let staging = crate::gpu::CopyMode::Staging;
                    gpu.begin_at(
                        params,
                        at,
                        piece_len,
                        staging,
                        kernel,
                        pool,
                        &mut Timings::default(),
                    )
                    .unwrap()
                });
                let other = if gpu_first {
                    cpu_latecomer(&cpus[1], params)
                } else {
                    gpu_latecomer
                };
                let mut latecomers = Scripted {
                    arrivals: vec![
                        (rng.below(4), EngineId::Gpu(1), other),
                        (
                            rng.below(8),
                            EngineId::Gpu(2),
                            cpu_latecomer(&cpus[2 % cpus.len()], params),
                        ),
                    ],
                    piece: 0,
                };
                latecomers.arrivals.sort_by_key(|j| j.0);
                let mut plan = RandomPlan {
                    rng: Rng(rng.next() | 1),
                    moves: 0,
                };
                let reduce = |outputs: Vec<u8>| cpus[0].reduce_leaf_outputs(params, outputs);
                let hashed = run(
                    params,
                    &mut Input::Bytes(&file),
                    vec![Member::new(EngineId::Cpu, first)],
                    &mut latecomers,
                    &mut plan,
                    &reduce,
                    &(),
                    &mut t,
                )
                .unwrap();
                moves += plan.moves;
                assert_eq!(
                    hex::encode(hashed.digest),
                    hex::encode(&want),
                    "{} {len} bytes, seed {seed:#x}",
                    params.label()
                );
            }
        }
    }
    assert!(moves > 100, "only {moves} migrations");
}

/// A GPU that fails part-way (an error injected after two transfers) ends
/// the input in an error: never a digest.
#[cfg(gpu_backend)]
#[test]
#[ignore = "needs a CUDA GPU (scripts/gpu-check.sh runs it)"]
fn a_gpu_failing_midway_is_an_error_not_a_digest() {
    use crate::gpu::GpuBackend;
    let mut gpu = GpuBackend::open(0, Some(4096)).expect("a usable CUDA GPU");
    gpu.fail_after_transfers = Some(2);
    let cpus = backends(4096);
    let params = &cases()[1];
    let file = data(1 << 20, 9);
    let pool = cpus[0].pool();
    let mut latecomers = Scripted {
        arrivals: vec![(
            1,
            EngineId::Gpu(0),
            Box::new(|at| {
                let piece_len = cpus[0].piece_len(params);
                let staging = crate::gpu::CopyMode::Staging;
                gpu.begin_at(
                    params,
                    at,
                    piece_len,
                    staging,
                    None,
                    pool,
                    &mut Timings::default(),
                )
                .unwrap()
            }),
        )],
        piece: 0,
    };
    let reduce = |outputs: Vec<u8>| cpus[0].reduce_leaf_outputs(params, outputs);
    let result = run(
        params,
        &mut Input::Bytes(&file),
        vec![Member::new(EngineId::Cpu, cpus[0].begin(params))],
        &mut latecomers,
        &mut Balance::default(),
        &reduce,
        &(),
        &mut Timings::default(),
    );
    match result {
        Err(HashError::Gpu(e)) => assert!(e.contains("injected"), "{e}"),
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("a digest despite the GPU's failure"),
    }
}

/// An engine that fails (or panics) at its `left`-th piece, standing in for
/// a GPU that fails midway.
struct FailsAt<'a> {
    inner: Box<dyn LeafEngine + 'a>,
    left: usize,
    panics: bool,
}

impl LeafEngine for FailsAt<'_> {
    fn piece_len(&self) -> usize {
        self.inner.piece_len()
    }
    fn access(&self) -> Access {
        self.inner.access()
    }
    fn leaves(&self) -> Range<u64> {
        self.inner.leaves()
    }
    fn absorb(&mut self, piece: Piece<'_>) -> Result<(), HashError> {
        if self.left == 0 {
            assert!(!self.panics, "panicked as scripted");
            return Err(HashError::Internal("failed as scripted".into()));
        }
        self.left -= 1;
        self.inner.absorb(piece)
    }
    fn take_leaves(&mut self, leaves: Range<u64>) -> Result<crate::engine::LeafStates, HashError> {
        self.inner.take_leaves(leaves)
    }
    fn give_leaves(
        &mut self,
        leaves: Range<u64>,
        states: crate::engine::LeafStates,
    ) -> Result<(), HashError> {
        self.inner.give_leaves(leaves, states)
    }
    fn finish_leaves(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        self.inner.finish_leaves(times)
    }
    fn finish(self: Box<Self>, times: &mut Timings) -> Result<Vec<u8>, HashError> {
        self.inner.finish(times)
    }
}

/// `count` CPU engines (standing in for GPUs begun side by side) owning
/// an even split of the leaves from the start; the one at `failing`, if
/// any, fails at its second piece (panics, where `panics`).
fn apart<'a>(
    cpu: &'a CpuBackend,
    params: &'a TreeParams,
    count: usize,
    failing: Option<usize>,
    panics: bool,
) -> Vec<Member<'a>> {
    let mut members: Vec<Member<'a>> = (0..count)
        .map(|i| {
            let engine = if i == 0 {
                cpu.begin(params)
            } else {
                cpu.begin_at(params, 0)
            };
            let engine: Box<dyn LeafEngine + 'a> = if failing == Some(i) {
                Box::new(FailsAt {
                    inner: engine,
                    left: 1,
                    panics,
                })
            } else {
                engine
            };
            Member::new(EngineId::Gpu(i), engine)
        })
        .collect();
    let bounds = crate::engine::split_leaves(1.0 / count as f64, count, params.leaf_count());
    migrate(&mut members, &bounds).unwrap();
    members
}

#[test]
fn engines_walking_a_file_apart_give_the_reference_digest() {
    for cpu in backends(300) {
        for (c, params) in cases().iter().enumerate() {
            for (s, len) in sizes(params).into_iter().enumerate() {
                let bytes = data(len, (c * 100 + s) as u64);
                let want = tree_hash(&tree(params), &bytes);
                let mut tmp = tempfile::NamedTempFile::new().unwrap();
                std::io::Write::write_all(&mut tmp, &bytes).unwrap();
                let Source::File(input) = Source::open(tmp.path()).unwrap() else {
                    // An empty file is read as a sequential input.
                    assert_eq!(len, 0, "a regular file is not a sequential input");
                    continue;
                };
                for count in [2, 3] {
                    let members = apart(&cpu, params, count, None, false);
                    let reduce = |outputs: Vec<u8>| cpu.reduce_leaf_outputs(params, outputs);
                    let progress = CountingProgress::default();
                    let mut times = Timings::default();
                    let hashed =
                        run_apart(params, &input, members, &reduce, &progress, &mut times).unwrap();
                    let label = format!("{} {len} bytes on {count}", params.label());
                    assert_eq!(hex::encode(&hashed.digest), hex::encode(&want), "{label}");
                    assert_eq!(hashed.bytes, len as u64, "{label}");
                    // The first engine's walk tells progress every byte once.
                    let told = progress.0.load(std::sync::atomic::Ordering::Relaxed);
                    assert_eq!(told, len as u64, "{label}");
                    // Each engine counted the bytes of its own leaves' blocks.
                    let dealing = crate::tree::Dealing::of(params);
                    let bounds =
                        crate::engine::split_leaves(1.0 / count as f64, count, params.leaf_count());
                    let m = (params.prefix().len() + len) as u64;
                    let owned: Vec<u64> = bounds
                        .windows(2)
                        .map(|w| dealing.packed_len(&(w[0]..w[1]), m))
                        .filter(|&b| b > 0)
                        .collect();
                    let counted: Vec<u64> = hashed
                        .shares
                        .iter()
                        .map(|s| s.bytes)
                        .filter(|&b| b > 0)
                        .collect();
                    assert_eq!(counted, owned, "{label}");
                }
            }
        }
    }
}

/// An engine that fails or panics midway, on this thread or its own, is
/// the result: an error, not a digest and not a panic.
#[test]
fn an_engine_that_fails_walking_apart_is_an_error_not_a_digest() {
    let cpu = &backends(300)[0];
    let params = &cases()[3];
    let bytes = data(20_000, 5);
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut tmp, &bytes).unwrap();
    let Source::File(input) = Source::open(tmp.path()).unwrap() else {
        panic!("a regular file is not a sequential input");
    };
    for (failing, panics) in [(0, false), (1, false), (2, false), (0, true), (2, true)] {
        let members = apart(cpu, params, 3, Some(failing), panics);
        let reduce = |outputs: Vec<u8>| cpu.reduce_leaf_outputs(params, outputs);
        let mut times = Timings::default();
        let want = if panics {
            "an engine's walk panicked"
        } else {
            "failed as scripted"
        };
        match run_apart(params, &input, members, &reduce, &(), &mut times) {
            Err(HashError::Internal(why)) => assert_eq!(why, want, "engine {failing}"),
            Err(e) => panic!("engine {failing}: another error: {e}"),
            Ok(_) => panic!("engine {failing} failed, and a digest came out"),
        }
    }
}
