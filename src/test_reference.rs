//! The reference implementation's digests of the library's parameters, for
//! the unit tests.
//!
//! The reference is the `treehash-reference` crate, a dev-dependency: it
//! depends on no part of the library (so that the unit tests link one
//! treehash, the one under test), describes a tree by its own plain
//! [`Tree`] and [`Node`], and names a standard function by its name. The
//! conversion from [`TreeParams`], [`Algorithm`] and `StandardParams` is
//! here, once for the unit tests; `tests/common/inputs.rs` holds the
//! integration tests' and `cli/src/plain.rs` the tool's.

use treehash_reference::{Node, StandardArgs, Tree};

use crate::Params;
use crate::params::{Algorithm, TreeParams};
use crate::standard::StandardParams;

/// The reference's node function of `algorithm`.
pub(crate) fn node(algorithm: Algorithm) -> Node {
    match algorithm {
        Algorithm::Sha3_224 => Node::Sha3_224,
        Algorithm::Sha3_256 => Node::Sha3_256,
        Algorithm::Sha3_384 => Node::Sha3_384,
        Algorithm::Sha3_512 => Node::Sha3_512,
        Algorithm::Shake128 => Node::Shake128,
        Algorithm::Shake256 => Node::Shake256,
    }
}

/// The tree of `params`, for `treehash_reference::tree_hash`.
pub(crate) fn tree(params: &TreeParams) -> Tree<'_> {
    Tree {
        node: node(params.algorithm()),
        height: params.height(),
        degree: params.degree(),
        block_size: params.block_size(),
        prefix: params.prefix(),
        output_len: params.output_len(),
    }
}

/// The reference's digest of `message` under the standard function `params`.
pub(crate) fn standard(params: &StandardParams, message: &[u8]) -> Vec<u8> {
    let name = params.standard().standard_name();
    let args = StandardArgs {
        customization: params.customization(),
        block_size: params.block_size(),
        domain: params.domain(),
        output_len: params.output_len(),
    };
    treehash_reference::standard_digest(name, message, args)
        .unwrap_or_else(|| panic!("the reference has {name}"))
}

/// The reference's digest of `message` under `params`, of either kind.
pub(crate) fn digest(params: &Params, message: &[u8]) -> Vec<u8> {
    match params {
        Params::Tree(p) => treehash_reference::tree_hash(&tree(p), message),
        Params::Standard(p) => standard(p, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference states FIPS 202's numbers apart from `params.rs`: the
    /// two tables agree for every function, and the leaf count is L = D^H.
    #[test]
    fn the_references_tables_are_the_librarys() {
        for a in Algorithm::ALL {
            let n = node(a);
            assert_eq!(n.rate(), a.rate(), "{a}");
            assert_eq!(n.chaining_len(), a.chaining_len(), "{a}");
            assert_eq!(n.domain_byte(), a.domain_byte(), "{a}");
            assert_eq!(n.is_xof(), a.is_xof(), "{a}");
        }
        let params =
            TreeParams::with_options(Algorithm::Shake128, 3, 5, None, vec![9], Some(40)).unwrap();
        let t = tree(&params);
        assert_eq!(t.leaf_count() as u64, params.leaf_count());
        assert_eq!(
            (t.prefix, t.output_len, t.block_size),
            (&[9u8][..], 40, 168)
        );
    }
}
