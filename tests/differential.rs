//! The engines against the reference, and the references against
//! independent implementations, for every function of both kinds: LI
//! trees and the standard functions (KT128/KT256, TurboSHAKE,
//! ParallelHash). If you add a test that compares one implementation with
//! another on many inputs, it goes here (known answers are in vectors.rs,
//! the GPU's comparisons in gpu.rs).
//!
//! The CPU's kernels against the reference: thousands of random LI cases
//! (every function, heights and degrees, block sizes, prefixes, output
//! lengths, sizes at stripe boundaries, inputs far smaller than a stripe,
//! sequential inputs read in odd-sized pieces), 200 random cases of each
//! standard function (customization strings, block sizes, domain bytes,
//! output lengths, lengths at chunk boundaries), and one table of both kinds
//! (`common::cases`) at every boundary (0, 1, the rate ± 1, stripes and
//! chunks ± 1, large), read from memory, from files and from sequential
//! inputs, on every CPU path.
//!
//! The tests of a SIMD path (`avx2_*`, `avx512_*`) run where build.rs set
//! `treehash_test_avx2` / `treehash_test_avx512`: the CPU that built them has
//! the feature, or `TREEHASH_REQUIRE_AVX2` (or `CI`) / `TREEHASH_REQUIRE_AVX512`
//! was set when they were built. Elsewhere they are listed as ignored (libtest
//! cannot skip a test at run time). Where they run, a CPU without the feature
//! fails them: none passes having checked nothing.
//!
//! The references of RFC 9861 and SP 800-185 against independent
//! implementations, on inputs at and around every boundary, plus seeded random
//! ones:
//!
//! | reference | checked against |
//! |---|---|
//! | TurboSHAKE128/256 | RustCrypto `turboshake` |
//! | KT128 | RustCrypto `k12` and tiny-keccak's KangarooTwelve (the original K12, which is KT128) |
//! | KT256 | RustCrypto `k12` (no other Rust crate has it; pycryptodome neither) |
//! | cSHAKE128/256 | RustCrypto `cshake`, and tiny-keccak where it is right (see [`tiny_keccak_cshake_is_wrong`]) |
//! | ParallelHash128/256 and the XOF variants | tiny-keccak |
//!
//! The RustCrypto crates share the `keccak` crate's permutation, which the
//! reference's own (reference/src/keccak.rs) is tested against; tiny-keccak
//! has its own. The known answers of the standards, and pycryptodome's for
//! TurboSHAKE, KT128 and cSHAKE, are checked in vectors.rs; the LI
//! reference's, computed outside this crate, there too.

mod common;

use std::io::{self, Read};

use common::cases::{edge_cases, file_cases};
use common::{random_bytes, reference_digest, reference_node, reference_tree};
use k12::digest::{CustomizedInit, ExtendableOutput, Update, XofReader};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tiny_keccak::{Hasher as _, IntoXof as _, Xof as _};
use treehash::standard::{Family, Standard, StandardParams};
use treehash::{Algorithm, CpuPath, HashError, Hasher, HasherOptions, TreeParams};
use treehash_reference::cshake::{
    CSHAKE128_RATE, CSHAKE256_RATE, cshake128, cshake256, encode_string, left_encode,
};
use treehash_reference::kangaroo::{CHUNK_LEN, kt128, kt256, length_encode};
use treehash_reference::parallel_hash::{
    parallel_hash_xof128, parallel_hash_xof256, parallel_hash128, parallel_hash256,
};
use treehash_reference::turboshake::{
    TURBOSHAKE128_RATE, TURBOSHAKE256_RATE, turboshake128, turboshake256,
};

// ============================================ the CPU's kernels against the reference

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
        let want = treehash_reference::tree_hash(&reference_tree(&params), &data);
        let hasher = &hashers[case % hashers.len()];
        let got = hasher.hash_bytes(&params, &data).unwrap();
        assert_eq!(got.digest, want, "case {case}: {params:?}, {size} bytes");
    }
}

