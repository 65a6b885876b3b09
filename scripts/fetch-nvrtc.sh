#!/usr/bin/env bash
# Installs NVIDIA's NVRTC 13.0 (the GPU machine's version) from PyPI into
# .nvrtc/ of this checkout, so that tests can compile the CUDA kernels on a
# machine with no GPU and no CUDA toolkit. Put .nvrtc/nvidia/cu13/lib on
# LD_LIBRARY_PATH to use it (.ci/run does).
set -euo pipefail
cd "$(dirname "$0")/.."
lib=.nvrtc/nvidia/cu13/lib
if [ -e "$lib/libnvrtc.so.13" ]; then
    exit 0
fi
python3 -m pip install --quiet --no-deps --target .nvrtc "nvidia-cuda-nvrtc==13.0.88"
test -e "$lib/libnvrtc.so.13"
