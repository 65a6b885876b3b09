//! Check mode's hints: what a line made with other parameters than the
//! command line's implies. An untagged line is checked with the command
//! line's parameters, so a line of another function or height is
//! improperly formatted (another digest length) or FAILED (the same
//! length): these name the parameters that would check it.

use treehash::{Algorithm, Hasher, Params};

/// What a digest of `len` bytes implies where the command line's
/// parameters, `params`, expect another length: the fixed-length function
/// of that length, if there is one (`; SHA3-512's length: -a sha3-512`).
pub(super) fn length_hint(params: &Params, len: usize) -> String {
    let fixed = Algorithm::ALL
        .into_iter()
        .filter(|a| !a.is_xof())
        .find(|a| a.default_output_len() == len);
    match fixed {
        Some(a) if params.function() != treehash::Function::Tree(a) => {
            format!("; {}'s length: -a {}", a.fips_name(), a.name())
        }
        _ => String::new(),
    }
}

/// The parameters of plain SHA-3 or SHAKE of the same function and length
/// as `params` (an LI tree of height H ≥ 1 without a prefix): what sha3sum,
/// OpenSSL and `cksum -a sha3` write, and so what an untagged line that
/// fails under `params` is most often made with.
pub(super) fn plain_of(params: &Params) -> Option<Params> {
    match params {
        Params::Tree(tree) if tree.height() > 0 && !params.keyed() => {
            tree.at_height(0).ok().map(Params::Tree)
        }
        _ => None,
    }
}

/// Whether the file at `name` has `digest` under `plain` (a second read of
/// the file, made only for a line that failed, with --warn).
pub(super) fn matches_plain(hasher: &Hasher, plain: &Params, name: &[u8], digest: &[u8]) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(name));
    hasher
        .hash_path(plain, path, &())
        .is_ok_and(|out| treehash::checkfile::digests_equal(&out.digest, digest))
}

/// The hint, once per run, after an untagged line failed under the
/// parameters of an LI tree of height H ≥ 1 ([`plain_of`]): lines written by
/// other tools (plain SHA-3) fail under them. `None` for other parameters,
/// under which `--check` prints what coreutils prints.
pub(super) fn mismatch_hint(params: &Params) -> Option<String> {
    let plain = plain_of(params)?;
    Some(format!(
        "hint: untagged lines are checked with the command line's parameters, {}; a line \
         made with others fails. A line of plain {} (as sha3sum, openssl and cksum -a sha3 \
         write it) is checked with -H 0; --warn names such lines. --tag lines carry their \
         parameters.",
        params.label(),
        plain.label()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use treehash::TreeParams;

    #[test]
    fn a_length_names_the_function_of_that_length() {
        let tree: Params = TreeParams::default().into();
        assert_eq!(length_hint(&tree, 64), "; SHA3-512's length: -a sha3-512");
        assert_eq!(length_hint(&tree, 28), "; SHA3-224's length: -a sha3-224");
        assert_eq!(length_hint(&tree, 32), "");
        assert_eq!(length_hint(&tree, 20), "");
    }

    #[test]
    fn plain_sha3_is_offered_for_unkeyed_trees_above_height_0() {
        let tree: Params = TreeParams::default().into();
        assert_eq!(plain_of(&tree).unwrap().label(), "SHA3-256");
        assert!(mismatch_hint(&tree).unwrap().contains("plain SHA3-256"));
        let plain = plain_of(&tree).unwrap();
        assert_eq!(plain_of(&plain), None);
        assert_eq!(mismatch_hint(&plain), None);
        let keyed = TreeParams::with_options(Algorithm::Sha3_256, 2, 4, None, vec![1], None);
        assert_eq!(plain_of(&keyed.unwrap().into()), None);
    }
}
