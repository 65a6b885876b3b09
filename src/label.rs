//! Labels: the text beside a digest that records its parameters
//! (docs/SPEC.md, "Labels"), as `--tag`, check lines and parts write them:
//! `SHA3-256`, `SHA3-256-LI(H=8,D=4,B=136)`, `KT128(C=ab01)`,
//! `TurboSHAKE128(D=1F)`. A label carries every parameter but the output
//! length (the length of the hex digest) and the prefix (only whether there
//! is one). The library's API reads labels through [`Params`]
//! (`str::parse`, [`Params::from_label`]); the tool reads check lines and
//! writes parts' labels through [`Label`].

use std::fmt;
use std::str::FromStr;

use crate::function::Params;
use crate::params::{Algorithm, ParamError, TreeParams};
use crate::standard::{Family, Standard, StandardParams};

impl Params {
    /// The parameters a label records (docs/SPEC.md, "Labels"), with the
    /// prefix (key) a keyed label (`,P)`) says was hashed, and the output
    /// length (the function's default where `None`).
    ///
    /// ```
    /// use treehash::Params;
    /// let p = Params::from_label("SHAKE128-LI(H=2,D=4,B=168,P)", b"key", Some(64))?;
    /// assert_eq!((p.prefix(), p.output_len()), (&b"key"[..], 64));
    /// assert_eq!(p.label(), "SHAKE128-LI(H=2,D=4,B=168,P)");
    /// assert!(Params::from_label("SHAKE128-LI(H=2,D=4,B=168,P)", b"", None).is_err());
    /// # Ok::<(), treehash::ParamError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`ParamError::Label`] for text that is no label,
    /// [`ParamError::LabelPrefix`] for a prefix the label does not say
    /// (given to an unkeyed label, or missing for a keyed one), and the
    /// parameters' own errors for values out of range.
    pub fn from_label(
        label: &str,
        prefix: &[u8],
        output_len: Option<usize>,
    ) -> Result<Params, ParamError> {
        let read: Label = label.parse()?;
        let output_len = output_len.unwrap_or(read.default_output_len());
        read.to_params(prefix, output_len)
    }
}

impl FromStr for Params {
    type Err = ParamError;

    /// Reads a label (docs/SPEC.md, "Labels"), as `--tag` writes it, with
    /// the function's default output length: `"KT128".parse()`,
    /// `"SHA3-256-LI(H=8,D=4,B=136)".parse()`. A keyed label needs its key:
    /// [`Params::from_label`].
    fn from_str(s: &str) -> Result<Params, ParamError> {
        Params::from_label(s, &[], None)
    }
}

impl TreeParams {
    /// The label that records these parameters beside a digest.
    pub fn label(&self) -> String {
        TreeLabel::of(self).to_string()
    }
}

impl StandardParams {
    /// The label that records these parameters beside a digest.
    pub fn label(&self) -> String {
        StandardLabel::of(self).to_string()
    }
}

/// A label read from a tagged line: an LI tree's or a standard function's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Label {
    Tree(TreeLabel),
    Standard(StandardLabel),
}

impl Label {
    /// Whether the label says a prefix (key) was hashed (`,P`).
    pub fn keyed(&self) -> bool {
        matches!(self, Label::Tree(l) if l.keyed)
    }

    /// The function's output length when none is asked for.
    pub fn default_output_len(&self) -> usize {
        match self {
            Label::Tree(l) => l.algorithm.default_output_len(),
            Label::Standard(l) => l.standard.default_output_len(),
        }
    }

    /// The parameters the label describes, with `prefix` and `output_len`.
    /// The prefix must be there exactly when the label says one was hashed
    /// (`,P`): [`ParamError::LabelPrefix`] otherwise, the one place this
    /// rule is kept (`Params::from_label`, a check line's label).
    pub fn to_params(&self, prefix: &[u8], output_len: usize) -> Result<Params, ParamError> {
        if self.keyed() == prefix.is_empty() {
            return Err(ParamError::LabelPrefix {
                label: self.to_string(),
                keyed: self.keyed(),
            });
        }
        Ok(match self {
            Label::Tree(l) => Params::Tree(l.to_params(prefix.to_vec(), output_len)?),
            Label::Standard(l) => Params::Standard(l.to_params(output_len)?),
        })
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Label::Tree(l) => l.fmt(f),
            Label::Standard(l) => l.fmt(f),
        }
    }
}

/// A label that could not be read (the text given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unrecognised label '{0}'")]
pub struct LabelError(pub String);

impl From<LabelError> for ParamError {
    fn from(e: LabelError) -> ParamError {
        ParamError::Label(e.0)
    }
}

