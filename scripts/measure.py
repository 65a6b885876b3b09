#!/usr/bin/env python3
"""Whole-process timings for docs/PERFORMANCE.md: wall time and peak RSS.

    measure.py [--repeat N] [--cold FILE] [--label TEXT] -- COMMAND ARGS...

Runs COMMAND N times (default 3) with its output thrown away and prints one
markdown table row: label, median wall seconds, every run's seconds, and the
largest peak resident set (from wait4's rusage, so no GNU time is needed).
With --cold FILE, FILE is evicted from the page cache before each run
(posix_fadvise DONTNEED after a sync, which needs no privileges), and the row
says how much of it was still cached afterwards (it should be ~0 %).
A command that exits non-zero makes the row say FAILED and the script exit 1.
"""

import argparse
import mmap
import os
import statistics
import subprocess
import sys
import time


def evict(path):
    os.sync()
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def cached_fraction(path):
    """The fraction of the file's pages in the page cache (mincore)."""
    import ctypes

    size = os.path.getsize(path)
    if size == 0:
        return 0.0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                          ctypes.c_int, ctypes.c_long]
    libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
    libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    fd = os.open(path, os.O_RDONLY)
    try:
        addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
        pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
        vec = ctypes.create_string_buffer(pages)
        libc.mincore(ctypes.c_void_p(addr), size, vec)
        libc.munmap(ctypes.c_void_p(addr), size)
        return sum(b & 1 for b in vec.raw) / pages
    finally:
        os.close(fd)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold")
    parser.add_argument("--label")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    label = args.label or " ".join(command)
    times, peak_kib, after = [], 0, None
    for _ in range(args.repeat):
        if args.cold:
            evict(args.cold)
            if after is None:
                after = cached_fraction(args.cold)
        start = time.monotonic()
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.monotonic() - start
        err = proc.stderr.read().decode(errors="replace").strip()
        if os.waitstatus_to_exitcode(status) != 0:
            print(f"| {label} | FAILED ({err.splitlines()[-1] if err else status}) | | |")
            sys.exit(1)
        times.append(elapsed)
        peak_kib = max(peak_kib, usage.ru_maxrss)
    runs = " / ".join(f"{t:.2f}" for t in times)
    note = f" (cached after evicting: {after:.0%})" if after is not None and after > 0.05 else ""
    print(f"| {label} | {statistics.median(times):.3f} | {runs} | {peak_kib / 1024:.0f} MiB{note} |")


if __name__ == "__main__":
    main()