/// Random parameters of a standard function: a customization string of 0
/// to 40 bytes (KT, ParallelHash), a block size of 1 to 300 bytes
/// (ParallelHash), any domain byte (TurboSHAKE), an output of 1 to 100
/// bytes.
fn random_standard_params(rng: &mut StdRng, standard: Standard) -> StandardParams {
    let mut params = StandardParams::new(standard);
    let customization_len = rng.random_range(0..=40usize);
    let customization = (0..customization_len).map(|_| rng.random()).collect();
    params = match standard.family() {
        Family::Kangaroo => params.with_customization(customization),
        Family::ParallelHash => params
            .with_customization(customization)
            .and_then(|p| p.with_block_size(rng.random_range(1..=300usize))),
        _ => params.with_domain(rng.random_range(0x01..=0x7fu8)),
    }
    .unwrap();
    params
        .with_output_len(rng.random_range(1..=100usize))
        .unwrap()
}

/// A message length near where a standard function's walk changes course:
/// none, a byte, KT's chunk boundaries (the suffix counted), ParallelHash's
/// blocks, TurboSHAKE's rate, or anywhere up to three chunks.
fn standard_message_len(rng: &mut StdRng, params: &StandardParams) -> usize {
    let jitter = rng.random_range(0..=4usize);
    let suffix = match params.standard().family() {
        Family::Kangaroo => {
            let c = params.customization().len();
            c + length_encode(c as u64).len()
        }
        _ => 0,
    };
    let unit = match params.standard().family() {
        Family::TurboShake => params.standard().rate(),
        _ => params.block_size(),
    };
    match rng.random_range(0..5) {
        0 => rng.random_range(0..=1),
        1 => (unit * rng.random_range(1..=3usize) + jitter).saturating_sub(suffix + 2),
        2 => rng.random_range(0..=unit * 4),
        _ => rng.random_range(0..=3 * CHUNK_LEN + 100),
    }
}

