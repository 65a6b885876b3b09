#!/usr/bin/env bash
# GPU checks in two halves, because the GPU machine has no Rust toolchain:
#
#   scripts/gpu-check.sh build   # here: builds the binaries into .devbin/
#   scripts/gpu-check.sh run     # on the GPU machine (device tool, carry .devbin):
#                                # GPU tests, CLI smoke tests, benchmarks, timings
#   scripts/gpu-check.sh input   # on the GPU machine: the input path, whole
#                                # processes on cold and page-cached 8 GiB files
#                                # (and 32 GiB for peak RSS) next to cat and b3sum
#   scripts/gpu-check.sh tables  # on the GPU machine: `treehash bench` tables of
#                                # docs/PERFORMANCE.md (paper sizes, 1 and 8 GiB),
#                                # SVG charts, the peers table, the CPU benchmark
#   scripts/gpu-check.sh auto    # on the GPU machine: whole processes, auto
#                                # against each backend and b3sum, 1 MiB to 32 GiB
#   scripts/gpu-check.sh cores   # on the GPU machine: the CPU engine by threads
#                                # with its pieces and with 4-stripe ones, and
#                                # whether its vCPUs behave as separate cores
#   scripts/gpu-check.sh lists   # on the GPU machine: lists of files (issue 22),
#                                # whole processes next to sha256sum and b3sum,
#                                # -c, peak RSS and the open-file limit
#   scripts/gpu-check.sh python  # on the GPU machine: the Python package's tests
#                                # (device_digest on driver-made buffers) and targets
#   scripts/gpu-check.sh trees   # on the GPU machine: large trees, H = 8 to 12
#   scripts/gpu-check.sh kt      # on the GPU machine: KT128, KT256, ParallelHash
#                                # next to k12sum and b3sum
#   scripts/gpu-check.sh kt-auto # on the GPU machine: KT128 under auto against
#                                # each backend, 1 MiB to 32 GiB
#   scripts/gpu-check.sh build-old COMMIT  # here: that commit's binary and
#                                # wheel into .devbin/old/, for `refactor`
#   scripts/gpu-check.sh refactor  # on the GPU machine: old against new,
#                                # interleaved (files, lists, device_digest)
#   scripts/gpu-check.sh two     # on a machine of two GPUs: the host's ceiling
#                                # for feeding both, one GPU against both (new
#                                # and old builds), LI H = 8 and KT128, 16 GiB
#   scripts/gpu-check.sh cores-all  # on any machine: KT128 and LI at 16 threads
#                                # and every CPU beside k12sum and b3sum, with
#                                # a read probe and the permutation kernels
#   scripts/gpu-check.sh multi   # on a machine of several GPUs: the host's
#                                # ceiling for feeding them, the tests that
#                                # share leaves and chunks, whole processes
#                                # on 32 GiB
#
# `run` writes its logs under $OUT (or ./gpu-check-out) and ends with a summary.
# Environment: GPU_CHECK_QUICK=1 skips the benchmarks; BENCH_GB sets the size
# of the end-to-end benchmark file (default 8).
set -uo pipefail
cd "$(dirname "$0")/.."

# The tests of tests/gpu.rs that need two GPUs (`#[ignore = "needs two CUDA
# GPUs"]`).
TWO_GPU_TESTS="every_gpu_takes_a_share gpus_begun_side_by_side_share_the_work_from_the_first_piece sequential_inputs_on_several_gpus_give_the_reference_digest files_on_several_gpus_give_the_reference_digest"

# Every device mode: outputs under $OUT (or ./gpu-check-out), the binaries
# in .devbin, whole processes timed by measure.py.
setup() {
    out=${OUT:-gpu-check-out}
    mkdir -p "$out"
    bin=.devbin
    m=scripts/measure.py
}

