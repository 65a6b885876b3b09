//! Every file treehash writes goes through here: a part (`treehash part -o`),
//! a bench's chart, and the GPU caches. Nothing is written through a
//! symbolic link that another user could have planted, a device or FIFO is
//! never replaced by a file, and a file is never seen half-written under its
//! name.
//!
//! What [`write()`] does depends on what the path names when it is called:
//! - nothing, or a regular file: a new file is made in the same directory
//!   under an unpredictable name with `O_CREAT | O_EXCL | O_NOFOLLOW`, so
//!   that nothing planted at that name is ever written through; it is
//!   written, synced and renamed onto the path, and removed if any step
//!   fails. A rename replaces a name, never writes into what it named.
//! - a character device (`/dev/null`, a terminal) or a FIFO: written where
//!   it is, opened without `O_CREAT` and with `O_NOFOLLOW`, never replaced.
//! - a symbolic link owned by the effective user or by root (as
//!   `/dev/stdout` is): followed, one link at a time, and what it leads to
//!   is written as above; a regular file at its end is replaced by a new one
//!   under the same name, and the link stays. A link of `/proc` that names a
//!   file this process has open (`/proc/self/fd/1` when standard output is a
//!   pipe) is written in place if that file is a device or FIFO.
//! - a symbolic link owned by anyone else: refused. It may have been planted
//!   in a shared directory to aim the write at another file. This is the
//!   rule of Linux's `fs.protected_symlinks` for sticky directories, applied
//!   in every directory.
//! - a directory, socket or block device: refused.
//!
//! Errors are [`io::Error`]s whose text is one line without the path; the
//! caller names the path.

use std::ffi::OsString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Who may read a file that [`write()`] makes. (A device or FIFO written in
/// place keeps its own permissions.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Mode 0666 less the umask, as `File::create` makes files.
    Shared,
    /// Mode 0600 whatever the umask: a keyed part is as sensitive as its key.
    Owner,
}

impl Access {
    fn mode(self) -> u32 {
        match self {
            Access::Shared => 0o666,
            Access::Owner => 0o600,
        }
    }
}

/// Writes `bytes` to `path` as the [module's rules](self) say: a new file
/// renamed onto a regular file's name, a device or FIFO written in place, a
/// symbolic link of another user, a directory, socket or block device
/// refused.
pub fn write(path: &Path, bytes: &[u8], access: Access) -> io::Result<()> {
    match resolve(path)? {
        Target::Replace(at) => replace(&at, bytes, access.mode()),
        Target::InPlace { at, follow } => write_in_place(&at, follow, bytes),
    }
}

/// Whether [`write()`] could write `path` now, asked before a long run whose
/// result would otherwise be lost: where the path leads is judged, and a
/// file is made (and removed again) in the directory a new file would go
/// to. A device or FIFO is not opened: a FIFO would wait for its reader.
pub fn check(path: &Path) -> io::Result<()> {
    match resolve(path)? {
        Target::Replace(at) => Temporary::new(&at, Access::Owner.mode()).map(drop),
        Target::InPlace { .. } => Ok(()),
    }
}

/// Reads a cache file, if it is one this user made and no one else can
/// have changed: a regular file (not followed through a link) owned by the
/// effective user and writable by no one else. A kernel read from a file
/// another user planted (in a shared `TREEHASH_CACHE_DIR`) would compute
/// wrong digests; such a file, or none, is `None`, and the caller makes
/// the contents anew.
pub(crate) fn read_cache(path: &Path) -> Option<(Vec<u8>, fs::Metadata)> {
    let mut file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    let trusted = meta.is_file() && meta.uid() == effective_uid() && meta.mode() & 0o022 == 0;
    if !trusted {
        return None;
    }
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes).ok()?;
    Some((bytes, meta))
}

/// Writes a cache file: its directory is made (mode 0700) if missing, and a
/// new file (mode 0600, which [`read_cache`] trusts whatever the umask) is
/// renamed onto `path` whatever is there, so that a link planted at the
/// name is replaced, never written through.
pub(crate) fn write_cache(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    replace(path, bytes, Access::Owner.mode())
}

/// Where [`write()`] puts the bytes.
#[derive(Debug, PartialEq, Eq)]
enum Target {
    /// Nothing or a regular file is here: a new file is renamed onto it.
    Replace(PathBuf),
    /// A character device or FIFO, written in place. `follow`: `at` is a
    /// link of `/proc` to a file this process has open, which only the
    /// kernel can follow.
    InPlace { at: PathBuf, follow: bool },
}

/// The most symbolic links followed from one path: the kernel's own limit
/// (MAXSYMLINKS).
const MAX_LINKS: usize = 40;

