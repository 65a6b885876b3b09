//! The one place that chooses a backend, and the entry points that hash a
//! file, a byte slice or a reader with it.

use std::fmt;
use std::io::Read;
use std::path::Path;
use std::time::Instant;

use crate::cpu::CpuBackend;
use crate::error::HashError;
use crate::input::Source;
use crate::params::TreeParams;
use crate::progress::{NoProgress, Progress};
use crate::timings::{Timings, timed};

/// Which backend the caller asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// The GPU when one is present and the input is worth it, else the CPU.
    #[default]
    Auto,
    /// The CPU backend.
    Cpu,
}

/// The backend that computed a digest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendUsed {
    Cpu,
}

impl fmt::Display for BackendUsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BackendUsed::Cpu => "cpu",
        })
    }
}

/// How a [`Hasher`] is set up.
#[derive(Clone, Debug, Default)]
pub struct HasherOptions {
    pub backend: BackendChoice,
    /// CPU worker threads; `None` means one per core.
    pub threads: Option<usize>,
    /// Bytes of input per piece handed to a backend; `None` for the tuned
    /// default. Small values make tests cross piece boundaries often.
    pub piece_bytes: Option<usize>,
}

/// A digest and how it was made.
#[derive(Clone, Debug)]
pub struct HashOutput {
    /// The digest, `params.output_len()` bytes.
    pub digest: Vec<u8>,
    /// Bytes of input hashed (the prefix not counted).
    pub bytes: u64,
    pub backend: BackendUsed,
    pub timings: Timings,
}

/// Hashes inputs with the backend chosen once, at construction. Keep one for
/// the whole process: it owns the worker threads (and the GPU context).
///
/// ```
/// use treehash::{Algorithm, Hasher, HasherOptions, TreeParams};
/// let hasher = Hasher::new(HasherOptions::default()).unwrap();
/// let params = TreeParams::new(Algorithm::Sha3_256, 0, 4).unwrap();
/// let out = hasher.hash_bytes(&params, b"abc").unwrap();
/// // At height 0 the tree digest is plain SHA3-256.
/// assert_eq!(
///     hex::encode(out.digest),
///     "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"
/// );
/// ```
pub struct Hasher {
    cpu: CpuBackend,
}

impl Hasher {
    pub fn new(options: HasherOptions) -> Result<Hasher, HashError> {
        let cpu = CpuBackend::new(options.threads, options.piece_bytes)?;
        Ok(Hasher { cpu })
    }

    /// The digest of a byte slice.
    pub fn hash_bytes(&self, params: &TreeParams, data: &[u8]) -> Result<HashOutput, HashError> {
        self.hash_slice_with(params, data, &NoProgress)
    }

    /// The digest of everything `reader` yields, read in pieces (constant memory).
    pub fn hash_reader(
        &self,
        params: &TreeParams,
        reader: &mut dyn Read,
    ) -> Result<HashOutput, HashError> {
        self.hash_stream_with(params, reader, &NoProgress)
    }

    /// The digest of a file (`-` is standard input), mapped when it can be,
    /// with `progress` told the bytes done as they are hashed. A file whose
    /// size or modification time changes meanwhile gets an error, not a digest.
    pub fn hash_path(
        &self,
        params: &TreeParams,
        path: &Path,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut open_time = Default::default();
        let source = timed(&mut open_time, || Source::open(path))?;
        progress.start(source.known_len());
        let mut out = self.hash_source(params, source, progress)?;
        out.timings.open = open_time;
        out.timings.total = start.elapsed();
        Ok(out)
    }

    /// The digest of an opened input.
    pub fn hash_source(
        &self,
        params: &TreeParams,
        source: Source,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        match source {
            Source::Mapped(file) => {
                let out = self.hash_slice_with(params, file.bytes(), progress)?;
                file.check_unchanged()?;
                Ok(out)
            }
            Source::Stream(mut file) => self.hash_stream_with(params, &mut file, progress),
        }
    }

    fn hash_slice_with(
        &self,
        params: &TreeParams,
        data: &[u8],
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let digest = self.cpu.hash_slice(params, data, progress, &mut timings)?;
        timings.total = start.elapsed();
        Ok(HashOutput {
            digest,
            bytes: data.len() as u64,
            backend: BackendUsed::Cpu,
            timings,
        })
    }

    fn hash_stream_with(
        &self,
        params: &TreeParams,
        reader: &mut dyn Read,
        progress: &dyn Progress,
    ) -> Result<HashOutput, HashError> {
        let start = Instant::now();
        let mut timings = Timings::default();
        let (digest, bytes) = self
            .cpu
            .hash_stream(params, reader, progress, &mut timings)?;
        timings.total = start.elapsed();
        Ok(HashOutput {
            digest,
            bytes,
            backend: BackendUsed::Cpu,
            timings,
        })
    }
}
