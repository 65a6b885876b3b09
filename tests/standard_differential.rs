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
//! reference's own (src/reference/keccak.rs) is tested against; tiny-keccak
//! has its own. The known answers of the standards, and pycryptodome's for
//! TurboSHAKE, KT128 and cSHAKE, are checked in standard_vectors.rs.

use k12::digest::{CustomizedInit, ExtendableOutput, Update, XofReader};
use rand::rngs::StdRng;
use rand::{Rng, RngExt, SeedableRng};
use tiny_keccak::{Hasher as _, IntoXof as _, Xof as _};
use treehash::reference::cshake::{
    CSHAKE128_RATE, CSHAKE256_RATE, cshake128, cshake256, encode_string, left_encode,
};
use treehash::reference::kangaroo::{CHUNK_LEN, kt128, kt256, length_encode};
use treehash::reference::parallel_hash::{
    parallel_hash_xof128, parallel_hash_xof256, parallel_hash128, parallel_hash256,
};
use treehash::reference::turboshake::{
    TURBOSHAKE128_RATE, TURBOSHAKE256_RATE, turboshake128, turboshake256,
};

/// Fixed, so that a failure can be replayed.
const SEED: u64 = 0x9861_0185;

fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut bytes = vec![0; len];
    rng.fill_bytes(&mut bytes);
    bytes
}

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
