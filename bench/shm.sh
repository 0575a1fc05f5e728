#!/usr/bin/env bash
# The shm binding against this machine's floors, all measured in one run
# with the release binary, publisher on core 0 and subscriber on core 1:
#
#  1. zero-copy latency p50 at 64 B, 1 MiB, 16 MiB, 64 MiB (block waits) and
#     p50(64 MiB) / p50(64 B): a zero-copy path stays flat (goal <= 1.2);
#  2. zero-copy busy-wait latency p50 at 64 B beside 2 x the calibrated
#     cross-core cache-line one-way latency (the binding moves a small
#     sample in one line; the rest of the 2x is for the harness's two clock
#     reads per round trip and both sides' code). A VM's vCPUs move between
#     physical cores and the floor with them (15-40 ns near, 160-230 ns
#     far), so this runs BUSY_ROUNDS (default 5) rounds of [floor, busy run
#     of 1 s, floor]: a round whose two floors agree within 30 % is steady
#     and its ratio p50 / (2 x mean floor) counts; the goal is judged on
#     the median ratio of the steady rounds (rounds where the cores moved
#     are shown, not judged);
#  3. copy-mode throughput at 1 MiB in bytes/s beside calibrated memcpy
#     bandwidth at 1 MiB (goal >= 50 %). Like the memcpy floor (the best of
#     50 trials), the throughput is the best of TP_RUNS runs (default 3):
#     other processes on the two cores only ever slow a run down.
#
# Latencies are one-way = round trip / 2. Nothing here asserts a figure.
#
# On a busy machine every process gets a slice of the cores and figures
# drop; SHM_BENCH_RT=PRIO runs the blocking measurements (and the
# calibration) with SCHED_FIFO priority PRIO (needs root or CAP_SYS_NICE),
# which keeps other work off the measured threads for the few seconds they
# run. The busy-wait run stays at normal priority: two real-time spinners
# on two cores would starve the harness's own control threads.
#
# usage: [SHM_BENCH_RT=40] [TP_RUNS=3] bench/shm.sh [SECONDS per measurement]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
tp_runs=${TP_RUNS:-3}
target=${CARGO_TARGET_DIR:-target}
bin=${PUBSUBPERF:-$target/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
rt=()
chrt=()
if [ -n "${SHM_BENCH_RT:-}" ]; then
    rt=(--rt-priority "$SHM_BENCH_RT")
    chrt=(chrt -f "$SHM_BENCH_RT")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Calibration: the CLI command if this build has it, else the crate's example
# (which also measures the cache line alone, right around the busy run).
cal=$target/release/examples/calibrate
[ -x "$cal" ] || cargo build --release -p pubsubperf-shm --example calibrate >&2
if "$bin" calibrate --help >/dev/null 2>&1; then
    "${chrt[@]}" "$bin" calibrate --cpu 0,1 --no-save --json "$tmp/cal.json" >/dev/null 2>&1
else
    "${chrt[@]}" "$cal" > "$tmp/cal.json"
fi

p50() { # json file, size -> p50 in ns
    jq -r --argjson s "$2" '.runs[] | select(.size == $s) | .latency_ns.p50' "$1"
}

"$bin" latency -b shm --zero-copy -s 64,1MiB,16MiB,64MiB --duration "${secs}s" --cpu 0,1 \
    "${rt[@]}" -q --no-save --json "$tmp/zc.json" > /dev/null
# A VM's cores may move between physical cores (the cache-line latency
# between them changes several-fold): floor right before and right after.
for i in $(seq "${BUSY_ROUNDS:-5}"); do
    "$cal" cache-line > "$tmp/cl_before$i.json"
    "$bin" latency -b shm --zero-copy --wait busy -s 64 --duration 1s --warmup 200ms --cpu 0,1 \
        -q --no-save --json "$tmp/busy$i.json" > /dev/null
    "$cal" cache-line > "$tmp/cl_after$i.json"
done
for i in $(seq "$tp_runs"); do
    "$bin" throughput -b shm -s 1MiB --duration "${secs}s" --cpu 0,1 \
        "${rt[@]}" -q --no-save --json "$tmp/tp$i.json" > /dev/null
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp" "$load" "${SHM_BENCH_RT:-}" <<'PY'
import json, os, sys
d = sys.argv[1]
rt = f", SCHED_FIFO {sys.argv[3]}" if sys.argv[3] else ""
print(f"load average {sys.argv[2]} on {os.cpu_count()} cores{rt} (other processes slow every figure below)")
cal = json.load(open(f"{d}/cal.json"))
def p50(f, size):
    for r in json.load(open(f"{d}/{f}"))["runs"]:
        if r["size"] == size:
            return r["latency_ns"]["p50"]
    raise SystemExit(f"no run of {size} B in {f}")
print("shm binding vs this machine's floors (cores 0,1; one-way = RTT/2)")
print("1. zero-copy latency p50, wait block:")
sizes = [(64, "64 B"), (1 << 20, "1 MiB"), (16 << 20, "16 MiB"), (64 << 20, "64 MiB")]
v = {s: p50("zc.json", s) for s, _ in sizes}
for s, name in sizes:
    print(f"   {name:>7}: {v[s] / 1000:9.3f} us")
r = v[64 << 20] / v[64]
print(f"   p50(64 MiB) / p50(64 B) = {r:.3f} (goal <= 1.2: {'met' if r <= 1.2 else 'NOT met'})")
print("2. zero-copy latency p50, wait busy, 64 B, rounds of [floor, 1 s busy run, floor]:")
rounds = []
k = 1
while os.path.exists(f"{d}/busy{k}.json"):
    b = p50(f"busy{k}.json", 64)
    f0 = json.load(open(f"{d}/cl_before{k}.json"))["one_way_p50_ns"]
    f1 = json.load(open(f"{d}/cl_after{k}.json"))["one_way_p50_ns"]
    steady = abs(f0 - f1) <= 0.3 * min(f0, f1)
    ratio = b / (f0 + f1) if steady else None
    rounds.append((b, f0, f1, ratio))
    what = f"ratio p50 / (2 x floor) = {ratio:.2f}" if steady else f"cores moved (ratios {b / (2 * max(f0, f1)):.2f}..{b / (2 * min(f0, f1)):.2f}), not judged"
    print(f"   round {k}: shm p50 {b:6.1f} ns, floor {f0:6.1f} / {f1:6.1f} ns: {what}")
    k += 1
print(f"   clock_gettime per call: {cal['clock_ns']:.1f} ns (busy runs time round trips with the TSC where the kernel uses it; see --clock)")
steady = sorted(r[3] for r in rounds if r[3] is not None)
if steady:
    med = steady[len(steady) // 2]
    print(f"   median ratio of {len(steady)} steady rounds = {med:.2f} (goal <= 1: {'met' if med <= 1 else 'NOT met'})")
else:
    print("   no steady round (the cores moved in every one): goal not judged; run again")
import glob
tps = [json.load(open(f))["runs"][0] for f in sorted(glob.glob(f"{d}/tp*.json"))]
rates = [t["throughput"]["samples_per_s"] * t["size"] for t in tps]
tp = tps[rates.index(max(rates))]
bps = max(rates)
mem = next(m["gb_per_s"] for m in cal["memcpy"] if m["size"] == 1 << 20) * 1e9
print("3. copy-mode throughput, 1 MiB samples, reliable, wait block:")
print(f"   runs           : {', '.join(f'{r / 1e9:.3f}' for r in rates)} GB/s")
print(f"   shm (best run) : {bps / 1e9:7.3f} GB/s ({tp['throughput']['samples_per_s']:.0f} samples/s, lost {tp['throughput']['lost']})")
print(f"   memcpy at 1 MiB: {mem / 1e9:7.3f} GB/s")
print(f"   ratio = {bps / mem * 100:.1f} % (goal >= 50 %: {'met' if bps >= 0.5 * mem else 'NOT met'})")
res = tp.get("resources", {})
cpu = [res.get(s, {}).get("cpu_percent") for s in ("publisher", "subscriber")]
if None not in cpu:
    print(f"   CPU publisher {cpu[0]:.0f} %, subscriber {cpu[1]:.0f} % (of one core each)")
PY
