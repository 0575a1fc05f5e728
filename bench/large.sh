#!/usr/bin/env bash
# Large data: 1 MiB, 16 MiB and 64 MiB through every reliable binding that
# takes the size, copying and (where the binding has it) zero-copy, beside
# the floor of a copy at that size: this machine's memcpy time (`pubsubperf
# calibrate`: memcpy bandwidth at 1 MiB and 64 MiB; 16 MiB uses the 64 MiB
# bandwidth, being past the caches too).
#
# Per binding, mode and size: latency p50/p99 (one-way = RTT/2, pinned pub
# 0 / sub 1, the binding's default waits) and reliable throughput (samples/s
# received, and GB/s), one run of SECONDS each. "p50/copy" is the latency p50
# over one memcpy of the sample: a copying shared-memory binding copies at
# least once per way (its floor is about 1; more is bookkeeping or extra
# copies), a zero-copy one should stay well under it, a socket binding
# copies in and out of the kernel (about 2 and up). A size past the
# binding's largest sample is printed as "-" with that largest; "pings" is
# the number of round trips timed (after a 1 s warm-up); a run that
# fails prints its last error line. The fragmenting DDS paths are measured
# against their own tools at large sizes by `SIZES=... bench/cyclonedds_vs_ddsperf.sh`
# and `bench/fastdds_vs_ref.sh`. Nothing here asserts a figure.
#
# usage: [BINDINGS="tcp uds shm ..."] [SIZES="1MiB 16MiB 64MiB"] bench/large.sh [SECONDS=5]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
bindings=${BINDINGS:-tcp uds intra shm iceoryx2 iceoryx cyclonedds fastdds zenoh}
sizes=${SIZES:-1MiB 16MiB 64MiB}
bin=${PUBSUBPERF:-${CARGO_TARGET_DIR:-target}/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$bin" bindings --json > "$tmp/bindings.json"
"$bin" calibrate --cpu 0,1 --no-save --json "$tmp/cal.json" > /dev/null

# caps B: "max_sample_size zero_copy available"
caps() {
    python3 - "$tmp/bindings.json" "$1" <<'PY'
import json, sys
for b in json.load(open(sys.argv[1])):
    if b["name"] == sys.argv[2]:
        c = b["capabilities"]
        print(c["max_sample_size"], int(c["zero_copy"]), int("Ok" in b["available"]))
        break
else:
    print(0, 0, 0)
PY
}
bytes() { python3 -c "import sys; s=sys.argv[1]; m={'KiB':1<<10,'MiB':1<<20,'GiB':1<<30}; print(next((int(s[:-3])*v for k,v in m.items() if s.endswith(k)), None) or int(s))" "$1"; }

# run KIND NAME SIZE ARGS...: one run; its JSON in $tmp/KIND-NAME-SIZE.json,
# or its last error line in ...err.
run() {
    local kind=$1 name=$2 size=$3
    shift 3
    "$bin" "$kind" "$@" -s "$size" --duration "${secs}s" --cpu 0,1 -q --no-save \
        --json "$tmp/$kind-$name-$size.json" > /dev/null 2> "$tmp/$kind-$name-$size.err" \
        || rm -f "$tmp/$kind-$name-$size.json"
}

: > "$tmp/rows"
for b in $bindings; do
    read -r max zc ok <<< "$(caps "$b")"
    if [ "$ok" != 1 ]; then
        echo "$b - - unavailable" >> "$tmp/rows"
        continue
    fi
    modes="copy"
    [ "$zc" = 1 ] && modes="copy zero-copy"
    for mode in $modes; do
        extra=()
        [ "$mode" = zero-copy ] && extra=(--zero-copy)
        [ "$b" = zenoh ] && [ "$mode" = zero-copy ] && extra+=(--transport shm)
        [ "$b" = cyclonedds ] && [ "$mode" = zero-copy ] && extra+=(--transport shm --data-type flat)
        [ "$b" = fastdds ] && [ "$mode" = zero-copy ] && extra+=(--transport shm --data-type flat)
        for s in $sizes; do
            if [ "$(bytes "$s")" -gt "$max" ]; then
                echo "$b $mode $s over $max" >> "$tmp/rows"
                continue
            fi
            run latency "$b-$mode" "$s" -b "$b" "${extra[@]}"
            run throughput "$b-$mode" "$s" -b "$b" --reliable "${extra[@]}"
            echo "$b $mode $s run" >> "$tmp/rows"
        done
    done
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$tmp" "$load" "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" <<'PY'
import json, os, sys
d, load, commit = sys.argv[1:4]
cal = json.load(open(f"{d}/cal.json"))
bw = {m["size"]: m["gb_per_s"] for m in cal["memcpy"]}
def size_of(s):
    for k, v in (("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30)):
        if s.endswith(k):
            return int(s[:-3]) * v
    return int(s)
def copy_ns(n):
    # The measured bandwidth at the nearest size not below n (else the largest).
    over = [s for s in bw if s >= n]
    s = min(over) if over else max(bw)
    return n / bw[s]
def last_line(f):
    t = open(f).read().strip() if os.path.exists(f) else ""
    return t.splitlines()[-1] if t else "failed"
print(f"large data, commit {commit}, load average {load} on {os.cpu_count()} cores; one run each")
print("memcpy floor: " + ", ".join(f"{s >> 20 if s >= 1 << 20 else s >> 10} {'MiB' if s >= 1 << 20 else 'KiB'} {g:.1f} GB/s" for s, g in sorted(bw.items())))
print(f"  {'binding':<11}{'mode':<10}{'size':>6}  {'pings':>6} {'lat p50 us':>11} {'p99 us':>9} {'p50/copy':>8}  {'tp /s':>9} {'GB/s':>6}")
for line in open(f"{d}/rows"):
    b, mode, s, what = line.split(maxsplit=3)
    what = what.strip()
    if what == "unavailable":
        print(f"  {b:<11}not available in this build or on this machine")
        continue
    if what.startswith("over"):
        print(f"  {b:<11}{mode:<10}{s:>6}  - (largest sample {int(what.split()[1])} B)")
        continue
    n = size_of(s)
    lat = f"{d}/latency-{b}-{mode}-{s}.json"
    tp = f"{d}/throughput-{b}-{mode}-{s}.json"
    if os.path.exists(lat):
        l = json.load(open(lat))["runs"][0]["latency_ns"]
        if l["count"] == 0:
            lc = f"{0:6} {'no round trip within the run':>30}"
        else:
            lc = f"{l['count']:6} {l['p50'] / 1000:11.1f} {l['p99'] / 1000:9.1f} {l['p50'] / copy_ns(n):8.3g}"
    else:
        lc = f"latency: {last_line(lat[:-5] + '.err')}"
    if os.path.exists(tp):
        t = json.load(open(tp))["runs"][0]["throughput"]
        tc = f"{t['samples_per_s']:9.1f} {t['samples_per_s'] * n / 1e9:6.2f}"
    else:
        tc = f"throughput: {last_line(tp[:-5] + '.err')}"
    print(f"  {b:<11}{mode:<10}{s:>6}  {lc}  {tc}")
PY
