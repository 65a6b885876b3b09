//! The errors of hashing one input. Parameter errors come earlier
//! ([`ParamError`](crate::ParamError)), before any input is read.

use std::io;

/// Why an input got no digest.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HashError {
    /// Opening, mapping or reading the input failed.
    #[error("{}", io_reason(.0))]
    Io(#[from] io::Error),
    /// Reading the input failed part-way.
    #[error("read error at byte {offset}: {}", io_reason(.source))]
    ReadAt { offset: u64, source: io::Error },
    /// The file changed while it was hashed: its size, modification time,
    /// change time or inode moved (`input::Stamp`).
    #[error("the file changed while it was being hashed ({0}); no digest")]
    Changed(String),
    /// The GPU backend could not start or failed.
    #[error("GPU: {0}")]
    Gpu(String),
    /// Parameters out of range (normally caught before any input is read).
    #[error(transparent)]
    Params(#[from] crate::params::ParamError),
    /// A CPU code path was asked for that this CPU cannot run.
    #[error("the {path} CPU path needs {feature}, which this CPU lacks")]
    CpuFeature {
        /// The path's name (`CpuPath::name`).
        path: &'static str,
        feature: &'static str,
    },
    /// The system refused a thread that hashing this input needs (a limit
    /// on processes), with the reason.
    #[error("{0}")]
    Threads(String),
    /// A bug in treehash: one part of it broke its contract with another,
    /// or a thread of its own panicked. Never the input's fault, never a
    /// GPU's failure: nothing is redone elsewhere, and no digest is made.
    #[error("internal error (a bug in treehash, please report it): {0}")]
    Internal(String),
}

/// The reason of an I/O error as coreutils prints it: "No such file or
/// directory", without Rust's " (os error 2)".
pub fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_errors_read_like_coreutils() {
        let e = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(HashError::from(e).to_string(), "No such file or directory");
        let custom = io::Error::other("short read");
        assert_eq!(io_reason(&custom), "short read");
    }

    #[test]
    fn an_internal_error_says_it_is_a_bug() {
        let e = HashError::Internal("no engine owns a leaf".into());
        assert_eq!(
            e.to_string(),
            "internal error (a bug in treehash, please report it): no engine owns a leaf"
        );
    }
}
