//! The fast CPU backend against the reference on thousands of random cases:
//! every function, heights and degrees, block sizes, prefixes, output lengths,
//! sizes at stripe boundaries, inputs far smaller than a stripe, and streams
//! read in odd-sized pieces.
//!
//! The tests of a SIMD path (`avx2_*`, `avx512_*`) run where build.rs set
//! `treehash_test_avx2` / `treehash_test_avx512`: the CPU that built them has
//! the feature, or `TREEHASH_REQUIRE_AVX2` (or `CI`) / `TREEHASH_REQUIRE_AVX512`
//! was set when they were built. Elsewhere they are listed as ignored (libtest
//! cannot skip a test at run time). Where they run, a CPU without the feature
//! fails them: none passes having checked nothing.

mod common;

use std::io::{self, Read};

use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use treehash::{Algorithm, CpuPath, HashError, Hasher, HasherOptions, TreeParams, reference};

/// A random valid parameter set with at most `max_leaves` leaves.
fn random_params(rng: &mut StdRng, max_leaves: u64) -> TreeParams {
    let algorithm = Algorithm::ALL[rng.random_range(0..6)];
    let (height, degree) = loop {
        let height = rng.random_range(0..=6u32);
        let degree = rng.random_range(2..=9u64);
        if degree.checked_pow(height).is_some_and(|l| l <= max_leaves) {
            break (height, degree);
        }
    };
    let block_size = match rng.random_range(0..4) {
        0 => None,
        1 => Some(8),
        _ => Some(8 * rng.random_range(1..=48usize)),
    };
    let prefix_len = match rng.random_range(0..4) {
        0 => rng.random_range(1..=255usize),
        _ => 0,
    };
    let prefix = (0..prefix_len).map(|_| rng.random()).collect();
    let output_len = algorithm.is_xof().then(|| rng.random_range(1..=300usize));
    TreeParams::with_options(algorithm, height, degree, block_size, prefix, output_len).unwrap()
}

/// A size near something that matters: empty, tiny, a rate or a stripe edge.
fn interesting_size(rng: &mut StdRng, params: &TreeParams) -> usize {
    let stripe = params.stripe_len() as usize;
    let rate = params.algorithm().rate();
    let jitter = rng.random_range(0..=2usize);
    let base = match rng.random_range(0..6) {
        0 => return rng.random_range(0..4),
        1 => rate,
        2 => stripe,
        3 => stripe * rng.random_range(1..=4usize),
        4 => return rng.random_range(0..=3 * stripe.min(20_000)),
        _ => return rng.random_range(0..=60_000),
    };
    (base + jitter).saturating_sub(1)
}

fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    rng.fill_bytes(&mut data);
    data
}

#[test]
fn cpu_matches_reference_on_random_cases() {
    let mut rng = StdRng::seed_from_u64(0x7ee4a54);
    let hashers: Vec<Hasher> = [None, Some(256), Some(1000)]
        .into_iter()
        .map(|piece_bytes| {
            Hasher::new(
                HasherOptions::default()
                    .with_piece_bytes(piece_bytes)
                    .with_threads(Some(3)),
            )
            .unwrap()
        })
        .collect();
    for case in 0..3000 {
        let params = random_params(&mut rng, 600);
        let size = interesting_size(&mut rng, &params);
        let data = random_bytes(&mut rng, size);
        let want = reference::tree_hash(&params, &data);
        let hasher = &hashers[case % hashers.len()];
        let got = hasher.hash_bytes(&params, &data).unwrap();
        assert_eq!(got.digest, want, "case {case}: {params:?}, {size} bytes");
    }
}

/// A reader that hands out its bytes in pieces of random, often odd, sizes.
struct OddReader<'a> {
    data: &'a [u8],
    rng: StdRng,
}

impl Read for OddReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self
            .rng
            .random_range(1..=4099)
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn streams_read_in_odd_pieces_match_reference() {
    let mut rng = StdRng::seed_from_u64(0x57ea);
    let hasher = Hasher::new(HasherOptions::default().with_piece_bytes(Some(1 << 12))).unwrap();
    for case in 0..500 {
        let params = random_params(&mut rng, 300);
        let size = interesting_size(&mut rng, &params);
        let data = random_bytes(&mut rng, size);
        let mut reader = OddReader {
            data: &data,
            rng: StdRng::seed_from_u64(case),
        };
        let got = hasher.hash_reader(&params, &mut reader).unwrap();
        assert_eq!(got.bytes, size as u64);
        assert_eq!(
            got.digest,
            reference::tree_hash(&params, &data),
            "case {case}: {params:?}"
        );
    }
}

