//! ParallelHash128 and ParallelHash256 with their XOF variants, NIST SP
//! 800-185 §6: cSHAKE of every B-byte block, then cSHAKE of the chaining
//! values with the function name "ParallelHash".

use crate::cshake::{cshake128, cshake256, left_encode, right_encode};

/// N of the final cSHAKE (SP 800-185 §6.3).
const FUNCTION_NAME: &[u8] = b"ParallelHash";

/// cSHAKE(X, L, N, S) with L in bytes.
type CShake = fn(x: &[u8], out_len: usize, n: &[u8], s: &[u8]) -> Vec<u8>;

/// One ParallelHash instance: its cSHAKE and the length of each block's hash.
struct Instance {
    cshake: CShake,
    chaining_len: usize,
}

/// ParallelHash128: cSHAKE128, blocks hashed to 256 bits (SP 800-185 §6.3).
const PARALLEL_HASH128: Instance = Instance {
    cshake: cshake128,
    chaining_len: 32,
};

/// ParallelHash256: cSHAKE256, blocks hashed to 512 bits (SP 800-185 §6.3).
const PARALLEL_HASH256: Instance = Instance {
    cshake: cshake256,
    chaining_len: 64,
};

/// SP 800-185 §6.3 step by step. `encoded_len` is the L of step 4:
/// the output length in bits, or 0 for the XOF variant (§6.3.1).
fn parallel_hash(
    ph: &Instance,
    x: &[u8],
    block_size: usize,
    out_len: usize,
    s: &[u8],
    encoded_len: u64,
) -> Vec<u8> {
    assert!(block_size > 0, "ParallelHash needs a block size B > 0");
    // 1. n = ⌈(len(X)/8) / B⌉
    let n = x.len().div_ceil(block_size);
    // 2. z = left_encode(B)
    let mut z = left_encode(block_size as u64);
    // 3. z = z ‖ cSHAKE(substring(X, i·B·8, (i+1)·B·8), 2·security, "", "") for i < n
    for block in x.chunks(block_size) {
        z.extend_from_slice(&(ph.cshake)(block, ph.chaining_len, b"", b""));
    }
    // 4. z = z ‖ right_encode(n) ‖ right_encode(L)
    z.extend_from_slice(&right_encode(n as u64));
    z.extend_from_slice(&right_encode(encoded_len));
    // 5–6. newX = z; return cSHAKE(newX, L, "ParallelHash", S)
    (ph.cshake)(&z, out_len, FUNCTION_NAME, s)
}

/// The L of step 4 for the fixed-length functions: the output length in bits.
fn bits(out_len: usize) -> u64 {
    8 * out_len as u64
}

/// ParallelHash128(X, B, L, S), SP 800-185 §6.3: `out_len` bytes (L =
/// 8·out_len bits) of X cut into blocks of `block_size` (B) bytes, with the
/// customization string S. The output length is part of the input: two
/// lengths give unrelated outputs.
///
/// # Panics
/// If B is 0 (the standard requires B > 0).
pub fn parallel_hash128(x: &[u8], block_size: usize, out_len: usize, s: &[u8]) -> Vec<u8> {
    parallel_hash(&PARALLEL_HASH128, x, block_size, out_len, s, bits(out_len))
}

/// ParallelHash256(X, B, L, S), SP 800-185 §6.3: as [`parallel_hash128`] on
/// cSHAKE256 with 512-bit block hashes.
///
/// # Panics
/// If B is 0.
pub fn parallel_hash256(x: &[u8], block_size: usize, out_len: usize, s: &[u8]) -> Vec<u8> {
    parallel_hash(&PARALLEL_HASH256, x, block_size, out_len, s, bits(out_len))
}

/// ParallelHashXOF128(X, B, L, S), SP 800-185 §6.3.1: ParallelHash128 with
/// right_encode(0) in place of right_encode(L), so that a shorter output is a
/// prefix of a longer one.
///
/// # Panics
/// If B is 0.
pub fn parallel_hash_xof128(x: &[u8], block_size: usize, out_len: usize, s: &[u8]) -> Vec<u8> {
    parallel_hash(&PARALLEL_HASH128, x, block_size, out_len, s, 0)
}

/// ParallelHashXOF256(X, B, L, S), SP 800-185 §6.3.1: as
/// [`parallel_hash_xof128`] on cSHAKE256 with 512-bit block hashes.
///
/// # Panics
/// If B is 0.
pub fn parallel_hash_xof256(x: &[u8], block_size: usize, out_len: usize, s: &[u8]) -> Vec<u8> {
    parallel_hash(&PARALLEL_HASH256, x, block_size, out_len, s, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The XOF variant's output is a prefix of its longer outputs; the fixed
    /// one encodes L, so its outputs differ.
    #[test]
    fn xof_outputs_are_prefixes_and_fixed_outputs_are_not() {
        // Three blocks under Miri, where a permutation takes a good part
        // of a second; thirteen elsewhere.
        let x: Vec<u8> = (0..if cfg!(miri) { 20 } else { 100 }).collect();
        let long = parallel_hash_xof128(&x, 8, 64, b"S");
        assert_eq!(parallel_hash_xof128(&x, 8, 32, b"S"), long[..32]);
        let fixed = parallel_hash128(&x, 8, 64, b"S");
        assert_ne!(parallel_hash128(&x, 8, 32, b"S"), fixed[..32]);
    }

    #[test]
    #[should_panic(expected = "B > 0")]
    fn block_size_zero_is_refused() {
        parallel_hash256(b"", 0, 64, b"");
    }
}
