#!/usr/bin/env bash
# ab.sh FILE ROUNDS "HEIGHTS" BIN... : alternating whole-process runs; one line per run
file=$1; rounds=$2; read -r -a hs <<< "$3"; shift 3
cat "$file" > /dev/null
for ((r=1; r<=rounds; r++)); do
  for h in "${hs[@]}"; do
    for bin in "$@"; do
      cat "$file" > /dev/null
      t0=$(date +%s%N)
      /usr/bin/time -f "%U %S %M %R" -o /tmp/ab.time "$bin" --backend cpu -H $h ${ARGS:-} "$file" > /tmp/ab.out
      t1=$(date +%s%N)
      echo "$(basename $bin) H=$h r=$r wall_ms=$(( (t1-t0)/1000000 )) user_sys_rsskb_faults=$(cat /tmp/ab.time) load=$(cut -d' ' -f1 /proc/loadavg) $(cut -c1-16 /tmp/ab.out)"
    done
  done
done
