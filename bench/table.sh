#!/usr/bin/env bash
# Every binding beside its vendor's tool, in one go: runs the comparison
# scripts one after another with the same SECONDS and ROUNDS, keeps each
# one's output in OUT, and ends with one Markdown table of the median ratios
# ours/reference (binding x test x mode x size; bench/lib/table.py), the
# table the docs' benchmark page keeps with its date and commit.
#   sockets_vs_sockperf.sh   parts 1-4 (udp and tcp latency and throughput)
#   cyclonedds_vs_ddsperf.sh parts 1 and 3 (latency in both modes, throughput)
#   fastdds_vs_ref.sh        parts 1 and 2 (latency and throughput, both modes)
#   zenoh_vs_ref.sh, iceoryx2_vs_ref.sh, iceoryx_vs_ref.sh (all their modes)
# The scripts' other parts (zero-copy flatness, floors, information rows)
# give no ratio against a reference and are left to the scripts themselves.
# Each script builds its reference first (before any measurement), so no
# build overlaps a measured run; nothing else should run meanwhile.
#
# usage: [OUT=DIR] [ROUNDS=3] [SCRIPTS="sockets cyclonedds fastdds zenoh iceoryx2 iceoryx"]
#        bench/table.sh [SECONDS]
#   OUT defaults to bench-results/table-<UTC time>; PUBSUBPERF=binary as for
#   the scripts; SIZES and MODES are the scripts' own defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
scripts=${SCRIPTS:-sockets cyclonedds fastdds zenoh iceoryx2 iceoryx}
out=${OUT:-bench-results/table-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(realpath "$out")
export BENCH_TABLE=$out/table.tsv ROUNDS=${ROUNDS:-3}
: > "$BENCH_TABLE"
unset SIZES MODES KINDS

failed=()
run() { # NAME SCRIPT PARTS
    local name=$1 script=$2 parts=$3 start=$SECONDS rc=0
    echo "== $name: $script${parts:+ (PARTS=\"$parts\")}, started $(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    PARTS=$parts bash "bench/$script" "$secs" > "$out/$name.log" 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then
        echo "   done in $((SECONDS - start)) s: $(grep -c ' B  median ratio' "$out/$name.log") median ratios, output in $out/$name.log"
    else
        echo "   FAILED after $((SECONDS - start)) s (exit $rc): see $out/$name.log" >&2
        tail -5 "$out/$name.log" >&2
        failed+=("$name")
    fi
}

echo "pubsubperf $(git describe --always --dirty 2>/dev/null || echo '?'), binary ${PUBSUBPERF:-${CARGO_TARGET_DIR:-target}/release/pubsubperf}, ${secs} s per run, ${ROUNDS} rounds, $(date -u '+%Y-%m-%d %H:%M') UTC"
for s in $scripts; do
    case $s in
        sockets) run sockets sockets_vs_sockperf.sh "1 2 3 4" ;;
        cyclonedds) run cyclonedds cyclonedds_vs_ddsperf.sh "1 3" ;;
        fastdds) run fastdds fastdds_vs_ref.sh "1 2" ;;
        zenoh) run zenoh zenoh_vs_ref.sh "" ;;
        iceoryx2) run iceoryx2 iceoryx2_vs_ref.sh "" ;;
        iceoryx) run iceoryx iceoryx_vs_ref.sh "" ;;
        *) echo "SCRIPTS: '$s' is not one of sockets cyclonedds fastdds zenoh iceoryx2 iceoryx" >&2; exit 2 ;;
    esac
done
echo "finished $(date -u '+%H:%M') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
{
    python3 bench/lib/table.py "$BENCH_TABLE" "$ROUNDS"
    if [ ${#failed[@]} -gt 0 ]; then
        echo
        echo "Not in the table: ${failed[*]} (the script failed; its log is in $out)."
    fi
} | tee "$out/table.md"
[ ${#failed[@]} -eq 0 ]
