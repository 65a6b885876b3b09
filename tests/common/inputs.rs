//! The inputs and the oracle of the integration tests, the library's and
//! the tool's (cli/tests/common/ includes this file): the spec's test
//! input, random bytes, the reference digest of either kind of parameters,
//! and the one conversion of the library's parameters into the reference
//! crate's description of a tree.

use rand::Rng;
use rand::rngs::StdRng;
use treehash::{Algorithm, TreeParams};
use treehash_reference::{Node, Tree, tree_hash};

/// The spec's test input: byte k is k mod 251.
pub fn spec_input(len: usize) -> Vec<u8> {
    (0..len).map(|k| (k % 251) as u8).collect()
}

/// `len` random bytes.
pub fn random_bytes(rng: &mut StdRng, len: usize) -> Vec<u8> {
    let mut data = vec![0u8; len];
    rng.fill_bytes(&mut data);
    data
}

/// The reference's node function of `algorithm`.
pub fn reference_node(algorithm: Algorithm) -> Node {
    match algorithm {
        Algorithm::Sha3_224 => Node::Sha3_224,
        Algorithm::Sha3_256 => Node::Sha3_256,
        Algorithm::Sha3_384 => Node::Sha3_384,
        Algorithm::Sha3_512 => Node::Sha3_512,
        Algorithm::Shake128 => Node::Shake128,
        Algorithm::Shake256 => Node::Shake256,
    }
}

/// The tree of `params` as the reference takes it, for
/// `treehash_reference::tree_hash`: the reference crate depends on no part
/// of the library, and describes a tree by its own plain values.
pub fn reference_tree(params: &TreeParams) -> Tree<'_> {
    Tree {
        node: reference_node(params.algorithm()),
        height: params.height(),
        degree: params.degree(),
        block_size: params.block_size(),
        prefix: params.prefix(),
        output_len: params.output_len(),
    }
}

/// The reference digest of `message` with parameters of either kind.
pub fn reference_digest(params: &treehash::Params, message: &[u8]) -> Vec<u8> {
    let p = match params {
        treehash::Params::Tree(p) => return tree_hash(&reference_tree(p), message),
        treehash::Params::Standard(p) => p,
    };
    reference_standard(p, message)
}

/// The reference digest of `message` under the standard function `params`.
pub fn reference_standard(params: &treehash::StandardParams, message: &[u8]) -> Vec<u8> {
    let name = params.standard().standard_name();
    let args = treehash_reference::StandardArgs {
        customization: params.customization(),
        block_size: params.block_size(),
        domain: params.domain(),
        output_len: params.output_len(),
    };
    treehash_reference::standard_digest(name, message, args)
        .unwrap_or_else(|| panic!("the reference has {name}"))
}
