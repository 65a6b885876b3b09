//! The inputs and the oracle of the integration tests, the library's and
//! the tool's (cli/tests/common/ includes this file): the spec's test
//! input, random bytes, the reference digest of either kind of parameters.

use rand::Rng;
use rand::rngs::StdRng;

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

/// The reference digest of `message` with parameters of either kind.
pub fn reference_digest(params: &treehash::Params, message: &[u8]) -> Vec<u8> {
    use treehash::reference::{kangaroo, parallel_hash, turboshake};
    use treehash::standard::Standard;
    let p = match params {
        treehash::Params::Tree(p) => return treehash::reference::tree_hash(p, message),
        treehash::Params::Standard(p) => p,
    };
    let (c, n) = (p.customization(), p.output_len());
    match p.standard() {
        Standard::Kt128 => kangaroo::kt128(message, c, n),
        Standard::Kt256 => kangaroo::kt256(message, c, n),
        Standard::ParallelHash128 => parallel_hash::parallel_hash128(message, p.block_size(), n, c),
        Standard::ParallelHash256 => parallel_hash::parallel_hash256(message, p.block_size(), n, c),
        Standard::TurboShake128 => turboshake::turboshake128(message, p.domain(), n),
        Standard::TurboShake256 => turboshake::turboshake256(message, p.domain(), n),
        other => unreachable!("{other} has a reference"),
    }
}