#[test]
fn inputs_much_smaller_than_a_stripe_leave_most_leaves_empty() {
    let hasher = Hasher::new(HasherOptions::default()).unwrap();
    for (height, degree) in [(7, 4), (3, 40), (12, 2)] {
        let params = TreeParams::new(Algorithm::Sha3_256, height, degree).unwrap();
        for size in [0, 1, 135, 136, 137, 5000] {
            let data = common::spec_input(size);
            let got = hasher.hash_bytes(&params, &data).unwrap();
            assert_eq!(got.digest, reference::tree_hash(&params, &data));
        }
    }
}

#[test]
fn height_zero_is_plain_sha3_and_shake() {
    let hasher = Hasher::new(HasherOptions::default()).unwrap();
    let sizes = [
        0usize, 1, 71, 72, 73, 103, 104, 105, 135, 136, 137, 143, 144, 145, 167, 168, 169,
    ];
    let big = [(1 << 20) + 7, 3 * (1 << 20) + 1];
    for size in sizes.into_iter().chain(big) {
        let data = common::spec_input(size);
        for algorithm in Algorithm::ALL {
            let params = TreeParams::new(algorithm, 0, 4).unwrap();
            let got = hasher.hash_bytes(&params, &data).unwrap().digest;
            // The reference's node function is RustCrypto's sha3 / shake, called plainly.
            let plain = reference::node_function(algorithm, &data, params.output_len());
            assert_eq!(got, plain, "{algorithm}, {size} bytes");
        }
    }
    // And one fixed point outside the crate: SHA3-256 of the empty string.
    let empty = TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap();
    assert_eq!(
        hex::encode(hasher.hash_bytes(&empty, b"").unwrap().digest),
        "a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"
    );
}

/// A hasher forced onto `path`. A CPU that lacks the path fails the test:
/// the tests of a path this build does not test are ignored instead.
fn forced(path: CpuPath, piece_bytes: Option<usize>, test: &str) -> Hasher {
    let options = HasherOptions::default()
        .with_cpu_path(path)
        .with_piece_bytes(piece_bytes)
        .with_threads(Some(3));
    Hasher::new(options).unwrap_or_else(|e| {
        panic!(
            "{test}: {e} (this build tests the {path} path: it was built on a CPU that has \
             it, or TREEHASH_REQUIRE_AVX2, CI or TREEHASH_REQUIRE_AVX512 was set)"
        )
    })
}

/// A forced CPU path against the portable one and the reference, on the
/// shapes the lane engines take (B a multiple of the rate, L ≥ 4) and their
/// edges: L not a multiple of the lane count, pieces that end mid-stripe and
/// mid-group, last blocks of every length, prefixes, trees with many empty
/// leaves.
fn path_agrees_with_portable_and_reference(path: CpuPath, test: &str) {
    let hashers: Vec<Hasher> = [None, Some(4096), Some(1 << 16)]
        .into_iter()
        .map(|piece_bytes| forced(path, piece_bytes, test))
        .collect();
    let portable = forced(CpuPath::Portable, Some(3000), test);
    let mut rng = StdRng::seed_from_u64(0x8);
    for case in 0..600 {
        let algorithm = Algorithm::ALL[rng.random_range(0..6)];
        let (height, degree) = [
            (1, 8),
            (1, 4),
            (2, 3),
            (2, 4),
            (3, 5),
            (4, 4),
            (1, 9),
            (2, 17),
            (6, 4),
            (1, 6),
        ][rng.random_range(0..10)];
        let block_size = algorithm.rate() * rng.random_range(1..=3usize);
        let prefix: Vec<u8> = (0..rng.random_range(0..3) * 37)
            .map(|_| rng.random())
            .collect();
        let length = algorithm.is_xof().then(|| rng.random_range(1..=100usize));
        let params =
            TreeParams::with_options(algorithm, height, degree, Some(block_size), prefix, length)
                .unwrap();
        let stripe = params.stripe_len() as usize;
        let size = match rng.random_range(0..5) {
            0 => rng.random_range(0..2 * block_size),
            1 => stripe * rng.random_range(1..4) + rng.random_range(0..3) - 1,
            2 => rng.random_range(0..stripe.max(1)),
            3 => block_size * rng.random_range(1..40) + rng.random_range(0..3) - 1,
            _ => rng.random_range(0..200_000),
        };
        let data = random_bytes(&mut rng, size);
        let want = portable.hash_bytes(&params, &data).unwrap().digest;
        let got = hashers[case % hashers.len()]
            .hash_bytes(&params, &data)
            .unwrap()
            .digest;
        assert_eq!(got, want, "{path}, case {case}: {params:?}, {size} bytes");
        if case % 10 == 0 {
            assert_eq!(want, reference::tree_hash(&params, &data), "case {case}");
        }
    }
}

