#!/usr/bin/env bash
# pubsubperf's cyclonedds binding beside CycloneDDS's own ddsperf, measured
# in one run, same machine, same pinning (publisher/ping on core 0,
# subscriber/pong on core 1), over UDP on loopback (unicast discovery,
# multicast off for both), reliable:
#
# 1. latency at SIZES (default 64 B, 1 KiB, 64 KiB, 1 MiB), in both of
#    ddsperf's triggering modes beside ours: its default `listener` beside
#    our default (`--receive listener`), and `waitset` beside `--receive
#    thread`. p50 and p99 of pubsubperf vs ddsperf ping/pong (both one-way
#    = RTT/2), in ROUNDS (default 3) rounds, which tool goes first
#    alternating; each round's ratios and their median (goal: ours <= 1.05 x
#    ddsperf). Single runs swing ~7 % here.
# 2. zero-copy latency over shared memory (iceoryx, flat type, loans) at
#    64 B, 1 MiB and 16 MiB: p50s and p50(16 MiB)/p50(64 B) (goal <= 1.3).
# 3. throughput at SIZES: `ddsperf pub size S` / `ddsperf sub` (its
#    default: a listener, and write batching, which ddsperf's pub turns on)
#    beside `pubsubperf throughput` as shipped (its default over udp: write
#    batching in packets of CycloneDDS's default largest message, 14720 B,
#    as ddsperf's pub) in our default receive mode;
#    samples/s received and the median of the rounds' ratios ours/ddsperf
#    (goal >= 0.95). Then the raw `udp` binding at 1 KiB, the kernel's floor
#    for the same datagrams.
#
# ddsperf's figures are per 1-second interval: the first interval
# (discovery, warm-up) is dropped; its latency percentiles are the medians
# of the intervals' percentiles weighted by their counts, its rate its
# subscriber's samples over the time of the intervals kept (the last one
# dropped too: see ddsperf_tp), as our rate is the measured window's.
# Our latency percentiles are taken the same way from our 1-second
# intervals (`intervals[].latency_p50_ns`/`latency_p99_ns`; our warm-up is
# not in them): a whole run's p99 is above the median of its seconds' p99s
# whenever the slow round trips bunch in a few seconds, so comparing it
# with ddsperf's figure would not compare like with like.
# ddsperf's size counts its topic's 12-byte fixed part; ours counts our
# 16-byte header: both send samples of the given total size.
#
# Allocator: pubsubperf keeps freed blocks of up to 32 MiB for reuse in a
# process running CycloneDDS (`--opt malloc=keep`, its default: see
# docs/bindings/cyclonedds.md); ddsperf runs with glibc's allocator as it
# is, whose dynamic mmap threshold rises in some processes and not in
# others. REF_MALLOC=keep runs ddsperf with the same thresholds
# (GLIBC_TUNABLES), for a like-for-like comparison; OURS_OPTS="--opt
# malloc=default" runs ours with glibc's as it is.
#
# 4. (PARTS=4) the whole distribution at SIZES, listener mode: per run the
#    count-weighted medians over the seconds of mean, min, p50, p90, p99 and
#    max (the points ddsperf prints each second; ours from our intervals'
#    own histograms) and the round trips per second with the mean round
#    trip they imply (time / count); per point the median over the rounds
#    of each tool and the ratio ours/ddsperf (issue 49 item 3).
#
# REF_CONFIG=none runs ddsperf as shipped, with no configuration at all
# (its default interface and multicast), against ours at its defaults; the
# default, REF_CONFIG=ours, gives ddsperf the loopback configuration our
# binding generates (like for like). docs/bindings/cyclonedds.md says what
# the difference between the two is on this machine.
#
# usage: [ROUNDS=3] [SIZES="64 1024 65536 1048576"] [PARTS="1 2 3"]
#        [MODES="listener waitset"] [REF_MALLOC=default|keep] [OURS_OPTS=...]
#        [REF_CONFIG=ours|none] bench/cyclonedds_vs_ddsperf.sh [SECONDS]
#   (MODES: ddsperf's modes of part 1)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
rounds=${ROUNDS:-3}
sizes=${SIZES:-64 1024 65536 1048576}
. bench/lib/common.sh
export BENCH_SUBJECT=cyclonedds # the row name in bench/table.sh's table
parts=${PARTS:-1 2 3}
has_part() { [[ " $parts " == *" $1 "* ]]; }
need ddsperf cyclonedds-tools
domain=$(( 1 + RANDOM % 200 ))

