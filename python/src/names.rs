//! The names a hash object answers to. `algorithm` is a function's name
//! (`sha3-256`, `KT128`: its defaults), hashlib's name of a FIPS 202
//! function (`sha3_256`, `shake_128`: plain, H = 0), or a hash object's
//! `name` (a label, `SHA3-256-LI(H=8,D=4,B=136)`, `KT128(C=6162)`: the
//! parameters it records). A hash object's `name` is hashlib's name at
//! H = 0 without a prefix, else the label `treehash --tag` writes, so that
//! `new(h.name)` rebuilds the function and parameters of `h` (the prefix,
//! a key, is never in a name: a keyed name asks for it); and how digests
//! of other lengths than the one configured are made (`Output`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use treehash::label::Label;
use treehash::standard::Family;
use treehash::{Algorithm, Function, Params};

/// hashlib's names of the six FIPS 202 functions.
const HASHLIB_NAMES: [(&str, Algorithm); 6] = [
    ("sha3_224", Algorithm::Sha3_224),
    ("sha3_256", Algorithm::Sha3_256),
    ("sha3_384", Algorithm::Sha3_384),
    ("sha3_512", Algorithm::Sha3_512),
    ("shake_128", Algorithm::Shake128),
    ("shake_256", Algorithm::Shake256),
];

/// hashlib's name of `algorithm`.
fn hashlib_name(algorithm: Algorithm) -> &'static str {
    HASHLIB_NAMES
        .iter()
        .find(|(_, a)| *a == algorithm)
        .map_or("", |(name, _)| name)
}

/// What the `algorithm` argument names.
pub enum Named {
    /// A function by its name: its defaults, any keyword applying.
    Function(Function),
    /// Parameters recorded by a name: hashlib's (H = 0, no prefix) or a
    /// label, with the keywords it fixes.
    Recorded { function: Function, fixed: Fixed },
}

/// The parameters a name records; `None` where it leaves one to the
/// keywords (the output length always: no name holds it).
#[derive(Default)]
pub struct Fixed {
    pub height: Option<u32>,
    pub degree: Option<u64>,
    pub block_size: Option<usize>,
    /// For an LI tree: whether the digest is keyed (`,P`).
    pub keyed: Option<bool>,
    /// For a standard function: KT's C or ParallelHash's S (empty when the
    /// label has none).
    pub customization: Option<Vec<u8>>,
    pub domain: Option<u8>,
}

/// What `name` names: a function's name in any case, hashlib's name of a
/// FIPS 202 function in any case, or a label (with its parentheses: a bare
/// `SHA3-256` is the function, as on the command line, whose default
/// height is 8).
pub fn parse(name: &str) -> PyResult<Named> {
    if let Some(&(_, algorithm)) = HASHLIB_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        let fixed = Fixed {
            height: Some(0),
            keyed: Some(false),
            ..Fixed::default()
        };
        return Ok(Named::Recorded {
            function: Function::Tree(algorithm),
            fixed,
        });
    }
    if let Ok(function) = name.parse::<Function>() {
        return Ok(Named::Function(function));
    }
    match name.parse::<Label>() {
        Ok(Label::Tree(l)) => Ok(Named::Recorded {
            function: Function::Tree(l.algorithm),
            fixed: Fixed {
                height: Some(l.height),
                degree: l.degree,
                block_size: l.block_size,
                keyed: Some(l.keyed),
                ..Fixed::default()
            },
        }),
        Ok(Label::Standard(l)) => Ok(Named::Recorded {
            function: Function::Standard(l.standard),
            fixed: Fixed {
                block_size: l.block_size,
                customization: Some(l.customization),
                domain: l.domain,
                ..Fixed::default()
            },
        }),
        Err(_) => {
            let unknown = treehash::ParamError::UnknownAlgorithm(name.to_string());
            Err(PyValueError::new_err(format!(
                "{unknown}; also hashlib's names sha3_224, sha3_256, sha3_384, sha3_512, \
                 shake_128 and shake_256 (H = 0), and a hash object's name, such as \
                 'SHA3-256-LI(H=8,D=4,B=136)' or 'KT128(C=6162)'"
            )))
        }
    }
}

/// How digests of other lengths than the one configured are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// SHA3-224 … SHA3-512 (and their trees): one length.
    Fixed,
    /// SHAKE (and its trees), KT, TurboSHAKE: a shorter digest is the
    /// start of a longer one.
    Prefix,
    /// ParallelHash: the length is hashed with the input (SP 800-185's
    /// right_encode(L)), so each length is a digest of its own.
    Encoded,
}

/// What a hash object tells of itself, read off its label.
#[derive(Clone, Debug)]
pub struct Naming {
    /// `name`: hashlib's name, or the label.
    pub name: String,
    /// Whether it is one of hashlib's functions (H = 0, no prefix).
    pub hashlib: Option<Algorithm>,
    pub output: Output,
}

impl Naming {
    /// The naming of `params`, whose label is `label`.
    pub fn of_params(params: &Params, label: String) -> Naming {
        match params {
            Params::Tree(p) => {
                let hashlib = (p.height() == 0 && !p.has_prefix()).then_some(p.algorithm());
                Naming {
                    name: hashlib.map_or(label, |a| hashlib_name(a).to_string()),
                    hashlib,
                    output: if p.algorithm().is_xof() {
                        Output::Prefix
                    } else {
                        Output::Fixed
                    },
                }
            }
            Params::Standard(p) => Naming {
                name: label,
                hashlib: None,
                output: match p.standard().family() {
                    Family::ParallelHash => Output::Encoded,
                    _ => Output::Prefix,
                },
            },
        }
    }

    /// The name for a message: a long label (a customization string's
    /// hex) cut to the function's name, `KT128(…)`.
    pub fn short_name(&self) -> String {
        match self.name.split_once('(') {
            Some((function, _)) if self.name.len() > 64 => format!("{function}(…)"),
            _ => self.name.clone(),
        }
    }

    /// The naming of `label` (a label treehash wrote: any other reads as
    /// the label itself, of one length), for a digest whose parameters do
    /// not say it all (a join's, a pickled one's).
    pub fn of(label: &str) -> Naming {
        let mut naming = Naming {
            name: label.to_string(),
            hashlib: None,
            output: Output::Fixed,
        };
        match label.parse::<Label>() {
            Ok(Label::Tree(l)) => {
                if l.height == 0 && !l.keyed {
                    naming.name = hashlib_name(l.algorithm).to_string();
                    naming.hashlib = Some(l.algorithm);
                }
                if l.algorithm.is_xof() {
                    naming.output = Output::Prefix;
                }
            }
            Ok(Label::Standard(l)) => {
                naming.output = match l.standard.family() {
                    Family::ParallelHash => Output::Encoded,
                    _ => Output::Prefix,
                };
            }
            Err(_) => {}
        }
        naming
    }
}