impl FromStr for Label {
    type Err = LabelError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(label) = s.parse() {
            return Ok(Label::Standard(label));
        }
        s.parse()
            .map(Label::Tree)
            .map_err(|_| LabelError(s.to_string()))
    }
}

/// The parameters a label carries: everything but the output length (the
/// length of the hex digest) and the prefix itself (only whether there is one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeLabel {
    /// A.
    pub algorithm: Algorithm,
    /// H.
    pub height: u32,
    /// `None` at H = 0, where D and B play no part.
    pub degree: Option<u64>,
    /// B; `None` at H = 0.
    pub block_size: Option<usize>,
    /// Made with a prefix (the label says `keyed`, never the prefix).
    pub keyed: bool,
}

impl TreeLabel {
    /// The label of `params`.
    pub fn of(params: &TreeParams) -> TreeLabel {
        let tree = params.height() > 0;
        TreeLabel {
            algorithm: params.algorithm(),
            height: params.height(),
            degree: tree.then_some(params.degree()),
            block_size: tree.then_some(params.block_size()),
            keyed: params.has_prefix(),
        }
    }

    /// Builds the parameters this label describes, with the given prefix and
    /// output length. The prefix must be present exactly when the label says so.
    pub fn to_params(&self, prefix: Vec<u8>, output_len: usize) -> Result<TreeParams, ParamError> {
        TreeParams::with_options(
            self.algorithm,
            self.height,
            self.degree.unwrap_or(TreeParams::DEFAULT_DEGREE),
            self.block_size,
            prefix,
            Some(output_len),
        )
    }
}

impl fmt::Display for TreeLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.algorithm.fips_name();
        match (self.degree, self.block_size) {
            (Some(d), Some(b)) => {
                let p = if self.keyed { ",P" } else { "" };
                write!(f, "{name}-LI(H={},D={d},B={b}{p})", self.height)
            }
            _ if self.keyed => write!(f, "{name}-LI(H=0,P)"),
            _ => f.write_str(name),
        }
    }
}

impl FromStr for TreeLabel {
    type Err = LabelError;

    /// Reads `SHA3-256`, `SHA3-256-LI(H=8,D=4,B=136)`, `…,P)` and `SHA3-256-LI(H=0,P)`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || LabelError(s.to_string());
        let Some((name, rest)) = s.split_once("-LI(") else {
            let algorithm = Algorithm::from_fips_name(s).ok_or_else(bad)?;
            return Ok(TreeLabel {
                algorithm,
                height: 0,
                degree: None,
                block_size: None,
                keyed: false,
            });
        };
        let algorithm = Algorithm::from_fips_name(name).ok_or_else(bad)?;
        let fields = rest.strip_suffix(')').ok_or_else(bad)?;
        let mut parts: Vec<&str> = fields.split(',').collect();
        let keyed = parts.last() == Some(&"P");
        if keyed {
            parts.pop();
        }
        // Plain decimal (docs/SPEC.md): digits only, and no leading zero but in `0` itself.
        let field = |part: Option<&&str>, key: &str| -> Result<u64, LabelError> {
            part.and_then(|p| p.strip_prefix(key))
                .filter(|v| {
                    !v.is_empty()
                        && v.bytes().all(|b| b.is_ascii_digit())
                        && (v.len() == 1 || !v.starts_with('0'))
                })
                .and_then(|v| v.parse().ok())
                .ok_or_else(bad)
        };
        let height = u32::try_from(field(parts.first(), "H=")?).map_err(|_| bad())?;
        let label = match parts.len() {
            1 if height == 0 && keyed => TreeLabel {
                algorithm,
                height,
                degree: None,
                block_size: None,
                keyed,
            },
            3 if height > 0 => TreeLabel {
                algorithm,
                height,
                degree: Some(field(parts.get(1), "D=")?),
                block_size: Some(usize::try_from(field(parts.get(2), "B=")?).map_err(|_| bad())?),
                keyed,
            },
            _ => return Err(bad()),
        };
        Ok(label)
    }
}

/// What a standard function's label records: every parameter but the output
/// length (the length of the hex digest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StandardLabel {
    /// The function.
    pub standard: Standard,
    /// KT's C or ParallelHash's S (empty for TurboSHAKE).
    pub customization: Vec<u8>,
    /// ParallelHash's B.
    pub block_size: Option<usize>,
    /// TurboSHAKE's D.
    pub domain: Option<u8>,
}

impl StandardLabel {
    /// The label of `params`.
    pub fn of(params: &StandardParams) -> StandardLabel {
        let family = params.standard().family();
        StandardLabel {
            standard: params.standard(),
            customization: params.customization().to_vec(),
            block_size: (family == Family::ParallelHash).then_some(params.block_size()),
            domain: (family == Family::TurboShake).then_some(params.domain()),
        }
    }