# The same loopback-only configuration our binding generates.
cat > "$tmp/lo.xml" <<'XML'
<CycloneDDS><Domain id="any">
  <General>
    <Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>
    <AllowMulticast>false</AllowMulticast>
  </General>
  <Discovery>
    <ParticipantIndex>auto</ParticipantIndex>
    <MaxAutoParticipantIndex>119</MaxAutoParticipantIndex>
    <Peers><Peer address="127.0.0.1"/></Peers>
  </Discovery>
</Domain></CycloneDDS>
XML
export CYCLONEDDS_URI="file://$tmp/lo.xml"

# ddsperf's environment: REF_MALLOC=keep gives it our allocator thresholds.
ref_env=(env)
case ${REF_MALLOC:-default} in
    default) ;;
    keep) ref_env=(env GLIBC_TUNABLES=glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864) ;;
    *) echo "REF_MALLOC=$REF_MALLOC: use default or keep" >&2; exit 2 ;;
esac
case ${REF_CONFIG:-ours} in
    ours) ;;
    none) ref_env+=(-u CYCLONEDDS_URI) ;;
    *) echo "REF_CONFIG=$REF_CONFIG: use ours or none" >&2; exit 2 ;;
esac
echo "ddsperf's allocator: ${REF_MALLOC:-default} (REF_MALLOC); its configuration: ${REF_CONFIG:-ours} (REF_CONFIG); our extra flags: ${OURS_OPTS:-none} (OURS_OPTS)"

# ping/pong in MODE (listener|waitset) at SIZE; prints "p50 p99" in us.
ddsperf_lat() {
    local size=$1 mode=$2
    "${ref_env[@]}" taskset -c 1 ddsperf -i "$domain" -D $((secs + 5)) pong "$mode" > "$tmp/pong.txt" 2>&1 &
    peers=($!)
    "${ref_env[@]}" taskset -c 0 ddsperf -i "$domain" -D $((secs + 1)) ping size "$size" "$mode" > "$tmp/ping.txt" 2>&1 || true
    kill "${peers[0]}" 2>/dev/null || true
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
    PYTHONPATH="$bench_dir/lib" python3 - "$tmp/ping.txt" <<'PY'
import re, sys
from wmedian import wmedian
rx = re.compile(r'^\[\d+\]\s+[0-9.]+\s+\S+ size \d+ mean [0-9.]+us min [0-9.]+us 50% ([0-9.]+)us 90% [0-9.]+us 99% ([0-9.]+)us .* cnt (\d+)')
iv = [(float(m.group(1)), float(m.group(2)), int(m.group(3))) for m in map(rx.match, open(sys.argv[1])) if m][1:]
print(wmedian([(a, c) for a, _, c in iv]), wmedian([(b, c) for _, b, c in iv]))
PY
}

