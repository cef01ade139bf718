#!/bin/sh
# SPIN on docs/spin/flush.pml beside flushcheck's stateful and stateless
# searches, on the same configuration, one after the other in one run
# (docs/performance.md, section 6). Needs spin (Debian: apt-get install spin)
# and gcc; run from the crate root after cargo build --release.
set -e
pml=$(cd "$(dirname "$0")" && pwd)/flush.pml
fc=$(pwd)/target/release/flushcheck
work=$(mktemp -d)
cd "$work"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for v in 0 1 2; do
    name=$(echo "v5.19 v6.0 mutant-skip-off-by-one" | cut -d' ' -f$((v + 1)))
    start=$(date +%s.%N)
    spin -DVARIANT=$v -DLIMIT=100 -a "$pml" > /dev/null
    gcc -O2 -DSAFETY -o pan pan.c
    mid=$(date +%s.%N)
    states=$(./pan | sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p')
    end=$(date +%s.%N)
    echo "spin $name: $states states, $(echo "$end - $start" | bc) s ($(echo "$end - $mid" | bc) s without spin -a and gcc)"
    start=$(date +%s.%N)
    out=$("$fc" exhaustive --variant "$name" 2> /dev/null | grep "^$name ")
    end=$(date +%s.%N)
    echo "flushcheck stateful $name: $(echo "$out" | awk '{print $4}') states, $(echo "$out" | awk '{print $3}') schedules, $(echo "$out" | awk '{print $6}') s search, $(echo "$end - $start" | bc) s (process)"
    out=$("$fc" exhaustive --variant "$name" --compare 2> /dev/null | grep "^$name *stateless")
    echo "flushcheck stateless $name: $(echo "$out" | awk '{print $3}') schedules, $(echo "$out" | awk '{print $6}') s search"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$work"