/// 200 random cases of each standard function, against the reference: the
/// CPU's kernels (whichever this CPU runs) on pieces of three lengths.
#[test]
fn standard_functions_match_reference_on_random_cases() {
    let mut rng = StdRng::seed_from_u64(0x57a2da4d);
    let hashers: Vec<Hasher> = [None, Some(256), Some(1000)]
        .into_iter()
        .map(|piece_bytes| {
            let options = HasherOptions::default()
                .with_piece_bytes(piece_bytes)
                .with_threads(Some(3));
            Hasher::new(options).unwrap()
        })
        .collect();
    for standard in Standard::ALL {
        for case in 0..200 {
            let params = random_standard_params(&mut rng, standard);
            let len = standard_message_len(&mut rng, &params);
            let data = random_bytes(&mut rng, len);
            let want = reference_digest(&params.clone().into(), &data);
            let got = hashers[case % hashers.len()]
                .hash_bytes(&params, &data)
                .unwrap();
            assert_eq!(
                got.digest, want,
                "{standard} case {case}: {params:?}, {len} bytes"
            );
        }
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
fn sequential_inputs_read_in_odd_pieces_match_reference() {
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
            treehash_reference::tree_hash(&reference_tree(&params), &data),
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
            assert_eq!(
                got.digest,
                treehash_reference::tree_hash(&reference_tree(&params), &data)
            );
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
            let plain = treehash_reference::node_function(
                reference_node(algorithm),
                &data,
                params.output_len(),
            );
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
/// shapes the lane kernels take (B a multiple of the rate, L ≥ 4) and their
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
            assert_eq!(
                want,
                treehash_reference::tree_hash(&reference_tree(&params), &data),
                "case {case}"
            );
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

/// Every case of the one table of both kinds (`common::cases::edge_cases`:
/// each LI function in trees of 4, 16 and 27 leaves, every standard
/// function with the options it takes) at the lengths that matter: 0, 1,
/// the rate ± 1, 1, 2, 3, 9 and 17 units (LI stripes, KT's and
/// ParallelHash's chunks, TurboSHAKE's pieces of 8192) ± 1, three units
/// and a rate and a byte, and 300,001 bytes. On the hasher forced onto
/// `path`, in pieces of the default length, of 5000 and of 16,384 bytes,
/// from memory: the reference's digest, and every byte counted.
fn path_matches_reference_at_edges(path: CpuPath, test: &str) {
    let hashers = [None, Some(5000), Some(16384)].map(|piece| forced(path, piece, test));
    let mut checked = 0;
    for case in edge_cases(&[1, 2, 3, 9, 17]) {
        for &len in &case.lens {
            let data = random_bytes(&mut StdRng::seed_from_u64(len as u64), len);
            let want = reference_digest(&case.params, &data);
            for hasher in &hashers {
                let out = hasher.hash_bytes(&case.params, &data).unwrap();
                let what = format!("{path}: {:?}, {len} bytes", case.params);
                assert_eq!(out.digest, want, "{what}");
                assert_eq!(out.bytes, len as u64, "{what}");
            }
            checked += 1;
        }
    }
    // 18 trees and 38 standard cases, 20 lengths or more each.
    assert!(checked > 1000, "only {checked} cases");
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

/// Every case of `common::cases::file_cases` (LI trees of 1 to 65,536
/// leaves, every standard function with its options) read from a file
/// (mapped or read in several pieces) and as a sequential input, on every
/// CPU path this build tests: the reference's digest.
#[test]
fn files_and_sequential_inputs_on_every_path_match_the_reference() {
    let hashers = common::cpu_hashers_of_every_path(&[Some(8192)]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("m");
    for case in file_cases() {
        for &len in &case.lens {
            let data = random_bytes(&mut StdRng::seed_from_u64(7 * len as u64 + 1), len);
            std::fs::write(&path, &data).unwrap();
            let want = reference_digest(&case.params, &data);
            let what = format!("{}, {len} bytes", case.params.label());
            for hasher in &hashers {
                let from_file = hasher.hash_path(&case.params, &path, &()).unwrap();
                assert_eq!(from_file.digest, want, "{what}, file");
                assert_eq!(from_file.bytes, len as u64, "{what}, file");
                let sequential = hasher
                    .hash_reader(&case.params, &mut std::io::Cursor::new(&data))
                    .unwrap();
                assert_eq!(sequential.digest, want, "{what}, sequential");
            }
        }
    }
}

/// Every path builds a hasher or is refused with the feature it lacks; a
/// path that a variable requires runs, and its tests were built to run
/// (build.rs reads the variables when it builds them: a variable set only
/// now would leave them listed as ignored, the requirement unmet).
#[test]
fn every_path_is_refused_or_runs_and_a_required_one_runs() {
    // The AVX paths are x86-64's: elsewhere (aarch64 under qemu in CI) no
    // variable can require them.
    let required = |vars: &[&str]| {
        cfg!(target_arch = "x86_64") && vars.iter().any(|v| std::env::var_os(v).is_some())
    };
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

// ============================ the references against independent implementations

/// Fixed, so that a failure can be replayed.
const SEED: u64 = 0x9861_0185;

/// `len` and its neighbours, without going below zero.
fn around(len: usize) -> Vec<usize> {
    [len.checked_sub(1), Some(len), Some(len + 1)]
        .into_iter()
        .flatten()
        .collect()
}

/// Reads `out_len` bytes from any RustCrypto XOF.
fn rustcrypto<X: ExtendableOutput>(xof: X, out_len: usize) -> Vec<u8> {
    let mut out = vec![0; out_len];
    xof.finalize_xof().read(&mut out);
    out
}

// ---------------------------------------------------------------- TurboSHAKE

/// RustCrypto's TurboSHAKE takes D as a const generic: one function per D.
fn rustcrypto_turboshake<const D: u8>(security: u32, message: &[u8], out_len: usize) -> Vec<u8> {
    if security == 128 {
        let mut xof = turboshake::CTurboShake128::<D>::default();
        xof.update(message);
        rustcrypto(xof, out_len)
    } else {
        let mut xof = turboshake::CTurboShake256::<D>::default();
        xof.update(message);
        rustcrypto(xof, out_len)
    }
}

/// TurboSHAKE{security}(M, D, L) for one D.
type TurboShakeWithD = fn(security: u32, message: &[u8], out_len: usize) -> Vec<u8>;

/// Every kind of D: the smallest and largest, KT's three, SHAKE's, one more.
const DOMAINS: [(u8, TurboShakeWithD); 7] = [
    (0x01, rustcrypto_turboshake::<0x01>),
    (0x06, rustcrypto_turboshake::<0x06>),
    (0x07, rustcrypto_turboshake::<0x07>),
    (0x0b, rustcrypto_turboshake::<0x0b>),
    (0x1f, rustcrypto_turboshake::<0x1f>),
    (0x40, rustcrypto_turboshake::<0x40>),
    (0x7f, rustcrypto_turboshake::<0x7f>),
];

#[test]
fn turboshake_matches_rustcrypto_turboshake() {
    let mut rng = StdRng::seed_from_u64(SEED);
    let mut checked = 0;
    for (security, rate, ours) in [
        (
            128,
            TURBOSHAKE128_RATE,
            turboshake128 as fn(&[u8], u8, usize) -> Vec<u8>,
        ),
        (256, TURBOSHAKE256_RATE, turboshake256),
    ] {
        let mut lens: Vec<usize> = [0, 1, rate, 2 * rate, 5 * rate, 8192]
            .into_iter()
            .flat_map(around)
            .collect();
        lens.extend((0..8).map(|_| rng.random_range(0..20_000)));
        for (i, &len) in lens.iter().enumerate() {
            let message = random_bytes(&mut rng, len);
            let out_lens = [
                1,
                32,
                64,
                rate - 1,
                rate,
                rate + 1,
                rng.random_range(1..4 * rate),
            ];
            let (domain, theirs) = DOMAINS[i % DOMAINS.len()];
            for out_len in out_lens {
                assert_eq!(
                    ours(&message, domain, out_len),
                    theirs(security, &message, out_len),
                    "TurboSHAKE{security}, {len}-byte message, D = {domain:#04x}, L = {out_len}"
                );
                checked += 1;
            }
        }
        // Every D with the domain byte on the last byte of a block.
        for (domain, theirs) in DOMAINS {
            let message = random_bytes(&mut rng, rate - 1);
            assert_eq!(
                ours(&message, domain, 64),
                theirs(security, &message, 64),
                "TurboSHAKE{security}, D = {domain:#04x} on a block's last byte"
            );
            checked += 1;
        }
    }
    assert!(checked > 250, "only {checked} cases");
}

// ------------------------------------------------------------------- KT128/256

/// (|M|, |C|) pairs: |S| = |M| + |C| + |length_encode(|C|)| on either side of
/// 1, 2, 3, 4, 8, 9 and 17 chunks for several |C|, short messages around both
/// rates, then random pairs.
fn kangaroo_lengths(rng: &mut StdRng) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    for c_len in [0, 1, 41, 255, 256, 8190, 9000] {
        let overhead = c_len + length_encode(c_len as u64).len();
        for chunks in [1, 2, 3, 4, 8, 9, 17] {
            for s_len in around(chunks * CHUNK_LEN) {
                if let Some(m_len) = s_len.checked_sub(overhead) {
                    pairs.push((m_len, c_len));
                }
            }
        }
    }
    for m_len in [0, 1, 135, 136, 137, 167, 168, 169] {
        pairs.push((m_len, 0));
        pairs.push((m_len, 3));
    }
    pairs.extend((0..24).map(|_| {
        (
            rng.random_range(0..40 * CHUNK_LEN),
            rng.random_range(0..300),
        )
    }));
    pairs
}

fn k12_kt128(message: &[u8], customization: &[u8], out_len: usize) -> Vec<u8> {
    let mut xof = k12::CustomKt128::new_customized(customization);
    xof.update(message);
    rustcrypto(xof, out_len)
}

fn k12_kt256(message: &[u8], customization: &[u8], out_len: usize) -> Vec<u8> {
    let mut xof = k12::CustomKt256::new_customized(customization);
    xof.update(message);
    rustcrypto(xof, out_len)
}

fn tiny_keccak_kt128(message: &[u8], customization: &[u8], out_len: usize) -> Vec<u8> {
    let mut k12 = tiny_keccak::KangarooTwelve::new(customization);
    k12.update(message);
    let mut out = vec![0; out_len];
    k12.finalize(&mut out);
    out
}

#[test]
fn kt128_matches_k12_and_tiny_keccak() {
    let mut rng = StdRng::seed_from_u64(SEED);
    for (i, (m_len, c_len)) in kangaroo_lengths(&mut rng).into_iter().enumerate() {
        let message = random_bytes(&mut rng, m_len);
        let customization = random_bytes(&mut rng, c_len);
        let out_len = [32, 64, 1, 167, 168, 169, 500][i % 7];
        let ours = kt128(&message, &customization, out_len);
        let what = format!("KT128, |M| = {m_len}, |C| = {c_len}, L = {out_len}");
        assert_eq!(
            ours,
            k12_kt128(&message, &customization, out_len),
            "{what}: k12"
        );
        assert_eq!(
            ours,
            tiny_keccak_kt128(&message, &customization, out_len),
            "{what}: tiny-keccak"
        );
    }
}

#[test]
fn kt256_matches_k12() {
    let mut rng = StdRng::seed_from_u64(SEED + 1);
    for (i, (m_len, c_len)) in kangaroo_lengths(&mut rng).into_iter().enumerate() {
        let message = random_bytes(&mut rng, m_len);
        let customization = random_bytes(&mut rng, c_len);
        let out_len = [64, 32, 1, 135, 136, 137, 500][i % 7];
        assert_eq!(
            kt256(&message, &customization, out_len),
            k12_kt256(&message, &customization, out_len),
            "KT256, |M| = {m_len}, |C| = {c_len}, L = {out_len}"
        );
    }
}

// ---------------------------------------------------------------------- cSHAKE

/// tiny-keccak 2.0.2 permutes once too often when bytepad's input
/// left_encode(rate) ‖ encode_string(N) ‖ encode_string(S) fills whole blocks
/// (SP 800-185 §2.3.3 adds no padding then): debris/tiny-keccak issue 63, the
/// bug RustCrypto fixed in cshake 0.1.1. RustCrypto and pycryptodome (in
/// sp800-185.json) agree with the reference there; tiny-keccak is not asked.
fn tiny_keccak_cshake_is_wrong(rate: usize, n: &[u8], s: &[u8]) -> bool {
    let bytepad_input =
        left_encode(rate as u64).len() + encode_string(n).len() + encode_string(s).len();
    bytepad_input.is_multiple_of(rate)
}

fn rustcrypto_cshake(security: u32, x: &[u8], out_len: usize, n: &[u8], s: &[u8]) -> Vec<u8> {
    if security == 128 {
        let mut xof = cshake::CShake128::new_with_function_name(n, s);
        xof.update(x);
        rustcrypto(xof, out_len)
    } else {
        let mut xof = cshake::CShake256::new_with_function_name(n, s);
        xof.update(x);
        rustcrypto(xof, out_len)
    }
}

fn tiny_keccak_cshake(security: u32, x: &[u8], out_len: usize, n: &[u8], s: &[u8]) -> Vec<u8> {
    let mut cshake = if security == 128 {
        tiny_keccak::CShake::v128(n, s)
    } else {
        tiny_keccak::CShake::v256(n, s)
    };
    cshake.update(x);
    let mut out = vec![0; out_len];
    cshake.finalize(&mut out);
    out
}

/// Every customization length up to two rates and past 8192 bits, so that
/// bytepad(encode_string(N) ‖ encode_string(S), rate) ends on each side of a
/// block and encode_string's length field grows from one byte to two.
#[test]
fn cshake_matches_rustcrypto_and_tiny_keccak() {
    let mut rng = StdRng::seed_from_u64(SEED + 2);
    let mut aligned = 0;
    for (security, rate, ours) in [
        (
            128,
            CSHAKE128_RATE,
            cshake128 as fn(&[u8], usize, &[u8], &[u8]) -> Vec<u8>,
        ),
        (256, CSHAKE256_RATE, cshake256),
    ] {
        for name in [&b""[..], b"N", b"ParallelHash", b"KMAC"] {
            let mut s_lens: Vec<usize> = (0..=2 * rate + 8).collect();
            s_lens.extend([1023, 1024, 8191, 8192, 8193]);
            for s_len in s_lens {
                let s = random_bytes(&mut rng, s_len);
                let x_len = [0, 1, rate - 1, rate, rate + 1][s_len % 5];
                let x = random_bytes(&mut rng, x_len);
                let out_len = rng.random_range(1..3 * rate);
                let ours = ours(&x, out_len, name, &s);
                let what = format!(
                    "cSHAKE{security}, |N| = {}, |S| = {s_len}, |X| = {x_len}, L = {out_len}",
                    name.len(),
                );
                assert_eq!(
                    ours,
                    rustcrypto_cshake(security, &x, out_len, name, &s),
                    "{what}: RustCrypto"
                );
                if tiny_keccak_cshake_is_wrong(rate, name, &s) {
                    aligned += 1;
                } else {
                    assert_eq!(
                        ours,
                        tiny_keccak_cshake(security, &x, out_len, name, &s),
                        "{what}: tiny-keccak"
                    );
                }
            }
        }
    }
    // One or two whole blocks for each of the four names and both rates.
    assert!(
        aligned >= 8,
        "bytepad filled whole blocks only {aligned} times"
    );
}

// ---------------------------------------------------------------- ParallelHash

fn tiny_keccak_parallel_hash(
    security: u32,
    xof: bool,
    x: &[u8],
    block_size: usize,
    out_len: usize,
    s: &[u8],
) -> Vec<u8> {
    let mut hasher = if security == 128 {
        tiny_keccak::ParallelHash::v128(s, block_size)
    } else {
        tiny_keccak::ParallelHash::v256(s, block_size)
    };
    hasher.update(x);
    let mut out = vec![0; out_len];
    if xof {
        hasher.into_xof().squeeze(&mut out);
    } else {
        hasher.finalize(&mut out);
    }
    out
}

type ParallelHashFn = fn(&[u8], usize, usize, &[u8]) -> Vec<u8>;

/// B around 1, 8, both rates and 8192; |X| around 0, B, 2B and a random
/// multiple of B; S of several lengths (none where tiny-keccak's cSHAKE is
/// wrong: the final cSHAKE there is checked with N = "ParallelHash" in
/// `cshake_matches_rustcrypto_and_tiny_keccak`); L of 1 to 300 bytes.
#[test]
fn parallel_hash_matches_tiny_keccak() {
    let mut rng = StdRng::seed_from_u64(SEED + 3);
    let functions: [(u32, bool, ParallelHashFn); 4] = [
        (128, false, parallel_hash128),
        (256, false, parallel_hash256),
        (128, true, parallel_hash_xof128),
        (256, true, parallel_hash_xof256),
    ];
    let mut block_sizes: Vec<usize> = [1, 8, 12, 136, 168, 8192]
        .into_iter()
        .flat_map(around)
        .filter(|&b| b > 0)
        .collect();
    block_sizes.extend((0..4).map(|_| rng.random_range(1..20_000)));
    let mut checked = 0;
    for block_size in block_sizes {
        let mut x_lens: Vec<usize> = [0, block_size, 2 * block_size]
            .into_iter()
            .flat_map(around)
            .collect();
        let blocks = rng.random_range(3..=(200_000 / block_size).clamp(3, 40));
        x_lens.extend(around(blocks * block_size));
        for (i, x_len) in x_lens.into_iter().enumerate() {
            let x = random_bytes(&mut rng, x_len);
            let s_len = [0, 1, 13, 100, 148, 150, 300][(i + block_size) % 7];
            let s = random_bytes(&mut rng, s_len);
            for (security, xof, ours) in functions {
                let rate = if security == 128 {
                    CSHAKE128_RATE
                } else {
                    CSHAKE256_RATE
                };
                assert!(!tiny_keccak_cshake_is_wrong(rate, b"ParallelHash", &s));
                let out_len = if i % 2 == 0 {
                    (security / 4) as usize
                } else {
                    rng.random_range(1..=300)
                };
                assert_eq!(
                    ours(&x, block_size, out_len, &s),
                    tiny_keccak_parallel_hash(security, xof, &x, block_size, out_len, &s),
                    "ParallelHash{}{security}, B = {block_size}, |X| = {x_len}, |S| = {s_len}, \
                     L = {out_len} bytes",
                    if xof { "XOF" } else { "" }
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 500, "only {checked} cases");
}
