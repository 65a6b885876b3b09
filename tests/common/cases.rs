//! Tables of parameters of both kinds, LI trees and standard functions,
//! with the input lengths at their boundaries: the one list of cases that
//! the engines are checked on, on the CPU (tests/differential.rs) and on
//! the GPU (tests/gpu.rs).

use treehash::standard::{Family, Standard, StandardParams};
use treehash::{Algorithm, Params, TreeParams};

/// One function's parameters and the input lengths to hash under them.
pub struct Case {
    pub params: Params,
    pub lens: Vec<usize>,
}

/// The rate of the function's sponge, in bytes.
pub fn rate(params: &Params) -> usize {
    match params {
        Params::Tree(p) => p.algorithm().rate(),
        Params::Standard(p) => p.standard().rate(),
    }
}

/// The length at which the input wraps round the engine's units: an LI
/// tree's stripe (a block for every leaf), a standard function's chunk
/// (KT's 8192 bytes, ParallelHash's B; TurboSHAKE, which has none, is read
/// in pieces of 8192).
pub fn unit_len(params: &Params) -> usize {
    match params {
        Params::Tree(p) => p.stripe_len() as usize,
        Params::Standard(p) => p.block_size(),
    }
}

/// Every standard function with its defaults, and with the options it
/// takes: KT's C short, of 255 bytes and longer than a chunk (9000 bytes),
/// with output lengths shorter than a word; ParallelHash's B whole words or
/// not (1, 7, 13, 135, 136, 137, 1000) with S or without, and an output
/// longer than a rate; TurboSHAKE's D at both ends and SHAKE's, and a long
/// output.
pub fn standard_cases() -> Vec<StandardParams> {
    let mut cases = Vec::new();
    for standard in Standard::ALL {
        let base = StandardParams::new(standard);
        cases.push(base.clone());
        match standard.family() {
            Family::Kangaroo => {
                for c in [
                    &b"C"[..],
                    &[0x5a; 255],
                    b"a customization string",
                    &[0x5a; 9000],
                ] {
                    let p = base.clone().with_customization(c.to_vec()).unwrap();
                    cases.push(p.with_output_len(7).unwrap());
                }
            }
            Family::ParallelHash => {
                for (b, s) in [
                    (1usize, &b""[..]),
                    (7, b"S"),
                    (13, b""),
                    (135, b"S"),
                    (136, b""),
                    (137, b"Parallel Data"),
                    (1000, b""),
                ] {
                    let p = base.clone().with_block_size(b).unwrap();
                    cases.push(p.with_customization(s.to_vec()).unwrap());
                }
                cases.push(base.clone().with_output_len(300).unwrap());
            }
            Family::TurboShake => {
                for d in [0x01, 0x06, 0x7f] {
                    cases.push(base.clone().with_domain(d).unwrap());
                }
                cases.push(base.clone().with_output_len(500).unwrap());
            }
            // `Family` may grow: a new family needs cases of its options.
            other => panic!("no cases for the options of {other:?}"),
        }
    }
    cases
}

/// The lengths at a function's boundaries: 0, 1, the rate ± 1, `n` units ±
/// 1 for each `n` of `multiples` (a unit: [`unit_len`]), three units and a
/// rate and one byte more, and a large input (300,001 bytes).
pub fn edge_lens(params: &Params, multiples: &[usize]) -> Vec<usize> {
    let (r, u) = (rate(params), unit_len(params));
    let mut lens = vec![0, 1, r - 1, r, r + 1, 3 * u + r + 1, 300_001];
    for n in multiples {
        lens.extend([n * u - 1, n * u, n * u + 1]);
    }
    lens.sort_unstable();
    lens.dedup();
    lens
}

/// Every function at its boundaries ([`edge_lens`]): each LI function in
/// trees of 4, 16 and 27 leaves with B the rate or twice it, and every
/// case of [`standard_cases`].
pub fn edge_cases(multiples: &[usize]) -> Vec<Case> {
    let mut params: Vec<Params> = Vec::new();
    for algorithm in Algorithm::ALL {
        let rate = algorithm.rate();
        for (height, degree, block_size) in [(1, 4, rate), (2, 4, rate), (3, 3, 2 * rate)] {
            let tree =
                TreeParams::with_options(algorithm, height, degree, Some(block_size), vec![], None)
                    .unwrap();
            params.push(tree.into());
        }
    }
    params.extend(standard_cases().into_iter().map(Params::from));
    params
        .into_iter()
        .map(|params| {
            let lens = edge_lens(&params, multiples);
            Case { params, lens }
        })
        .collect()
}

/// Inputs to read from files (in several pieces) and as sequential inputs:
/// LI trees of one leaf to 65,536 (H = 8) and of degree 64, and every case
/// of [`standard_cases`]; each at 0 bytes, a piece of 8192 ± 1, five pieces
/// or units and 17 bytes, and 300,001 bytes, and the trees at a length of
/// their own too (up to 5 MB).
pub fn file_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let lens = |params: &Params, own: &[usize]| {
        let mut lens = vec![0, 8191, 8193, 5 * 8192 + 17, 5 * unit_len(params) + 17];
        lens.extend([300_001].iter().chain(own));
        lens.retain(|&len| len <= 6_000_000);
        lens.sort_unstable();
        lens.dedup();
        lens
    };
    for (height, degree, own) in [
        (0, 4, 100_003),
        (4, 4, 1_000_000),
        (8, 4, 5_000_001),
        (2, 64, 0),
    ] {
        let params = TreeParams::new(Algorithm::Sha3_256, height, degree)
            .unwrap()
            .into();
        let lens = lens(&params, &[own]);
        cases.push(Case { params, lens });
    }
    for params in standard_cases() {
        let params = params.into();
        let lens = lens(&params, &[]);
        cases.push(Case { params, lens });
    }
    cases
}
