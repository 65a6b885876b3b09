//! The CPU backend against the reference: every kernel, piece lengths,
//! leaves shared between engines and handed over, where inputs run.

use super::leaves::digest_of_leaves;
use super::platform::Kernel;
use super::walk::{Absorb, Leaves};
use super::workers::Workers;
use super::*;
use crate::message::Piece;
use crate::params::Algorithm;

use crate::test_reference::{node, tree};
use crate::test_rng::{self, Rng};
use crate::timings::Timings;
use crate::tree::Dealing;
use treehash_reference::tree_hash;

/// Parameters that reach every kernel and edge: B < rate and B not a
/// multiple of the rate (portable sponges on every path), B a multiple of
/// the rate (lane groups on a SIMD path, whole at L = 4, cut by ranges
/// at L = 16 and 2^10), prefixes, XOF outputs, and H = 0 (L = 1).
fn cases() -> Vec<TreeParams> {
    let p = |a, h, d, b, prefix: &[u8], n| {
        TreeParams::with_options(a, h, d, b, prefix.to_vec(), n).unwrap()
    };
    vec![
        p(Algorithm::Sha3_256, 2, 4, None, b"", None),
        p(Algorithm::Sha3_256, 1, 4, Some(64), b"", None),
        p(Algorithm::Sha3_256, 2, 2, Some(200), b"", None),
        p(Algorithm::Shake128, 1, 2, Some(336), b"salt!", Some(40)),
        p(Algorithm::Sha3_512, 0, 4, None, b"key", None),
        p(Algorithm::Shake256, 0, 2, None, b"", Some(300)),
        p(Algorithm::Sha3_384, 5, 4, None, b"", None),
        p(Algorithm::Sha3_224, 10, 2, Some(288), &[7; 200], None),
    ]
}

/// File sizes around the rate, B, the stripe and two stripes, and 0.
fn sizes(params: &TreeParams) -> Vec<usize> {
    let (r, b) = (params.algorithm().rate(), params.block_size());
    let stripe = params.stripe_len() as usize;
    let mut sizes = vec![0, 1, r - 1, r, r + 1, b + 1, stripe - 1, stripe, stripe + 1];
    sizes.extend([2 * stripe + b / 2, 3 * stripe + 8]);
    sizes
}

fn file(len: usize, seed: u64) -> Vec<u8> {
    test_rng::bytes(len, seed)
}

/// The outputs of the leaves that hold a block, from the spec's steps 1 to 4.
fn reference_leaf_outputs(params: &TreeParams, file: &[u8]) -> Vec<u8> {
    let message: Vec<u8> = params.prefix().iter().chain(file).copied().collect();
    let leaf_count = params.leaf_count() as usize;
    let mut leaves = vec![Vec::new(); leaf_count];
    for (i, block) in message.chunks(params.block_size()).enumerate() {
        leaves[i % leaf_count].extend_from_slice(block);
    }
    let holding = Dealing::of(params).leaves_with_blocks(message.len() as u64) as usize;
    leaves[..holding]
        .iter()
        .flat_map(|leaf| {
            treehash_reference::node_function(
                node(params.algorithm()),
                leaf,
                params.leaf_output_len(),
            )
        })
        .collect()
}

/// The digest from leaf outputs, as `finish` makes it.
fn digest(params: &TreeParams, pool: &rayon::ThreadPool, outputs: Vec<u8>) -> Vec<u8> {
    with_sponge!(params.algorithm(), R => {
        digest_of_leaves::<R>(Kernel::Sponges, params, Workers::Pool(pool), outputs)
    })
}

fn backend(path: CpuPath, piece_bytes: usize) -> CpuBackend {
    CpuBackend::new(Some(2), Some(piece_bytes), path).unwrap()
}

/// One message fed to leaves that absorb pieces in slices where the
/// units are few for the threads.
struct SliceCase<'a> {
    params: &'a TreeParams,
    pool: &'a rayon::ThreadPool,
    owned: Range<u64>,
    file: &'a [u8],
    piece_len: usize,
    slice_bytes: usize,
}

impl SliceCase<'_> {
    /// The outputs of `kernel` owning the leaves `owned`, fed the file in
    /// pieces of `piece_len` bytes, slices of `slice_bytes` per unit; and
    /// how many pieces were absorbed in slices.
    fn outputs<A: Absorb>(&self, kernel: A) -> (Vec<u8>, usize) {
        let params = self.params;
        let mut leaves = Leaves::new(
            params,
            Workers::Pool(self.pool),
            kernel,
            self.owned.clone(),
            0,
        )
        .with_slice_bytes(self.slice_bytes);
        message::for_each_piece_of_slice(params, self.file, self.piece_len, &(), |p| {
            let Piece::Memory(bytes) = p else {
                unreachable!("a slice is read from memory")
            };
            leaves.absorb(bytes)
        })
        .unwrap();
        let sliced = leaves.pieces_in_slices;
        (leaves.finish().unwrap(), sliced)
    }
}

