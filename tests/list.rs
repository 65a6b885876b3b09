//! Lists of inputs hashed side by side (`Hasher::hash_list`): each digest is
//! the one the input gets alone, every result comes back in the list's
//! order, a failing input is reported in its place, and a caller that stops
//! the list stops it.

use std::fs;
use std::path::PathBuf;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
mod common;

use treehash::standard::{Standard, StandardParams};
use treehash::{Algorithm, BackendChoice, Hasher, HasherOptions, ListInput, Params, TreeParams};

fn cpu_hasher(piece_bytes: Option<usize>, threads: usize) -> Hasher {
    Hasher::new(
        HasherOptions::default()
            .with_backend(BackendChoice::Cpu)
            .with_piece_bytes(piece_bytes)
            .with_threads(Some(threads)),
    )
    .unwrap()
}

/// What one item of a random list is.
#[derive(Debug)]
enum Kind {
    File(usize),
    Missing,
    Directory,
    NoInput,
}

/// A random list in `dir`: files from empty to several pieces long, with
/// random parameters (H = 0 among them), missing names, directories and
/// items with no input in between.
fn random_list(
    rng: &mut StdRng,
    dir: &std::path::Path,
    count: usize,
    piece: usize,
) -> Vec<(Kind, Option<ListInput>)> {
    let params: [Params; 7] = [
        TreeParams::new(Algorithm::Sha3_256, 8, 4).unwrap().into(),
        TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap().into(),
        TreeParams::new(Algorithm::Shake128, 2, 3).unwrap().into(),
        TreeParams::with_options(Algorithm::Sha3_512, 1, 2, Some(64), b"key".to_vec(), None)
            .unwrap()
            .into(),
        StandardParams::new(Standard::Kt128).into(),
        StandardParams::new(Standard::ParallelHash256)
            .with_block_size(1000)
            .unwrap()
            .into(),
        StandardParams::new(Standard::TurboShake128).into(),
    ];
    (0..count)
        .map(|k| {
            let path = dir.join(format!("item-{k}"));
            let params = params[rng.random_range(0..params.len())].clone();
            let kind = match rng.random_range(0..10) {
                0 => Kind::Missing,
                1 => {
                    fs::create_dir(&path).unwrap();
                    Kind::Directory
                }
                2 => return (Kind::NoInput, None),
                3 => Kind::File(rng.random_range(3 * piece..5 * piece)),
                _ => Kind::File(rng.random_range(0..piece)),
            };
            if let Kind::File(len) = kind {
                let bytes: Vec<u8> = (0..len).map(|_| rng.random()).collect();
                fs::write(&path, bytes).unwrap();
            }
            (kind, Some(ListInput { params, path }))
        })
        .collect()
}

#[test]
fn random_lists_give_each_input_its_own_digest_in_order() {
    let mut rng = StdRng::seed_from_u64(22);
    for (threads, piece) in [(1, 4096), (2, 4096), (4, 1 << 16), (3, 1000)] {
        let dir = tempfile::tempdir().unwrap();
        let hasher = cpu_hasher(Some(piece), threads);
        let list = random_list(&mut rng, dir.path(), 120, piece);
        let mut seen = 0;
        let expected: Vec<Option<Result<Vec<u8>, String>>> = list
            .iter()
            .map(|(_, input)| {
                input.as_ref().map(|i| {
                    hasher
                        .hash_path(&i.params, &i.path, &())
                        .map(|out| out.digest)
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        let items = list.iter().enumerate().map(|(k, (_, i))| (k, i.clone()));
        hasher
            .hash_list(items, &(), |k, result| {
                assert_eq!(k, seen, "results come back in order");
                seen += 1;
                let result = result.map(|r| r.map(|out| out.digest).map_err(|e| e.to_string()));
                assert_eq!(result, expected[k], "item {k}: {:?}", list[k].0);
                if let (Kind::File(_), Some(input)) = &list[k] {
                    let bytes = fs::read(&input.path).unwrap();
                    let want = common::reference_digest(&input.params, &bytes);
                    assert_eq!(result, Some(Ok(want)), "item {k}");
                }
                Ok::<_, ()>(())
            })
            .unwrap();
        assert_eq!(seen, list.len());
    }
}

/// A caller that stops the list (a write that failed) gets its error back,
/// and no item after it is given back.
#[test]
fn a_caller_error_stops_the_list() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..200)
        .map(|k| {
            let path = dir.path().join(format!("f{k}"));
            fs::write(&path, vec![k as u8; k * 10]).unwrap();
            path
        })
        .collect();
    let hasher = cpu_hasher(None, 2);
    let params: Params = TreeParams::default().into();
    let items = paths.iter().enumerate().map(|(k, path)| {
        let input = ListInput {
            params: params.clone(),
            path: path.clone(),
        };
        (k, Some(input))
    });
    let mut given = Vec::new();
    let stopped = hasher.hash_list(items, &(), |k, _| {
        given.push(k);
        if k == 17 { Err("stop") } else { Ok(()) }
    });
    assert_eq!(stopped, Err("stop"));
    assert_eq!(given, (0..=17).collect::<Vec<_>>());
}
