//! What every part records of the file it was made from and of its place in
//! the split: the fields a join holds the parts of one set against each
//! other by (`join::difference`, and `join::same_version_on_each_host` for
//! the identity). Their bytes are `format`'s.

use std::sync::OnceLock;
use std::time::SystemTime;

use sha3::{Digest, Sha3_256};

use crate::input::Stamp;

/// What every part records of the file and of its place in the split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Origin {
    pub(super) file_len: u64,
    /// The file's modification time, in nanoseconds since 1970.
    pub(super) modified_ns: Option<i64>,
    /// Which file, and which version of it, on the host that made the part.
    pub(super) identity: Option<Identity>,
    pub(super) count: u64,
    pub(super) index: u64,
    /// The file's name as given (bytes).
    pub(super) name: Vec<u8>,
}

/// A file's version as one host sees it: its inode and change time
/// (`st_ctime`, which no writer can set back). Parts made on one host must
/// agree on both; another host sees another inode and change time for a
/// copy of the file, and the same ones only on a file system they share, so
/// parts of different hosts are not held against each other by them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Identity {
    /// The host's tag ([`host_tag`]).
    pub(super) host: HostTag,
    pub(super) inode: u64,
    pub(super) changed_ns: i64,
}

/// The first 8 bytes of SHA3-256 of a fixed domain string, the host's
/// machine id and its name: equal on one host, and on two hosts only by
/// accident (a cloned machine id and the same host name).
pub(super) type HostTag = [u8; 8];

impl Origin {
    /// The origin of part `index` of `count` of a file of `file_len` bytes
    /// (its input: from where it was opened) whose version was `stamp`.
    pub(super) fn new(stamp: &Stamp, file_len: u64, count: u64, index: u64, name: Vec<u8>) -> Self {
        Origin {
            file_len,
            modified_ns: stamp.modified.and_then(nanos_since_epoch),
            identity: Some(Identity {
                host: host_tag(),
                inode: stamp.inode,
                changed_ns: stamp.changed_ns,
            }),
            count,
            index,
            name,
        }
    }
}

/// This host's tag, computed once.
pub(super) fn host_tag() -> HostTag {
    static TAG: OnceLock<HostTag> = OnceLock::new();
    *TAG.get_or_init(|| {
        let read = |path| std::fs::read(path).unwrap_or_default();
        let digest = Sha3_256::new()
            .chain_update(b"treehash host v1\0")
            .chain_update(read("/etc/machine-id"))
            .chain_update(b"\0")
            .chain_update(read("/proc/sys/kernel/hostname"))
            .finalize();
        let mut tag = HostTag::default();
        let len = tag.len();
        tag.copy_from_slice(&digest[..len]);
        tag
    })
}

/// A time as nanoseconds since 1970 (negative before), where an i64 holds it.
fn nanos_since_epoch(time: SystemTime) -> Option<i64> {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).ok(),
        Err(before) => i64::try_from(before.duration().as_nanos()).ok().map(|n| -n),
    }
}