/// The node kernel of every path this CPU has, by name.
fn node_kernels() -> Vec<(&'static str, Kernel)> {
    #[allow(unused_mut)]
    let mut kernels = vec![("portable", Kernel::Sponges)];
    #[cfg(target_arch = "x86_64")]
    {
        let test = "parent_levels_on_every_kernel_give_the_reference_digest";
        if let Some(avx2) = platform::avx2_for_test(test) {
            kernels.push(("avx2", Kernel::Lanes4(avx2)));
        }
        if let Some(avx512) = platform::Avx512::detect() {
            kernels.push(("avx512", Kernel::Lanes8(avx512)));
        }
    }
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    if let Some(sha3) = platform::sha3_for_test("node_kernels") {
        kernels.push(("sha3", Kernel::Lanes2(sha3)));
    }
    kernels
}

/// Parent levels W nodes at a time on every kernel: nodes shorter than a
/// rate block (D·c = 128 < 136), of whole rate blocks (17 · 32 = 4 · 136),
/// and both (5 · 64 = 4 · 72 + 32); levels of no node, of fewer than a
/// unit's width, of a width and one more; a last parent with empty
/// children; a root longer than the rate (SHAKE256, 300 bytes).
#[test]
fn parent_levels_on_every_kernel_give_the_reference_digest() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let p = |a, h, d, n| TreeParams::with_options(a, h, d, None, vec![], n).unwrap();
    let cases = [
        p(Algorithm::Sha3_256, 5, 4, None),
        p(Algorithm::Sha3_256, 2, 17, None),
        p(Algorithm::Sha3_512, 3, 5, None),
        p(Algorithm::Shake256, 4, 3, Some(300)),
        p(Algorithm::Sha3_224, 7, 2, None),
    ];
    let kernels = node_kernels();
    for params in cases {
        let (b, l) = (params.block_size(), params.leaf_count() as usize);
        let mut holding = vec![0, 1, 7, 8, 9, 17, 65, l - 1, l];
        holding.retain(|&n| n <= l);
        for leaves in holding {
            // `leaves` leaves hold a block, the last one a short one.
            let file = file((leaves * b).saturating_sub(b / 2), leaves as u64);
            let want = tree_hash(&tree(&params), &file);
            let outputs = reference_leaf_outputs(&params, &file);
            for &(name, nodes) in &kernels {
                for workers in [Workers::Pool(&pool), Workers::Inline] {
                    let got = with_sponge!(params.algorithm(), R => {
                        digest_of_leaves::<R>(nodes, &params, workers, outputs.clone())
                    });
                    let case = format!("{name}, {workers:?}: {}", params.label());
                    assert_eq!(got, want, "{case}, {leaves} leaves");
                }
            }
        }
    }
}

/// Few units for many threads (L = 256 on 16 threads, as at H = 4 on
/// the 16-core host): pieces that start mid-stripe, absorbed in slices
/// of one stripe or several by whichever thread is free, give the
/// reference's leaf outputs on every kernel, whole trees and leaf ranges.
#[test]
fn leaves_absorbed_in_slices_give_the_reference_outputs() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(16)
        .build()
        .unwrap();
    let p = |a, h, d, b: Option<usize>| TreeParams::with_options(a, h, d, b, vec![], None).unwrap();
    let cases = [
        p(Algorithm::Sha3_256, 4, 4, None),
        p(Algorithm::Sha3_512, 3, 4, Some(144)),
        p(Algorithm::Shake128, 2, 4, Some(336)),
        p(Algorithm::Sha3_224, 1, 8, Some(144)),
        // B not a multiple of the rate: portable sponges only.
        p(Algorithm::Sha3_384, 2, 3, Some(200)),
    ];
    // Pieces absorbed in slices, by kernel.
    let mut sliced_pieces = std::collections::BTreeMap::<&str, usize>::new();
    for params in cases {
        let (b, l) = (params.block_size(), params.leaf_count());
        let stripe = params.stripe_len() as usize;
        let out_len = params.leaf_output_len();
        for len in [5 * stripe + b / 2, 9 * stripe + 1, 3 * stripe] {
            let file = file(len, len as u64 ^ 0x51ce);
            let want = reference_leaf_outputs(&params, &file);
            let holding = (want.len() / out_len) as u64;
            for owned in [0..l, l / 4..l, 0..l / 2 + 1] {
                let own_holding = owned.start.min(holding)..owned.end.min(holding);
                let want =
                    &want[own_holding.start as usize * out_len..own_holding.end as usize * out_len];
                // Pieces of seven stripes and a half block's worth of
                // blocks, so that most start mid-stripe.
                let piece_len = 7 * stripe + b * (l as usize / 2).max(1);
                for slice_bytes in [1, 3 * 8 * b] {
                    let label = format!(
                        "{}, {len} bytes, {owned:?}, slices {slice_bytes}",
                        params.label()
                    );
                    // Units of `width` leaves, fewer than four tasks for
                    // each of the 16 threads: slices of one stripe
                    // leave no piece of several stripes whole.
                    let run = |(outputs, sliced): (Vec<u8>, usize), name: &'static str, width| {
                        assert!(
                            outputs == want,
                            "{name}: {label}: not the reference's outputs"
                        );
                        let few = (owned.end - owned.start).div_ceil(width) < 4 * 16;
                        if slice_bytes == 1 && few && len > piece_len {
                            assert!(sliced > 0, "{name}: {label}: no piece in slices");
                        }
                        (name, sliced)
                    };
                    let mut count =
                        |(name, sliced)| *sliced_pieces.entry(name).or_default() += sliced;
                    let case = SliceCase {
                        params: &params,
                        pool: &pool,
                        owned: owned.clone(),
                        file: &file,
                        piece_len,
                        slice_bytes,
                    };
                    with_sponge!(params.algorithm(), R => {
                        count(run(case.outputs(sponges::Sponges::<R>::default()), "portable", 1));
                    });
                    #[cfg(target_arch = "x86_64")]
                    if b.is_multiple_of(params.algorithm().rate()) {
                        let test = "leaves_absorbed_in_slices_give_the_reference_outputs";
                        if let Some(avx2) = platform::avx2_for_test(test) {
                            count(run(
                                case.outputs(lanes::Lanes::<_, 4>::new(avx2, &params)),
                                "avx2",
                                4,
                            ));
                        }
                        if let Some(avx512) = platform::avx512_for_test(test)
                            && l >= 8
                        {
                            count(run(
                                case.outputs(lanes::Lanes::<_, 8>::new(avx512, &params)),
                                "avx512",
                                8,
                            ));
                        }
                    }
                    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
                    if b.is_multiple_of(params.algorithm().rate())
                        && let Some(sha3) = platform::sha3_for_test(
                            "leaves_absorbed_in_slices_give_the_reference_outputs",
                        )
                    {
                        count(run(
                            case.outputs(lanes::Lanes::<_, 2>::new(sha3, &params)),
                            "sha3",
                            2,
                        ));
                    }
                }
            }
        }
    }
    // Every kernel that ran absorbed many pieces in slices, counted per
    // kernel, as each kernel's unit width changes the count (the cases give
    // the portable sponges 44, AVX2's four lanes 55, AVX-512's eight 72).
    for (name, sliced) in &sliced_pieces {
        assert!(
            *sliced > 30,
            "{name}: only {sliced} pieces were absorbed in slices"
        );
    }
}

