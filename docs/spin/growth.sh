#!/bin/sh
# flushcheck exhaustive beside SPIN (docs/exhaustive.md, sections 8 and 9):
# v6.0 without the periodic work, batch 2, 3-page updates, one reader, on
# N CPUs x U updates. Per configuration, one after the other in one run:
# SPIN on docs/spin/flush.pml (-O2, safety only, MEMLIM MB; the verifier
# with full state storage and with hash compaction, -DHC4, the storage
# flushcheck uses), flushcheck's reduced search (CPU symmetry, one worker
# per core) and its plain stateful search (one worker, BUDGET seconds).
# The verifiers and the reduced search run REPS times, alternated; their
# columns are medians of whole-process wall times. With VERDICTS=1 SPIN
# also checks flushcheck's maximum M of stale_at_no_flush: its assertion
# must fail at LIMIT = M - 1 and hold at LIMIT = M.
# Needs spin, gcc and bc; run from the crate root after cargo build
# --release. A verifier stopped by its memory limit or after SPIN_TIMEOUT
# seconds (300) did not finish: its states carry a +.
# Usage: docs/spin/growth.sh [N:U ...]
set -e
pml=$(cd "$(dirname "$0")" && pwd)/flush.pml
fc=$(pwd)/target/release/flushcheck
memlim=${MEMLIM:-4096}
budget=${BUDGET:-120}
reps=${REPS:-1}
cap=${SPIN_TIMEOUT:-300}
work=$(mktemp -d)
cd "$work"
configs=${*:-"2:3 3:1 3:2 3:3 4:1 4:2 5:1 5:2"}
now() { date +%s.%N; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)]}'; }
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; medians of $reps"
printf '%-4s %-3s | %-11s %-6s %-6s %-6s | %-8s %-6s | %-9s %-7s | %-6s %s\n' cpus upd \
    "spin states" pan hc4 e2e reduced secs plain secs ratio agree
for c in $configs; do
    n=${c%:*}
    u=${c#*:}
    start=$(now)
    spin -DN="$n" -DUPD="$u" -DVARIANT=1 -DLIMIT=100 -a "$pml" > /dev/null
    gcc -O2 -DSAFETY -DMEMLIM="$memlim" -o pan pan.c
    mid=$(now)
    out=$(timeout "$cap" ./pan 2>&1 || true)
    end=$(now)
    e2e=$(printf %.2f "$(echo "$end - $start" | bc)")
    gcc -O2 -DSAFETY -DHC4 -DMEMLIM="$memlim" -o pan-hc4 pan.c
    states=$(echo "$out" | sed -n 's/^ *\([0-9]*\) states, stored.*/\1/p')
    if [ -z "$states" ] || echo "$out" | grep -q "Search not completed"; then
        states="$states+"
    fi
    tpan="$(echo "$end - $mid" | bc)"
    thc=""
    tred=""
    for r in $(seq "$reps"); do
        if [ "$r" -gt 1 ]; then
            a=$(now); timeout "$cap" ./pan > /dev/null 2>&1 || true; b=$(now)
            tpan="$tpan $(echo "$b - $a" | bc)"
        fi
        a=$(now); timeout "$cap" ./pan-hc4 > /dev/null 2>&1 || true; b=$(now)
        thc="$thc $(echo "$b - $a" | bc)"
        a=$(now)
        rows=$("$fc" exhaustive --variant v6.0 --cpus "$n" --updates "$u" --batch 2 --val 3 \
            --no-periodic 2> /dev/null || true)
        b=$(now)
        tred="$tred $(echo "$b - $a" | bc)"
    done
    pan_s=$(echo "$tpan" | median)
    hc_s=$(echo "$thc" | median)
    red_s=$(echo "$tred" | median)
    red=$(echo "$rows" | awk '$1 == "v6.0" && $2 == "stateful" {print $4, $8}')
    set -- $red
    rstates=$1
    maxima=$2
    rows=$("$fc" exhaustive --variant v6.0 --cpus "$n" --updates "$u" --batch 2 --val 3 \
        --no-periodic --compare-plain --workers 1 --budget "$budget" 2> /dev/null || true)
    plain=$(echo "$rows" | awk '$1 == "v6.0" && $2 == "plain" {print $4, $6, $8}')
    agree=$(echo "$rows" | awk '$1 == "v6.0" && $2 == "stateful" {print $7}')
    set -- $plain
    pstates=$1 psec=$2
    [ "$3" = "(cut" ] && pstates="$pstates+"
    best=$(printf '%s\n%s\n' "$pan_s" "$hc_s" | sort -n | head -1)
    ratio=$(printf %.2f "$(echo "$red_s / $best" | bc -l)")
    printf '%-4s %-3s | %-11s %-6s %-6s %-6s | %-8s %-6s | %-9s %-7s | %-6s %s\n' "$n" "$u" \
        "$states" "$pan_s" "$hc_s" "$e2e" "$rstates" "$red_s" "$pstates" "$psec" "$ratio" "$agree"
    if [ "${VERDICTS:-0}" = 1 ] && [ -n "$maxima" ]; then
        m=${maxima%%/*}
        verdict() {
            spin -DN="$n" -DUPD="$u" -DVARIANT=1 -DLIMIT="$1" -a "$pml" > /dev/null
            gcc -O2 -DSAFETY -DHC4 -DMEMLIM="$memlim" -o pan-v pan.c
            ./pan-v 2>&1 | sed -n 's/^.*errors: \([0-9]*\).*$/\1/p'
        }
        below=$(verdict $((m - 1)))
        at=$(verdict "$m")
        echo "     flushcheck stale_at_no_flush maximum $m; SPIN errors at LIMIT $((m - 1)): $below, at LIMIT $m: $at"
    fi
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf "$work"