    /// The parameters this label describes, with the given output length.
    pub fn to_params(&self, output_len: usize) -> Result<StandardParams, ParamError> {
        let mut params = StandardParams::new(self.standard)
            .with_customization(self.customization.clone())?
            .with_output_len(output_len)?;
        if let Some(b) = self.block_size {
            params = params.with_block_size(b)?;
        }
        if let Some(d) = self.domain {
            params = params.with_domain(d)?;
        }
        Ok(params)
    }
}

impl fmt::Display for StandardLabel {
    /// `KT128`, `KT128(C=6162)`, `ParallelHash256(B=8192,S=…)`, `TurboSHAKE128(D=1F)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut fields = Vec::new();
        if let Some(b) = self.block_size {
            fields.push(format!("B={b}"));
        }
        if let Some(d) = self.domain {
            fields.push(format!("D={d:02X}"));
        }
        if !self.customization.is_empty() {
            let key = match self.standard.family() {
                Family::ParallelHash => "S",
                _ => "C",
            };
            fields.push(format!("{key}={}", hex::encode(&self.customization)));
        }
        f.write_str(self.standard.standard_name())?;
        if !fields.is_empty() {
            write!(f, "({})", fields.join(","))?;
        }
        Ok(())
    }
}

impl FromStr for StandardLabel {
    type Err = LabelError;