/// One file fed unread to leaves on a pool, which read it by tasks where
/// they can.
struct UnreadCase<'a> {
    params: &'a TreeParams,
    pool: &'a rayon::ThreadPool,
    owned: Range<u64>,
    input: &'a crate::input::InputFile,
    piece_len: usize,
}

impl UnreadCase<'_> {
    /// The outputs of `kernel` owning the leaves `owned`, fed the file in
    /// pieces of `piece_len` bytes; and how many pieces its tasks read.
    fn outputs<A: Absorb>(&self, kernel: A) -> (Vec<u8>, usize) {
        let params = self.params;
        let mut leaves = Leaves::new(
            params,
            Workers::Pool(self.pool),
            kernel,
            self.owned.clone(),
            0,
        );
        let unmapped = std::sync::atomic::AtomicBool::new(true);
        let mut by_tasks = 0;
        message::for_each_piece_of_file(
            params,
            self.input,
            self.piece_len,
            message::Access::Read,
            &unmapped,
            &(),
            |piece| match piece {
                Piece::Memory(bytes) | Piece::Mapped { bytes, .. } => leaves.absorb(bytes),
                Piece::Unread { input, offset, len } if leaves.reads_per_task(len) => {
                    by_tasks += 1;
                    leaves.absorb_unread(input, offset, len)
                }
                Piece::Unread { input, offset, len } => {
                    let mut bytes = vec![0; len];
                    input.read_exact_at(&mut bytes, offset)?;
                    leaves.absorb(&bytes)
                }
            },
        )
        .unwrap();
        (leaves.finish().unwrap(), by_tasks)
    }
}

