#!/usr/bin/env bash
# Soak: a long throughput run at a fixed rate (default 10 000 samples/s)
# over udp and one DDS binding, watching the resident memory (VmRSS) of
# both sides. Pass: neither side's RSS grows by more than 1 MiB between the
# end of the warm-up and the end of the run.
#
# usage: bench/soak.sh [SECONDS=3600] [RATE=10000] [BINDINGS="udp cyclonedds"]
# Not part of CI (an hour); run it by hand. Prints, per binding, RSS of
# publisher and subscriber after warm-up and at the end, the growth, the
# sample counts, and PASS/FAIL. Exit code 1 if any binding fails.
# CPUS=PUB,SUB passes --cpu (e.g. CPUS=1,1 keeps a soak on core 1, so that
# two soaks, udp and cyclonedds, can run side by side and leave core 0 free).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-3600}"
rate="${2:-10000}"
bindings="${3:-udp cyclonedds}"
bin="${PUBSUBPERF:-target/release/pubsubperf}"
cpu_args=(); [ -n "${CPUS:-}" ] && cpu_args=(--cpu "$CPUS")
[ -x "$bin" ] || { echo "soak: build first (cargo build --release -p pubsubperf) or set PUBSUBPERF" >&2; exit 2; }
# Warm-up: a quarter of the run, at most 60 s, at least 5 s.
warm=$(( secs / 4 )); [ "$warm" -gt 60 ] && warm=60; [ "$warm" -lt 5 ] && warm=5
limit_kib=1024
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

available() {
  "$bin" bindings --json | python3 -c "
import json, sys
for b in json.load(sys.stdin):
    if b['name'] == sys.argv[1]:
        ok = 'Ok' in b['available'] and b['capabilities']['remote']
        sys.exit(0 if ok else 1)
sys.exit(1)" "$1"
}

fail=0
port=$(( 17400 + $$ % 1000 ))
for b in $bindings; do
  if ! available "$b"; then
    echo "soak $b: not available in this build or cannot run across processes; skipped"
    continue
  fi
  port=$(( port + 1 ))
  "$bin" sub --listen "127.0.0.1:$port" 2>"$work/sub-$b.log" &
  sub=$!; pids+=("$sub")
  for _ in $(seq 50); do grep -q "listening on" "$work/sub-$b.log" 2>/dev/null && break; sleep 0.1; done
  "$bin" throughput -b "$b" --connect "127.0.0.1:$port" --rate "$rate" \
    --duration "${secs}s" --warmup 0s "${cpu_args[@]}" -q --json "$work/$b.json" >"$work/pub-$b.out" 2>"$work/pub-$b.err" &
  pub=$!; pids+=("$pub")
  sleep "$warm"
  p0=$(rss "$pub"); s0=$(rss "$sub")
  echo "soak $b: ${rate}/s for ${secs}s; after ${warm}s warm-up RSS publisher ${p0} KiB, subscriber ${s0} KiB"
  # Sample every 10 s (or less) until 2 s before the end; keep the last.
  end=$(( $(date +%s) + secs - warm - 2 ))
  p1=$p0; s1=$s0; pmax=$p0; smax=$s0
  while [ "$(date +%s)" -lt "$end" ] && kill -0 "$pub" 2>/dev/null; do
    left=$(( end - $(date +%s) )); nap=$(( left < 10 ? left : 10 )); [ "$nap" -gt 0 ] && sleep "$nap"
    p=$(rss "$pub"); s=$(rss "$sub")
    [ "$p" -gt 0 ] && p1=$p; [ "$s" -gt 0 ] && s1=$s
    [ "$p1" -gt "$pmax" ] && pmax=$p1; [ "$s1" -gt "$smax" ] && smax=$s1
  done
  wait "$pub" || { echo "soak $b: publisher failed: $(tail -1 "$work/pub-$b.err")"; fail=1; }
  wait "$sub" 2>/dev/null || true
  dp=$(( p1 - p0 )); ds=$(( s1 - s0 ))
  echo "soak $b: at the end RSS publisher ${p1} KiB (max ${pmax}), subscriber ${s1} KiB (max ${smax})"
  echo "soak $b: growth publisher ${dp} KiB, subscriber ${ds} KiB (limit ${limit_kib} KiB)"
  if [ -s "$work/$b.json" ]; then
    python3 - "$work/$b.json" "$b" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
t = r["throughput"]
print(f"soak {sys.argv[2]}: sent {t['sent']} received {t['received']} lost {t['lost']} "
      f"({t['lost_percent']:.4f} %), {t['samples_per_s']:.0f} samples/s, complete {r['complete']}")
PY
  fi
  if [ "$dp" -le "$limit_kib" ] && [ "$ds" -le "$limit_kib" ]; then
    echo "soak $b: PASS"
  else
    echo "soak $b: FAIL (RSS grew more than ${limit_kib} KiB)"; fail=1
  fi
done
exit "$fail"
