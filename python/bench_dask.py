"""Times treehash.dask.file_digest on a LocalCluster against one treehash
process (a benchmark, not a test), for issue 25's target: 8 GiB
page-cached, 4 Dask workers on one host with 4 threads each, H = 8, in at
most 1.3 x the time of one treehash process with 16 threads.

    python python/bench_dask.py FILE --cli PATH [--workers 4] [--threads 4]
        [--cli-threads 16] [--height 8] [--backend cpu] [--repeat 3] [--create-gib 8]

Both sides hash the same page-cached FILE (read once first) with the same
parameters and backend (cpu by default: the target is CPU threads against
CPU threads) and must give the same digest. Prints medians of --repeat runs
after a warm-up (the first Dask run, in which the workers load treehash and
start their threads, is printed apart), and where the time of the last Dask
run went (from its task stream): the parts, from the first start to the
last end, the longest part, the join, and the rest (scheduling, transfers).
--create-gib writes FILE first if it is missing (a 64 MiB random block,
repeated). Needs dask[distributed] beside treehash.
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

try:
    import distributed
except ImportError:
    sys.exit(
        "bench_dask.py needs Dask's distributed scheduler beside treehash: "
        "pip install 'dask[distributed]' (or its wheels: docs/DASK.md, \"Measuring\")"
    )

import treehash
import treehash.dask

#: The target of issue 25: Dask's time over one process's.
TARGET_RATIO = 1.3


def timed(run, repeat):
    """Each run's seconds and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return times, result


def create(path, gib):
    block = os.urandom(64 << 20)
    with open(path, "wb") as f:
        for _ in range(gib * 16):
            f.write(block)


def cli_digest(args):
    command = [args.cli, "-H", str(args.height), "--threads", str(args.cli_threads),
               "--backend", args.backend, "--no-names", str(args.file)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return out.split()[0]


def where_the_time_went(stream):
    """From one run's task stream: the parts' span, the longest part, the join."""
    def computes(tasks):
        return [s for t in tasks for s in t["startstops"] if s["action"] == "compute"]

    parts = computes(t for t in stream if "treehash-part-" in str(t["key"]))
    joins = computes(t for t in stream if "treehash-join-" in str(t["key"]))
    if not parts or not joins:
        return None
    span = max(s["stop"] for s in parts) - min(s["start"] for s in parts)
    longest = max(s["stop"] - s["start"] for s in parts)
    join = sum(s["stop"] - s["start"] for s in joins)
    return span, longest, join, len(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=pathlib.Path)
    parser.add_argument("--cli", required=True, help="the treehash binary")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--threads", type=int, default=4, help="threads per worker")
    parser.add_argument("--cli-threads", type=int, default=16)
    parser.add_argument("--height", type=int, default=8)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--create-gib", type=int, help="write FILE first if it is missing")
    args = parser.parse_args()
    if not args.file.exists() and args.create_gib:
        create(args.file, args.create_gib)
    size = args.file.stat().st_size
    print(f"treehash {treehash.__version__}, distributed {distributed.__version__}, "
          f"{os.cpu_count()} CPUs, {args.file} ({size} bytes), H = {args.height}, "
          f"backend {args.backend}")

    want = cli_digest(args)  # also reads the file into the page cache
    cli_times, got = timed(lambda: cli_digest(args), args.repeat)
    assert got == want
    cli = statistics.median(cli_times)
    print(f"one process, {args.cli_threads} threads: median {cli:.3f} s "
          f"({size / cli / 1e9:.2f} GB/s), runs {', '.join(f'{t:.3f}' for t in cli_times)}")

    start = time.perf_counter()
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=args.threads,
                                  processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.wait_for_workers(args.workers)
        started = time.perf_counter() - start

        def run():
            return treehash.dask.file_digest(args.file, client=client, height=args.height,
                                             backend=args.backend).hexdigest()

        (first,), got = timed(run, 1)
        assert got == want, f"dask {got} != treehash {want}"
        with distributed.get_task_stream(client) as stream:
            dask_times, got = timed(run, args.repeat)
        assert got == want
    dask = statistics.median(dask_times)
    print(f"dask, {args.workers} workers x {args.threads} threads, {args.workers} parts: "
          f"median {dask:.3f} s ({size / dask / 1e9:.2f} GB/s), "
          f"runs {', '.join(f'{t:.3f}' for t in dask_times)}; "
          f"first run {first:.3f} s, cluster start {started:.2f} s (neither counted)")
    last_run = stream.data[-(args.workers + 1):]
    breakdown = where_the_time_went(last_run)
    if breakdown:
        span, longest, join, parts = breakdown
        print(f"last dask run: {parts} parts over {span:.3f} s (longest {longest:.3f} s), "
              f"join {join * 1e3:.1f} ms, the rest {dask_times[-1] - span - join:.3f} s")
    ratio = dask / cli
    verdict = "met" if ratio <= TARGET_RATIO else "NOT met"
    print(f"dask / one process = {ratio:.3f} (target <= {TARGET_RATIO}: {verdict}); "
          f"digest {want}")


if __name__ == "__main__":
    main()