/// Pieces left unread that the pool's tasks read themselves, each its own
/// leaves' run of every stripe, give the reference's leaf outputs on every
/// kernel, for whole trees and leaf ranges and pieces that start and end
/// mid-stripe; a file cut short is an error, not a digest.
#[test]
fn pieces_read_by_their_tasks_give_the_reference_outputs() {
    use std::io::Write;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    let p = |a, h, d, b: Option<usize>, prefix: &[u8]| {
        TreeParams::with_options(a, h, d, b, prefix.to_vec(), None).unwrap()
    };
    let cases = [
        p(Algorithm::Sha3_256, 4, 4, None, b""),
        p(Algorithm::Sha3_512, 3, 4, Some(144), b"key"),
        p(Algorithm::Shake128, 6, 2, None, b""),
        p(Algorithm::Sha3_224, 5, 4, Some(288), b""),
        // B not a multiple of the rate: portable sponges only.
        p(Algorithm::Sha3_384, 3, 3, Some(200), b""),
    ];
    let mut read_by_tasks = 0;
    for params in cases {
        let (b, l) = (params.block_size(), params.leaf_count());
        let stripe = params.stripe_len() as usize;
        let out_len = params.leaf_output_len();
        for len in [1, b + 1, stripe - 1, 5 * stripe + b / 2, 9 * stripe + 1] {
            let file = file(len, len as u64 ^ 0x7a5c);
            let want = reference_leaf_outputs(&params, &file);
            let holding = (want.len() / out_len) as u64;
            let mut tmp = tempfile::NamedTempFile::new().unwrap();
            tmp.write_all(&file).unwrap();
            let crate::input::Source::File(input) = crate::input::Source::open(tmp.path()).unwrap()
            else {
                unreachable!("a file that is not empty")
            };
            for owned in [0..l, l / 4..l, 1..l / 2 + 1, l / 2..l / 2 + 3] {
                let own_holding = owned.start.min(holding)..owned.end.min(holding);
                let want =
                    &want[own_holding.start as usize * out_len..own_holding.end as usize * out_len];
                // Pieces of about two stripes and a third, so that most
                // start mid-stripe.
                let piece_len = (2 * stripe + stripe / 3).next_multiple_of(b);
                let label = format!("{}, {len} bytes, {owned:?}", params.label());
                let case = UnreadCase {
                    params: &params,
                    pool: &pool,
                    owned: owned.clone(),
                    input: &input,
                    piece_len,
                };
                let mut check = |(outputs, by_tasks): (Vec<u8>, usize), name: &str| {
                    assert!(
                        outputs == want,
                        "{name}: {label}: not the reference's outputs"
                    );
                    read_by_tasks += by_tasks;
                };
                with_sponge!(params.algorithm(), R => {
                    check(case.outputs(sponges::Sponges::<R>::default()), "portable");
                });
                #[cfg(target_arch = "x86_64")]
                if b.is_multiple_of(params.algorithm().rate()) {
                    let test = "pieces_read_by_their_tasks_give_the_reference_outputs";
                    if let Some(avx2) = platform::avx2_for_test(test) {
                        check(
                            case.outputs(lanes::Lanes::<_, 4>::new(avx2, &params)),
                            "avx2",
                        );
                    }
                    if let Some(avx512) = platform::avx512_for_test(test) {
                        check(
                            case.outputs(lanes::Lanes::<_, 8>::new(avx512, &params)),
                            "avx512",
                        );
                    }
                }
                #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
                if b.is_multiple_of(params.algorithm().rate())
                    && let Some(sha3) = platform::sha3_for_test(
                        "pieces_read_by_their_tasks_give_the_reference_outputs",
                    )
                {
                    check(
                        case.outputs(lanes::Lanes::<_, 2>::new(sha3, &params)),
                        "sha3",
                    );
                }
            }
        }
    }
    assert!(
        read_by_tasks > 100,
        "only {read_by_tasks} pieces were read by their tasks"
    );

    // A file cut after it was opened: the tasks' reads fail.
    let params = p(Algorithm::Sha3_256, 4, 4, None, b"");
    let stripe = params.stripe_len() as usize;
    let mut tmp = tempfile::NamedTempFile::new().unwrap();
    tmp.write_all(&file(4 * stripe, 9)).unwrap();
    let crate::input::Source::File(input) = crate::input::Source::open(tmp.path()).unwrap() else {
        unreachable!("a file that is not empty")
    };
    tmp.as_file().set_len(stripe as u64).unwrap();
    with_sponge!(params.algorithm(), R => {
        let l = params.leaf_count();
        let mut leaves =
            Leaves::new(&params, Workers::Pool(&pool), sponges::Sponges::<R>::default(), 0..l, 0);
        assert!(leaves.reads_per_task(4 * stripe));
        let cut = leaves.absorb_unread(&input, 0, 4 * stripe);
        assert!(cut.is_err(), "a cut file gave no error");
    });
}

/// A thread count above the CPUs starts one worker per CPU, and a count
/// within them is kept (docs/decisions/0028).
#[test]
fn workers_are_one_per_cpu_at_most() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let many = CpuBackend::new(Some(1024), None, CpuPath::Portable).unwrap();
    assert_eq!(many.threads(), cpus.min(1024));
    let one = CpuBackend::new(Some(1), None, CpuPath::Portable).unwrap();
    assert_eq!(one.threads(), 1);
    let exact = CpuBackend::with_exact_threads(cpus + 3, None, CpuPath::Portable).unwrap();
    assert_eq!(exact.threads(), cpus + 3);
}

