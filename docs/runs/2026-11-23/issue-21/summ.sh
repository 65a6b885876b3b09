#!/usr/bin/env bash
# summ.sh LOG: per binary and height: median wall ms, all walls, median user+sys s, max RSS MiB, median faults
awk '{
  split($2,h,"="); split($4,w,"="); split($5,u,"=");
  key=$1" "h[2]; user=u[2]; sys=$6; rss=$7; flt=$8;
  walls[key]=walls[key]" "w[2]; cpus[key]=cpus[key]" "(user+sys); if (rss>maxrss[key]) maxrss[key]=rss; flts[key]=flts[key]" "flt; keys[key]=1
} END { for (k in keys) print k"|"walls[k]"|"cpus[k]"|"maxrss[k]"|"flts[k] }' "$1" | sort -k2n -t' ' | while IFS='|' read -r key walls cpus rss flts; do
  med() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
  printf '%-12s wall median %6s ms  [%s]  cpu median %5s s  peak RSS %5d MiB  faults median %s\n' "$key" "$(echo $walls | med)" "$walls" "$(echo $cpus | med)" $((rss/1024)) "$(echo $flts | med)"
done
