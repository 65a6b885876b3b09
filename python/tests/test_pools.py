"""The worker pools a process keeps: one per thread count while it is in
use, and only the few asked for last once idle, however many counts a
program tries (each test in a fresh interpreter, whose threads it counts)."""

import os
import subprocess
import sys

#: The idle pools kept (python/src/options.rs, KEPT).
KEPT = 4


def cpus():
    """The CPUs this process may run on, as Rust's available_parallelism
    counts them: the affinity mask, held to a cgroup v2 CPU quota."""
    n = len(os.sched_getaffinity(0))
    try:
        quota, period = open("/sys/fs/cgroup/cpu.max").read().split()
        if quota != "max":
            n = min(n, max(1, int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    return n


#: A pool's workers for threads=n: one per CPU this process may run on at
#: most (docs/decisions/0028-worker-threads-at-most-one-per-cpu.md).
CPUS = cpus()


def workers(n):
    return min(n, CPUS)


#: The most threads left beyond the interpreter's own once idle pools have
#: ended: the last KEPT pools' workers (threads=37 to 40), and a few for
#: threads the interpreter or the library may start meanwhile. Holding
#: every pool would leave the workers of threads=1 to 40 (820 on 40 CPUs,
#: 79 on 2); the bound stays below that on 2 CPUs and more.
LEFT = sum(workers(n) for n in range(41 - KEPT, 41)) + 8

#: Hashes 1 MiB (above the size hashed inline, so that each pool starts)
#: with threads=1 to 40, by new() and by file_digest(), then prints the
#: process's threads before, with the 40-thread pool running, and once at
#: most LEFT (argv[2]) more are left, or after 30 s (rayon's workers leave
#: as they wake, soon after their pool is dropped).
COUNT_THREADS = r"""
import os, sys, time
import treehash

def threads():
    return len(os.listdir("/proc/self/task"))

path = sys.argv[1]
data = bytes(1 << 20)
with open(path, "wb") as f:
    f.write(data)
before = threads()
for n in range(1, 41):
    h = treehash.new(data=data, threads=n)
    assert h.digest() == treehash.file_digest(path, threads=n).digest()
    del h
running = threads()
bound = before + int(sys.argv[2])
deadline = time.monotonic() + 30
while threads() > bound and time.monotonic() < deadline:
    time.sleep(0.05)
print(before, running, threads())
"""


def test_idle_pools_are_few_however_many_thread_counts(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", COUNT_THREADS, str(tmp_path / "f"), str(LEFT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    before, running, after = map(int, out.stdout.split())
    # The pools did start: the last one's workers were running.
    assert running >= before + workers(40), (before, running, after)
    assert after <= before + LEFT, (before, running, after)