#[test]
fn pieces_grow_where_a_thread_owns_more_leaves_than_it_caches() {
    // A stripe of H = 8, D = 4: 65,536 blocks of 136 bytes, 8,912,896 bytes.
    let h8 = TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap();
    let backend =
        |threads| CpuBackend::with_exact_threads(threads, None, CpuPath::Portable).unwrap();
    let pieces = |threads| backend(threads).pool_piece_len(&h8);
    // 65,536 leaves: four threads or more, four stripes a piece.
    assert_eq!(pieces(4), 35_651_584);
    assert_eq!(pieces(16), 35_651_584);
    // Two and three threads own more than a piece serves: eight stripes.
    assert_eq!(pieces(2), 71_303_168);
    assert_eq!(pieces(3), 71_303_168);
    // One thread: as long as a piece may be, whole blocks below 128 MiB.
    assert_eq!(pieces(1), 134_217_720);
    // More than 16 workers: 2 MiB a worker, rounded down to whole blocks,
    // up to 64 MiB from 32 workers: never more than two GPU transfers of
    // 32 MiB (67,108,864 bytes), one transfer buffer for a GPU that joins.
    assert_eq!(pieces(24), 50_331_560);
    assert_eq!(pieces(32), 67_108_792);
    assert_eq!(pieces(64), 67_108_792);
    assert!(pieces(32) <= 2 * (32 << 20));
    // Lists, streams, parts and an input hashed alone keep the stripes,
    // not the pool's share.
    let plain = |threads| backend(threads).piece_len(&h8);
    let alone = |threads| backend(threads).alone_piece_len(&h8);
    assert_eq!((plain(32), alone(32)), (35_651_584, 35_651_584));
    assert_eq!((plain(64), alone(64)), (35_651_584, 35_651_584));
    // One stripe longer than the longest piece: 64 MiB whatever the workers.
    let h10 = TreeParams::new(Algorithm::Sha3_256, 10, 4).unwrap();
    assert_eq!(backend(64).pool_piece_len(&h10), 67_108_928);
    // Few leaves, one thread: 32 MiB.
    let h4 = TreeParams::new(Algorithm::Sha3_256, 4, 4).unwrap();
    let one = CpuBackend::new(Some(1), None, CpuPath::Portable).unwrap();
    // 32 MiB rounded up to whole blocks of 136 bytes.
    assert_eq!(one.piece_len(&h4), 33_554_464);
    // A stripe longer than the longest piece (H = 10: 142,606,336 bytes;
    // 4^10 · 136): 64 MiB rounded up to whole blocks, whatever the threads.
    for h in [10, 12] {
        let wide = TreeParams::new(Algorithm::Sha3_256, h, 4).unwrap();
        assert_eq!(one.piece_len(&wide), 67_108_928, "H = {h}");
        let sixteen = CpuBackend::with_exact_threads(16, None, CpuPath::Portable).unwrap();
        assert_eq!(sixteen.piece_len(&wide), 67_108_928, "H = {h}");
    }
    // H = 9: four stripes of 35,651,584 bytes, the longest piece at one thread.
    let h9 = TreeParams::new(Algorithm::Sha3_256, 9, 4).unwrap();
    assert_eq!(one.piece_len(&h9), 134_217_720);
}

/// All of M given at once to fresh leaves (`Leaves::finish_with`), which
/// absorb and pad it task by task: the reference's outputs on every
/// kernel, for whole trees and leaf ranges, inline and on a pool.
#[test]
fn leaves_finished_with_their_only_piece_give_the_reference_outputs() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(3)
        .build()
        .unwrap();
    fn outputs<A: Absorb>(
        params: &TreeParams,
        workers: Workers<'_>,
        owned: Range<u64>,
        kernel: A,
        message: &[u8],
    ) -> Vec<u8> {
        Leaves::new(params, workers, kernel, owned, 0).finish_with(message)
    }
    #[cfg(any(
        target_arch = "x86_64",
        all(target_arch = "aarch64", target_endian = "little")
    ))]
    let test = "leaves_finished_with_their_only_piece_give_the_reference_outputs";
    for params in cases() {
        let (l, out_len) = (params.leaf_count(), params.leaf_output_len());
        let mut lens = sizes(&params);
        // More than one task's leaves (128) in a stripe.
        lens.push(params.block_size() * 300 + 5);
        for len in lens {
            let file = file(len, len as u64 ^ 0xf1);
            let message: Vec<u8> = params.prefix().iter().chain(&file).copied().collect();
            let want = reference_leaf_outputs(&params, &file);
            let holding = (want.len() / out_len) as u64;
            for owned in [0..l, l / 4..l, 0..l / 2 + 1] {
                let own = owned.start.min(holding)..owned.end.min(holding);
                let want = &want[own.start as usize * out_len..own.end as usize * out_len];
                for workers in [Workers::Inline, Workers::Pool(&pool)] {
                    let case = format!("{}, {len} bytes, {owned:?}, {workers:?}", params.label());
                    let o = owned.clone();
                    with_sponge!(params.algorithm(), R => {
                        let got = outputs(&params, workers, o.clone(), sponges::Sponges::<R>::default(), &message);
                        assert!(got == want, "portable: {case}");
                    });
                    // The lanes where the platform would take them.
                    #[cfg(any(
                        target_arch = "x86_64",
                        all(target_arch = "aarch64", target_endian = "little")
                    ))]
                    let lanes_fit = |width| {
                        params.height() > 0
                            && l >= width
                            && params
                                .block_size()
                                .is_multiple_of(params.algorithm().rate())
                    };
                    #[cfg(target_arch = "x86_64")]
                    if let Some(avx2) = platform::avx2_for_test(test)
                        && lanes_fit(4)
                    {
                        let kernel = lanes::Lanes::<_, 4>::new(avx2, &params);
                        let got = outputs(&params, workers, o.clone(), kernel, &message);
                        assert!(got == want, "avx2: {case}");
                    }
                    #[cfg(target_arch = "x86_64")]
                    if let Some(avx512) = platform::avx512_for_test(test)
                        && lanes_fit(8)
                    {
                        let kernel = lanes::Lanes::<_, 8>::new(avx512, &params);
                        let got = outputs(&params, workers, o.clone(), kernel, &message);
                        assert!(got == want, "avx512: {case}");
                    }
                    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
                    if let Some(sha3) = platform::sha3_for_test(test)
                        && lanes_fit(2)
                    {
                        let kernel = lanes::Lanes::<_, 2>::new(sha3, &params);
                        let got = outputs(&params, workers, o.clone(), kernel, &message);
                        assert!(got == want, "sha3: {case}");
                    }
                }
            }
        }
    }
}

