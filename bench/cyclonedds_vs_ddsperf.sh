#!/usr/bin/env bash
# pubsubperf's cyclonedds binding beside CycloneDDS's own ddsperf, measured
# in one run, same machine, same pinning (publisher/ping on core 0,
# subscriber/pong on core 1):
#
# 1. latency over UDP (loopback, unicast discovery, multicast off for both),
#    reliable, waitset-triggered on both sides, at 64 B and 16 KiB:
#    p50 of pubsubperf vs p50 of ddsperf ping/pong (both one-way = RTT/2),
#    in ROUNDS (default 3) rounds, which tool goes first alternating; the ratio of each round and
#    their median (goal: ours <= 1.05 x ddsperf). Single runs swing ~7 % here.
# 2. zero-copy latency over shared memory (iceoryx, flat type, loans) at
#    64 B, 1 MiB and 16 MiB: p50s and p50(16 MiB)/p50(64 B) (goal <= 1.3);
# 3. throughput at 1 KiB, best effort and reliable, beside the raw `udp`
#    binding (best effort): samples/s and the ratio cyclonedds/udp.
#
# ddsperf's figures are per 1-second interval: the first interval
# (discovery, warm-up) is dropped and the p50 reported is the median of the
# interval medians weighted by their counts. ddsperf's size counts its
# topic's 12-byte fixed part; ours counts our 16-byte header: both send
# samples of the given total size.
#
# usage: [ROUNDS=3] bench/cyclonedds_vs_ddsperf.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
bin=${PUBSUBPERF:-./target/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
command -v ddsperf >/dev/null || { echo "ddsperf missing: apt-get install cyclonedds-tools" >&2; exit 1; }
tmp=$(mktemp -d)
pong=
cleanup() {
    [ -n "$pong" ] && kill "$pong" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
domain=$(( 1 + RANDOM % 200 ))

# The same loopback-only configuration our binding generates.
cat > "$tmp/lo.xml" <<'EOF'
<CycloneDDS><Domain id="any">
  <General>
    <Interfaces><NetworkInterface address="127.0.0.1"/></Interfaces>
    <AllowMulticast>false</AllowMulticast>
  </General>
  <Discovery>
    <ParticipantIndex>auto</ParticipantIndex>
    <MaxAutoParticipantIndex>60</MaxAutoParticipantIndex>
    <Peers><Peer address="127.0.0.1"/></Peers>
  </Discovery>
</Domain></CycloneDDS>
EOF

ddsperf_p50() { # size -> p50 in us
    local size=$1 out="$tmp/ping_$1.txt"
    CYCLONEDDS_URI="file://$tmp/lo.xml" taskset -c 1 ddsperf -i "$domain" -D $((secs + 5)) pong waitset > "$tmp/pong.txt" 2>&1 &
    pong=$!
    CYCLONEDDS_URI="file://$tmp/lo.xml" taskset -c 0 ddsperf -i "$domain" -D $((secs + 1)) ping size "$size" waitset > "$out" 2>&1 || true
    kill "$pong" 2>/dev/null || true
    wait "$pong" 2>/dev/null || true
    pong=
    python3 - "$out" <<'EOF'
import re, sys
rx = re.compile(r'^\[\d+\]\s+([0-9.]+)\s+\S+ size (\d+) mean ([0-9.]+)us min ([0-9.]+)us 50% ([0-9.]+)us .* cnt (\d+)')
iv = [(float(m.group(5)), int(m.group(6))) for m in map(rx.match, open(sys.argv[1])) if m]
iv = iv[1:]  # the first interval includes discovery and warm-up
if not iv:
    print("nan"); sys.exit()
iv.sort()
half, acc = sum(c for _, c in iv) / 2, 0
for p50, c in iv:
    acc += c
    if acc >= half:
        print(p50); break
EOF
}

json() { # file expr
    python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['runs']; print(eval(sys.argv[2]))" "$1" "$2"
}

rounds=${ROUNDS:-3}
echo "== 1. cyclonedds over UDP vs ddsperf ping/pong: latency p50 (one-way = RTT/2), reliable, waitset, ${secs} s, cores 0,1, ${rounds} alternating rounds"
for size in 64 16384; do
    pairs=""
    for r in $(seq "$rounds"); do
        # Alternate which tool goes first, so that a drift of the machine
        # (other load, the vCPUs moving) does not always favour one.
        if (( r % 2 )); then d50=$(ddsperf_p50 "$size"); fi
        "$bin" latency --binding cyclonedds --size "$size" --duration "${secs}s" --cpu 0,1 --wait block -q --no-save --json "$tmp/lat_$size.json" > /dev/null
        o50=$(json "$tmp/lat_$size.json" "r[0]['latency_ns']['p50']/1000")
        if (( r % 2 == 0 )); then d50=$(ddsperf_p50 "$size"); fi
        pairs="$pairs ($o50, $d50),"
    done
    python3 -c "
import statistics
pairs = [$pairs]
for i, (o, d) in enumerate(pairs, 1):
    print(f'  {$size:>6} B  round {i}: ddsperf {d:8.2f} us   pubsubperf cyclonedds {o:8.2f} us   ratio {o / d:.3f}')
r = statistics.median(o / d for o, d in pairs)
print(f'  {$size:>6} B  median of the rounds\' ratios {r:.3f} (goal <= 1.05: {\"met\" if r <= 1.05 else \"NOT met\"})')"
done

echo "== 2. cyclonedds zero-copy over shared memory (iceoryx, flat, loans): latency p50, reliable, ${secs} s per size"
"$bin" latency --binding cyclonedds --transport shm --zero-copy --data-type flat --size 64,1MiB,16MiB --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/zc.json" > /dev/null
python3 - "$tmp/zc.json" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
p = {r["size"]: r["latency_ns"]["p50"] / 1000 for r in runs}
for s, v in sorted(p.items()):
    print(f"  {s:>9} B  p50 {v:8.2f} us")
r = p[16 * 1024 * 1024] / p[64]
print(f"  ratio p50(16MiB)/p50(64B) = {r:.3f} (goal <= 1.3: {'met' if r <= 1.3 else 'NOT met'})")
EOF

echo "== 3. throughput at 1 KiB, ${secs} s: cyclonedds (udp transport) vs the raw udp binding"
"$bin" throughput --binding udp --size 1KiB --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/tp_udp.json" > /dev/null
u=$(json "$tmp/tp_udp.json" "r[0]['throughput']['samples_per_s']")
ul=$(json "$tmp/tp_udp.json" "r[0]['throughput']['lost_percent']")
for rel in best-effort reliable; do
    "$bin" throughput --binding cyclonedds --size 1KiB --"$rel" --duration "${secs}s" --cpu 0,1 -q --no-save --json "$tmp/tp_$rel.json" > /dev/null
    c=$(json "$tmp/tp_$rel.json" "r[0]['throughput']['samples_per_s']")
    l=$(json "$tmp/tp_$rel.json" "r[0]['throughput']['lost_percent']")
    python3 -c "
c, u, l, ul = $c, $u, $l, $ul
print(f'  {\"$rel\":<11}  cyclonedds {c:10.0f} received/s (lost {l:.2f} %)   udp {u:10.0f} received/s (lost {ul:.2f} %)   ratio cyclonedds/udp {c / u:.3f}')"
done
echo "  (load average: $(cut -d' ' -f1-3 /proc/loadavg); this VM has $(nproc) vCPUs and is shared, so compare figures of one run only)"