#[test]
#[cfg_attr(
    not(treehash_test_avx2),
    ignore = "the CPU that built this test has no AVX2 (build.rs)"
)]
fn avx2_path_agrees_with_portable_and_reference() {
    path_agrees_with_portable_and_reference(
        CpuPath::Avx2,
        "avx2_path_agrees_with_portable_and_reference",
    );
}

#[test]
#[cfg_attr(
    not(treehash_test_avx512),
    ignore = "the CPU that built this test has no AVX-512F (build.rs)"
)]
fn avx512_path_agrees_with_portable_and_reference() {
    path_agrees_with_portable_and_reference(
        CpuPath::Avx512,
        "avx512_path_agrees_with_portable_and_reference",
    );
}

/// Every path on the sizes that matter for each function, against the
/// reference: 0, 1, rate ± 1, stripe edges, and a large input.
fn path_matches_reference_at_edges(path: CpuPath, test: &str) {
    let hasher = forced(path, Some(5000), test);
    for algorithm in Algorithm::ALL {
        let rate = algorithm.rate();
        for (height, degree, block_size) in [(1, 4, rate), (2, 4, rate), (3, 3, 2 * rate)] {
            let params =
                TreeParams::with_options(algorithm, height, degree, Some(block_size), vec![], None)
                    .unwrap();
            let stripe = params.stripe_len() as usize;
            let sizes = [
                0,
                1,
                rate - 1,
                rate,
                rate + 1,
                stripe - 1,
                stripe,
                stripe + 1,
                3 * stripe - 1,
                3 * stripe + rate + 1,
                300_001,
            ];
            for size in sizes {
                let data = common::spec_input(size);
                let got = hasher.hash_bytes(&params, &data).unwrap().digest;
                let want = reference::tree_hash(&params, &data);
                assert_eq!(got, want, "{path}: {params:?}, {size} bytes");
            }
        }
    }
}

#[test]
fn portable_path_matches_reference_at_edges() {
    path_matches_reference_at_edges(
        CpuPath::Portable,
        "portable_path_matches_reference_at_edges",
    );
}

#[test]
#[cfg_attr(
    not(treehash_test_avx2),
    ignore = "the CPU that built this test has no AVX2 (build.rs)"
)]
fn avx2_path_matches_reference_at_edges() {
    path_matches_reference_at_edges(CpuPath::Avx2, "avx2_path_matches_reference_at_edges");
}

#[test]
#[cfg_attr(
    not(treehash_test_avx512),
    ignore = "the CPU that built this test has no AVX-512F (build.rs)"
)]
fn avx512_path_matches_reference_at_edges() {
    path_matches_reference_at_edges(CpuPath::Avx512, "avx512_path_matches_reference_at_edges");
}

/// Every path builds a hasher or is refused with the feature it lacks; a
/// path that a variable requires runs, and its tests were built to run
/// (build.rs reads the variables when it builds them: a variable set only
/// now would leave them listed as ignored, the requirement unmet).
#[test]
fn every_path_is_refused_or_runs_and_a_required_one_runs() {
    let required = |vars: &[&str]| vars.iter().any(|v| std::env::var_os(v).is_some());
    for path in CpuPath::ALL {
        let (must_run, tested) = match path {
            CpuPath::Avx2 => (
                required(&["TREEHASH_REQUIRE_AVX2", "CI"]),
                cfg!(treehash_test_avx2),
            ),
            CpuPath::Avx512 => (
                required(&["TREEHASH_REQUIRE_AVX512"]),
                cfg!(treehash_test_avx512),
            ),
            _ => (true, true),
        };
        assert!(
            tested || !must_run,
            "{path} is required, but its tests were built without the requirement"
        );
        match Hasher::new(HasherOptions::default().with_cpu_path(path)) {
            Ok(_) => {}
            Err(HashError::CpuFeature { path: p, feature }) => {
                assert!(
                    !must_run,
                    "{path} is required, and this CPU lacks {feature}"
                );
                assert_eq!(p, path.name());
                assert!(!matches!(path, CpuPath::Auto | CpuPath::Portable));
                let text = HashError::CpuFeature { path: p, feature }.to_string();
                assert!(text.contains(feature), "{text}");
            }
            Err(e) => panic!("{path}: {e}"),
        }
    }
}