/// Engines that loop on one thread (an input of a list) read their file's
/// pieces themselves; the first waits until the engine knows whether it is
/// the only one, which it then absorbs and pads at once, or absorbs as any
/// piece when another piece comes or its leaves are taken; a fork takes a
/// deferred piece with it. Every digest is the reference's.
#[test]
fn inline_engines_defer_their_first_piece() {
    use crate::input::Source;
    use std::io::Write;
    let unmapped = std::sync::atomic::AtomicBool::new(false);
    let mut times = Timings::default();
    for path in [CpuPath::Portable, CpuPath::Auto] {
        // One piece per file, and the shortest pieces.
        let (whole, short) = (backend(path, 1 << 30), backend(path, 1));
        for params in cases() {
            for len in sizes(&params) {
                let file = file(len, len as u64 ^ 0xdefe);
                let want = tree_hash(&tree(&params), &file);
                let mut tmp = tempfile::NamedTempFile::new().unwrap();
                tmp.write_all(&file).unwrap();
                // An empty file is read as a sequential input.
                let Source::File(input) = Source::open(tmp.path()).unwrap() else {
                    continue;
                };
                for (cpu, take_leaves) in [(&whole, false), (&short, false), (&whole, true)] {
                    // A fork made after the pieces (the first perhaps still
                    // deferred) gives the same digest.
                    let mut forked = None;
                    let got = cpu.run_alone(|| {
                        let mut engine = cpu.begin(&params);
                        assert_eq!(engine.access(), message::Access::Read);
                        message::for_each_piece_of_file(
                            &params,
                            &input,
                            cpu.piece_len(&params),
                            message::Access::Read,
                            &unmapped,
                            &(),
                            |p| engine.absorb(p),
                        )
                        .unwrap();
                        if take_leaves {
                            let all = 0..params.leaf_count();
                            let states = engine.take_leaves(all.clone()).unwrap();
                            engine.give_leaves(all, states).unwrap();
                        } else {
                            let copy = engine.fork().unwrap();
                            forked = Some(copy.finish(&mut Timings::default()).unwrap());
                        }
                        engine.finish(&mut times).unwrap()
                    });
                    let pieces = if std::ptr::eq(cpu, &whole) {
                        "one piece"
                    } else {
                        "pieces"
                    };
                    let case = format!("{path}, {}, {len} bytes, {pieces}", params.label());
                    assert_eq!(got, want, "{case}, leaves taken: {take_leaves}");
                    if let Some(forked) = forked {
                        assert_eq!(forked, want, "{case}, forked");
                    }
                }
            }
        }
    }
}

/// Two engines of different paths own [0, k) and [k, L) from the start
/// and absorb the same pieces: their outputs, one after the other, are
/// the leaves', and reduce to the digest. The pieces come from memory,
/// and from a file left unread (as for a GPU that owned every leaf), of
/// which each engine reads only its own runs.
#[test]
fn engines_over_a_split_give_the_reference_digest() {
    use std::io::Write;
    let (low, high) = (backend(CpuPath::Portable, 1), backend(CpuPath::Auto, 1));
    let unmapped = std::sync::atomic::AtomicBool::new(true);
    for params in cases() {
        let l = params.leaf_count();
        let mut splits = vec![0, 1, l / 2, l - 1, l, 5.min(l), 6.min(l)];
        splits.dedup();
        for len in sizes(&params) {
            let file = file(len, len as u64);
            let want = reference_leaf_outputs(&params, &file);
            let mut tmp = tempfile::NamedTempFile::new().unwrap();
            tmp.write_all(&file).unwrap();
            // An empty file is read as a sequential input: memory only.
            let input = match crate::input::Source::open(tmp.path()).unwrap() {
                crate::input::Source::File(input) => Some(input),
                crate::input::Source::Sequential(_) => None,
            };
            for &k in &splits {
                let case = format!("{}, {len} bytes, split at {k}", params.label());
                let outputs = split_outputs(&low, &high, &params, k, |absorb| {
                    message::for_each_piece_of_slice(
                        &params,
                        &file,
                        low.piece_len(&params),
                        &(),
                        absorb,
                    )
                });
                assert_eq!(outputs, want, "{case}");
                assert_eq!(
                    digest(&params, low.pool(), outputs),
                    tree_hash(&tree(&params), &file),
                    "{case}"
                );
                let Some(input) = &input else { continue };
                let mut unread = 0;
                let outputs = split_outputs(&low, &high, &params, k, |absorb| {
                    message::for_each_piece_of_file(
                        &params,
                        input,
                        low.piece_len(&params),
                        message::Access::Read,
                        &unmapped,
                        &(),
                        |p| {
                            unread += usize::from(matches!(p, Piece::Unread { .. }));
                            absorb(p)
                        },
                    )
                });
                // Every piece past the prefix's blocks comes unread.
                let prefix = params.prefix().len();
                let in_head = prefix.next_multiple_of(params.block_size()) - prefix;
                assert_eq!(
                    unread > 0,
                    params.prefix().is_empty() || len > in_head,
                    "{case}"
                );
                assert_eq!(outputs, want, "{case}, unread");
            }
        }
    }
}

