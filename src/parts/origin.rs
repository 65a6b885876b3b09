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

/// The last component of a file's name as given: `big.img` of `big.img`,
/// `./big.img` and `/lustre/x/big.img` (trailing slashes aside). Hosts that
/// see one file under other paths (another working directory, another
/// mount point) agree on it.
pub(super) fn base_name(name: &[u8]) -> &[u8] {
    let name = match name.iter().rposition(|&b| b != b'/') {
        Some(last) => &name[..=last],
        None => name,
    };
    match name.iter().rposition(|&b| b == b'/') {
        Some(slash) => &name[slash + 1..],
        None => name,
    }
}

/// A time recorded in nanoseconds since 1970, as a date and time of UTC
/// to the nanosecond: `2023-11-14 22:13:20.000000000 UTC`.
pub(super) fn show_time(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let nanos = ns.rem_euclid(1_000_000_000);
    let (days, second) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}.{nanos:09} UTC",
        second / 3600,
        second % 3600 / 60,
        second % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's
/// `civil_from_days`: eras of 400 years, years from March).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A time as nanoseconds since 1970 (negative before), where an i64 holds it.
fn nanos_since_epoch(time: SystemTime) -> Option<i64> {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => i64::try_from(after.as_nanos()).ok(),
        Err(before) => i64::try_from(before.duration().as_nanos()).ok().map(|n| -n),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dates are `date -u -d @SECONDS` of GNU coreutils.
    #[test]
    fn times_are_shown_as_dates_of_utc() {
        for (ns, shown) in [
            (0, "1970-01-01 00:00:00.000000000 UTC"),
            (-1, "1969-12-31 23:59:59.999999999 UTC"),
            (
                (1 << 30) * 1_000_000_000,
                "2004-01-10 13:37:04.000000000 UTC",
            ),
            (
                1_700_000_000_000_000_001,
                "2023-11-14 22:13:20.000000001 UTC",
            ),
            (951_782_400_000_000_000, "2000-02-29 00:00:00.000000000 UTC"),
            (
                4_107_542_399_000_000_000,
                "2100-02-28 23:59:59.000000000 UTC",
            ),
            (
                -2_208_988_800_000_000_000,
                "1900-01-01 00:00:00.000000000 UTC",
            ),
            (i64::MAX, "2262-04-11 23:47:16.854775807 UTC"),
        ] {
            assert_eq!(show_time(ns), shown, "{ns}");
        }
    }

    #[test]
    fn base_names_are_the_last_component() {
        for (name, base) in [
            (&b"big.img"[..], &b"big.img"[..]),
            (b"./big.img", b"big.img"),
            (b"/lustre/x/big.img", b"big.img"),
            (b"/mnt/a//big.img/", b"big.img"),
            (b"-", b"-"),
            (b"", b""),
            (b"/", b""),
        ] {
            assert_eq!(base_name(name), base, "{name:?}");
        }
    }
}