    /// Reads the labels [`StandardLabel`]'s `Display` writes: names in any
    /// case, B in plain decimal, D in two hex digits, C and S in hex.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || LabelError(s.to_string());
        let (name, fields) = match s.split_once('(') {
            Some((name, rest)) => (name, Some(rest.strip_suffix(')').ok_or_else(bad)?)),
            None => (s, None),
        };
        let standard = Standard::from_name(name).ok_or_else(bad)?;
        let family = standard.family();
        let mut label = StandardLabel {
            standard,
            customization: Vec::new(),
            block_size: None,
            domain: None,
        };
        for field in fields.into_iter().flat_map(|f| f.split(',')) {
            let (key, value) = field.split_once('=').ok_or_else(bad)?;
            match (key, family) {
                ("B", Family::ParallelHash) if label.block_size.is_none() => {
                    let plain = !value.is_empty()
                        && value.bytes().all(|b| b.is_ascii_digit())
                        && !(value.len() > 1 && value.starts_with('0'));
                    label.block_size = Some(
                        plain
                            .then(|| value.parse().ok())
                            .flatten()
                            .ok_or_else(bad)?,
                    );
                }
                ("D", Family::TurboShake) if label.domain.is_none() && value.len() == 2 => {
                    label.domain = Some(u8::from_str_radix(value, 16).map_err(|_| bad())?);
                }
                ("C", Family::Kangaroo) | ("S", Family::ParallelHash)
                    if label.customization.is_empty() && !value.is_empty() =>
                {
                    label.customization = hex::decode(value).map_err(|_| bad())?;
                }
                _ => return Err(bad()),
            }
        }
        // The fields every label of the family carries.
        let complete = match family {
            Family::ParallelHash => label.block_size.is_some(),
            Family::TurboShake => label.domain.is_some(),
            Family::Kangaroo => true,
        };
        if !complete || fields == Some("") {
            return Err(bad());
        }
        Ok(label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_labels_round_trip() {
        let cases = [
            (
                TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap(),
                "SHA3-256",
            ),
            (
                TreeParams::new(Algorithm::Shake128, 2, 4).unwrap(),
                "SHAKE128-LI(H=2,D=4,B=168)",
            ),
            (
                TreeParams::with_options(Algorithm::Sha3_256, 2, 4, None, vec![1], None).unwrap(),
                "SHA3-256-LI(H=2,D=4,B=136,P)",
            ),
            (
                TreeParams::with_options(Algorithm::Sha3_512, 0, 4, None, vec![1], None).unwrap(),
                "SHA3-512-LI(H=0,P)",
            ),
        ];
        for (params, text) in cases {
            assert_eq!(params.label(), text);
            assert_eq!(text.parse::<TreeLabel>().unwrap(), TreeLabel::of(&params));
        }
    }

    #[test]
    fn malformed_tree_labels_are_refused() {
        for bad in [
            "SHA3-255",
            "SHA3-256-LI(H=2,D=4)",
            "SHA3-256-LI(H=0)",
            "SHA3-256-LI(H=0,D=4,B=136)",
            "SHA3-256-LI(H=2,D=4,B=136",
            "SHA3-256-LI(H=2,D=4,B=136,Q)",
            "SHA3-256-LI(H=+2,D=4,B=136)",
            "SHA3-256-LI(H=99999999999,D=4,B=136)",
            "SHA3-256-LI(H=02,D=4,B=136)",
            "SHA3-256-LI(H=2,D=04,B=136)",
            "SHA3-256-LI(H=2,D=4,B=0136)",
            "SHA3-256-LI(H=00,P)",
            "SHA3-256-LI(H=2,D=4,B=00)",
            "MD5",
        ] {
            assert!(bad.parse::<TreeLabel>().is_err(), "{bad}");
        }
    }
    #[test]
    fn standard_labels_round_trip() {
        let kt = StandardParams::new(Standard::Kt256);
        let kt_c = StandardParams::new(Standard::Kt128)
            .with_customization(vec![0xab, 0x01])
            .unwrap();
        let ph = StandardParams::new(Standard::ParallelHash128)
            .with_block_size(12)
            .unwrap()
            .with_customization(b"Parallel Data".to_vec())
            .unwrap();
        let ts = StandardParams::new(Standard::TurboShake128)
            .with_domain(0x06)
            .unwrap();
        let cases = [
            (&kt, "KT256"),
            (&kt_c, "KT128(C=ab01)"),
            (&ph, "ParallelHash128(B=12,S=506172616c6c656c2044617461)"),
            (&ts, "TurboSHAKE128(D=06)"),
        ];
        for (params, text) in cases {
            assert_eq!(params.label(), text);
            let label: StandardLabel = text.parse().unwrap();
            assert_eq!(label, StandardLabel::of(params));
            assert_eq!(&label.to_params(params.output_len()).unwrap(), params);
            let name = params.standard().standard_name();
            let lower = text.replacen(name, &name.to_lowercase(), 1);
            assert_eq!(lower.parse::<StandardLabel>().unwrap(), label);
        }
    }

    #[test]
    fn malformed_standard_labels_are_refused() {
        for bad in [
            "KT129",
            "KT128()",
            "KT128(C=)",
            "KT128(C=zz)",
            "KT128(S=00)",
            "KT128(C=00,C=01)",
            "KT128(C=00",
            "ParallelHash128",
            "ParallelHash128(B=08)",
            "ParallelHash128(B=+8)",
            "ParallelHash128(S=00)",
            "TurboSHAKE128",
            "TurboSHAKE128(D=1)",
            "TurboSHAKE128(D=1F,C=00)",
        ] {
            assert!(bad.parse::<StandardLabel>().is_err(), "{bad}");
        }
    }

    #[test]
    fn labels_of_both_kinds_are_read() {
        for text in [
            "SHA3-256",
            "SHA3-256-LI(H=8,D=4,B=136)",
            "KT128",
            "TurboSHAKE256(D=1F)",
        ] {
            assert_eq!(text.parse::<Label>().unwrap().to_string(), text);
        }
        assert!("MD5".parse::<Label>().is_err());
    }

    #[test]
    fn params_read_labels_with_their_key_and_length() {
        let kt: Params = "KT128(C=ab01)".parse().unwrap();
        let want = StandardParams::new(Standard::Kt128)
            .with_customization(vec![0xab, 0x01])
            .unwrap();
        assert_eq!(kt, Params::Standard(want));
        let tree: Params = "SHA3-256-LI(H=2,D=4,B=136)".parse().unwrap();
        assert_eq!(
            tree,
            Params::Tree(TreeParams::new(Algorithm::Sha3_256, 2, 4).unwrap())
        );
        let keyed = Params::from_label("SHAKE256-LI(H=0,P)", b"k", Some(10)).unwrap();
        let want =
            TreeParams::with_options(Algorithm::Shake256, 0, 4, None, b"k".to_vec(), Some(10));
        assert_eq!(keyed, Params::Tree(want.unwrap()));
        assert_eq!(
            "SHAKE256-LI(H=0,P)"
                .parse::<Params>()
                .unwrap_err()
                .to_string(),
            "label 'SHAKE256-LI(H=0,P)' says a prefix (key) was hashed: give the prefix"
        );
        assert_eq!(
            Params::from_label("SHA3-256", b"k", None)
                .unwrap_err()
                .to_string(),
            "label 'SHA3-256' says no prefix was hashed, but one was given"
        );
        assert_eq!(
            "MD5".parse::<Params>(),
            Err(ParamError::Label("MD5".into()))
        );
        // A label whose values are out of range reads, then its parameters refuse it.
        assert_eq!(
            "SHA3-256-LI(H=2,D=1,B=136)".parse::<Params>(),
            Err(ParamError::Degree(1))
        );
        assert!(Params::from_label("SHA3-256", b"", Some(31)).is_err());
    }
}