# pub at SIZE as fast as it goes / sub in its default mode; prints samples/s.
ddsperf_tp() {
    local size=$1
    "${ref_env[@]}" taskset -c 1 ddsperf -i "$domain" -D $((secs + 3)) sub > "$tmp/sub.txt" 2>&1 &
    peers=($!)
    "${ref_env[@]}" taskset -c 0 ddsperf -i "$domain" -D $((secs + 1)) pub size "$size" > "$tmp/pub.txt" 2>&1 || true
    wait "${peers[0]}" 2>/dev/null || true
    peers=()
    python3 - "$tmp/sub.txt" <<'PY'
import re, sys
# Each line: the time, and the samples received since the line before
# (delta); a second in which nothing arrived prints no line. The first line
# (discovery) and the last (cut short) are dropped. The rate is all the
# kept lines' samples over their time, as ours is all the samples of the
# measured window over its length: a slow second counts in both (a median
# of the seconds' rates, used before 2cb7eed, left ddsperf's slow seconds
# out and kept ours in). (ddsperf's own "kS/s" column, with
# two decimals, reads 0.00 below 5 samples/s.)
rx = re.compile(r'^\[\d+\]\s+([0-9.]+)\s+size \d+ total \d+ lost \d+ delta (\d+) ')
lines = [(float(m.group(1)), int(m.group(2))) for m in map(rx.match, open(sys.argv[1])) if m][:-1]
kept = [(t - t0, d) for (t0, _), (t, d) in zip(lines, lines[1:]) if t > t0]
if not kept:
    print(float("nan"))
else:
    print(sum(d for _, d in kept) / sum(dt for dt, _ in kept))
PY
}

# ours: KIND (latency|throughput) with ARGS; prints "p50 p99" in us or
# samples/s, nan when the run failed.
ours_run() {
    local kind=$1
    shift
    # shellcheck disable=SC2086 # OURS_OPTS: flags, split on spaces
    if "$bin" "$kind" --binding cyclonedds "$@" ${OURS_OPTS:-} --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/o.json" > /dev/null; then
        if [ "$kind" = latency ]; then ours_lat_per_second "$tmp/o.json"; else ours_tp "$tmp/o.json"; fi
    else
        [ "$kind" = latency ] && echo "nan nan" || echo nan
    fi
}

# The distribution of a latency run's seconds from its per-second points,
# as "mean min p50 p90 p99 max rate" (us, us, ..., round trips/s):
# count-weighted medians over the seconds kept, the rate their count over
# their number. Reads "mean min p50 p90 p99 max count" lines on stdin.
dist_of_seconds() {
    PYTHONPATH="$bench_dir/lib" python3 -c '
import sys
from wmedian import wmedian
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
if not rows:
    print(" ".join(["nan"] * 7))
else:
    pts = [wmedian([(r[i], r[6]) for r in rows]) for i in range(6)]
    print(" ".join(f"{p:.3f}" for p in pts), f"{sum(r[6] for r in rows) / len(rows):.0f}")
'
}
# ddsperf ping/pong listener at SIZE: its seconds after the first.
ddsperf_dist() {
    local size=$1
    ddsperf_lat "$size" listener > /dev/null
    sed -n 's/^\[[0-9]*\] *[0-9.]* *[^ ]* size [0-9]* mean \([0-9.]*\)us min \([0-9.]*\)us 50% \([0-9.]*\)us 90% \([0-9.]*\)us 99% \([0-9.]*\)us max \([0-9.]*\)us cnt \([0-9]*\).*/\1 \2 \3 \4 \5 \6 \7/p' "$tmp/ping.txt" | tail -n +2 | dist_of_seconds
}
# ours, listener, at SIZE: our intervals (the warm-up is not in them).
ours_dist() {
    local size=$1
    # shellcheck disable=SC2086 # OURS_OPTS: flags, split on spaces
    "$bin" latency --binding cyclonedds --size "$size" --receive listener ${OURS_OPTS:-} --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/d.json" > /dev/null || { echo "nan nan nan nan nan nan nan"; return; }
    python3 -c '
import json, sys
for i in json.load(open(sys.argv[1]))["runs"][0].get("intervals", []):
    v = [i.get(k) for k in ("latency_mean_ns", "latency_min_ns", "latency_p50_ns", "latency_p90_ns", "latency_p99_ns", "latency_max_ns")]
    if None not in v and i.get("received"):
        print(" ".join(f"{x / 1000:.3f}" for x in v), i["received"])
' "$tmp/d.json" | dist_of_seconds
}

