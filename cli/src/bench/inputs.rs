//! The files a bench hashes, and one hashing of them all: one file by
//! [`Hasher::hash_path`]; a list by [`Hasher::hash_list`], every file side
//! by side, as `treehash FILE...` hashes a list.

use std::fmt;
use std::path::{Path, PathBuf};

use treehash::{BackendUsed, HashError, HashOutput, Hasher, ListInput, Params};

/// An error that ends a bench, with the file it concerns when there is one.
#[derive(Debug)]
pub struct BenchError {
    pub path: Option<PathBuf>,
    pub error: HashError,
}

impl BenchError {
    /// `error`, which concerns the file at `path`.
    pub fn of(path: &Path, error: impl Into<HashError>) -> BenchError {
        BenchError {
            path: Some(path.to_path_buf()),
            error: error.into(),
        }
    }
}

impl From<HashError> for BenchError {
    fn from(error: HashError) -> BenchError {
        BenchError { path: None, error }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}: {}", path.display(), self.error),
            None => self.error.fmt(f),
        }
    }
}

/// The files measured, with their lengths when the bench began.
#[derive(Clone, Debug)]
pub struct Inputs {
    paths: Vec<PathBuf>,
    sizes: Vec<u64>,
}

impl Inputs {
    /// The files at `paths` (at least one), each looked up once.
    pub fn look_up(paths: &[PathBuf]) -> Result<Inputs, BenchError> {
        let sizes = paths
            .iter()
            .map(|path| {
                std::fs::metadata(path)
                    .map(|meta| meta.len())
                    .map_err(|e| BenchError::of(path, e))
            })
            .collect::<Result<_, _>>()?;
        Ok(Inputs {
            paths: paths.to_vec(),
            sizes,
        })
    }

    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// Each file's length, in the list's order.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// How many files: more than one makes a list.
    pub fn count(&self) -> usize {
        self.paths.len()
    }

    pub fn is_list(&self) -> bool {
        self.count() > 1
    }

    /// The bytes of every file together.
    pub fn bytes(&self) -> u64 {
        self.sizes.iter().sum()
    }

    /// The longest file's bytes.
    pub fn largest(&self) -> u64 {
        self.sizes.iter().copied().max().unwrap_or(0)
    }

    /// Hashes every file with `params` on `hasher`: one file as `treehash
    /// FILE` hashes it, a list as `treehash FILE...` does. Any file that
    /// gets no digest ends the bench.
    pub fn hash(&self, hasher: &Hasher, params: &Params) -> Result<Hashed, BenchError> {
        if let [path] = self.paths.as_slice() {
            let out = hasher
                .hash_path(params, path, &())
                .map_err(|e| BenchError::of(path, e))?;
            return Ok(Hashed {
                digests: vec![out.digest.clone()],
                ran_on: out.backend,
                gpu_startup: uses_gpu(out.backend).then_some(out.timings),
                single: Some(out),
            });
        }
        let items = self.paths.iter().map(|path| {
            let input = ListInput {
                params: params.clone(),
                path: path.clone(),
            };
            (path.as_path(), Some(input))
        });
        let mut digests = Vec::with_capacity(self.count());
        let mut ran_on: Option<BackendUsed> = None;
        let mut gpu_startup = None;
        hasher.hash_list(items, &(), |path, result| {
            let out = match result {
                Some(Ok(out)) => out,
                Some(Err(e)) => return Err(BenchError::of(path, e)),
                None => unreachable!("every item holds an input"),
            };
            ran_on = Some(ran_on.map_or(out.backend, |so_far| together(so_far, out.backend)));
            if gpu_startup.is_none() && uses_gpu(out.backend) {
                gpu_startup = Some(out.timings);
            }
            digests.push(out.digest);
            Ok(())
        })?;
        Ok(Hashed {
            digests,
            ran_on: ran_on.expect("a list holds files"),
            gpu_startup,
            single: None,
        })
    }
}

/// What one hashing of the inputs came to.
pub struct Hashed {
    /// Each file's digest, in the list's order.
    pub digests: Vec<Vec<u8>>,
    /// Where the files were hashed: `CpuGpu` for a list some of whose
    /// files went to the CPU and some to a GPU.
    pub ran_on: BackendUsed,
    /// The timings of the first file hashed on a GPU, which carry the GPU's
    /// one-time start-up costs.
    pub gpu_startup: Option<treehash::Timings>,
    /// The one file's whole output (its phases); none for a list.
    pub single: Option<HashOutput>,
}

/// Whether a run had a GPU take part.
pub fn uses_gpu(backend: BackendUsed) -> bool {
    match backend {
        BackendUsed::Gpu | BackendUsed::CpuGpu => true,
        BackendUsed::Cpu => false,
    }
}

/// Where two runs were made, together.
fn together(a: BackendUsed, b: BackendUsed) -> BackendUsed {
    if a == b { a } else { BackendUsed::CpuGpu }
}
