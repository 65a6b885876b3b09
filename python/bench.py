"""Times the Python package against the issue's targets (a benchmark, not a
test): prints one line per measurement, medians of --repeat runs.

    python python/bench.py FILE [--algorithm NAME] [--cli PATH] [--repeat 5] [--device-gib 8]

- file_digest(FILE) against the command-line tool on the same (page-cached)
  file, when --cli names it;
- new().update() of FILE's first GiB, read into memory, in 64 MiB parts,
  against file_digest of a file holding those bytes (and the final
  digest() alone, which copies the leaf states);
- with a CUDA GPU: device_digest of --device-gib GiB (GB/s), and of 1 MiB
  once warm (ms), with the same function.

--algorithm picks the function (sha3-256, the LI tree at H = 8, by default;
kt128, parallelhash256, turboshake128 ... with their defaults).
"""

import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import treehash

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "tests"))
from cuda_driver import DeviceBuffer, open_driver  # noqa: E402


def median_time(run, repeat):
    run()  # warm-up: page cache, threads, kernels
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=pathlib.Path)
    parser.add_argument("--algorithm", default="sha3-256", help="the function (default sha3-256)")
    parser.add_argument("--cli", help="the treehash binary, to compare file_digest with")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--device-gib", type=int, default=8)
    args = parser.parse_args()
    size = args.file.stat().st_size
    name = args.algorithm
    print(f"treehash {treehash.__version__}, {os.cpu_count()} CPUs, {args.file} ({size} bytes), "
          f"{treehash.new(name).name}")

    t = median_time(lambda: treehash.file_digest(args.file, algorithm=name), args.repeat)
    print(f"file_digest            {t:8.3f} s  {size / t / 1e9:7.2f} GB/s")
    if args.cli:
        cli = [args.cli, "-a", name, "--no-names", str(args.file)]
        c = median_time(lambda: subprocess.run(cli, check=True, capture_output=True), args.repeat)
        print(f"CLI                    {c:8.3f} s  {size / c / 1e9:7.2f} GB/s  "
              f"file_digest / CLI time {t / c:.3f}")

    with open(args.file, "rb") as f:
        data = f.read(1 << 30)
    view = memoryview(data)
    part = 64 << 20

    digest_times = []

    def updates():
        h = treehash.new(name)
        for at in range(0, len(data), part):
            h.update(view[at : at + part])
        start = time.perf_counter()
        digest = h.digest()
        digest_times.append(time.perf_counter() - start)
        return digest

    with tempfile.NamedTemporaryFile(dir=args.file.parent) as same:
        same.write(data)
        same.flush()
        u = median_time(updates, args.repeat)
        f = median_time(lambda: treehash.file_digest(same.name, algorithm=name), args.repeat)
        assert updates() == treehash.file_digest(same.name, algorithm=name).digest()
    print(f"new().update() 64 MiB  {u:8.3f} s  {len(data) / u / 1e9:7.2f} GB/s  "
          f"× file_digest of the same bytes {f / u:.3f}")
    print(f"  of which digest()    {statistics.median(digest_times) * 1e3:8.1f} ms")

    driver, reason = open_driver()
    if driver is None:
        print(f"device_digest: skipped ({reason})")
        return
    length = args.device_gib << 30
    ptr = driver.alloc(length)
    try:
        driver.check(driver.lib.cuMemsetD8Async(ptr, 0x5A, length, None), "cuMemsetD8Async")
        driver.check(driver.lib.cuStreamSynchronize(None), "cuStreamSynchronize")
        big = DeviceBuffer(driver, b"", ptr=ptr, shape=(length,))
        d = median_time(lambda: treehash.device_digest(big, algorithm=name), args.repeat)
        print(f"device_digest {args.device_gib} GiB {name} {d:8.3f} s  {length / d / 1e9:7.2f} GB/s")
        small = DeviceBuffer(driver, b"", ptr=ptr, shape=(1 << 20,))
        s = median_time(lambda: treehash.device_digest(small, algorithm=name), max(args.repeat, 100))
        print(f"device_digest 1 MiB    {s * 1e3:8.3f} ms")
    finally:
        driver.free(ptr)


if __name__ == "__main__":
    main()
