"""Times device_digest of GIB GiB of device memory with the installed
treehash package: prints one line, `<label> <median s> <GB/s>`, the median
of REPEAT runs after a warm-up. For old-against-new runs (gpu-check.sh
refactor), each package in its own folder on PYTHONPATH.

    python3 -P scripts/device-digest-time.py LABEL GIB REPEAT [ALGORITHM]
"""

import pathlib
import statistics
import sys
import time

import treehash

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "python" / "tests"))
from cuda_driver import DeviceBuffer, open_driver  # noqa: E402

label, gib, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
name = sys.argv[4] if len(sys.argv) > 4 else "sha3-256"
driver, reason = open_driver()
if driver is None:
    sys.exit(f"{label}: no CUDA driver ({reason})")
size = gib << 30
ptr = driver.alloc(size)
driver.check(driver.lib.cuMemsetD8Async(ptr, 0x5A, size, None), "cuMemsetD8Async")
driver.check(driver.lib.cuStreamSynchronize(None), "cuStreamSynchronize")
buf = DeviceBuffer(driver, b"", ptr=ptr, shape=(size,))
digest = treehash.device_digest(buf, algorithm=name).hexdigest()
times = []
for _ in range(repeat):
    start = time.perf_counter()
    treehash.device_digest(buf, algorithm=name)
    times.append(time.perf_counter() - start)
t = statistics.median(times)
print(f"{label} {name} {t:.4f} s {size / t / 1e9:.1f} GB/s {digest[:16]}")
driver.free(ptr)