/// Follows `path`'s symbolic links, each owned by the effective user or
/// root, to the place [`write()`] puts the bytes.
fn resolve(path: &Path) -> io::Result<Target> {
    let mut at = path.to_path_buf();
    for _ in 0..=MAX_LINKS {
        let meta = match fs::symlink_metadata(&at) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Target::Replace(at)),
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_file() {
            return Ok(Target::Replace(at));
        }
        if kind.is_char_device() || kind.is_fifo() {
            return Ok(Target::InPlace { at, follow: false });
        }
        let refuse = |what: String| refused(path, &at, &what);
        if kind.is_dir() {
            return Err(refuse("a directory, not a file to write".into()));
        }
        if kind.is_socket() {
            return Err(refuse("a socket, not a file to write".into()));
        }
        if !kind.is_symlink() {
            return Err(refuse(
                "a block device: only character devices and FIFOs are written in place".into(),
            ));
        }
        let owner = meta.uid();
        if owner != effective_uid() && owner != 0 {
            return Err(refuse(format!(
                "a symbolic link owned by another user (uid {owner}), not followed"
            )));
        }
        let next = at
            .parent()
            .unwrap_or(Path::new(""))
            .join(fs::read_link(&at)?);
        if let Err(e) = fs::symlink_metadata(&next)
            && e.kind() == io::ErrorKind::NotFound
            && let Ok(open) = fs::metadata(&at)
        {
            // The kernel follows the link, yet its text names nothing: a
            // link of /proc to an open file (`pipe:[…]`, or a path ending in
            // ` (deleted)`), which only the kernel can follow.
            let kind = open.file_type();
            if kind.is_char_device() || kind.is_fifo() {
                return Ok(Target::InPlace { at, follow: true });
            }
            return Err(refuse(
                "a link to an open file with no name that is no device or FIFO, not written".into(),
            ));
        }
        at = next;
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// The error refusing `at`, reached from `path`: one line, without `path`,
/// which the caller names.
fn refused(path: &Path, at: &Path, what: &str) -> io::Error {
    let text = if at == path {
        what.to_string()
    } else {
        format!("leads to {}, {what}", at.display())
    };
    io::Error::new(io::ErrorKind::InvalidInput, text)
}

fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions, touches no memory of ours and
    // cannot fail.
    unsafe { libc::geteuid() }
}

/// Writes a character device or FIFO where it is. The open has no
/// `O_CREAT` and (unless `follow`) `O_NOFOLLOW`, and the file opened is
/// checked again, so that a regular file or link put there since
/// [`resolve`] looked is never written into.
fn write_in_place(at: &Path, follow: bool, bytes: &[u8]) -> io::Result<()> {
    let flags = libc::O_NOCTTY | if follow { 0 } else { libc::O_NOFOLLOW };
    let mut file = OpenOptions::new()
        .write(true)
        .custom_flags(flags)
        .open(at)?;
    let kind = file.metadata()?.file_type();
    if !(kind.is_char_device() || kind.is_fifo()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "replaced by another kind of file while it was opened, not written",
        ));
    }
    file.write_all(bytes)
}

/// Writes `bytes` to a new file of mode `mode` (less the umask) beside
/// `path`, syncs it and renames it onto `path`; on failure the new file is
/// removed and `path` is as it was.
fn replace(path: &Path, bytes: &[u8], mode: u32) -> io::Result<()> {
    let mut temporary = Temporary::new(path, mode)?;
    temporary.file.write_all(bytes)?;
    temporary.file.sync_all()?;
    fs::rename(&temporary.path, path)?;
    temporary.renamed = true;
    Ok(())
}

/// A new file in the directory of the file it will replace, removed when
/// dropped unless it was renamed.
struct Temporary {
    path: PathBuf,
    file: File,
    renamed: bool,
}

/// Names tried for a [`Temporary`] before giving up: a name is taken only
/// by a file already there, which a clash of random names almost never is.
const TEMPORARY_ATTEMPTS: usize = 100;

/// The most bytes of the destination's name kept in a [`Temporary`]'s
/// name, so that the name and its random tail stay under NAME_MAX (255).
const NAME_KEPT: usize = 200;