build() {
    set -e
    cargo build --release --bins --benches --features measure
    # The old build (`build-old`) is kept; everything else is made anew.
    find .devbin -mindepth 1 -maxdepth 1 ! -name old -exec rm -rf {} + 2>/dev/null || true
    mkdir -p .devbin
    cp target/release/treehash .devbin/
    # Test and bench executables, under stable names.
    cargo test --release --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        if m["target"]["kind"] == ["test"]:
            shutil.copy(m["executable"], ".devbin/test-" + m["target"]["name"])
        elif m["target"]["kind"] == ["lib"] and m["profile"]["test"] and m["target"]["name"] == "treehash":
            shutil.copy(m["executable"], ".devbin/test-lib")  # the unit tests (keccak_x8 too)
'
    cargo bench --features measure --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["bench"]:
        shutil.copy(m["executable"], ".devbin/bench-" + m["target"]["name"])
'
    # The tool's tests (cli/tests/) need this checkout's paths; CI runs them.
    rm -f .devbin/test-cli .devbin/test-cli_* .devbin/test-thread_limits
    # b3sum for the peers table, if this machine has one (cargo install b3sum).
    b3=$(command -v b3sum || ls /tmp/b3/bin/b3sum 2>/dev/null || true)
    [ -n "$b3" ] && cp "$b3" .devbin/
    # k12sum (XKCP's KangarooTwelve) for the KT128 peers, if built here
    # (cargo install k12sum --root /tmp/k12; it needs libclang-dev).
    k12=$(command -v k12sum || ls /tmp/k12/bin/k12sum 2>/dev/null || true)
    [ -n "$k12" ] && cp "$k12" .devbin/
    # The Python package's wheel (abi3: the device's Python 3.12 installs it).
    if [ -z "${GPU_CHECK_NO_WHEEL:-}" ]; then
        [ -x .venv-build/bin/maturin ] ||
            { python3 -m venv .venv-build && .venv-build/bin/pip install --quiet maturin; }
        .venv-build/bin/maturin build --release -m python/Cargo.toml -o .devbin/wheels
        # Dask's wheels for the device's Python (3.12, no internet there):
        # treehash.dask's tests and python/bench_dask.py.
        mkdir -p /tmp/dask-wheels
        ls /tmp/dask-wheels/distributed-*.whl >/dev/null 2>&1 ||
            .venv-build/bin/pip download --quiet --only-binary=:all: --python-version 3.12 \
                --platform manylinux2014_x86_64 -d /tmp/dask-wheels 'dask[distributed]'
        mkdir -p .devbin/wheels/dask && cp /tmp/dask-wheels/*.whl .devbin/wheels/dask/
    fi
    strip .devbin/* 2>/dev/null || true   # the device tool carries at most 64 MiB (wheels/ is a folder)
    ls -la .devbin
    du -sh .devbin
}

run() {
    setup
    summary=()
    step() { # name, command...
        local name=$1; shift
        local start=$(date +%s%N)
        if "$@" >"$out/$name.log" 2>&1; then
            summary+=("PASS  $name  ($(( ($(date +%s%N) - start) / 1000000 )) ms)")
        else
            summary+=("FAIL  $name  (see $name.log)")
            tail -n 30 "$out/$name.log"
        fi
    }
    { date -u; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nproc; free -g;
      lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket"; } >"$out/machine.log" 2>&1
    cat "$out/machine.log"

    # The tests of two GPUs (ignored with "needs two CUDA GPUs") fail where
    # there is one: there they are left out by name, and the summary says
    # that they were not run.
    local gpus skips=()
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c "^GPU")
    if [ "$gpus" -lt 2 ]; then
        for t in $TWO_GPU_TESTS; do skips+=(--skip "$t"); done
    fi
    # tests/gpu.rs holds the GPU tests of both kinds of function (LI trees
    # and the standard functions); tests/gpu_device.rs those of inputs
    # already on the GPU, both kinds too.
    step gpu-tests "$bin/test-gpu" --ignored --test-threads=1 "${skips[@]}"
    step gpu-list-tests "$bin/test-gpu_list" --ignored --test-threads=1
    step gpu-device-tests "$bin/test-gpu_device" --ignored --test-threads=1
    if [ "$gpus" -lt 2 ]; then
        summary+=("NOT RUN  the two-GPU tests ($TWO_GPU_TESTS): this machine has $gpus GPU(s)")
    fi
    # The CPU suites on this host's CPU, the GPU tests of test-lib and of
    # test-parts (parts made on the GPU, both kinds) included.
    # Their SIMD tests run where the CPU that built them (here) has the
    # feature (build.rs): built on an AVX-512 CPU, they fail on a host without
    # it rather than pass unchecked.
    for t in lib vectors differential empty_subtrees input large_trees list nesting parts; do
        step "cpu-$t" "$bin/test-$t" --include-ignored
    done
    step kernel-compile "$bin/test-kernels_compile" --ignored

    # CLI: the fallback note, the GPU error code, stdin to the GPU.
    head -c $((1 << 20)) /dev/urandom >/tmp/f1m
    head -c $((300 << 20)) /dev/urandom >/tmp/f300m
    cli() {
        "$bin/treehash" --backend gpu -H 0 /tmp/f1m || return 1
        local want
        want=$(python3 -c 'import hashlib;print(hashlib.sha3_256(open("/tmp/f1m","rb").read()).hexdigest())')
        echo "python sha3_256: $want"
        [ "$("$bin/treehash" --backend gpu -H 0 --no-names /tmp/f1m)" = "$want" ] || return 1
        local a b c d
        a=$("$bin/treehash" --backend gpu --no-names /tmp/f300m) || return 1
        b=$("$bin/treehash" --backend cpu --no-names /tmp/f300m) || return 1
        c=$(cat /tmp/f300m | "$bin/treehash" --backend gpu --no-names -) || return 1
        d=$("$bin/treehash" --json /tmp/f300m) || return 1
        echo "gpu $a"; echo "cpu $b"; echo "gpu stdin $c"; echo "auto json: $d"
        [ "$a" = "$b" ] && [ "$a" = "$c" ] || return 1
        echo "$d" | grep -q "\"digest\":\"$a\"" || return 1
        "$bin/treehash" --backend gpu --device 99 /tmp/f1m
        [ $? -eq 3 ] || return 1
        echo "exit code for a missing device: 3"
        # Under auto, -v says why an input too short for a GPU stayed on the CPU.
        local said
        said=$("$bin/treehash" -v /tmp/f1m 2>&1 >/dev/null)
        echo "-v on 1 MiB: $said"
        case $said in *"no GPU was started: no input was long enough"*) ;; *) return 1 ;; esac
        said=$("$bin/treehash" -v -H 0 /tmp/f1m 2>&1 >/dev/null)
        echo "-v -H 0 on 1 MiB: $said"
        case $said in *"no GPU was started: a tree of one leaf"*) ;; *) return 1 ;; esac
        # Files of one piece (read below 256 KiB, mapped above) agree on every backend.
        rm -rf /tmp/one-piece && mkdir -p /tmp/one-piece
        for n in 0 1 135 136 137 262143 262144 262145 1048583; do
            head -c "$n" /dev/urandom >"/tmp/one-piece/f$n"
        done
        local x y z
        x=$("$bin/treehash" --backend cpu /tmp/one-piece/*) || return 1
        y=$("$bin/treehash" --backend gpu /tmp/one-piece/*) || return 1
        z=$("$bin/treehash" /tmp/one-piece/*) || return 1
        [ "$x" = "$y" ] && [ "$x" = "$z" ] || return 1
        echo "one-piece files: cpu, gpu and auto agree on $(echo "$x" | wc -l) files"
        # The standard functions: GPU, CPU and auto agree, files and stdin.
        local f
        for f in kt128 kt256 parallelhash128 parallelhash256 turboshake128; do
            x=$("$bin/treehash" --backend cpu -a "$f" --no-names /tmp/f300m) || return 1
            y=$("$bin/treehash" --backend gpu -a "$f" --no-names /tmp/f300m) || return 1
            z=$("$bin/treehash" -a "$f" --no-names - </tmp/f300m) || return 1
            echo "$f 300 MiB: cpu $x"
            [ "$x" = "$y" ] && [ "$x" = "$z" ] || { echo "$f: gpu $y auto-stdin $z"; return 1; }
        done
        echo "standard functions: cpu, gpu and auto (stdin) agree on 300 MiB"
        # Parts of a standard function on the GPU join to the CPU's digest.
        for f in kt128 parallelhash256; do
            x=$("$bin/treehash" --backend cpu -a "$f" --no-names /tmp/f300m) || return 1
            for i in 0 1 2; do
                "$bin/treehash" part --backend gpu -a "$f" --parts 3 --index $i /tmp/f300m -o /tmp/sp$i || return 1
            done
            y=$("$bin/treehash" join --no-names /tmp/sp0 /tmp/sp1 /tmp/sp2) || return 1
            echo "$f parts on the GPU joined: $y"
            [ "$x" = "$y" ] || return 1
        done
    }
    step cli-smoke cli

    # Time from process start to digest for 1 MiB: cold kernel cache, then warm.
    startup() {
        export TREEHASH_CACHE_DIR=/tmp/treehash-cache
        rm -rf "$TREEHASH_CACHE_DIR"
        for run in cold warm warm; do
            local s=$(date +%s%N)
            "$bin/treehash" --backend gpu --timings -H 8 /tmp/f1m
            echo "$run: $(( ($(date +%s%N) - s) / 1000000 )) ms from process start to digest"
        done
    }
    step startup-1mib startup

    if [ -z "${GPU_CHECK_QUICK:-}" ]; then
        gb=${BENCH_GB:-8}
        random_file /tmp/bench.bin "$gb"
        cat /tmp/bench.bin >/dev/null
        step gpu-bench env TREEHASH_BENCH_FILE=/tmp/bench.bin "$bin/bench-gpu"
        cat "$out/gpu-bench.log"
        whole() { # whole processes on the benchmark file: wall time and phases
            for backend in gpu cpu; do
                local s=$(date +%s%N)
                "$bin/treehash" --backend "$backend" --timings /tmp/bench.bin || return 1
                echo "$backend: $(( ($(date +%s%N) - s) / 1000000 )) ms wall, whole process"
            done
        }
        step whole-process whole
        cat "$out/whole-process.log"
    fi

    echo
    echo "== gpu-check summary ($(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
    printf '%s\n' "${summary[@]}" | tee "$out/summary.log"
    grep -E "^test result|passed|failed" "$out/gpu-tests.log" | tail -3
    cat "$out/startup-1mib.log" | grep -E "ms from|init|compile|total" || true
}

tables() {
    setup
    md="$out/tables.md"   # every table in one file (the device tool returns 8 files at most)
    { echo "# treehash tables, $(date -u +%F)"; echo;
      echo '```'; nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket"; echo '```'; echo; } >"$md"
    "$bin/bench-cpu" | tee -a "$md"
    # The seed paper's file sizes (Table 1), H = 0..4 and larger heights.
    for size in 1050112 10500096 25200000 50400000; do
        head -c "$size" /dev/urandom >"/tmp/paper-$size.bin"
        echo >>"$md"
        "$bin/treehash" bench "/tmp/paper-$size.bin" --heights 0..=8 --repeat 5 --vs-plain \
            --backend cpu,gpu --no-progress --plot "$out/paper-$size.svg" | tee -a "$md"
    done
    for gb in 1 8; do
        random_file "/tmp/big-$gb.bin" "$gb"
        local reps=$(( gb == 1 ? 3 : 1 ))
        echo >>"$md"
        "$bin/treehash" bench "/tmp/big-$gb.bin" --heights 2..=10 --repeat "$reps" --vs-plain \
            --backend cpu,gpu --no-progress --plot "$out/big-${gb}g.svg" | tee -a "$md"
    done
    # The CPU at few leaves: is H = 4 short of parallel work (32 groups of
    # eight leaves for 16 threads) or of something else?
    { echo; echo "## CPU by threads and piece size, 8 GiB"; echo;
      for t in 4 8 16; do
          "$bin/treehash" bench /tmp/big-8.bin --heights 4,5,6 --backend cpu --threads $t \
              --repeat 1 --no-progress | grep -E "^\| cpu" | sed "s/^/threads $t /"
      done
      "$bin/treehash" bench /tmp/big-8.bin --heights 4 --backend cpu --piece-bytes $((128 << 20)) \
          --repeat 1 --no-progress | grep -E "^\| cpu" | sed "s/^/threads 16, 128 MiB pieces (the most) /"
    } | tee -a "$md"
    echo >>"$md"
    REPEAT=3 scripts/bench-peers.sh /tmp/big-8.bin "$bin/treehash" | tee -a "$md"
}

# Whole processes under auto against each backend and b3sum, by file size
# and height (median of 5, page-cached, all in one run): is auto never
# slower than the faster backend, and how does it stand against b3sum?
auto_table() {
    setup
    md="$out/auto.md"
    reps=${REPS:-5}
    { echo "# auto against each backend, $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | tr '\n' ' ')"
      lscpu | grep -E "Model name|^CPU\(s\)"; echo
      echo "| file | tree | --backend cpu s | --backend gpu s | auto s | auto / best | b3sum s | cat s |"
      echo "|---|---|---:|---:|---:|---:|---:|---:|"
      for size in ${SIZES:-1M 64M 1G 8G 32G}; do
          f=/tmp/auto-$size.bin
          case $size in
              8G) random_file $f 8 ;; 32G) random_file $f 32 ;;
              *) random_file /tmp/src-1g.bin 1; head -c $size /tmp/src-1g.bin >$f ;;
          esac
          cat $f >/dev/null
          b3=$($m --repeat $reps -- "$bin/b3sum" $f | cut -d'|' -f3)
          ct=$($m --repeat $reps -- cat $f | cut -d'|' -f3)
          for tree in "-H 8" "-H 4 -D 4"; do
              row="| $size | $tree"
              for b in cpu gpu auto; do
                  t=$($m --repeat $reps -- "$bin/treehash" --backend $b $tree $f | cut -d'|' -f3)
                  row="$row | $t"
                  eval "t_$b=\$t"
              done
              ratio=$(python3 -c "print(f'{$t_auto / min($t_cpu, $t_gpu):.2f}')")
              echo "$row | $ratio | $b3 | $ct |"
          done
          [ "$size" = 8G ] && "$bin/treehash" --timings -H 8 $f >"$out/auto-8g-timings.log" 2>&1
          [ "$size" = 32G ] && rm -f $f
      done; } | tee "$md"
    cat "$out/auto-8g-timings.log" 2>/dev/null
}

# A file of `gib` GiB of random bytes at `path`, written fast: 1 GiB of
# /dev/urandom repeated (the content does not change any tool's speed).
random_file() { # path gib
    [ -f "$1" ] && [ "$(stat -c %s "$1")" = $(( $2 << 30 )) ] && return
    head -c $((1 << 30)) /dev/urandom >/tmp/one-gib.bin
    for _ in $(seq "$2"); do cat /tmp/one-gib.bin; done >"$1"
    sync
}

input() {
    setup
    PATH="$PATH:$bin"
    md="$out/input.md"
    big=${INPUT_DIR:-/tmp}/input-8g.bin
    random_file "$big" 8
    {
        echo "# The input path, $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
        lscpu | grep -E "Model name|^CPU\(s\)"; uname -r; df -h "$(dirname "$big")" | tail -1
        echo
        for state in cold cached; do
            echo "## 8 GiB, $state (whole processes; median of ${ROUNDS:-2}, each run listed)"
            echo
            echo "| command | median s | runs | peak RSS |"
            echo "|---|---:|---|---:|"
            if [ $state = cold ]; then how=(--cold "$big" --repeat "${ROUNDS:-2}"); else cat "$big" >/dev/null; how=(--repeat 3); fi
            $m "${how[@]}" --label "cat FILE > /dev/null" -- cat "$big"
            command -v b3sum >/dev/null && $m "${how[@]}" --label "b3sum FILE" -- b3sum "$big"
            for h in 8 4; do
                for b in cpu gpu; do
                    $m "${how[@]}" --label "treehash --backend $b -H $h" -- "$bin/treehash" --backend $b -H $h "$big"
                done
            done
            $m "${how[@]}" --label "treehash -H 4 -D 4 (auto)" -- "$bin/treehash" -H 4 -D 4 "$big"
            $m "${how[@]}" --label "treehash --backend cpu -H 8 < FILE (stdin)" -- sh -c "exec $bin/treehash --backend cpu -H 8 < $big"
            $m "${how[@]}" --label "cat FILE | treehash --backend cpu -H 8 (pipe)" -- sh -c "cat $big | $bin/treehash --backend cpu -H 8"
            echo
        done
        if [ -n "${INPUT_32G:-}" ]; then
            huge=${INPUT_DIR:-/tmp}/input-32g.bin
            random_file "$huge" 32
            echo "## 32 GiB: peak RSS (one run each)"
            echo
            echo "| command | s | runs | peak RSS |"
            echo "|---|---:|---|---:|"
            for b in cpu gpu; do
                $m --cold "$huge" --repeat 1 --label "cold: treehash --backend $b -H 8" -- "$bin/treehash" --backend $b -H 8 "$huge"
                $m --repeat 1 --label "cached: treehash --backend $b -H 8" -- "$bin/treehash" --backend $b -H 8 "$huge"
            done
            command -v b3sum >/dev/null && $m --repeat 1 --label "cached: b3sum" -- b3sum "$huge"
            rm -f "$huge"
        fi
    } 2>&1 | tee "$md"
}

# Several GPUs (nvidia-h200-x2): can the host feed every link at once (pinned
# copies and the staging pipeline without kernels, one GPU and all), the
# tests that share leaves or chunks between engines (tests/gpu.rs, LI trees
# and the standard functions), and whole processes on a
# page-cached file (MULTI_GB, default 32) with one GPU and all of them.
# MULTI_SKIP_HOST=1 leaves out the host's ceiling (benches/gpu_host.rs);
# MULTI_TESTS names the GPU tests to run (default: those that share leaves
# or chunks;
# an empty string that matches every test runs them all).
multi() {
    setup
    md="$out/multi.md"
    f=/tmp/multi.bin
    { echo "# Several GPUs, $(date -u +%F)"; echo; echo '```'
      nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv; nvidia-smi topo -m
      lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA"; free -g; echo '```'; } >"$md"
    "$bin/test-gpu" --ignored --test-threads=1 ${MULTI_TESTS:-every_gpu auto_ backend_gpu gpus_begun} \
        --nocapture >"$out/multi-tests.log" 2>&1
    { echo; echo "Tests that share leaves (test-gpu ${MULTI_TESTS:-every_gpu auto_ backend_gpu gpus_begun}):"; echo
      grep -E "^test |^test result|^input " "$out/multi-tests.log"; } >>"$md"
    random_file $f "${MULTI_GB:-32}"
    cat $f >/dev/null
    [ -z "${MULTI_SKIP_HOST:-}" ] &&
        TREEHASH_BENCH_TOGETHER_ONLY=1 TREEHASH_BENCH_FILE=$f "$bin/bench-gpu_host" >>"$md" 2>&1
    { echo; echo "## Whole processes, ${MULTI_GB:-32} GiB page-cached, -H 8 (median of 3)"; echo
      echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
      for d in 0 1 all; do
          $m --repeat 3 --label "treehash --backend gpu --device $d" -- "$bin/treehash" --backend gpu --device $d -H 8 $f
      done
      $m --repeat 3 --label "treehash --backend cpu" -- "$bin/treehash" --backend cpu -H 8 $f
      $m --repeat 3 --label "treehash (auto, every GPU)" -- "$bin/treehash" -H 8 $f
      $m --repeat 3 --label "treehash --device 0 (auto)" -- "$bin/treehash" --device 0 -H 8 $f
      $m --repeat 3 --label "b3sum ($(nproc) threads)" -- "$bin/b3sum" $f
      $m --repeat 3 --label "cat" -- cat $f
      echo; echo "Timings and the split, one run each:"; echo; echo '```'
      for d in 0 all; do
          echo "--backend gpu --device $d:"
          TREEHASH_TRACE=1 "$bin/treehash" --backend gpu --device $d --timings -H 8 $f 2>&1 |
              awk '!/piece of/ || ++n % 40 == 1' | tail -60
      done
      echo '```'; } 2>&1 | tee -a "$md"
}

# Two GPUs sharing one file (issue 33), on a machine of two: the host's
# ceiling for feeding both with no hashing (benches/gpu_host.rs: pinned
# copies and the staging pipeline on each GPU alone and on both at once),
# then whole processes in interleaved rounds (ROUNDS, default 3) on a
# page-cached file of TWO_GB GiB (default 16): one GPU, both GPUs, and both
# with the old build (.devbin/old), for LI H = 8 and KT128; then one run of
# each with --timings and the engines' shares.
two() {
    setup
    local f=/tmp/two.bin gb=${TWO_GB:-16} rounds=${ROUNDS:-3}
    local old=$bin/old/treehash new=$bin/treehash
    random_file $f "$gb"
    cat $f >/dev/null
    { echo "# Two GPUs sharing one file, $(date -u +%F)"; echo
      echo "new: $(cat "$bin/COMMIT" 2>/dev/null), old: $(cat "$bin/old/COMMIT" 2>/dev/null)"; echo; echo '```'
      nvidia-smi --query-gpu=index,name,pci.bus_id --format=csv
      lscpu | grep -E "Model name|^CPU\(s\)|NUMA node\(s\)"; echo '```'; echo
      TREEHASH_BENCH_TOGETHER_ONLY=1 TREEHASH_BENCH_FILE=$f timeout 300 "$bin/bench-gpu_host" 2>&1
      for a in "-H 8" "-a kt128"; do
          declare -A times=() digests=()
          local runs=("new|--device 0" "new|--device 0,1" "old|--device 0,1")
          # Shares of half a piece each, as an even split gave before (LI).
          [ "$a" = "-H 8" ] && runs+=("new|--device 0,1 --piece-bytes 16777216")
          for _ in $(seq "$rounds"); do
              for run in "${runs[@]}"; do
                  local b=$new; [ "${run%%|*}" = old ] && b=$old
                  local start=$(date +%s%N)
                  # shellcheck disable=SC2086
                  digests[$run]=$("$b" --backend gpu ${run#*|} $a --no-names $f)
                  times[$run]+="$(( ($(date +%s%N) - start) / 1000000 )) "
              done
          done
          echo; echo "## --backend gpu $a, $gb GiB, whole processes, interleaved ($rounds rounds)"; echo
          echo "| build | devices | median ms | runs (ms) | digest |"; echo "|---|---|---:|---|---|"
          for run in "${runs[@]}"; do
              local med; med=$(tr ' ' '\n' <<<"${times[$run]}" | grep . | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
              echo "| ${run%%|*} | ${run#*|} | $med | ${times[$run]}| ${digests[$run]:0:16} |"
          done
          echo; echo '```'
          for run in "${runs[@]}"; do
              local b=$new; [ "${run%%|*}" = old ] && b=$old
              echo "${run%%|*} --backend gpu ${run#*|} $a --timings:"
              # shellcheck disable=SC2086
              TREEHASH_TRACE=1 "$b" --backend gpu ${run#*|} $a --timings --no-names $f 2>&1 |
                  grep -vE "piece of|leaves moved|gave|took" | tail -22
          done
          echo '```'
      done
    } 2>&1 | tee "$out/two.md"
}

# The CPU on every core of a large host (issue 33): KT128 and LI H = 8 at
# 16 threads and at every CPU, beside k12sum and b3sum, in interleaved
# rounds (ROUNDS, default 3) on the page-cached file of `two`; then the
# probes that hash nothing: reading the file from 16 and from every CPU
# (dd processes on its parts) and the permutation kernels on every core
# (benches/permutations.rs).
cores_all() {
    setup
    local f=/tmp/two.bin gb=${TWO_GB:-16} rounds=${ROUNDS:-3} n
    n=$(nproc)
    random_file $f "$gb"
    cat $f >/dev/null
    local th=$bin/treehash
    read_probe() { # threads: dd processes reading one part each, no hashing
        local t=$1 size part start
        size=$(stat -c %s $f); part=$(( size / t ))
        start=$(date +%s%N)
        for i in $(seq 0 $(( t - 1 ))); do
            dd if=$f of=/dev/null bs=1M iflag=skip_bytes,count_bytes skip=$(( i * part )) count=$part status=none &
        done
        wait
        echo $(( ($(date +%s%N) - start) / 1000000 ))
    }
    { echo "# Every core, $(date -u +%F), $n CPUs, $gb GiB page-cached"; echo
      lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA"; echo
      declare -A times=()
      local runs=("treehash -a kt128 --backend cpu --threads 16" "treehash -a kt128 --backend cpu --threads $n"
                  "k12sum --num-threads 16" "k12sum"
                  "b3sum --num-threads 16" "b3sum"
                  "treehash -H 8 --backend cpu --threads 16" "treehash -H 8 --backend cpu --threads $n")
      for _ in $(seq "$rounds"); do
          for run in "${runs[@]}"; do
              local start=$(date +%s%N)
              # shellcheck disable=SC2086
              "$bin/"$run $f >/dev/null
              times[$run]+="$(( ($(date +%s%N) - start) / 1000000 )) "
          done
          times[read16]+="$(read_probe 16) "
          times[readall]+="$(read_probe "$n") "
      done
      echo "| command | median ms | runs (ms) |"; echo "|---|---:|---|"
      for run in "${runs[@]}" read16 readall; do
          local med; med=$(tr ' ' '\n' <<<"${times[$run]}" | grep . | sort -n | sed -n "$(( (rounds + 1) / 2 ))p")
          local label=$run
          [ "$run" = read16 ] && label="probe: 16 dd processes read the file (no hashing)"
          [ "$run" = readall ] && label="probe: $n dd processes read the file (no hashing)"
          echo "| $label | $med | ${times[$run]}|"
      done
      echo; echo '```'
      for t in 16 "$n"; do
          echo "treehash -a kt128 --backend cpu --threads $t --timings:"
          "$th" -a kt128 --backend cpu --threads "$t" --timings --no-names $f 2>&1 | tail -8
      done
      echo '```'; echo
      TREEHASH_BENCH_SECONDS=0.2 timeout 120 "$bin/bench-permutations" 2>&1 | head -30
    } 2>&1 | tee "$out/cores-all.md"
}

# The CPU engine by threads at H = 8 on a page-cached 8 GiB file, with its
# own piece length and with the 4-stripe pieces it used before; then two
# one-thread runs at once, pinned to vCPU 0 and vCPU k: a k that slows both
# down shares a physical core with 0.
cores() {
    setup
    md="$out/cores.md"
    f=/tmp/cores-8g.bin
    random_file $f 8
    cat $f >/dev/null
    four_stripes=$((4 * 65536 * 136))   # 4 stripes of SHA3-256 at H = 8, D = 4
    { echo "# The CPU engine by threads, $(date -u +%F)"; echo
      lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket|NUMA|L2|L3"; echo
      echo "## Whole processes, --backend cpu -H 8, 8 GiB page-cached (median of 3)"; echo
      echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
      for t in 1 2 4 8 16; do
          $m --repeat 3 --label "--threads $t, its pieces" -- "$bin/treehash" --backend cpu --threads $t -H 8 $f
          $m --repeat 3 --label "--threads $t, 4-stripe pieces" -- "$bin/treehash" --backend cpu --threads $t -H 8 --piece-bytes $four_stripes $f
      done
      echo; echo "## One thread each on vCPU 0 and vCPU k at once (1 GiB, -H 6, whole processes, ms)"; echo
      head -c $((1 << 30)) $f >/tmp/cores-1g.bin
      one() { local s=$(date +%s%N); taskset -c "$1" "$bin/treehash" --backend cpu --threads 1 -H 6 /tmp/cores-1g.bin >/dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
      echo "vCPU 0 alone: $(one 0) ms; vCPU 1 alone: $(one 1) ms"; echo
      echo "| k | vCPU 0 ms | vCPU k ms |"; echo "|---:|---:|---:|"
      for k in $(seq 1 $(( $(nproc) - 1 ))); do
          one 0 >/tmp/a.ms & one $k >/tmp/b.ms; wait
          echo "| $k | $(cat /tmp/a.ms) | $(cat /tmp/b.ms) |"
      done
    } 2>&1 | tee "$md"
}

# Lists of files (issue 22): scripts/bench-lists.py, with the 8 GiB file for
# the single-file rates the list targets are set against.
lists() {
    setup
    random_file /tmp/big-8.bin 8
    # The bare permutation rate (no hashing around it), the kernels' ceiling.
    "$bin/bench-permutations" 2>&1 | tee "$out/permutations.md"
    # Its all-core AVX-512 row (M states/s per thread) sets each list's
    # time against the kernel's bound too ("kernel s").
    rate=$(awk -F'|' '/avx512/ && $3 + 0 > 1 { print $4 + 0 }' "$out/permutations.md")
    python3 scripts/bench-lists.py "$PWD/$bin/treehash" --b3sum "$PWD/$bin/b3sum" \
        --big-file /tmp/big-8.bin --perm-rate "${rate:-0}" --repeat "${REPS:-5}" | tee "$out/lists.md"
}

# The Python package on the GPU machine (its own Python, which has pytest):
# the wheel installed into a folder of its own, every test (the GPU ones
# included, which use the driver through ctypes), then python/bench.py's
# targets on an 8 GiB file.
python_pkg() {
    setup
    site=/tmp/treehash-site
    rm -rf "$site"
    python3 -m pip install --quiet --no-index --no-deps --target "$site" "$bin"/wheels/treehash-*.whl
    ls "$bin"/wheels/dask/*.whl >/dev/null 2>&1 &&
        python3 -m pip install --quiet --no-index --no-deps --target "$site" "$bin"/wheels/dask/*.whl
    export PYTHONPATH="$site"
    TREEHASH_CLI="$PWD/$bin/treehash" python3 -m pytest -q -rs python/tests 2>&1 | tee "$out/python-tests.log"
    random_file /tmp/big-8.bin 8
    # -P: the package is the installed one, not python/treehash beside the script.
    python3 -P python/bench.py /tmp/big-8.bin --cli "$bin/treehash" --repeat 5 --device-gib 8 2>&1 |
        tee "$out/python-bench.log"
    # Issue 25's Dask target: 4 workers of 4 threads against one process of 16.
    python3 -P python/bench_dask.py /tmp/big-8.bin --cli "$bin/treehash" --workers 4 --threads 4 \
        --cli-threads 16 --repeat 3 2>&1 | tee "$out/dask-bench.log"
}

# Large trees (issue 21): scripts/large-trees.sh on an 8 GiB page-cached file.
trees() {
    setup
    random_file /tmp/big-8.bin 8
    scripts/large-trees.sh "$bin/treehash" /tmp/big-8.bin "${REPS:-5}" | tee "$out/large-trees.md"
}

# The standard functions next to their peers (issue 23), whole processes,
# page-cached, median of REPS (default 5), each block one run: KT128 on one
# thread against k12sum's, on every core against k12sum and b3sum, a 1 KiB
# input, and ParallelHash256 against SHA3-256 LI at H = 8 (the same
# permutation work per byte). GPU rows are skipped where the GPU has no
# engine for the function yet.
kt() {
    setup
    reps=${REPS:-5}
    random_file /tmp/big-8.bin 8
    head -c $((1 << 30)) /tmp/big-8.bin >/tmp/one-gib.bin
    head -c 1024 /tmp/big-8.bin >/tmp/one-kib.bin
    cat /tmp/big-8.bin /tmp/one-gib.bin >/dev/null
    th=$bin/treehash
    { echo "# Standard functions, $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
      lscpu | grep -E "Model name|^CPU\(s\)"; echo
      echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
      $m --repeat "$reps" --label "k12sum --num-threads 1, 1 GiB" -- "$bin/k12sum" --num-threads 1 /tmp/one-gib.bin
      $m --repeat "$reps" --label "treehash -a kt128 --threads 1, 1 GiB" -- "$th" --backend cpu --threads 1 -a kt128 /tmp/one-gib.bin
      $m --repeat "$reps" --label "b3sum --num-threads 1, 1 GiB" -- "$bin/b3sum" --num-threads 1 /tmp/one-gib.bin
      $m --repeat "$reps" --label "k12sum, 8 GiB" -- "$bin/k12sum" /tmp/big-8.bin
      $m --repeat "$reps" --label "treehash -a kt128 --backend cpu, 8 GiB" -- "$th" --backend cpu -a kt128 /tmp/big-8.bin
      $m --repeat "$reps" --label "treehash -a kt128 (auto), 8 GiB" -- "$th" -a kt128 /tmp/big-8.bin
      $m --repeat "$reps" --label "b3sum, 8 GiB" -- "$bin/b3sum" /tmp/big-8.bin
      $m --repeat "$reps" --label "treehash -a kt256 --backend cpu, 8 GiB" -- "$th" --backend cpu -a kt256 /tmp/big-8.bin
      $m --repeat "$reps" --label "treehash -a parallelhash256 --backend cpu, 8 GiB" -- "$th" --backend cpu -a parallelhash256 /tmp/big-8.bin
      $m --repeat "$reps" --label "treehash -a parallelhash128 --backend cpu, 8 GiB" -- "$th" --backend cpu -a parallelhash128 /tmp/big-8.bin
      $m --repeat "$reps" --label "treehash sha3-256 -H 8 --backend cpu, 8 GiB" -- "$th" --backend cpu /tmp/big-8.bin
      $m --repeat "$reps" --label "treehash -a turboshake128, 1 GiB" -- "$th" -a turboshake128 /tmp/one-gib.bin
      $m --repeat 20 --label "k12sum, 1 KiB" -- "$bin/k12sum" /tmp/one-kib.bin
      $m --repeat 20 --label "treehash -a kt128, 1 KiB" -- "$th" -a kt128 /tmp/one-kib.bin
      if "$th" --backend gpu -a kt128 /tmp/one-kib.bin >/dev/null 2>&1; then
          $m --repeat "$reps" --label "treehash -a kt128 --backend gpu, 8 GiB" -- "$th" --backend gpu -a kt128 /tmp/big-8.bin
      fi
      echo
      echo "digests: $("$th" -a kt128 --no-names /tmp/big-8.bin) (treehash) / $("$bin/k12sum" /tmp/big-8.bin | cut -d' ' -f1) (k12sum)"
    } | tee "$out/kt.md"
    timeout 180 "$bin/bench-cpu" 2>&1 | grep -iE "KT128|KT256|Parallel|chunk" | tee "$out/bench-cpu-chunks.log"
}

# KT128 under auto against each backend, 1 MiB to 32 GiB (issue 23: auto
# within 5 % of the faster backend; at 32 GiB faster than k12sum and b3sum),
# whole processes, page-cached, median of REPS (default 3), one run.
kt_auto() {
    setup
    reps=${REPS:-3}
    random_file /tmp/big-32.bin 32
    head -c $((1 << 20)) /tmp/big-32.bin >/tmp/kt-1m.bin
    head -c $((64 << 20)) /tmp/big-32.bin >/tmp/kt-64m.bin
    head -c $((1 << 30)) /tmp/big-32.bin >/tmp/kt-1g.bin
    head -c $((8 << 30)) /tmp/big-32.bin >/tmp/kt-8g.bin
    th=$bin/treehash
    { echo "# KT128: auto against each backend, $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
      echo; echo "| command | median s | runs | peak RSS |"; echo "|---|---:|---|---:|"
      for f in /tmp/kt-1m.bin /tmp/kt-64m.bin /tmp/kt-1g.bin /tmp/kt-8g.bin /tmp/big-32.bin; do
          cat "$f" >/dev/null
          for b in cpu gpu auto; do
              $m --repeat "$reps" --label "kt128 --backend $b, $(basename "$f")" -- "$th" -a kt128 --backend "$b" "$f"
          done
      done
      $m --repeat "$reps" --label "k12sum, 32 GiB" -- "$bin/k12sum" /tmp/big-32.bin
      $m --repeat "$reps" --label "b3sum, 32 GiB" -- "$bin/b3sum" /tmp/big-32.bin
    } | tee "$out/kt-auto.md"
    rm -f /tmp/kt-8g.bin
}

# Old against new builds (a refactor must be no slower, issue 32): the
# binary and wheel of the old commit in .devbin/old/ (scripts/gpu-check.sh
# build-old COMMIT, here), the new ones in .devbin/. Each row runs both in
# turn, ROUNDS times (whole processes, page-cached, medians), and checks
# that their digests agree; then device_digest with each wheel, in turn.
refactor() {
    setup
    local old=$bin/old/treehash new=$bin/treehash rounds=${ROUNDS:-5}
    random_file /tmp/big-8.bin 8
    ab() { scripts/ab-binaries.sh "$1" "$rounds" "$2" "$old" "$new"; }
    # Lists: 2000 small files (1 to 64 KiB) and 200 of 1 to 8 MiB.
    mkdir -p /tmp/ab-small /tmp/ab-mid
    python3 - <<'PY'
import os, random
r = random.Random(32)
block = os.urandom(8 << 20)
for i in range(2000):
    open(f"/tmp/ab-small/f{i:04}", "wb").write(block[: r.randint(1, 64) << 10])
for i in range(200):
    open(f"/tmp/ab-mid/f{i:03}", "wb").write(block[: r.randint(1, 8) << 20])
PY
    ab_list() { # label dir
        local times_old="" times_new="" d_old d_new
        cat "$2"/* >/dev/null
        for _ in $(seq "$rounds"); do
            for which in old new; do
                local b=$old; [ $which = new ] && b=$new
                local start=$(date +%s%N)
                local d; d=$("$b" "$2"/* | sha256sum)
                local ms=$(( ($(date +%s%N) - start) / 1000000 ))
                if [ $which = old ]; then times_old+="$ms "; d_old=$d; else times_new+="$ms "; d_new=$d; fi
            done
        done
        med() { tr ' ' '\n' <<<"$1" | grep . | sort -n | sed -n "$(( (rounds + 1) / 2 ))p"; }
        echo "| old | $1 | $(med "$times_old") | $times_old|"
        echo "| new | $1 | $(med "$times_new") | $times_new|"
        [ "$d_old" = "$d_new" ] || { echo "lists differ: $1" >&2; return 1; }
    }
    { echo "# Old against new, $(date -u +%F), $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1), $(nproc) CPUs"
      echo "old: $(cat "$bin/old/COMMIT" 2>/dev/null), new: $(cat "$bin/COMMIT" 2>/dev/null)"
      for b in cpu gpu auto; do ab /tmp/big-8.bin "--backend $b"; done
      for b in cpu auto; do ab /tmp/big-8.bin "--backend $b -H 4 -D 4"; done
      for f in kt128 parallelhash256; do
          for b in cpu gpu auto; do ab /tmp/big-8.bin "-a $f --backend $b"; done
      done
      echo; echo "| build | list | median ms | runs (ms) |"; echo "|---|---|---:|---|"
      ab_list "2000 files of 1-64 KiB" /tmp/ab-small
      ab_list "200 files of 1-8 MiB" /tmp/ab-mid
      echo
      for which in old new; do
          rm -rf "/tmp/site-$which"
          python3 -m pip install --quiet --no-index --no-deps --target "/tmp/site-$which" \
              "$bin/$( [ $which = old ] && echo old/ )"wheels/treehash-*.whl
      done
      for _ in 1 2; do
          for which in old new; do
              for f in sha3-256 kt128; do
                  PYTHONPATH=/tmp/site-$which python3 -P scripts/device-digest-time.py \
                      "device_digest-$which" 8 5 "$f"
              done
          done
      done
    } 2>&1 | tee "$out/refactor.md"
}

# Here: the old commit's binary and wheel into .devbin/old/ for `refactor`.
build_old() {
    set -e
    local commit=${1:?build-old COMMIT} tree=/tmp/treehash-old
    rm -rf "$tree" && git worktree add -f "$tree" "$commit"
    (cd "$tree" && CARGO_TARGET_DIR=/tmp/treehash-old-target cargo build --release --bin treehash)
    mkdir -p .devbin/old/wheels
    cp /tmp/treehash-old-target/release/treehash .devbin/old/
    [ -x .venv-build/bin/maturin ] ||
        { python3 -m venv .venv-build && .venv-build/bin/pip install --quiet maturin; }
    (cd "$tree" && CARGO_TARGET_DIR=/tmp/treehash-old-target "$OLDPWD/.venv-build/bin/maturin" \
        build --release -m python/Cargo.toml -o "$OLDPWD/.devbin/old/wheels")
    git rev-parse --short "$commit" >.devbin/old/COMMIT
    strip .devbin/old/treehash
    git worktree remove --force "$tree"
}

case "${1:-}" in
    build) build; git rev-parse --short HEAD >.devbin/COMMIT ;;
    build-old) build_old "${2:-}" ;;
    refactor) refactor ;;
    run) run ;;
    input) input ;;
    tables) tables ;;
    auto) auto_table ;;
    multi) multi ;;
    two) two ;;
    cores-all) cores_all ;;
    cores) cores ;;
    lists) lists ;;
    python) python_pkg ;;
    trees) trees ;;
    kt) kt ;;
    kt-auto) kt_auto ;;
    *) echo "usage: $0 build|build-old COMMIT|run|refactor|input|tables|auto|multi|two|cores-all|cores|lists|python|trees|kt|kt-auto" >&2; exit 2 ;;
esac
