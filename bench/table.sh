#!/usr/bin/env bash
# Every binding beside its vendor's tool, in one go: runs the comparison
# scripts one after another with the same SECONDS and ROUNDS, keeps each
# one's output in OUT, and ends with one Markdown table of the median ratios
# ours/reference (binding x test x mode x size; bench/lib/table.py), the
# table the docs' benchmark page keeps with its date and commit.
#   sockets_vs_sockperf.sh   parts 1-4 (udp and tcp latency and throughput)
#   cyclonedds_vs_ddsperf.sh parts 1 and 3 (latency in both modes, throughput)
#   fastdds_vs_ref.sh        parts 1 and 2 (latency and throughput, both modes)
#   zenoh_vs_ref.sh, iceoryx2_vs_ref.sh, iceoryx_vs_ref.sh, connext_vs_ref.sh
#                            (all their modes)
# The scripts' other parts (zero-copy flatness, floors, information rows)
# give no ratio against a reference and are left to the scripts themselves.
# Each script builds its reference first (before any measurement), so no
# build overlaps a measured run; nothing else should run meanwhile.
#
# Then the recheck: every cell not clearly met (a latency ratio above 1.00,
# a throughput ratio below 1.00, or no figure: `table.py --recheck`) is
# measured again in RECHECK more rounds (its script run again with
# ONLY_CELLS naming those cells), and the table pools each cell's rounds
# (its median over all of them, "(9 rounds)"). A cell is thus settled by
# ROUNDS rounds only when it meets its goal by more than 5 %; near the goal,
# on either side, three rounds on this VM decide nothing (a reference's own
# rounds spread wider than 5 %). The first pass's table is kept in
# OUT/first-pass.md (with RECHECK=0 there is only the one table).
#
# COUNTS=1 first counts the work per sample of the scripts' subjects
# (bench/counts.sh, OUT/counts.txt); COUNTS=FILE takes a counts.sh output
# already made. The table then says beside each counted cell whether its
# counts are at or under the reference's, and a cell whose counts are and
# whose 95 % intervals say met or "holds the goal" is settled: "(settled by
# counts)" where a ratio missed, and the recheck leaves it out.
#
# FASTEST=1 measures only the rows of each reference's fastest mode (the
# goals are set against it): sockperf busy and its throughput, iperf3,
# ddsperf listener and throughput, fastdds-ref listener, zenoh lat:busy and
# tp:default, iceoryx2 zc-busy, iceoryx busy, connext_ref waitset (the
# native path's fastest wait, issue 48). DEFAULTS=1 measures only
# the rows of the references' default modes where those are not their
# fastest (the issue's other half): sockperf's blocking ping-pong (udp and
# tcp) and zenoh lat:default; with SCRIPTS unset it runs the two scripts
# that have them. ddsperf's, fastdds-ref's, iceoryx2-pingpong's and
# iceoryx's (iceperf polls) defaults are their fastest modes.
# CELLS=FILE measures only the cells FILE names, one per line: subject,
# kind, label, reference, size, tab-separated, as an earlier table's
# recheck.cells lists them (a field may be a pattern: `*` for every size);
# with SCRIPTS unset it runs the scripts of the subjects named. With
# RECHECK=0 and ROUNDS=15 it settles a table's open cells with more rounds.
#
# usage: [OUT=DIR] [ROUNDS=3] [RECHECK=6] [FASTEST=1 | DEFAULTS=1 | CELLS=FILE]
#        [SCRIPTS="sockets cyclonedds fastdds zenoh iceoryx2 iceoryx connext"]
#        bench/table.sh [SECONDS]
#   OUT defaults to bench-results/table-<UTC time>; PUBSUBPERF=binary as for
#   the scripts; SIZES and MODES are the scripts' own defaults; RECHECK=0
#   skips the recheck.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
if [ "${DEFAULTS:-0}" = 1 ]; then
    scripts=${SCRIPTS:-sockets zenoh}
else
    scripts=${SCRIPTS:-sockets cyclonedds fastdds zenoh iceoryx2 iceoryx connext}
