//! What a bench's digests are held to: plain SHA-3 from the `sha3` crate
//! at height 0, the reference implementation of the standard functions, and
//! each backend's digests against them, file by file.

use super::*;

/// The independent digests a function's are held to: each file's, or none
/// where the file was not checked.
pub(super) struct Expected {
    pub(super) against: String,
    pub(super) digests: Vec<Option<Vec<u8>>>,
    /// Why some files are not checked.
    pub(super) note: Option<String>,
}

/// The backend's `digests` of `function` (or why there are none) against
/// the independent ones, file by file.
pub(super) fn verify(
    backend: &str,
    function: &Params,
    expected: &Expected,
    inputs: &Inputs,
    digests: Result<Vec<Vec<u8>>, String>,
) -> Verification {
    let one = |digests: &[Option<Vec<u8>>]| match digests {
        [Some(d)] => Some(hex::encode(d)),
        _ => None,
    };
    let mut v = Verification {
        backend: backend.to_string(),
        function: function.function().name().to_string(),
        height: match function {
            Params::Tree(_) => Some(0),
            Params::Standard(_) => None,
        },
        against: expected.against.clone(),
        verdict: "SKIPPED".to_string(),
        files_checked: 0,
        files_failed: 0,
        digest: None,
        expected: one(&expected.digests),
        failed_file: None,
        note: expected.note.clone(),
    };
    let digests = match digests {
        Ok(digests) => digests,
        Err(why) => {
            v.note = Some(why);
            return v;
        }
    };
    if let [digest] = digests.as_slice() {
        v.digest = Some(hex::encode(digest));
    }
    let pairs = digests.iter().zip(&expected.digests).zip(inputs.paths());
    for ((got, want), path) in pairs {
        let Some(want) = want else { continue };
        v.files_checked += 1;
        if got != want {
            v.files_failed += 1;
            if v.failed_file.is_none() {
                v.failed_file = Some(path.display().to_string());
                v.digest = Some(hex::encode(got));
                v.expected = Some(hex::encode(want));
            }
        }
    }
    v.verdict = if v.files_failed > 0 {
        "FAIL"
    } else if v.files_checked > 0 {
        "PASS"
    } else {
        "SKIPPED"
    }
    .to_string();
    v
}

/// Plain SHA-3 / SHAKE (one sponge) of prefix ‖ file ([`plain`]) for each
/// file, and the spread of `runs` of them all.
pub(super) fn plain_digests(
    params: &TreeParams,
    inputs: &Inputs,
    runs: usize,
) -> Result<(Vec<Vec<u8>>, Spread), BenchError> {
    let mut times = Vec::with_capacity(runs);
    let mut digests = Vec::new();
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        digests = inputs
            .paths()
            .iter()
            .map(|path| plain::digest_of_file(params, path).map_err(|e| BenchError::of(path, e)))
            .collect::<Result<_, _>>()?;
        times.push(start.elapsed().as_secs_f64());
    }
    Ok((digests, Spread::of(&mut times)))
}

/// The standard function of each file by the reference code, for the
/// files of at most [`REFERENCE_MAX_BYTES`].
pub(super) fn reference_digests(
    params: &StandardParams,
    inputs: &Inputs,
) -> Result<Expected, BenchError> {
    let mut digests = Vec::with_capacity(inputs.count());
    let mut too_long = 0;
    for (path, &size) in inputs.paths().iter().zip(inputs.sizes()) {
        if size > REFERENCE_MAX_BYTES {
            too_long += 1;
            digests.push(None);
            continue;
        }
        let digest = plain::reference_of_file(params, path).map_err(|e| BenchError::of(path, e))?;
        digests.push(Some(digest));
    }
    let gib = REFERENCE_MAX_BYTES >> 30;
    let note = match (too_long, inputs.is_list()) {
        (0, _) => None,
        (_, false) => Some(format!(
            "not checked: the file is over {gib} GiB, and the reference code reads a whole \
             file into memory"
        )),
        (n, true) => Some(format!(
            "{n} file(s) over {gib} GiB not checked: the reference code reads a whole file \
             into memory"
        )),
    };
    Ok(Expected {
        against: format!(
            "{} by the reference code",
            params.standard().standard_name()
        ),
        digests,
        note,
    })
}

/// The one file's digest in hex; none for a list.
pub(super) fn single_hex(digests: &[Vec<u8>]) -> Option<String> {
    match digests {
        [digest] => Some(hex::encode(digest)),
        _ => None,
    }
}