/// The leaf outputs of engines of `low` and `high` owning [0, k) and
/// [k, L), fed the same pieces by `feed`.
fn split_outputs(
    low: &CpuBackend,
    high: &CpuBackend,
    params: &TreeParams,
    k: u64,
    feed: impl FnOnce(&mut dyn FnMut(Piece<'_>) -> Result<(), HashError>) -> Result<(), HashError>,
) -> Vec<u8> {
    let l = params.leaf_count();
    let mut below = low.begin_at(params, 0);
    let mut above = high.begin_at(params, 0);
    below.give_leaves(0..k, vec![]).unwrap();
    above.give_leaves(k..l, vec![]).unwrap();
    assert_eq!((below.leaves(), above.leaves()), (0..k, k..l));
    feed(&mut |p| {
        below.absorb(p)?;
        above.absorb(p)
    })
    .unwrap();
    let mut times = Timings::default();
    let mut outputs = below.finish_leaves(&mut times).unwrap();
    outputs.extend(above.finish_leaves(&mut times).unwrap());
    outputs
}

/// Moves a random prefix or suffix of `from`'s leaves to `to` (any of
/// them when `to` owns none), checking the states' count on the way.
fn hand_over(
    rng: &mut Rng,
    params: &TreeParams,
    message_len: u64,
    from: &mut dyn LeafEngine,
    to: &mut dyn LeafEngine,
) {
    let (own, theirs) = (from.leaves(), to.leaves());
    if own.is_empty() {
        return;
    }
    let count = rng.up_to(own.end - own.start);
    let suffix = if theirs.is_empty() {
        rng.coin()
    } else if own.end == theirs.start {
        true
    } else {
        assert_eq!(theirs.end, own.start, "the two engines' ranges meet");
        false
    };
    let moved = if suffix {
        own.end - count..own.end
    } else {
        own.start..own.start + count
    };
    let states = from.take_leaves(moved.clone()).unwrap();
    let holding = Dealing::of(params).leaves_with_blocks(message_len);
    let want = holding.clamp(moved.start, moved.end) - moved.start;
    assert_eq!(states.len() as u64, want, "states of {moved:?}");
    to.give_leaves(moved, states).unwrap();
}

/// Leaves move both ways between an engine on the portable kernel and one on
/// the best SIMD kernel at random piece boundaries (the second engine starts
/// midway through the message, with no leaves); the leaves' outputs and the
/// digest are the reference's.
#[test]
#[cfg_attr(
    all(target_arch = "x86_64", not(treehash_test_avx2)),
    ignore = "the CPU that built this test has no AVX2 (build.rs)"
)]
fn leaves_handed_over_midway_give_the_reference_digest() {
    #[cfg(target_arch = "x86_64")]
    if platform::avx2_for_test("leaves_handed_over_midway_give_the_reference_digest").is_none() {
        return;
    }
    let (portable, simd) = (backend(CpuPath::Portable, 1), backend(CpuPath::Auto, 1));
    let mut times = Timings::default();
    let mut rng = Rng(11);
    for params in cases() {
        let b = params.block_size();
        let most_blocks = 2 * params.leaf_count() + 3;
        let mut lens = sizes(&params);
        if params.leaf_count() >= 16 {
            lens.push(3 << 20);
        }
        for len in lens {
            let file = file(len, len as u64 ^ 0x5eed);
            let message: Vec<u8> = params.prefix().iter().chain(&file).copied().collect();
            for end_with_one_engine in [false, true] {
                let mut first = portable.begin(&params);
                let mut second: Option<Box<dyn LeafEngine>> = None;
                let mut at = 0;
                loop {
                    if rng.coin() {
                        let other = second.get_or_insert_with(|| simd.begin_at(&params, at as u64));
                        let (from, to) = if rng.coin() {
                            (&mut first, other)
                        } else {
                            (other, &mut first)
                        };
                        hand_over(&mut rng, &params, at as u64, &mut **from, &mut **to);
                    }
                    if at == message.len() {
                        break;
                    }
                    let piece = (1 + rng.up_to(most_blocks) as usize) * b;
                    let piece = &message[at..(at + piece).min(message.len())];
                    first.absorb(Piece::Memory(piece)).unwrap();
                    if let Some(second) = &mut second {
                        second.absorb(Piece::Memory(piece)).unwrap();
                    }
                    at += piece.len();
                }
                let case = format!("{}, {len} bytes", params.label());
                let want = tree_hash(&tree(&params), &file);
                let Some(mut second) = second else {
                    assert_eq!(first.finish(&mut times).unwrap(), want, "{case}");
                    continue;
                };
                if end_with_one_engine {
                    let all = 0..params.leaf_count();
                    let theirs = second.leaves();
                    let states = second.take_leaves(theirs.clone()).unwrap();
                    first.give_leaves(theirs, states).unwrap();
                    assert_eq!(first.leaves(), all, "{case}");
                    assert!(second.finish(&mut times).is_err(), "{case}");
                    assert_eq!(first.finish(&mut times).unwrap(), want, "{case}");
                    continue;
                }
                let (low, high) = if first.leaves().start <= second.leaves().start {
                    (first, second)
                } else {
                    (second, first)
                };
                let mut outputs = low.finish_leaves(&mut times).unwrap();
                outputs.extend(high.finish_leaves(&mut times).unwrap());
                assert_eq!(outputs, reference_leaf_outputs(&params, &file), "{case}");
                assert_eq!(digest(&params, portable.pool(), outputs), want, "{case}");
            }
        }
    }
}