if has_part 1; then
echo "== 1. latency p50/p99 (one-way = RTT/2), ${secs} s per run, ${rounds} alternating rounds"
for mode in ${MODES:-listener waitset}; do
    ours=(--receive listener)
    [ "$mode" = waitset ] && ours=(--receive thread)
    for size in $sizes; do
        wanted lat "$mode" "$size" ddsperf || continue
        alternate ddsperf_lat "$size" "$mode" -- ours_run latency --size "$size" "${ours[@]}"
        report lat "$mode" "$size" ddsperf
    done
done

fi
if has_part 2; then
echo "== 2. cyclonedds zero-copy over shared memory (iceoryx, flat, loans): latency p50, reliable, ${secs} s per size"
unset CYCLONEDDS_URI
"$bin" latency --binding cyclonedds --transport shm --zero-copy --data-type flat --size 64,1MiB,16MiB --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/zc.json" > /dev/null
python3 - "$tmp/zc.json" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
p = {r["size"]: r["latency_ns"]["p50"] / 1000 for r in runs}
for s, v in sorted(p.items()):
    print(f"  {s:>9} B  p50 {v:8.2f} us")
r = p[16 * 1024 * 1024] / p[64]
print(f"  ratio p50(16MiB)/p50(64B) = {r:.3f} (goal <= 1.3: {'met' if r <= 1.3 else 'NOT met'})")
PY
export CYCLONEDDS_URI="file://$tmp/lo.xml"

fi
if has_part 3; then
echo "== 3. throughput, reliable, ${secs} s per run: pubsubperf (defaults: batched) vs ddsperf pub/sub (batched, listener), ${rounds} alternating rounds"
for size in $sizes; do
    wanted tp tp "$size" ddsperf || continue
    alternate ddsperf_tp "$size" -- ours_run throughput --size "$size"
    report tp tp "$size" ddsperf
done
# Information only, so not in a run of chosen cells (ONLY_CELLS).
if [ -z "${ONLY_CELLS:-}" ]; then
"$bin" throughput --binding udp --size 1KiB --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/tp_udp.json" > /dev/null
echo "  udp binding at 1 KiB (best effort, the kernel's floor): $(json "$tmp/tp_udp.json" "f\"{r[0]['throughput']['samples_per_s']:.0f}/s received, lost {r[0]['throughput']['lost_percent']:.2f} %\"")"
fi
fi
if has_part 4; then
echo "== 4. the whole distribution, listener, ${secs} s per run, ${rounds} alternating rounds: medians over the seconds (us), round trips/s and the mean round trip they imply"
for size in $sizes; do
    : > "$tmp/dist"
    for r in $(seq "$rounds"); do
        if first_of_round "$r"; then d=$(ddsperf_dist "$size"); o=$(ours_dist "$size"); else o=$(ours_dist "$size"); d=$(ddsperf_dist "$size"); fi
        echo "$d | $o" >> "$tmp/dist"
        echo "  ${size} B round $r: ddsperf $d | pubsubperf $o"
    done
    python3 - "$tmp/dist" "$size" <<'PY'
import statistics, sys
rows = [l.split("|") for l in open(sys.argv[1]) if "|" in l]
ref = [list(map(float, a.split())) for a, _ in rows]
ours = [list(map(float, b.split())) for _, b in rows]
names = ["mean", "min", "p50", "p90", "p99", "max", "round trips/s"]
med = lambda cols, i: statistics.median(c[i] for c in cols)
for i, n in enumerate(names):
    a, b = med(ref, i), med(ours, i)
    print(f"  {sys.argv[2]:>7} B  {n:>14}: ddsperf {a:10.2f}  pubsubperf {b:10.2f}  ratio {b / a:.3f}")
a, b = med(ref, 6), med(ours, 6)
print(f"  {sys.argv[2]:>7} B  mean round trip from count and time: ddsperf {1e6 / a:.2f} us, pubsubperf {1e6 / b:.2f} us (one-way {5e5 / a:.2f} / {5e5 / b:.2f})")
PY
done
fi
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
