# Sourced first (right after `cd` to the repository) by the bench scripts
# whose tools talk over loopback TCP (sockets_vs_sockperf.sh, zenoh_vs_ref.sh):
#   . bench/lib/tcp_cc.sh SCRIPT_PATH "$@"
# With TCP_CC=NAME (and not already inside), runs SCRIPT_PATH again in a
# network namespace of its own whose TCP congestion control is NAME (`ip
# netns`, root; lo up; the host's setting is left alone; the namespace is
# deleted at the end) and exits with its status. Otherwise prints the
# congestion control the script runs under and returns. Why it matters:
# under bbr Linux paces every TCP connection, loopback ones too, and large
# messages then take their time from bbr's estimate for the connection
# (docs/bindings/sockets.md). The namespace has no network beyond its
# loopback: build pubsubperf and the references first (or point PUBSUBPERF
# and ZENOH_PINGPONG at built ones), as a first build there cannot fetch
# crates.
if [ -n "${TCP_CC:-}" ] && [ -z "${BENCH_NETNS:-}" ]; then
    tcp_cc_ns=pubsubperf-bench-$$
    trap 'ip netns del "$tcp_cc_ns" 2>/dev/null || true' EXIT
    ip netns add "$tcp_cc_ns"
    ip netns exec "$tcp_cc_ns" ip link set lo up
    ip netns exec "$tcp_cc_ns" sysctl -qw net.ipv4.tcp_congestion_control="$TCP_CC"
    # A SIGTERM, SIGINT or SIGHUP for this shell goes to the run inside as
    # SIGTERM (a background job's SIGINT is ignored), which ends its own
    # peers; the namespace is deleted once that run has exited. A `wait` a
    # signal cut short is waited again.
    BENCH_NETNS=$tcp_cc_ns ip netns exec "$tcp_cc_ns" "$BASH" "$@" &
    tcp_cc_run=$!
    trap 'tcp_cc_sig=1; kill -TERM "$tcp_cc_run" 2>/dev/null || true' TERM INT HUP
    while :; do
        tcp_cc_sig=
        tcp_cc_rc=0
        wait "$tcp_cc_run" || tcp_cc_rc=$?
        [ -n "$tcp_cc_sig" ] || break
    done
    exit "$tcp_cc_rc"
fi
echo "tcp congestion control: $(sysctl -n net.ipv4.tcp_congestion_control)${BENCH_NETNS:+ (network namespace $BENCH_NETNS)}"