/// Ranges that are not a prefix or suffix, not adjacent, or longer than
/// the message's leaves are internal errors (bugs), not panics; so is a
/// digest asked of an engine that owns only some leaves.
#[test]
fn broken_hand_overs_are_errors() {
    fn is_bug<T>(result: Result<T, HashError>) -> bool {
        matches!(result, Err(HashError::Internal(_)))
    }
    let params = TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap();
    let cpu = backend(CpuPath::Portable, 1);
    let mut times = Timings::default();
    let mut engine = cpu.begin_at(&params, 0);
    assert!(is_bug(engine.give_leaves(3..20, vec![])));
    let reversed = |start, end| Range { start, end };
    assert!(is_bug(engine.give_leaves(reversed(4, 2), vec![])));
    assert!(is_bug(engine.give_leaves(0..1, vec![[0; 25]; 2])));
    engine.give_leaves(4..8, vec![]).unwrap();
    assert!(is_bug(engine.give_leaves(9..12, vec![])));
    assert!(is_bug(engine.give_leaves(0..3, vec![])));
    assert!(is_bug(engine.take_leaves(5..7)));
    assert!(is_bug(engine.take_leaves(3..8)));
    assert!(is_bug(engine.take_leaves(reversed(6, 5))));
    engine.give_leaves(8..16, vec![]).unwrap();
    engine.absorb(Piece::Memory(&[1; 1000])).unwrap();
    assert!(engine.take_leaves(14..16).unwrap().is_empty());
    assert_eq!(engine.take_leaves(4..6).unwrap().len(), 2);
    assert_eq!(engine.leaves(), 6..14);
    assert!(is_bug(engine.finish(&mut times)));
}

/// Where [`CpuBackend::run_one_piece`] and [`CpuBackend::run_pieces`]
/// run an input and which threads its engines get: a small input inline
/// on the calling thread, whatever thread that is; a larger one on the
/// pool; an input of several pieces on the calling thread, or on a
/// thread of its own when the caller is a worker of a rayon pool (ours
/// or another), and never with anything left set afterwards.
#[test]
fn inputs_run_inline_on_the_pool_or_off_rayon_workers() {
    let cpu = CpuBackend::new(Some(2), None, CpuPath::Portable).unwrap();
    let thread = || std::thread::current().id();
    let inline = || matches!(cpu.workers(), Workers::Inline);
    let in_pool = || cpu.pool().current_thread_index().is_some();
    let on_rayon = || rayon::current_thread_index().is_some();
    let here = thread();

    // The routing's results, which cannot fail here (the pool starts).
    fn ok<T>(got: Result<T, HashError>) -> T {
        got.unwrap()
    }
    let (at, small_inline) = ok(cpu.run_one_piece(INLINE_MAX, || Ok((thread(), inline()))));
    assert!(at == here && small_inline);
    assert!(!inline(), "nothing is left set here");

    let (larger_in_pool, larger_inline) =
        ok(cpu.run_one_piece(INLINE_MAX + 1, || Ok((in_pool(), inline()))));
    assert!(larger_in_pool && !larger_inline);

    let (at, pieces_inline) = ok(cpu.run_pieces(|| Ok((thread(), inline()))));
    assert!(at == here && !pieces_inline);

    // From a worker of another pool, the caller's thread never waits
    // on ours: a small input stays on it, the rest leave it.
    let foreign = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    foreign.install(|| {
        let caller = thread();
        assert!(ok(
            cpu.run_one_piece(1, || Ok(thread() == caller && inline()))
        ));
        assert!(ok(cpu.run_one_piece(INLINE_MAX + 1, || Ok(in_pool()))));
        assert!(ok(cpu.run_pieces(|| Ok(thread() != caller && !on_rayon()))));
    });
    // From one of our own workers, several pieces leave it too.
    let left = cpu
        .pool()
        .install(|| ok(cpu.run_pieces(|| Ok(!on_rayon() && !inline()))));
    assert!(left);
    // Several pieces begun inside an inline input (a progress callback there).
    assert!(ok(cpu.run_one_piece(1, || cpu.run_pieces(|| Ok(!inline())))));
    assert!(
        ok(cpu.run_one_piece(1, || Ok(inline()))),
        "and inline again after it"
    );
}
