# RSS watch of a publisher/subscriber pair, shared by the soak scripts
# (sourced). rss PID: its VmRSS in KiB (0 once gone).
# watch_pair PUB SUB T0 SECS WARM CSV: from T0 + WARM (the warm-up) to
# T0 + SECS - 2 (or until PUB exits), reads both every 10 s into CSV
# (t_s,publisher_kib,subscriber_kib) and sets p0 s0 (after the warm-up),
# p1 s1 (at the end) and the curves pcurve scurve (every tenth of SECS).
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

watch_pair() {
  local pub=$1 sub=$2 t0=$3 secs=$4 warm=$5 csv=$6 end now tenth next p s
  sleep $(( t0 + warm - $(date +%s) > 0 ? t0 + warm - $(date +%s) : 0 ))
  p0=$(rss "$pub"); s0=$(rss "$sub")
  echo "t_s,publisher_kib,subscriber_kib" >"$csv"
  echo "$warm,$p0,$s0" >>"$csv"
  end=$(( t0 + secs - 2 )); tenth=$(( secs / 10 )); next=$(( t0 + tenth ))
  p1=$p0; s1=$s0; pcurve=(); scurve=()
  while now=$(date +%s); [ "$now" -lt "$end" ] && kill -0 "$pub" 2>/dev/null; do
    sleep $(( end - now < 10 ? end - now : 10 ))
    p=$(rss "$pub"); s=$(rss "$sub")
    [ "$p" -gt 0 ] && p1=$p; [ "$s" -gt 0 ] && s1=$s
    now=$(date +%s)
    echo "$(( now - t0 )),$p1,$s1" >>"$csv"
    if [ "$now" -ge "$next" ]; then pcurve+=("$p1"); scurve+=("$s1"); next=$(( next + tenth )); fi
  done
}