fi
cells=${CELLS:-}
if [ -n "$cells" ]; then
    [ -f "$cells" ] && [ -s "$cells" ] || { echo "CELLS=$cells: no such file, or empty (expected lines of subject, kind, label, reference, size, as a table's recheck.cells)" >&2; exit 2; }
    [ "${FASTEST:-0}/${DEFAULTS:-0}" = 0/0 ] || { echo "CELLS=$cells with FASTEST=1 or DEFAULTS=1: choose one" >&2; exit 2; }
    cells=$(realpath "$cells")
fi
out=${OUT:-bench-results/table-$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
out=$(realpath "$out")
# PYTHONUTF8: the table's dagger (bench/lib/table.py), whatever the locale.
export BENCH_TABLE=$out/table.tsv ROUNDS=${ROUNDS:-3} PYTHONUTF8=1
: > "$BENCH_TABLE"
unset SIZES MODES KINDS ONLY_CELLS
recheck=${RECHECK:-6}
[[ $recheck =~ ^[0-9]+$ ]] || { echo "RECHECK=$recheck: expected a number of rounds (0: no recheck)" >&2; exit 2; }
# ONLY_CELLS for FASTEST=1 or DEFAULTS=1: subject, kind, label, reference,
# size (bench/lib/common.sh's `wanted`).
case ${FASTEST:-0}/${DEFAULTS:-0} in
    0/0) ;;
    1/0)
        export ONLY_CELLS=$out/fastest.cells
        printf '%s\t%s\t%s\t%s\t*\n' \
            udp lat busy sockperf  tcp lat busy sockperf  udp tp tp sockperf \
            tcp tp iperf3 iperf3  tcp tp sockperf sockperf \
            cyclonedds lat listener ddsperf  cyclonedds tp tp ddsperf \
            fastdds lat listener fastdds-ref  fastdds tp listener fastdds-ref \
            zenoh lat lat:busy zenoh-pingpong  zenoh tp tp:default zenoh-pingpong \
            iceoryx2 lat zc-busy iceoryx2-pingpong  iceoryx2 tp zc-busy iceoryx2-pingpong \
            iceoryx lat busy iox_ref  iceoryx tp busy iox_ref \
            connext lat waitset connext_ref  connext tp waitset connext_ref > "$ONLY_CELLS" ;;
    0/1)
        export ONLY_CELLS=$out/defaults.cells
        printf '%s\t%s\t%s\t%s\t*\n' \
            udp lat block sockperf  tcp lat block sockperf \
            zenoh lat lat:default zenoh-pingpong > "$ONLY_CELLS" ;;
    1/1) echo "FASTEST=1 and DEFAULTS=1: choose one (or neither, for every row)" >&2; exit 2 ;;
    *) echo "FASTEST=${FASTEST:-0} DEFAULTS=${DEFAULTS:-0}: each expects 1 or 0 (FASTEST: only the fastest modes' rows; DEFAULTS: only the default modes that are not the fastest)" >&2; exit 2 ;;
esac

failed=()
recheck_failed=()
run() { # NAME SCRIPT PARTS [LOG]
    local name=$1 script=$2 parts=$3 log=${4:-$out/$1.log} start=$SECONDS rc=0
    echo "== $name: $script${parts:+ (PARTS=\"$parts\")}, started $(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    PARTS=$parts bash "bench/$script" "$secs" > "$log" 2>&1 || rc=$?
    if [ "$rc" = 0 ]; then
        echo "   done in $((SECONDS - start)) s: $(grep -c ' B  median ratio' "$log") median ratios, output in $log"
    else
        echo "   FAILED after $((SECONDS - start)) s (exit $rc): see $log" >&2
        tail -5 "$log" >&2
        if [ "$log" = "$out/$name.log" ]; then failed+=("$name"); else recheck_failed+=("$name"); fi
    fi
}
# The script and parts of a table row's subject.
script_of() {
    case $1 in
        sockets | udp | tcp) echo "sockets sockets_vs_sockperf.sh 1 2 3 4" ;;
        cyclonedds) echo "cyclonedds cyclonedds_vs_ddsperf.sh 1 3" ;;
        fastdds) echo "fastdds fastdds_vs_ref.sh 1 2" ;;
        zenoh | iceoryx2 | iceoryx | connext) echo "$1 ${1}_vs_ref.sh" ;;
        *) return 1 ;;
    esac
}
# The script name of a subject (udp and tcp are the sockets script's).
script_name() { local line; line=$(script_of "$1") || return 1; echo "${line%% *}"; }

