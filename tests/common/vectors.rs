//! The vector files of tests/vectors/, read: the LI vectors (li-v1.json, a
//! copy of shared/vectors/li-v1.json), OpenSSL's plain SHA-3 and SHAKE
//! (fips202-plain.json), and the standards' known answers (rfc9861.json,
//! sp800-185.json); and all of them as one list of known answers for the
//! engines ([`known_answers`]).

use serde::Deserialize;
use treehash::standard::{Standard, StandardParams};
use treehash::{Algorithm, Params, TreeParams};
use treehash_reference::cshake::{cshake128, cshake256};
use treehash_reference::kangaroo::{kt128, kt256};
use treehash_reference::parallel_hash::{
    parallel_hash_xof128, parallel_hash_xof256, parallel_hash128, parallel_hash256,
};
use treehash_reference::turboshake::{turboshake128, turboshake256};

// ------------------------------------------------------------------ li-v1.json

/// One case of `tests/vectors/li-v1.json` (a copy of `shared/vectors/li-v1.json`).
#[derive(Debug, Deserialize)]
pub struct Vector {
    pub input_len: usize,
    pub algo: String,
    pub height: u32,
    pub degree: u64,
    pub block_size: usize,
    pub prefix_hex: String,
    pub length: Option<usize>,
    pub digest: String,
}

impl Vector {
    pub fn params(&self) -> TreeParams {
        let algorithm: Algorithm = self.algo.parse().expect("known algorithm");
        TreeParams::with_options(
            algorithm,
            self.height,
            self.degree,
            Some(self.block_size),
            hex::decode(&self.prefix_hex).expect("hex prefix"),
            self.length,
        )
        .expect("valid parameters")
    }

    pub fn input(&self) -> Vec<u8> {
        super::spec_input(self.input_len)
    }
}

#[derive(Deserialize)]
struct VectorFile {
    cases: Vec<Vector>,
}

pub fn vectors() -> Vec<Vector> {
    let text = include_str!("../vectors/li-v1.json");
    let file: VectorFile = serde_json::from_str(text).expect("vector file parses");
    assert!(file.cases.len() >= 50, "the vector file lost cases");
    file.cases
}

// ---------------------------------------------------------- fips202-plain.json

/// One case of `tests/vectors/fips202-plain.json`: plain SHA-3 / SHAKE of the
/// spec's test input, computed by OpenSSL (through Python's hashlib), not by
/// RustCrypto.
#[derive(Debug, Deserialize)]
pub struct PlainVector {
    pub algo: String,
    pub input_len: usize,
    pub digest: String,
}

impl PlainVector {
    /// The parameters whose H = 0 digest is this plain digest.
    pub fn params(&self) -> TreeParams {
        let algorithm: Algorithm = self.algo.parse().expect("known algorithm");
        TreeParams::with_options(
            algorithm,
            0,
            4,
            None,
            Vec::new(),
            Some(self.digest.len() / 2),
        )
        .expect("valid parameters")
    }
}

#[derive(Deserialize)]
struct PlainFile {
    cases: Vec<PlainVector>,
}

pub fn plain_vectors() -> Vec<PlainVector> {
    let text = include_str!("../vectors/fips202-plain.json");
    let file: PlainFile = serde_json::from_str(text).expect("plain vector file parses");
    assert_eq!(file.cases.len(), 54, "the plain vector file lost cases");
    file.cases
}

// ------------------------------------------------ rfc9861.json, sp800-185.json

/// A byte string as the standards' vector files write it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Bytes {
    Hex(String),
    Ascii(String),
    /// RFC 9861's ptn(n).
    Ptn(usize),
}

impl Bytes {
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Bytes::Hex(h) => hex::decode(h).expect("hex in a vector file"),
            Bytes::Ascii(s) => s.as_bytes().to_vec(),
            Bytes::Ptn(n) => ptn(*n),
        }
    }
}

/// ptn(n), RFC 9861 §5: `00 01 .. FA` repeated and truncated to n bytes, which
/// is the LI vectors' test input (byte k is k mod 251).
fn ptn(n: usize) -> Vec<u8> {
    super::spec_input(n)
}

/// One case of a standard's vector file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// How the source writes this case, to find it there.
    pub as_in_source: Option<String>,
    pub message: Bytes,
    /// C of KT, S of cSHAKE and ParallelHash.
    pub customization: Option<Bytes>,
    /// N of cSHAKE.
    pub function_name: Option<Bytes>,
    /// D of TurboSHAKE, in hex.
    pub domain: Option<String>,
    /// B of ParallelHash, in bytes.
    pub block_size: Option<usize>,
    /// L in bytes.
    pub output_len: usize,
    /// `output` is bytes `skip..output_len` of the output.
    #[serde(default)]
    pub skip: usize,
    pub output: String,
}

