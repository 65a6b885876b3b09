//! Opening an input: regular files are memory-mapped; everything that cannot
//! be mapped (pipes, terminals, character devices, files that report size 0
//! such as those of /proc) is read as a stream.

use std::fs::{File, Metadata};
use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::SystemTime;

use memmap2::{Advice, Mmap};

use crate::error::HashError;

/// The name that means standard input.
pub const STDIN_NAME: &str = "-";

/// An opened input, ready to be hashed.
pub enum Source {
    /// A regular file, mapped read-only.
    Mapped(MappedFile),
    /// Bytes read in order until the end, in constant memory.
    Stream(File),
}

impl Source {
    /// Opens `name`: a path, or `-` for standard input (which is mapped too
    /// when it is a redirected regular file).
    pub fn open(name: &Path) -> io::Result<Source> {
        let file = if name.as_os_str() == STDIN_NAME {
            File::from(io::stdin().as_fd().try_clone_to_owned()?)
        } else {
            File::open(name)?
        };
        Self::from_file(file)
    }

    /// Classifies an open file: mapped when it is a regular file with bytes.
    pub fn from_file(file: File) -> io::Result<Source> {
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        if !meta.is_file() || meta.len() == 0 {
            return Ok(Source::Stream(file));
        }
        // SAFETY: the mapping is read-only and private to this process. If
        // another process changes the file meanwhile, the digest is refused by
        // `MappedFile::check_unchanged`; if it shrinks the file, the kernel
        // sends SIGBUS, which the command-line tool turns into an error message.
        match unsafe { Mmap::map(&file) } {
            Ok(map) => {
                // Read-ahead helps a file that is not in the page cache yet.
                let _ = map.advise(Advice::Sequential);
                let stamp = Stamp::of(&meta);
                Ok(Source::Mapped(MappedFile { file, map, stamp }))
            }
            // Some file systems cannot map: read those instead.
            Err(_) => Ok(Source::Stream(file)),
        }
    }

    /// The input's size when known in advance (for the progress bar).
    pub fn known_len(&self) -> Option<u64> {
        match self {
            Source::Mapped(m) => Some(m.bytes().len() as u64),
            Source::Stream(_) => None,
        }
    }
}

/// A regular file mapped into memory, with the size and modification time it
/// had when it was opened.
pub struct MappedFile {
    file: File,
    map: Mmap,
    stamp: Stamp,
}

impl MappedFile {
    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.map
    }

    /// The open file behind the mapping.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// An error if the file's size or modification time is no longer what it
    /// was when it was opened: its digest would describe no version of it.
    pub fn check_unchanged(&self) -> Result<(), HashError> {
        let now = Stamp::of(&self.file.metadata()?);
        if now.len != self.stamp.len {
            return Err(HashError::Changed(format!(
                "size {} became {}",
                self.stamp.len, now.len
            )));
        }
        if now.modified != self.stamp.modified {
            return Err(HashError::Changed("modification time moved".into()));
        }
        Ok(())
    }
}

/// What tells us that a file was written to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(meta: &Metadata) -> Stamp {
        Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn mapped(path: &Path) -> MappedFile {
        match Source::open(path).unwrap() {
            Source::Mapped(m) => m,
            Source::Stream(_) => panic!("a regular file with bytes is mapped"),
        }
    }

    #[test]
    fn a_file_that_grows_or_is_touched_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 10_000]).unwrap();

        let m = mapped(&path);
        assert!(m.check_unchanged().is_ok());
        File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_len(20_000)
            .unwrap();
        assert!(matches!(m.check_unchanged(), Err(HashError::Changed(_))));

        let m = mapped(&path);
        let later = SystemTime::now() + Duration::from_secs(5);
        File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        assert!(matches!(m.check_unchanged(), Err(HashError::Changed(_))));
    }

    #[test]
    fn empty_and_special_files_are_streams_and_directories_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, b"").unwrap();
        assert!(matches!(Source::open(&empty).unwrap(), Source::Stream(_)));
        assert!(matches!(
            Source::open(Path::new("/dev/null")).unwrap(),
            Source::Stream(_)
        ));
        let err = Source::open(dir.path()).err().unwrap();
        assert_eq!(err.raw_os_error(), Some(libc::EISDIR));
    }
}