if [ -n "$cells" ]; then
    cp "$cells" "$out/cells"
    export ONLY_CELLS=$out/cells
    if [ -z "${SCRIPTS:-}" ]; then
        scripts=""
        while IFS=$'\t' read -r subject _; do
            [ -n "$subject" ] || continue
            s=$(script_name "$subject") \
                || { echo "CELLS=$cells: subject '$subject' is not one of udp tcp cyclonedds fastdds zenoh iceoryx2 iceoryx connext" >&2; exit 2; }
            [[ " $scripts " == *" $s "* ]] || scripts="$scripts $s"
        done < "$cells"
    fi
fi
echo "pubsubperf $(git describe --always --dirty 2>/dev/null || echo '?'), binary ${PUBSUBPERF:-${CARGO_TARGET_DIR:-target}/release/pubsubperf}, ${secs} s per run, ${ROUNDS} rounds, $(date -u '+%Y-%m-%d %H:%M') UTC"
for s in $scripts; do
    [ "$(script_name "$s")" = "$s" ] \
        || { echo "SCRIPTS: '$s' is not one of sockets cyclonedds fastdds zenoh iceoryx2 iceoryx connext" >&2; exit 2; }
done
for s in $scripts; do
    read -r name script parts <<<"$(script_of "$s")"
    run "$name" "$script" "$parts"
done
# COUNTS=1: count the work per sample of the scripts' subjects first
# (bench/counts.sh, into OUT/counts.txt); COUNTS=FILE: a counts.sh output
# already taken. table.py marks the counted cells and settles those whose
# counts are at or under the reference's (no recheck for them).
case ${COUNTS:-} in
    "") ;;
    1)
        subjects=""
        for s in $scripts; do
            case $s in sockets) subjects="$subjects udp tcp" ;; *) subjects="$subjects $s" ;; esac
        done
        echo "== counts: bench/counts.sh for$subjects, started $(date -u +%H:%M:%S) UTC"
        SUBJECTS=${subjects# } bash bench/counts.sh > "$out/counts.txt" 2>&1 \
            || { echo "   FAILED: see $out/counts.txt" >&2; tail -5 "$out/counts.txt" >&2; failed+=(counts); }
        export BENCH_COUNTS=$out/counts.txt ;;
    *)
        [ -f "$COUNTS" ] || { echo "COUNTS=$COUNTS: expected 1 or a bench/counts.sh output file" >&2; exit 2; }
        cp "$COUNTS" "$out/counts.txt"
        export BENCH_COUNTS=$out/counts.txt ;;
esac
if [ "$recheck" -gt 0 ]; then
    python3 bench/lib/table.py "$BENCH_TABLE" "$ROUNDS" > "$out/first-pass.md"
    python3 bench/lib/table.py --recheck "$BENCH_TABLE" > "$out/recheck.cells"
    echo "== recheck: $(wc -l < "$out/recheck.cells") cells not clearly met (a latency ratio above 1.00, a throughput ratio below 1.00, or none), ${recheck} more rounds each (the first pass's table: $out/first-pass.md)"
    for s in $scripts; do
        read -r name script parts <<<"$(script_of "$s")"
        # This script's cells.
        while IFS= read -r c; do
            if [ "$(script_name "${c%%$'\t'*}")" = "$name" ]; then echo "$c"; fi
        done < "$out/recheck.cells" > "$out/$name.recheck.cells"
        [ -s "$out/$name.recheck.cells" ] || continue
        ONLY_CELLS=$out/$name.recheck.cells ROUNDS=$recheck run "$name" "$script" "$parts" "$out/$name.recheck.log"
    done
fi
echo "finished $(date -u '+%H:%M') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
{
    python3 bench/lib/table.py "$BENCH_TABLE" "$ROUNDS"
    if [ ${#failed[@]} -gt 0 ]; then
        echo
        echo "Not in the table: ${failed[*]} (the script failed; its log is in $out)."
    fi
    if [ ${#recheck_failed[@]} -gt 0 ]; then
        echo
        echo "The recheck of ${recheck_failed[*]} failed: those cells count the rounds measured before the failure (logs in $out/*.recheck.log)."
    fi
} | tee "$out/table.md"
[ ${#failed[@]} -eq 0 ] && [ ${#recheck_failed[@]} -eq 0 ]