impl Case {
    /// The reference's answer for this case of `function`, `skip` bytes
    /// dropped.
    pub fn reference(&self, function: &str) -> Vec<u8> {
        let m = self.message.bytes();
        let l = self.output_len;
        let c = || self.customization.as_ref().map_or(Vec::new(), Bytes::bytes);
        let n = || self.function_name.as_ref().map_or(Vec::new(), Bytes::bytes);
        let d = || {
            let text = self.domain.as_deref().expect("TurboSHAKE needs a domain");
            u8::from_str_radix(text, 16).expect("hex domain byte")
        };
        let b = || self.block_size.expect("ParallelHash needs a block size");
        let out = match function {
            "TurboSHAKE128" => turboshake128(&m, d(), l),
            "TurboSHAKE256" => turboshake256(&m, d(), l),
            "KT128" => kt128(&m, &c(), l),
            "KT256" => kt256(&m, &c(), l),
            "cSHAKE128" => cshake128(&m, l, &n(), &c()),
            "cSHAKE256" => cshake256(&m, l, &n(), &c()),
            "ParallelHash128" => parallel_hash128(&m, b(), l, &c()),
            "ParallelHash256" => parallel_hash256(&m, b(), l, &c()),
            "ParallelHashXOF128" => parallel_hash_xof128(&m, b(), l, &c()),
            "ParallelHashXOF256" => parallel_hash_xof256(&m, b(), l, &c()),
            other => panic!("no reference for {other}"),
        };
        assert_eq!(out.len(), l, "{function} gave the wrong length");
        out[self.skip..].to_vec()
    }

    /// The standard function and parameters this case of `function`
    /// describes, where treehash computes it (not cSHAKE alone, not the XOF
    /// variants).
    pub fn params(&self, function: &str) -> Option<StandardParams> {
        let standard = Standard::from_name(function)?;
        let mut params = StandardParams::new(standard)
            .with_output_len(self.output_len)
            .unwrap();
        if let Some(c) = &self.customization {
            params = params.with_customization(c.bytes()).unwrap();
        }
        if let Some(d) = &self.domain {
            params = params
                .with_domain(u8::from_str_radix(d, 16).unwrap())
                .unwrap();
        }
        if let Some(b) = self.block_size {
            params = params.with_block_size(b).unwrap();
        }
        Some(params)
    }
}

/// The cases of one function from one source.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub function: String,
    pub source: String,
    /// The program that computed the cases, where they are not the
    /// standard's own.
    pub generated_by: Option<String>,
    pub cases: Vec<Case>,
}

/// A standard's vector file.
#[derive(Debug, Deserialize)]
pub struct StandardFile {
    pub source: String,
    pub groups: Vec<Group>,
}

fn load(text: &str) -> StandardFile {
    let file: StandardFile = serde_json::from_str(text).expect("vector file parses");
    assert!(!file.source.is_empty());
    for group in &file.groups {
        assert!(!group.source.is_empty(), "{} has no source", group.function);
    }
    file
}

/// tests/vectors/rfc9861.json: TurboSHAKE, KT128, KT256.
pub fn rfc9861() -> StandardFile {
    load(include_str!("../vectors/rfc9861.json"))
}

/// tests/vectors/sp800-185.json: cSHAKE, ParallelHash and its XOF variants.
pub fn sp800_185() -> StandardFile {
    load(include_str!("../vectors/sp800-185.json"))
}

// ------------------------------------------------------ all of them, as one list

/// One known answer that treehash's engines compute, of either kind: its
/// parameters, message and expected output (bytes `skip..` of the digest,
/// in hex).
#[derive(Debug)]
pub struct KnownAnswer {
    /// The file and the case, for messages.
    pub what: String,
    pub params: Params,
    pub message: Vec<u8>,
    pub skip: usize,
    pub output: String,
}

/// Every known answer of the four vector files that treehash computes: the
/// LI vectors (the wide trees included), OpenSSL's plain SHA-3 and SHAKE
/// as H = 0 trees, and the cases of RFC 9861 and SP 800-185 of the
/// functions treehash has (not cSHAKE alone, not the XOF variants).
pub fn known_answers() -> Vec<KnownAnswer> {
    let mut all = Vec::new();
    for (k, v) in vectors().into_iter().enumerate() {
        all.push(KnownAnswer {
            what: format!("li-v1.json #{k}: {v:?}"),
            params: v.params().into(),
            message: v.input(),
            skip: 0,
            output: v.digest,
        });
    }
    for (k, v) in plain_vectors().into_iter().enumerate() {
        all.push(KnownAnswer {
            what: format!("fips202-plain.json #{k}: {v:?}"),
            params: v.params().into(),
            message: super::spec_input(v.input_len),
            skip: 0,
            output: v.digest,
        });
    }
    for (name, file) in [("rfc9861.json", rfc9861()), ("sp800-185.json", sp800_185())] {
        for group in file.groups {
            for (k, case) in group.cases.into_iter().enumerate() {
                let Some(params) = case.params(&group.function) else {
                    continue;
                };
                all.push(KnownAnswer {
                    what: format!("{name}, {} #{k}: {case:?}", group.function),
                    params: params.into(),
                    message: case.message.bytes(),
                    skip: case.skip,
                    output: case.output,
                });
            }
        }
    }
    all
}
