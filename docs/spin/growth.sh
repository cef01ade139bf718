#!/bin/sh
# The growth table of docs/exhaustive.md: v6.0 without the periodic work,
# batch 2, 3-page updates, one reader, on N CPUs x U updates; per
# configuration SPIN on docs/spin/flush.pml (-O2, safety only, MEMLIM MB of
# memory), flushcheck's reduced search (CPU symmetry, one worker per core)
# and its plain stateful search (one worker, BUDGET seconds), one after the
# other in one run. Needs spin, gcc and bc; run from the crate root after
# cargo build --release. Usage: docs/spin/growth.sh [N:U ...]
set -e
pml=$(cd "$(dirname "$0")" && pwd)/flush.pml
fc=$(pwd)/target/release/flushcheck
memlim=${MEMLIM:-4096}
budget=${BUDGET:-120}
work=$(mktemp -d)
cd "$work"
configs=${*:-"2:3 3:1 3:2 3:3 4:1 4:2 5:1 5:2"}
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
printf '%-4s %-3s | %-11s %-9s %-9s | %-9s %-8s | %-9s %-8s\n' cpus upd \
    "spin states" "verifier" "spin e2e" "reduced" "seconds" "plain" "seconds"
for c in $configs; do
    n=${c%:*}
    u=${c#*:}
    start=$(date +%s.%N)
    spin -DN="$n" -DUPD="$u" -DVARIANT=1 -DLIMIT=100 -a "$pml" > /dev/null
    gcc -O2 -DSAFETY -DMEMLIM="$memlim" -o pan pan.c
    mid=$(date +%s.%N)
    out=$(./pan 2>&1 || true)
    end=$(date +%s.%N)
    states=$(echo "$out" | sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p')
    if echo "$out" | grep -q "Search not completed"; then
        states="$states+"
    fi
    verifier=$(printf %.2f "$(echo "$end - $mid" | bc)")
    e2e=$(printf %.2f "$(echo "$end - $start" | bc)")
    rows=$("$fc" exhaustive --variant v6.0 --cpus "$n" --updates "$u" --batch 2 --val 3 \
        --no-periodic --compare-plain --budget "$budget" 2> /dev/null || true)
    red=$(echo "$rows" | awk '$1 == "v6.0" && $2 == "stateful" {print $4, $6, $7, $9}')
    plain=$(echo "$rows" | awk '$1 == "v6.0" && $2 == "plain" {print $4, $6, $8}')
    set -- $red
    rstates=$1 rsec=$2 agree=$3
    set -- $plain
    pstates=$1 psec=$2
    [ "$3" = "(cut" ] && pstates="$pstates+"
    printf '%-4s %-3s | %-11s %-9s %-9s | %-9s %-8s | %-9s %-8s %s\n' "$n" "$u" \
        "$states" "$verifier" "$e2e" "$rstates" "$rsec" "$pstates" "$psec" "agree=$agree"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$work"
