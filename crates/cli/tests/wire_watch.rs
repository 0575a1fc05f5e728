//! Attacks on an agent watched on the wire: an agent (`sub --listen`) in
//! one namespace, its publisher in another, a bystander in a third; what
//! leaves the agent's namespace is counted by nftables in its output hook
//! (UDP to any address the agent does not allow; multicast with a TTL
//! above the agent's, 1), and a datagram forged from the publisher's
//! address and port is sent to the agent's data port during a run.
//!
//! Needs root, `ip`, `nft`, `sysctl` and `ss` (iproute2); without them
//! each test fails naming what is missing. Every namespace and process a
//! test creates is removed by its [`Lab`]'s Drop, also when it fails.

mod lab;

use lab::*;
use pubsubperf_testkit::require;
use std::net::Ipv4Addr;
use std::time::{Duration, Instant};

/// The publisher's, the agent's and the bystander's addresses.
const PUBLISHER: &str = "198.18.0.1";
const AGENT: &str = "198.18.0.2";
const BYSTANDER: &str = "198.18.6.3";
/// The multicast group the agent allows in the multicast runs.
const GROUP: &str = "239.255.65.1";

/// Publisher `a` — agent `b` — bystander `c` (a link of its own, routed
/// from the agent: a destination the agent could reach).
fn three_parties() -> (Lab, String, String) {
    require_netns();
    require::command("ss", "iproute2");
    let (mut l, a, b) = Lab::two_hosts();
    let c = l.ns("c");
    l.link(&b, "pq0", "198.18.6.2/24", &c, "pq1", "198.18.6.3/24");
    (l, a, b)
}

/// Starts `pubsubperf agent` (sessions one after another) in `ns` with
/// `extra` arguments; waits until it listens.
fn agent(lab: &mut Lab, ns: &str, extra: &[&str]) {
    let at = format!("{AGENT}:{CTRL}");
    let mut args = vec!["agent", "--listen", &at];
    args.extend(extra);
    lab.serve(ns, &args);
}

/// Counts, in `ns`'s output hook, UDP leaving by an interface other than
/// loopback: to addresses outside `allowed` ("stranger", each destination
/// kept in a set for the failure message), multicast with a TTL above 1
/// ("ttl"), IPv6 ("ipv6"), and to the publisher ("publisher": the watch
/// sees traffic at all).
fn watch(ns: &str, allowed: &[&str]) {
    let _ = std::process::Command::new("ip")
        .args([
            "netns", "exec", ns, "nft", "delete", "table", "inet", "ppwire",
        ])
        .output();
    sh_in(
        &format!(
            "table inet ppwire {{\n set strangers {{ type ipv4_addr . inet_service; flags dynamic; size 4096; }}\n chain out {{ type filter hook output priority 0; policy accept;\n  oifname \"lo\" accept\n  meta nfproto ipv6 meta l4proto udp counter comment \"ipv6\"\n  meta l4proto udp ip daddr != {{ {} }} add @strangers {{ ip daddr . udp dport }} counter comment \"stranger\"\n  meta l4proto udp ip daddr 224.0.0.0/4 ip ttl > 1 counter comment \"ttl\"\n  meta l4proto udp ip daddr {PUBLISHER} counter comment \"publisher\"\n }}\n}}\n",
            allowed.join(", ")
        ),
        &["ip", "netns", "exec", ns, "nft", "-f", "-"],
    );
}

