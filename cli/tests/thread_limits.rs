//! The tool under a limit on processes (`ulimit -u`, a container's pids
//! limit): each input either gets its right digest or a one-line error that
//! names it and the limit, with exit code 1; never a panic (exit 101).
//! Tests of what the tool prints in ordinary runs belong in cli_*.rs.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output};

/// The uid and gid the limited child runs as when this test runs as root:
/// root is not held to `RLIMIT_NPROC`, an ordinary user is.
const NOBODY: libc::uid_t = 65534;

/// `treehash ARGS` with at most `tasks` processes and threads for its user.
fn limited(tasks: u64, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_treehash"));
    command.args(args);
    // SAFETY: between fork and exec the closure calls only setgroups,
    // setgid, setuid and setrlimit, which are async-signal-safe, and
    // touches no memory but its own locals.
    unsafe {
        command.pre_exec(move || {
            if libc::geteuid() == 0
                && (libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(NOBODY) != 0
                    || libc::setuid(NOBODY) != 0)
            {
                return Err(std::io::Error::last_os_error());
            }
            let limit = libc::rlimit {
                rlim_cur: tasks,
                rlim_max: tasks,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command
        .output()
        .expect("the limited child starts (as root, it needs setuid to an ordinary user)")
}

/// Every limit from one task (the main thread alone) to more than the
/// threads asked for, on a file large enough for the pool, the windows'
/// helper threads and a list: each run hashes right or says why not.
#[test]
fn a_limit_on_threads_is_an_error_or_a_digest_never_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    // Readable by the ordinary user the child runs as.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let big = dir.path().join("big");
    let data: Vec<u8> = (0..24u32 << 20).map(|i| (i % 251) as u8).collect();
    std::fs::write(&big, &data).unwrap();
    let small = dir.path().join("small");
    std::fs::write(&small, vec![7u8; 200 << 10]).unwrap();
    for path in [&big, &small] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let (big, small) = (big.to_str().unwrap(), small.to_str().unwrap());
    let cases: [&[&str]; 4] = [
        &["--threads", "8", big],
        &["--threads", "300", "-a", "kt128", big],
        &["--threads", "8", big, small, small],
        &["--threads", "8", "-H", "0", big],
    ];
    let mut outcomes = (0, 0);
    for args in cases {
        let want = Command::new(env!("CARGO_BIN_EXE_treehash"))
            .args(args)
            .output()
            .unwrap();
        assert!(want.status.success(), "{args:?} without a limit");
        let want = String::from_utf8(want.stdout).unwrap();
        for tasks in [1, 2, 3, 4, 6, 8, 12, 400] {
            let out = limited(tasks, args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let what = format!("{args:?} with {tasks} tasks: {stderr}");
            assert!(!stderr.contains("panicked"), "{what}");
            match out.status.code() {
                Some(0) => {
                    assert_eq!(stdout, want, "{what}");
                    outcomes.0 += 1;
                }
                Some(1) => {
                    // The lines printed are right; each missing one is an
                    // error line that names its input and the limit.
                    for line in stdout.lines() {
                        assert!(want.lines().any(|w| w == line), "{what}: {line}");
                    }
                    assert!(!stderr.is_empty(), "{what}");
                    for line in stderr.lines() {
                        assert!(
                            line.starts_with("treehash: ") && line.contains("a limit on processes"),
                            "{what}"
                        );
                    }
                    outcomes.1 += 1;
                }
                code => panic!("{what}: exit code {code:?}"),
            }
        }
    }
    // Both outcomes happen: the low limits refuse, the high one hashes.
    assert!(outcomes.0 > 0 && outcomes.1 > 0, "{outcomes:?}");
}