impl Temporary {
    /// Made with `O_CREAT | O_EXCL | O_NOFOLLOW` (and `O_CLOEXEC`, as std
    /// opens every file): it is a new file, never a file or link that was
    /// at its name. The name `.NAME.RANDOM.tmp` is unpredictable, so that no
    /// other user can take it in advance.
    fn new(destination: &Path, mode: u32) -> io::Result<Temporary> {
        let dir = match destination.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let name = destination
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "names no file to write"))?;
        let kept = &name.as_bytes()[..name.len().min(NAME_KEPT)];
        for _ in 0..TEMPORARY_ATTEMPTS {
            let mut temporary = OsString::from(".");
            temporary.push(std::ffi::OsStr::from_bytes(kept));
            temporary.push(format!(".{:016x}.tmp", unpredictable()));
            let path = dir.join(temporary);
            let made = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path);
            match made {
                Ok(file) => {
                    return Ok(Temporary {
                        path,
                        file,
                        renamed: false,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "every name tried for a new file beside it was taken",
        ))
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if !self.renamed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// 64 bits no other user can predict: std's `RandomState` is keyed from
/// the operating system's random numbers. (`O_EXCL` already keeps a planted
/// name from being written through; unpredictable names keep it from
/// blocking the write.)
fn unpredictable() -> u64 {
    use std::hash::BuildHasher;
    std::hash::RandomState::new().hash_one(std::time::SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{PermissionsExt, symlink};

    fn names_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_new_or_regular_file_is_replaced_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        write(&path, b"one", Access::Shared).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"one");
        let before = fs::metadata(&path).unwrap().ino();
        write(&path, b"two", Access::Owner).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let after = fs::metadata(&path).unwrap();
        assert_ne!(after.ino(), before, "a new file, renamed onto the name");
        assert_eq!(after.permissions().mode() & 0o777, 0o600);
        assert_eq!(names_in(dir.path()), ["out"]);
    }

    #[test]
    fn own_links_are_followed_and_the_link_stays() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link");
        symlink("target", &link).unwrap();
        write(&link, b"new", Access::Shared).unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
        // A link to nothing yet: the file is made at its target.
        let dangling = dir.path().join("dangling");
        symlink(dir.path().join("made"), &dangling).unwrap();
        write(&dangling, b"made", Access::Shared).unwrap();
        assert_eq!(fs::read(dir.path().join("made")).unwrap(), b"made");
        assert_eq!(names_in(dir.path()), ["dangling", "link", "made", "target"]);
    }

    #[test]
    fn directories_and_link_loops_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let e = write(dir.path(), b"x", Access::Shared).unwrap_err();
        assert_eq!(e.to_string(), "a directory, not a file to write");
        let link = dir.path().join("to-dir");
        symlink(dir.path(), &link).unwrap();
        let e = write(&link, b"x", Access::Shared).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "leads to {}, a directory, not a file to write",
                dir.path().display()
            )
        );
        let looped = dir.path().join("loop");
        symlink("loop", &looped).unwrap();
        let e = write(&looped, b"x", Access::Shared).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
        assert!(check(&looped).is_err());
    }

    #[test]
    fn a_character_device_is_resolved_in_place() {
        assert_eq!(
            resolve(Path::new("/dev/null")).unwrap(),
            Target::InPlace {
                at: "/dev/null".into(),
                follow: false
            }
        );
        write(Path::new("/dev/null"), b"gone", Access::Owner).unwrap();
        assert!(
            fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
        let e = write(Path::new("/dev/full"), b"x", Access::Shared).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    }

    #[test]
    fn check_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        check(&dir.path().join("chart.svg")).unwrap();
        assert!(names_in(dir.path()).is_empty());
        let missing = dir.path().join("no-such-dir").join("chart.svg");
        assert_eq!(check(&missing).unwrap_err().kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn a_cache_file_replaces_a_planted_link_and_its_directory_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, b"victim").unwrap();
        let cache = dir.path().join("cache");
        let path = cache.join("kernel.ptx");
        write_cache(&path, b"first").unwrap();
        let mode = fs::metadata(&cache).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        fs::remove_file(&path).unwrap();
        symlink(&victim, &path).unwrap();
        write_cache(&path, b"ptx").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"victim");
        assert!(fs::symlink_metadata(&path).unwrap().is_file());
        assert_eq!(fs::read(&path).unwrap(), b"ptx");
        assert_eq!(names_in(&cache), ["kernel.ptx"]);
    }

    /// A cache file is read only where this user made it and no one else
    /// can have changed it: not through a link, not writable by others,
    /// not another user's (that last case where the test runs as root and
    /// can give a file away).
    #[test]
    fn only_a_cache_file_of_our_own_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own");
        write_cache(&own, b"kernel").unwrap();
        fs::set_permissions(&own, fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(read_cache(&own).map(|(b, _)| b), Some(b"kernel".to_vec()));
        let link = dir.path().join("link");
        symlink(&own, &link).unwrap();
        assert!(read_cache(&link).is_none(), "read through a link");
        fs::set_permissions(&own, fs::Permissions::from_mode(0o666)).unwrap();
        assert!(read_cache(&own).is_none(), "writable by others");
        fs::set_permissions(&own, fs::Permissions::from_mode(0o644)).unwrap();
        if effective_uid() == 0 {
            std::os::unix::fs::chown(&own, Some(65534), None).unwrap();
            assert!(read_cache(&own).is_none(), "another user's");
        }
        assert!(read_cache(&dir.path().join("none")).is_none());
    }
}