/// The counters of [`watch`] (packets by comment) and the strangers seen.
fn counted(ns: &str) -> (std::collections::BTreeMap<String, u64>, Vec<String>) {
    let o = sh(&[
        "ip", "netns", "exec", ns, "nft", "-j", "list", "table", "inet", "ppwire",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    let mut strangers = Vec::new();
    for item in v["nftables"].as_array().unwrap() {
        if let Some(r) = item.get("rule")
            && let Some(c) = r["comment"].as_str()
        {
            let packets = r["expr"]
                .as_array()
                .unwrap()
                .iter()
                .find_map(|e| e["counter"]["packets"].as_u64())
                .unwrap_or(0);
            counts.insert(c.to_string(), packets);
        }
        if let Some(s) = item.get("set") {
            for e in s["elem"].as_array().into_iter().flatten() {
                strangers.push(e.to_string());
            }
        }
    }
    (counts, strangers)
}

/// Runs a `test` of `binding` from `a` against the agent in `b` (with
/// `extra` publisher arguments); returns the publisher's output.
fn run_against_agent(
    lab: &Lab,
    a: &str,
    binding: &str,
    test: &str,
    extra: &[&str],
    json: &std::path::Path,
) -> std::process::Output {
    let agent = format!("{AGENT}:{CTRL}");
    let n = if test == "latency" { "300" } else { "3000" };
    let mut args = vec![
        test,
        "-b",
        binding,
        "--connect",
        &agent,
        "-s",
        "64",
        "-n",
        n,
        "--warmup",
        "100ms",
        "-q",
        "--json",
    ];
    args.push(json.to_str().unwrap());
    if test == "throughput" {
        args.extend(["--rate", "20000"]);
    }
    args.extend(extra);
    lab.run(a, &args)
}

/// A session from the network sends discovery, like data, only where the
/// agent allows (the publisher, the allowed group) and multicast only with
/// the agent's TTL: CycloneDDS's SPDP went to 239.255.0.1 with TTL 32, and
/// Fast DDS's to 239.255.0.1, whatever the agent allowed. The run still
/// completes, and its result says how discovery ran on the agent.
#[test]
fn dds_sessions_send_nothing_the_agent_does_not_allow_on_the_wire() {
    let _labs = shared();
    let (mut lab, a, b) = three_parties();
    agent(&mut lab, &b, &["--allow-destination", GROUP]);
    let multicast = ["--multicast", "--multicast-address", GROUP];
    let mut failures = Vec::new();
    for binding in ["cyclonedds", "fastdds"] {
        for (mode, extra) in [("unicast", &[][..]), ("multicast", &multicast[..])] {
            for test in ["latency", "throughput"] {
                watch(&b, &[PUBLISHER, GROUP]);
                let d = tmp();
                let j = d.path().join("r.json");
                let o = run_against_agent(&lab, &a, binding, test, extra, &j);
                let what = format!("{binding} {test} {mode}");
                assert!(o.status.success(), "{what}: {}", stderr(&o));
                let r = &json(&j)["runs"][0];
                assert_eq!(r["complete"], true, "{what}: {r}");
                let (c, strangers) = counted(&b);
                assert!(c["publisher"] > 0, "{what}: the watch saw nothing: {c:?}");
                if c["stranger"] + c["ttl"] + c["ipv6"] > 0 {
                    failures.push(format!("{what}: sent {c:?} to {strangers:?}"));
                }
                let deviations = r["config"]["deviations"].to_string();
                if !deviations.contains(&format!("sub: unicast discovery to {PUBLISHER}, no")) {
                    failures.push(format!(
                        "{what}: the result does not say how the agent discovered: {deviations}"
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "the agent sent where it does not allow, or did not say how it discovered:\n{}",
        failures.join("\n")
    );
}

/// `--opt peers=` naming a bystander is refused, and nothing goes to it
/// (357 and 360 datagrams in 7 s reached a third address before).
#[test]
fn discovery_peers_naming_a_bystander_are_refused_and_nothing_reaches_it() {
    let _labs = shared();
    let (mut lab, a, b) = three_parties();
    agent(&mut lab, &b, &[]);
    for binding in ["cyclonedds", "fastdds"] {
        watch(&b, &[PUBLISHER]);
        let d = tmp();
        let j = d.path().join("r.json");
        let peers = format!("peers={BYSTANDER}");
        let o = run_against_agent(&lab, &a, binding, "latency", &["--opt", &peers], &j);
        let err = stderr(&o);
        assert!(!o.status.success(), "{binding}: the run was not refused");
        assert!(
            err.contains("refused by the agent") && err.contains(BYSTANDER),
            "{binding}: {err}"
        );
        let (c, strangers) = counted(&b);
        assert_eq!(
            c["stranger"] + c["ipv6"],
            0,
            "{binding}: {c:?} to {strangers:?}"
        );
    }
}

/// The agent's connected UDP sockets whose peer is the publisher: (the
/// agent's port, the publisher's port), read with `ss` in `ns`.
fn flows_from_publisher(ns: &str) -> Vec<(u16, u16)> {
    let o = sh(&["ip", "netns", "exec", ns, "ss", "-uanH"]);
    let port = |a: &str| a.rsplit(':').next().and_then(|p| p.parse::<u16>().ok());
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let (local, peer) = (f.get(3)?, f.get(4)?);
            (f[0] == "ESTAB"
                && local.starts_with(&format!("{AGENT}:"))
                && peer.starts_with(&format!("{PUBLISHER}:")))
            .then(|| Some((port(local)?, port(peer)?)))?
        })
        .collect()
}

/// One UDP datagram from `src` to `dst` with `payload`, built by hand
/// (IPv4 header and all) on a raw socket in namespace `ns`: what an
/// on-path attacker sends with the publisher's address and port.
fn forge(ns: &str, src: (Ipv4Addr, u16), dst: (Ipv4Addr, u16), payload: &[u8], count: usize) {
    let ns = ns.to_string();
    let payload = payload.to_vec();
    std::thread::spawn(move || {
        let f = std::fs::File::open(format!("/run/netns/{ns}")).unwrap();
        // SAFETY: setns on this thread only (a thread of its own, ended
        // below), with a namespace file this test opened.
        let ok = unsafe { libc::setns(std::os::fd::AsRawFd::as_raw_fd(&f), libc::CLONE_NEWNET) };
        assert_eq!(ok, 0, "setns: {}", std::io::Error::last_os_error());
        // SAFETY: a plain socket call; the descriptor is closed below.
        let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_RAW) };
        assert!(fd >= 0, "raw socket: {}", std::io::Error::last_os_error());
        let len = 28 + payload.len();
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[6] = 0x40;
        p[8] = 64;
        p[9] = libc::IPPROTO_UDP as u8;
        p[12..16].copy_from_slice(&src.0.octets());
        p[16..20].copy_from_slice(&dst.0.octets());
        p[20..22].copy_from_slice(&src.1.to_be_bytes());
        p[22..24].copy_from_slice(&dst.1.to_be_bytes());
        p[24..26].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
        p[28..].copy_from_slice(&payload);
        let to = libc::sockaddr_in {
            sin_family: libc::AF_INET as u16,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes(dst.0.octets()),
            },
            sin_zero: [0; 8],
        };
        for _ in 0..count {
            // SAFETY: p and to outlive the call; sizes are theirs.
            let n = unsafe {
                libc::sendto(
                    fd,
                    p.as_ptr().cast(),
                    p.len(),
                    0,
                    (&to as *const libc::sockaddr_in).cast(),
                    std::mem::size_of::<libc::sockaddr_in>() as u32,
                )
            };
            assert_eq!(
                n,
                len as isize,
                "sendto: {}",
                std::io::Error::last_os_error()
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        // SAFETY: fd is this thread's.
        unsafe { libc::close(fd) };
    })
    .join()
    .expect("forging thread");
}

/// Forged datagrams (the publisher's address and port, the agent's data
/// port, no run key) sent during a real udp run across two namespaces:
/// the result names them (`foreign_samples`) and no figure counts them.
#[test]
fn datagrams_forged_into_a_network_session_are_named_and_kept_out_of_the_figures() {
    let _labs = shared();
    let (mut lab, a, b) = three_parties();
    agent(&mut lab, &b, &[]);
    const FORGED: usize = 200;
    for test in ["throughput", "latency"] {
        let d = tmp();
        let j = d.path().join("r.json");
        let agent = format!("{AGENT}:{CTRL}");
        let mut args = vec![
            test,
            "-b",
            "udp",
            "--connect",
            &agent,
            "-s",
            "64",
            "--duration",
            "4s",
            "--warmup",
            "0s",
            "-q",
            "--json",
        ];
        args.push(j.to_str().unwrap());
        if test == "throughput" {
            args.extend(["--rate", "5000"]);
        }
        let p = publisher(&mut lab, &a, &args);
        // The run's data flow, once its reader is connected to the
        // publisher's writer.
        let start = Instant::now();
        let flows = loop {
            let f = flows_from_publisher(&b);
            if !f.is_empty() {
                break f;
            }
            assert!(
                start.elapsed() < Duration::from_secs(3),
                "{test}: no connected data socket in the agent's namespace"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let payload = [0u8; 64];
        for &(agent_port, publisher_port) in &flows {
            forge(
                &a,
                (PUBLISHER.parse().unwrap(), publisher_port),
                (AGENT.parse().unwrap(), agent_port),
                &payload,
                FORGED,
            );
        }
        let status = wait_exit(&mut lab.procs[p], Duration::from_secs(30), test);
        let mut err = String::new();
        std::io::Read::read_to_string(lab.procs[p].stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(status.success(), "{test}: {err}");
        let r = &json(&j)["runs"][0];
        assert_eq!(r["complete"], true, "{test}: {r}");
        let foreign = r["foreign_samples"].as_u64().unwrap_or(0);
        assert!(
            foreign > 0 && foreign <= (FORGED * flows.len()) as u64,
            "{test}: forged datagrams not named: foreign_samples {foreign} of {} forged into {flows:?}",
            FORGED * flows.len()
        );
        if test == "throughput" {
            let t = &r["throughput"];
            assert_eq!(u(&t["sent"]), u(&t["received"]) + u(&t["lost"]), "{t}");
            assert_eq!(t["duplicates"], 0, "{t}");
            assert_eq!(t["out_of_order"], 0, "{t}");
        } else {
            let pings = &r["pings"];
            assert!(u(&pings["echoed"]) <= u(&pings["sent"]), "{pings}");
            assert_eq!(u(&r["latency_ns"]["count"]), u(&pings["echoed"]), "{r}");
        }
    }
}
