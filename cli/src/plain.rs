//! Plain SHA-3 / SHAKE of prefix ‖ file, computed with RustCrypto's `sha3`
//! and `shake` crates directly and read in 1 MiB pieces on one thread.
//!
//! This is the independent check that `--verify` and `bench` hold the H = 0
//! digest of a backend against: it shares no code with the tree backends
//! (no sponge wrapper, no message splitting), so that a fault there cannot
//! hide itself by appearing on both sides of the comparison.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use sha3::Digest;
use shake::{ExtendableOutput, Update, XofReader};
use treehash::{Algorithm, StandardParams, TreeParams};
use treehash_reference::{StandardArgs, standard_digest};

/// Bytes read per call.
const PIECE: usize = 1 << 20;

/// `params.output_len()` bytes of the plain FIPS 202 function of
/// `params.prefix()` followed by the file at `path` (the tree's height,
/// degree and block size play no part).
pub fn digest_of_file(params: &TreeParams, path: &Path) -> io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    let prefix = params.prefix();
    let n = params.output_len();
    match params.algorithm() {
        Algorithm::Sha3_224 => fixed::<sha3::Sha3_224>(prefix, &mut file),
        Algorithm::Sha3_256 => fixed::<sha3::Sha3_256>(prefix, &mut file),
        Algorithm::Sha3_384 => fixed::<sha3::Sha3_384>(prefix, &mut file),
        Algorithm::Sha3_512 => fixed::<sha3::Sha3_512>(prefix, &mut file),
        Algorithm::Shake128 => xof::<shake::Shake128>(prefix, &mut file, n),
        Algorithm::Shake256 => xof::<shake::Shake256>(prefix, &mut file, n),
    }
}

/// The standard function `params` of the file at `path`, by the project's
/// reference code (the `treehash-reference` crate), which takes the whole
/// message in memory: the independent check `--verify` holds a backend's
/// digest to.
pub fn reference_of_file(params: &StandardParams, path: &Path) -> io::Result<Vec<u8>> {
    let message = std::fs::read(path)?;
    let name = params.standard().standard_name();
    let args = StandardArgs {
        customization: params.customization(),
        block_size: params.block_size(),
        domain: params.domain(),
        output_len: params.output_len(),
    };
    standard_digest(name, &message, args)
        .ok_or_else(|| io::Error::other(format!("the reference has no {name}")))
}

fn fixed<D: Digest>(prefix: &[u8], reader: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut hash = D::new();
    hash.update(prefix);
    each_piece(reader, |piece| hash.update(piece))?;
    Ok(hash.finalize().to_vec())
}

fn xof<X: Default + Update + ExtendableOutput>(
    prefix: &[u8],
    reader: &mut dyn Read,
    output_len: usize,
) -> io::Result<Vec<u8>> {
    let mut hash = X::default();
    hash.update(prefix);
    each_piece(reader, |piece| hash.update(piece))?;
    let mut out = vec![0; output_len];
    hash.finalize_xof().read(&mut out);
    Ok(out)
}

/// Calls `f` with everything `reader` yields, in order, until its end.
fn each_piece(reader: &mut dyn Read, mut f: impl FnMut(&[u8])) -> io::Result<()> {
    let mut buffer = vec![0; PIECE];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => return Ok(()),
            Ok(n) => f(&buffer[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers_with_and_without_a_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc");
        std::fs::write(&path, b"bc").unwrap();
        let keyed =
            TreeParams::with_options(Algorithm::Sha3_256, 0, 4, None, b"a".to_vec(), None).unwrap();
        assert_eq!(
            hex::encode(digest_of_file(&keyed, &path).unwrap()),
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
        );
        std::fs::write(&path, b"abc").unwrap();
        let shake = TreeParams::with_options(Algorithm::Shake128, 5, 4, None, Vec::new(), Some(10))
            .unwrap();
        assert_eq!(
            hex::encode(digest_of_file(&shake, &path).unwrap()),
            "5881092dd818bf5cf8a3"
        );
    }
}
