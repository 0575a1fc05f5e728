#!/usr/bin/env bash
# Latency of pubsubperf's udp binding beside sockperf's UDP ping-pong, same
# size, same pinning (publisher/client on core 0, subscriber/server on core 1),
# both blocking receives, measured in one run. Prints both p50s (one-way =
# round trip / 2 for both tools) and the ratio. Goal: ours <= 1.05 x sockperf.
#
# usage: bench/udp_vs_sockperf.sh [SECONDS] [SIZE]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-10}
size=${2:-64}
bin=${PUBSUBPERF:-./target/release/pubsubperf}
[ -x "$bin" ] || cargo build --release -p pubsubperf >&2
command -v sockperf >/dev/null || { echo "sockperf missing: apt-get install sockperf" >&2; exit 1; }
port=$(( 20000 + RANDOM % 20000 ))
tmp=$(mktemp -d)
trap 'kill $srv 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

# sockperf: server on core 1, client on core 0. sockperf reports one-way
# latency as RTT/2 by default.
taskset -c 1 sockperf server -i 127.0.0.1 -p "$port" >/dev/null 2>&1 &
srv=$!
sleep 0.5
taskset -c 0 sockperf ping-pong -i 127.0.0.1 -p "$port" -m "$size" -t "$secs" > "$tmp/sockperf.txt" 2>&1
kill $srv; wait $srv 2>/dev/null || true
sp50=$(grep -E 'percentile 50\.000 =' "$tmp/sockperf.txt" | sed -E 's/.*= *([0-9.]+).*/\1/')

# pubsubperf: --cpu 0,1 (publisher core 0, subscriber core 1), blocking waits.
"$bin" latency --binding udp --size "$size" --duration "${secs}s" --cpu 0,1 --wait block -q --no-save --json "$tmp/pp.json" > "$tmp/pp.txt"
pp50_ns=$(python3 -c "import json,sys; print(json.load(open('$tmp/pp.json'))['runs'][0]['latency_ns']['p50'])")
pp50=$(python3 -c "print($pp50_ns/1000)")

echo "udp ${size} B latency p50 (one-way = RTT/2), ${secs} s each, cores 0,1:"
echo "  sockperf ping-pong : ${sp50} us"
echo "  pubsubperf udp     : ${pp50} us"
python3 -c "r=$pp50/$sp50; print(f'  ratio pubsubperf/sockperf = {r:.3f} (goal <= 1.05: {\"met\" if r <= 1.05 else \"NOT met\"})')"
