#!/bin/sh
# SPIN on docs/spin/flush.pml beside flushcheck's stateful search, on the
# same configuration, one after the other in one run (docs/exhaustive.md).
# Needs spin (Debian: apt-get install spin) and gcc; run from the crate root
# after cargo build --release.
set -e
pml=$(cd "$(dirname "$0")" && pwd)/flush.pml
fc=$(pwd)/target/release/flushcheck
work=$(mktemp -d)
cd "$work"
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
    echo "flushcheck $name: $(echo "$out" | awk '{print $4}') states, $(echo "$out" | awk '{print $3}') schedules, $(echo "$end - $start" | bc) s (process)"
done
rm -rf "$work"
