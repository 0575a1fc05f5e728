#!/usr/bin/env bash
# Soak: a long reliable throughput run at a fixed rate (default 10 000
# samples/s) through every reliable binding, side by side, watching the
# resident memory (VmRSS) of each side. Pass: neither side's RSS grows by
# more than 1 MiB between the end of the first minute (the warm-up) and the
# end of the run.
#
# usage: bench/soak.sh [SECONDS=3600] [RATE=10000] [BINDINGS]
#   BINDINGS default: "tcp uds shm intra iceoryx2 cyclonedds iceoryx fastdds zenoh"
#   (udp is best effort only: it has nothing to keep and is not soaked).
# Each binding is one `pubsubperf throughput -b B --reliable --rate RATE
# --pace sleep` run, publisher and subscriber in two processes (the tool's
# local form; its subscriber is the publisher's child `pubsubperf sub`);
# `intra` is one process, whose RSS is reported for both sides.
# Side by side without disturbing each other: `--pace sleep` makes the
# publisher sleep until its slots instead of spinning (a few % of a core at
# 10 000/s), every run is pinned as the tool pins (publisher core 0,
# subscriber core 1; CPUS=PUB,SUB to change), the runs start STAGGER
# seconds apart (default 5) so that their set-ups do not overlap, and every
# run has its own ports, DDS domain and shared-memory names (the tool derives
# them from the run id). PARALLEL=0 runs the bindings one after the other.
# Not part of CI (an hour); run it by hand. Prints, per binding, the RSS of
# both sides after the first minute and at the end, the growth, a curve (RSS
# every tenth of the run), the sample counts, CPU, and PASS/FAIL; CURVES=DIR
# keeps the full curves (one CSV per binding, a line every 10 s). Exit code
# 1 if any binding fails (a binding missing from the build fails too).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-3600}"
rate="${2:-10000}"
bindings="${3:-tcp uds shm intra iceoryx2 cyclonedds iceoryx fastdds zenoh}"
bin="${PUBSUBPERF:-target/release/pubsubperf}"
cpus="${CPUS:-0,1}"
stagger="${STAGGER:-5}"
[ -x "$bin" ] || { echo "soak: build first (cargo build --release -p pubsubperf) or set PUBSUBPERF" >&2; exit 2; }
# Warm-up: a quarter of the run, at most 60 s, at least 5 s.
warm=$(( secs / 4 )); [ "$warm" -gt 60 ] && warm=60; [ "$warm" -lt 5 ] && warm=5
limit_kib=1024
work=$(mktemp -d)
curves="${CURVES:-$work}"
mkdir -p "$curves"
cleanup() {
  local f
  for f in "$work"/*.pids; do
    [ -e "$f" ] || continue
    # shellcheck disable=SC2046
    kill $(cat "$f") 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# The publisher's `pubsubperf sub` child (none for intra).
sub_of() { pgrep -P "$1" -f ' sub ' | head -1 || true; }

available() {
  "$bin" bindings --json | python3 -c "
import json, sys
for b in json.load(sys.stdin):
    if b['name'] == sys.argv[1]:
        sys.exit(0 if 'Ok' in b['available'] and b['capabilities']['reliable'] else 1)
sys.exit(1)" "$1"
}

# soak_one B: one binding's run and its report lines (on stdout).
soak_one() {
  local b=$1 pub sub="" p0 s0 p s p1 s1 pmax smax t0 end now nap dp ds tenth next k
  local -a pcurve=() scurve=()
  "$bin" throughput -b "$b" --reliable --rate "$rate" --pace sleep \
    --duration "${secs}s" --warmup 0s --cpu "$cpus" -q --no-save \
    --json "$work/$b.json" >"$work/pub-$b.out" 2>"$work/pub-$b.err" &
  pub=$!
  echo "$pub" >"$work/$b.pids"
  t0=$(date +%s)
  # The subscriber process appears once the publisher has set up.
  for _ in $(seq 100); do
    sub=$(sub_of "$pub"); [ -n "$sub" ] && break
    [ "$b" = intra ] && break
    sleep 0.1
  done
  [ -n "$sub" ] && echo "$pub $sub" >"$work/$b.pids"
  [ -z "$sub" ] && sub=$pub
  sleep $(( t0 + warm - $(date +%s) > 0 ? t0 + warm - $(date +%s) : 0 ))
  p0=$(rss "$pub"); s0=$(rss "$sub")
  [ "$sub" = "$pub" ] && s0=$p0
  echo "t_s,publisher_kib,subscriber_kib" >"$curves/soak-$b.csv"
  echo "$warm,$p0,$s0" >>"$curves/soak-$b.csv"
  # Sample every 10 s until 2 s before the end; keep the last.
  end=$(( t0 + secs - 2 ))
  tenth=$(( secs / 10 )); next=$(( t0 + tenth ))
  p1=$p0; s1=$s0; pmax=$p0; smax=$s0
  while now=$(date +%s); [ "$now" -lt "$end" ] && kill -0 "$pub" 2>/dev/null; do
    nap=$(( end - now < 10 ? end - now : 10 )); sleep "$nap"
    p=$(rss "$pub"); s=$(rss "$sub")
    [ "$p" -gt 0 ] && p1=$p; [ "$s" -gt 0 ] && s1=$s
    [ "$p1" -gt "$pmax" ] && pmax=$p1; [ "$s1" -gt "$smax" ] && smax=$s1
    now=$(date +%s)
    echo "$(( now - t0 )),$p1,$s1" >>"$curves/soak-$b.csv"
    if [ "$now" -ge "$next" ]; then pcurve+=("$p1"); scurve+=("$s1"); next=$(( next + tenth )); fi
  done
  echo "soak $b: ${rate}/s reliable for ${secs}s; after ${warm}s RSS publisher ${p0} KiB, subscriber ${s0} KiB"
  if ! wait "$pub"; then
    echo "soak $b: FAIL, the run failed: $(tail -1 "$work/pub-$b.err")"
    return 1
  fi
  dp=$(( p1 - p0 )); ds=$(( s1 - s0 ))
  [ "$sub" = "$pub" ] && echo "soak $b: one process (publisher and subscriber are threads): its RSS is both sides'"
  echo "soak $b: at the end RSS publisher ${p1} KiB (max ${pmax}), subscriber ${s1} KiB (max ${smax})"
  echo "soak $b: curve (KiB, every $(( tenth ))s) publisher ${pcurve[*]:-}; subscriber ${scurve[*]:-}"
  echo "soak $b: growth publisher ${dp} KiB, subscriber ${ds} KiB (limit ${limit_kib} KiB)"
  python3 - "$work/$b.json" "$b" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
t = r["throughput"]
res = r.get("resources", {})
cpu = " ".join(f"{k} {v['cpu_percent']:.1f} %" for k, v in res.items() if "cpu_percent" in v)
print(f"soak {sys.argv[2]}: sent {t['sent']} received {t['received']} lost {t['lost']} "
      f"({t['lost_percent']:.4f} %), {t['samples_per_s']:.0f} samples/s, complete {r['complete']}; CPU {cpu}")
PY
  if [ "$dp" -le "$limit_kib" ] && [ "$ds" -le "$limit_kib" ]; then
    echo "soak $b: PASS"
  else
    echo "soak $b: FAIL (RSS grew more than ${limit_kib} KiB)"
    return 1
  fi
}

echo "soak: $(date -u '+%F %T') UTC, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
fail=0
jobs_=()
for b in $bindings; do
  if ! available "$b"; then
    echo "soak $b: FAIL, not in this build or not reliable ('$bin bindings' lists it)" >"$work/$b.report"
    continue
  fi
  if [ "${PARALLEL:-1}" = 0 ]; then
    soak_one "$b" >"$work/$b.report" 2>&1 || true
  else
    soak_one "$b" >"$work/$b.report" 2>&1 &
    jobs_+=("$!")
    sleep "$stagger"
  fi
done
for j in "${jobs_[@]}"; do wait "$j" || true; done
for b in $bindings; do
  cat "$work/$b.report"
  grep -q "PASS$" "$work/$b.report" || fail=1
done
echo "soak: ended $(date -u '+%F %T') UTC, load $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$fail"
