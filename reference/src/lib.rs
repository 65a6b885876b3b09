//! The specs, literally: slow, in memory, no cleverness.
//!
//! This is the oracle every backend is tested against. It is never on a fast
//! path: it builds the whole message and every leaf in memory. Here are the LI
//! tree mode of docs/SPEC.md ([`tree_hash`]) and, in the submodules, the
//! standard Keccak functions of the spec's part "Standard functions": the
//! permutation and sponge of FIPS 202 ([`keccak`]), TurboSHAKE and KT128/KT256
//! of RFC 9861 ([`turboshake`], [`kangaroo`]), cSHAKE and ParallelHash of NIST
//! SP 800-185 ([`cshake`], [`parallel_hash`]).
//!
//! A crate apart from the library that depends on no part of it: the
//! library's unit tests use it, and through a reference that depended on
//! treehash they would link a second treehash. A tree is given as this
//! crate's own [`Tree`] and [`Node`] (docs/decisions/0033-reference-crate.md).

#![warn(missing_docs)]

pub mod cshake;
pub mod kangaroo;
pub mod keccak;
pub mod parallel_hash;
mod tree;
pub mod turboshake;

use sha3::Digest;
use shake::{ExtendableOutput, Update, XofReader};

pub use tree::{Node, Tree};

/// The parameters of a standard function, each used by the functions that
/// have it: KT's C or ParallelHash's S, ParallelHash's B, TurboSHAKE's D.
#[derive(Clone, Copy, Debug)]
pub struct StandardArgs<'a> {
    /// KT's customization string C, or ParallelHash's S.
    pub customization: &'a [u8],
    /// ParallelHash's block size B in bytes.
    pub block_size: usize,
    /// TurboSHAKE's domain byte D.
    pub domain: u8,
    /// The digest length in bytes.
    pub output_len: usize,
}

/// The standard function named `name` as its document writes it (`KT128`,
/// `KT256`, `ParallelHash128`, `ParallelHash256`, `TurboSHAKE128`,
/// `TurboSHAKE256`) of `message`; `None` for a name it does not know.
pub fn standard_digest(name: &str, message: &[u8], args: StandardArgs<'_>) -> Option<Vec<u8>> {
    let StandardArgs {
        customization: c,
        block_size: b,
        domain: d,
        output_len: n,
    } = args;
    Some(match name {
        "KT128" => kangaroo::kt128(message, c, n),
        "KT256" => kangaroo::kt256(message, c, n),
        "ParallelHash128" => parallel_hash::parallel_hash128(message, b, n, c),
        "ParallelHash256" => parallel_hash::parallel_hash256(message, b, n, c),
        "TurboSHAKE128" => turboshake::turboshake128(message, d, n),
        "TurboSHAKE256" => turboshake::turboshake256(message, d, n),
        _ => return None,
    })
}

/// A_k(x): the node function with k bytes of output, straight from RustCrypto.
pub fn node_function(node: Node, x: &[u8], k: usize) -> Vec<u8> {
    let fixed = match node {
        Node::Sha3_224 => sha3::Sha3_224::digest(x).to_vec(),
        Node::Sha3_256 => sha3::Sha3_256::digest(x).to_vec(),
        Node::Sha3_384 => sha3::Sha3_384::digest(x).to_vec(),
        Node::Sha3_512 => sha3::Sha3_512::digest(x).to_vec(),
        Node::Shake128 => return shake_output(shake::Shake128::default(), x, k),
        Node::Shake256 => return shake_output(shake::Shake256::default(), x, k),
    };
    assert_eq!(fixed.len(), k, "SHA3-* output length is fixed");
    fixed
}

fn shake_output<X: Update + ExtendableOutput>(mut xof: X, x: &[u8], k: usize) -> Vec<u8> {
    xof.update(x);
    let mut out = vec![0; k];
    xof.finalize_xof().read(&mut out);
    out
}

/// The tree digest of `file` under `tree`, step by step as the spec states it.
///
/// # Panics
/// If H ≥ 1 and D or B is 0, or if the L = D^H leaves do not fit in memory.
pub fn tree_hash(tree: &Tree, file: &[u8]) -> Vec<u8> {
    let a = tree.node;
    let c = a.chaining_len();
    let n = tree.output_len;

    // 1. M = P ‖ F
    let m: Vec<u8> = tree.prefix.iter().chain(file).copied().collect();

    // 6, H = 0: the plain function of M.
    if tree.height == 0 {
        return node_function(a, &m, n);
    }

    // 2–3. Blocks of B bytes, dealt round-robin onto L leaves.
    let leaf_count = tree.leaf_count();
    let mut leaves = vec![Vec::new(); leaf_count];
    for (i, block) in m.chunks(tree.block_size).enumerate() {
        leaves[i % leaf_count].extend_from_slice(block);
    }

    // 4. V_H[j] = A_c(leaf j)
    let mut level: Vec<Vec<u8>> = leaves
        .iter()
        .map(|leaf| node_function(a, leaf, c))
        .collect();

    // 5. V_h[k] = A_c(V_{h+1}[kD] ‖ … ‖ V_{h+1}[kD+D−1]), down to h = 1.
    let d = usize::try_from(tree.degree).expect("D fits in memory");
    for _h in (1..tree.height).rev() {
        level = level
            .chunks(d)
            .map(|children| node_function(a, &children.concat(), c))
            .collect();
    }

    // 6, H ≥ 1: A_n(V_1[0] ‖ … ‖ V_1[D−1])
    assert_eq!(level.len(), d);
    node_function(a, &level.concat(), n)
}
