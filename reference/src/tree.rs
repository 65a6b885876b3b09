//! What [`crate::tree_hash`] takes: an LI tree ([`Tree`]) and its node
//! function ([`Node`]), as plain values of this crate's own. The library's
//! `TreeParams` and `Algorithm` are not used here: this crate depends on no
//! part of the library (docs/decisions/0033-reference-crate.md), and its
//! tests convert the library's parameters into these.

/// The node function A: one of the six FIPS 202 functions, with the numbers
/// of FIPS 202 that the sponges of this crate and its tests take.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// SHA3-224: a 28-byte digest.
    Sha3_224,
    /// SHA3-256: a 32-byte digest.
    Sha3_256,
    /// SHA3-384: a 48-byte digest.
    Sha3_384,
    /// SHA3-512: a 64-byte digest.
    Sha3_512,
    /// SHAKE128: an XOF.
    Shake128,
    /// SHAKE256: an XOF.
    Shake256,
}

impl Node {
    /// Every node function, in the order of the spec's table.
    pub const ALL: [Node; 6] = [
        Node::Sha3_224,
        Node::Sha3_256,
        Node::Sha3_384,
        Node::Sha3_512,
        Node::Shake128,
        Node::Shake256,
    ];

    /// The sponge rate r in bytes: 200 − 2·(the security strength in bytes).
    pub const fn rate(self) -> usize {
        match self {
            Node::Sha3_224 => 144,
            Node::Sha3_256 | Node::Shake256 => 136,
            Node::Sha3_384 => 104,
            Node::Sha3_512 => 72,
            Node::Shake128 => 168,
        }
    }

    /// The chaining-value length c in bytes, what every leaf and inner node
    /// of a tree outputs: the digest of SHA3-*, twice the security strength
    /// of SHAKE* (docs/SPEC.md).
    pub const fn chaining_len(self) -> usize {
        match self {
            Node::Sha3_224 => 28,
            Node::Sha3_256 | Node::Shake128 => 32,
            Node::Sha3_384 => 48,
            Node::Sha3_512 | Node::Shake256 => 64,
        }
    }

    /// The byte that follows the message in the sponge: the suffix bits and
    /// pad10*1's first bit, `06` for SHA3-* (`01`), `1F` for SHAKE* (`1111`)
    /// (FIPS 202 §B.2).
    pub const fn domain_byte(self) -> u8 {
        if self.is_xof() { 0x1f } else { 0x06 }
    }

    /// True for SHAKE128 and SHAKE256, whose output length is free.
    pub const fn is_xof(self) -> bool {
        matches!(self, Node::Shake128 | Node::Shake256)
    }
}

/// An LI tree as docs/SPEC.md states it: the node function A, the height H,
/// the degree D, the block size B, the prefix P and the digest length n.
/// [`crate::tree_hash`] takes it as it is; the library's `TreeParams` is what checks
/// such values against the spec's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tree<'a> {
    /// A, the node function.
    pub node: Node,
    /// H: 0 is the plain function of P ‖ F.
    pub height: u32,
    /// D, the number of children of every inner node (unused at H = 0).
    pub degree: u64,
    /// B in bytes: the blocks dealt onto the leaves (unused at H = 0).
    pub block_size: usize,
    /// P, hashed before the file.
    pub prefix: &'a [u8],
    /// n in bytes: A's digest length for SHA3-*, any length for SHAKE*.
    pub output_len: usize,
}

impl Tree<'_> {
    /// L = D^H, the number of leaves.
    ///
    /// # Panics
    /// If D^H does not fit in a `usize`: the reference holds every leaf in
    /// memory.
    pub fn leaf_count(&self) -> usize {
        usize::try_from(self.degree)
            .ok()
            .and_then(|d| d.checked_pow(self.height))
            .expect("L = D^H leaves fit in memory")
    }
}
