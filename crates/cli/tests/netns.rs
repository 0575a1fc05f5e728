//! Two (or three) hosts on one machine: each test builds network namespaces
//! joined by veth pairs, runs `pubsubperf sub --listen` in one and the
//! publisher (`latency`/`throughput --connect`) in another, and checks
//! known answers under impairments built from what this kernel has
//! (nftables for loss, `pubsubperf relay` for delay; see the README, section "Across hosts and under faults").
//!
//! Needs root, `ip` (iproute2) and `nft` (nftables); without them each test
//! fails with a line naming what is missing (`scripts/test.sh` installs them
//! and runs as root). Hosts use 198.18.0.0/15 (reserved
//! for benchmarking), only inside namespaces the test created. Every
//! namespace and process a test creates is removed by a guard's Drop, also
//! when the test fails.
//!
//! The only latency figure asserted is the delay known answer the issue asks
//! for: p50(D = 1 ms) - p50(D = 0) through the relay equals what sockperf
//! measures through it, within 3 % of 1 ms.

mod lab;

use lab::*;
use pubsubperf_testkit::process::children;
use pubsubperf_testkit::require;
use std::io::{BufRead, BufReader};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[test]
fn every_networked_binding_runs_between_two_namespaces() {
    require_netns();
    let _labs = shared();
    let bindings = networked_bindings();
    assert!(bindings.iter().any(|b| b.0 == "udp") && bindings.iter().any(|b| b.0 == "tcp"));
    let (mut lab, a, b) = Lab::two_hosts();
    let sub_at = format!("198.18.0.2:{CTRL}");
    for (name, _, _) in &bindings {
        for test in ["latency", "throughput"] {
            let d = tmp();
            let j = d.path().join("r.json");
            lab.sub(&b, &sub_at);
            let before = rx_bytes(&b, "pp1");
            let n = if test == "latency" { "300" } else { "3000" };
            let mut args = vec![
                test,
                "-b",
                name,
                "--connect",
                &sub_at,
                "-s",
                "64,1KiB",
                "-n",
                n,
                "--warmup",
                "100ms",
                "-q",
                "--json",
                j.to_str().unwrap(),
            ];
            if test == "throughput" {
                args.extend(["--rate", "20000"]);
            }
            let o = lab.run(&a, &args);
            assert!(o.status.success(), "{name} {test}: {}", stderr(&o));
            let v = json(&j);
            // The subscriber really ran in the other namespace, on the other address.
            assert!(v["environment"]["subscriber_host"].is_object(), "{name}");
            for (i, size) in [64u64, 1024].into_iter().enumerate() {
                let r = &v["runs"][i];
                assert_eq!(r["complete"], true, "{name} {test}: {r}");
                assert_eq!(u(&r["size"]), size);
                if test == "latency" {
                    assert_eq!(u(&r["latency_ns"]["count"]), 300, "{name}");
                    // Beside the link's floor: a raw UDP ping-pong between
                    // the two namespaces (udp's own runs are that floor).
                    if name != "udp" {
                        let l = &r["limit"];
                        assert_eq!(l["what"], "udp ping-pong between the hosts", "{name}: {r}");
                        assert!(l["value"].as_f64().unwrap() > 0.0, "{name}: {l}");
                    }
                } else {
                    let t = &r["throughput"];
                    assert_eq!(u(&t["sent"]), 3000, "{name}");
                    assert_eq!(
                        u(&t["sent"]),
                        u(&t["received"]) + u(&t["lost"]),
                        "{name}: {t}"
                    );
                    if r["reliable"] == true {
                        assert_eq!(u(&t["received"]), 3000, "{name}: {t}");
                    }
                }
            }
            // The samples crossed the veth (not loopback): at least the payload
            // of everything the subscriber received.
            let crossed = rx_bytes(&b, "pp1") - before;
            let min = if test == "latency" {
                300 * (64 + 1024)
            } else {
                0
            };
            assert!(
                crossed >= min,
                "{name} {test}: only {crossed} bytes crossed"
            );
        }
    }
}

/// Installs `numgen random mod 100 < pct counter drop` on packets of `proto`
/// to the subscriber's data ports, in the subscriber's namespace.
/// Two links between the hosts: control over 198.18.0.x, data over
/// 198.18.3.x, chosen by interface name on the subscriber's side and by
/// address on the publisher's.
#[test]
fn data_goes_over_the_interface_each_side_chose() {
    require_netns();
    let _labs = shared();
    let (mut lab, a, b) = Lab::two_hosts();
    lab.link(&a, "pq0", "198.18.3.1/24", &b, "pq1", "198.18.3.2/24");
    let sub_at = format!("198.18.0.2:{CTRL}");
    for binding in ["udp", "tcp", "cyclonedds"] {
        let d = tmp();
        let j = d.path().join("r.json");
        lab.sub_with(&b, &sub_at, &["--data-address", "pq1"]);
        let (control_before, data_before) = (rx_bytes(&b, "pp1"), rx_bytes(&b, "pq1"));
        let o = lab.run(
            &a,
            &[
                "throughput",
                "-b",
                binding,
                "--connect",
                &sub_at,
                "--data-address",
                "198.18.3.1",
                "-s",
                "1KiB",
                "-n",
                "5000",
                "--rate",
                "20000",
                "--warmup",
                "100ms",
                "-q",
                "--json",
                j.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{binding}: {}", stderr(&o));
        let v = json(&j);
        assert_eq!(v["runs"][0]["complete"], true, "{binding}");
        assert_eq!(v["runs"][0]["config"]["data_address"], "198.18.3.1");
        assert_eq!(v["environment"]["data_address"], "198.18.3.1");
        assert_eq!(
            v["environment"]["subscriber_host"]["data_address"],
            "198.18.3.2"
        );
        // Each host's checks of a run across hosts name its own NIC under
        // the data address (pubsubperf doctor's, before the run).
        for (env, nic) in [
            (&v["environment"], "pq0"),
            (&v["environment"]["subscriber_host"], "pq1"),
        ] {
            let checks = env["doctor"].as_array().expect("doctor findings");
            let find = |name: &str| {
                checks
                    .iter()
                    .find(|f| f["check"] == name)
                    .unwrap_or_else(|| panic!("{binding}: no {name} check: {env}"))
            };
            assert!(
                find("nic")["value"]
                    .as_str()
                    .is_some_and(|v| v.starts_with(&format!("{nic} "))),
                "{binding}: {env}"
            );
            find("nic-offloads");
            find("nic-coalescing");
            find("clock-sync");
        }
        let data = rx_bytes(&b, "pq1") - data_before;
        let control = rx_bytes(&b, "pp1") - control_before;
        eprintln!("{binding}: {data} bytes over the data link, {control} over the control link");
        assert!(
            data >= 5000 * 1024,
            "{binding}: only {data} bytes on the data link"
        );
        assert!(
            control < 1024 * 1024,
            "{binding}: {control} bytes on the control link"
        );
    }
    // A binding without a network path refuses the option.
    let o = lab.run(
        &a,
        &[
            "latency",
            "-b",
            "shm",
            "--data-address",
            "198.18.3.1",
            "-n",
            "10",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("--data-address: shm has no network path"),
        "{}",
        stderr(&o)
    );
    // Neither does an address this host does not have.
    let o = lab.run(&a, &["latency", "--data-address", "192.0.2.99", "-n", "10"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("not an address of this host"),
        "{}",
        stderr(&o)
    );
}

fn drop_rule(ns: &str, proto: &str, pct: u32) {
    rule(ns, "input", proto, pct);
}

/// Installs `numgen random mod 100 < pct counter drop` (`counter drop`
/// for 100 %) on `proto` packets to the subscriber's data ports in the
/// `hook` (input, output) of `ns`, in table `inet pploss`.
fn rule(ns: &str, hook: &str, proto: &str, pct: u32) {
    let some = if pct < 100 {
        format!("numgen random mod 100 < {pct} ")
    } else {
        String::new()
    };
    sh_in(
        &format!(
            "table inet pploss {{\n chain {hook} {{ type filter hook {hook} priority 0; policy accept;\n  {proto} dport {DATA_PORTS} {some}counter drop\n }}\n}}\n"
        ),
        &["ip", "netns", "exec", ns, "nft", "-f", "-"],
    );
}

/// The drop rules' packet counters, summed.
fn dropped(ns: &str) -> u64 {
    let o = sh(&[
        "ip", "netns", "exec", ns, "nft", "-j", "list", "table", "inet", "pploss",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut total = None;
    for item in v["nftables"].as_array().unwrap() {
        if let Some(exprs) = item["rule"]["expr"].as_array() {
            for e in exprs {
                if let Some(c) = e.get("counter") {
                    *total.get_or_insert(0) += u(&c["packets"]);
                }
            }
        }
    }
    total.unwrap_or_else(|| panic!("no counter in {v}"))
}

/// A udp throughput run from `ns` to the subscriber at `sub_at`: 20 000
/// samples of 64 B at 20 000/s, no warm-up, 4 MiB socket buffers, its
/// results in `json`.
fn udp_20000(lab: &Lab, ns: &str, sub_at: &str, json: &std::path::Path) -> std::process::Output {
    lab.run(
        ns,
        &[
            "throughput",
            "-b",
            "udp",
            "--connect",
            sub_at,
            "-s",
            "64",
            "-n",
            "20000",
            "--rate",
            "20000",
            "--warmup",
            "0s",
            "--socket-buffer",
            "4MiB",
            "-q",
            "--json",
            json.to_str().unwrap(),
        ],
    )
}

#[test]
fn udp_loss_equals_the_nftables_drop_counter() {
    require_netns();
    let _labs = shared();
    let (mut lab, a, b) = Lab::two_hosts();
    drop_rule(&b, "udp", 10);
    let sub_at = format!("198.18.0.2:{CTRL}");
    lab.sub(&b, &sub_at);
    let d = tmp();
    let j = d.path().join("r.json");
    let o = udp_20000(&lab, &a, &sub_at, &j);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = &json(&j)["runs"][0]["throughput"];
    let drops = dropped(&b);
    eprintln!(
        "udp 10 % drop rule: sent {} received {} lost {} dropped by nftables {drops}",
        t["sent"], t["received"], t["lost"]
    );
    assert!(drops > 0, "the rule dropped nothing");
    assert_eq!(u(&t["sent"]), 20000);
    assert_eq!(u(&t["lost"]), drops, "{t}");
    assert_eq!(u(&t["sent"]), u(&t["received"]) + u(&t["lost"]), "{t}");
}

/// A [`rule`] in the output hook of `ns`, the sender's namespace: the
/// kernel refuses those sends with EPERM.
fn refuse_rule(ns: &str, proto: &str, pct: u32) {
    rule(ns, "output", proto, pct);
}

/// Deletes the table of [`drop_rule`] / [`refuse_rule`] from `ns`.
fn remove_rules(ns: &str) {
    sh(&[
        "ip", "netns", "exec", ns, "nft", "delete", "table", "inet", "pploss",
    ]);
}

#[test]
fn sends_a_sender_side_firewall_refuses_are_counted_as_rejected() {
    require_netns();
    let _labs = shared();
    let (mut lab, a, b) = Lab::two_hosts();
    refuse_rule(&a, "udp", 30);
    let sub_at = format!("198.18.0.2:{CTRL}");
    lab.sub(&b, &sub_at);
    let d = tmp();
    let j = d.path().join("r.json");
    let o = udp_20000(&lab, &a, &sub_at, &j);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &json(&j)["runs"][0];
    let t = &r["throughput"];
    let drops = dropped(&a);
    eprintln!(
        "udp, 30 % refused in the sender's output hook: sent {} received {} lost {} rejected {} refused by nftables {drops}",
        t["sent"], t["received"], t["lost"], t["rejected"]
    );
    assert_eq!(r["complete"], true, "{r}");
    assert!(u(&t["rejected"]) > 0, "nothing rejected: {t}");
    // Every refused send is one packet the rule dropped (warm-up is 0 s):
    // counted as rejected, not sent, so not lost either.
    assert_eq!(u(&t["rejected"]), drops, "{t}");
    assert_eq!(u(&t["sent"]), 20000, "{t}");
    assert_eq!(u(&t["sent"]), u(&t["received"]) + u(&t["lost"]), "{t}");
    let reason = t["rejected_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("udp send refused: EPERM"), "{t}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("sends rejected"), "{out}");

    // Reliable: tcp to the same ports, every packet refused. No reliable
    // binding here gets the refusal from its send call (tcp retries a
    // dropped SYN or segment in the kernel), so what is checked is that
    // the run fails within seconds with one line saying what to check.
    remove_rules(&a);
    refuse_rule(&a, "tcp", 100);
    lab.sub(&b, &sub_at);
    let start = Instant::now();
    let o = lab.run(
        &a,
        &[
            "throughput",
            "-b",
            "tcp",
            "--reliable",
            "--connect",
            &sub_at,
            "-s",
            "64",
            "-n",
            "1000",
            "--warmup",
            "0s",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ],
    );
    let err = stderr(&o);
    eprintln!(
        "tcp reliable, all refused, after {:?}: {err}",
        start.elapsed()
    );
    assert!(!o.status.success(), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30), "{err}");
    assert!(
        err.contains("tcp connect to the reader at 198.18.0.2:")
            && err.contains("check that no firewall rule drops the packets"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    remove_rules(&a);
}

/// Issue 17: a latency ping the sender's firewall refuses (EPERM) under
/// best effort is counted as rejected, one per packet the rule dropped,
/// and the run goes on to its count.
#[test]
fn pings_a_sender_side_firewall_refuses_are_counted_as_rejected() {
    require_netns();
    let _labs = shared();
    let (mut lab, a, b) = Lab::two_hosts();
    refuse_rule(&a, "udp", 30);
    let sub_at = format!("198.18.0.2:{CTRL}");
    lab.sub(&b, &sub_at);
    let d = tmp();
    let j = d.path().join("l.json");
    let o = lab.run(
        &a,
        &[
            "latency",
            "-b",
            "udp",
            "--connect",
            &sub_at,
            "-s",
            "64",
            "-n",
            "500",
            "--warmup",
            "0s",
            "--json",
            j.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let r = &json(&j)["runs"][0];
    let p = &r["pings"];
    let drops = dropped(&a);
    eprintln!(
        "udp latency, 30 % refused in the sender's output hook: pings {p}, refused by nftables {drops}"
    );
    assert_eq!(r["complete"], true, "{r}");
    assert!(u(&p["rejected"]) > 0, "nothing rejected: {p}");
    assert_eq!(u(&p["rejected"]), drops, "{p}");
    assert_eq!(u(&p["sent"]), 500, "{p}");
    assert_eq!(u(&p["sent"]), u(&p["echoed"]) + u(&p["lost"]), "{p}");
    let reason = p["rejected_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("udp send refused: EPERM"), "{p}");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("pings rejected"), "{out}");
    remove_rules(&a);
}

#[test]
fn reliable_bindings_deliver_everything_in_order_through_loss() {
    require_netns();
    let _labs = shared();
    for (name, reliable, _) in networked_bindings() {
        if !reliable {
            continue;
        }
        let (mut lab, a, b) = Lab::two_hosts();
        // tcp data goes to the reader's (ephemeral) port; middleware over
        // UDP (DDS) uses fixed ports: drop 5 % of every UDP datagram
        // (discovery included, which retries).
        sh_in(
            &format!(
                "table inet pploss {{\n chain input {{ type filter hook input priority 0; policy accept;\n  tcp dport {DATA_PORTS} numgen random mod 100 < 5 counter drop\n  meta l4proto udp numgen random mod 100 < 5 counter drop\n }}\n}}\n"
            ),
            &["ip", "netns", "exec", &b, "nft", "-f", "-"],
        );
        let sub_at = format!("198.18.0.2:{CTRL}");
        lab.sub(&b, &sub_at);
        let d = tmp();
        let j = d.path().join("r.json");
        let o = lab.run(
            &a,
            &[
                "throughput",
                "-b",
                &name,
                "--reliable",
                "--connect",
                &sub_at,
                "-s",
                "256",
                "-n",
                "5000",
                "--rate",
                "5000",
                "--warmup",
                "0s",
                "--check",
                "-q",
                "--json",
                j.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let r = &json(&j)["runs"][0];
        let t = &r["throughput"];
        let drops = dropped(&b);
        eprintln!(
            "{name} reliable, 5 % drop rule: sent {} received {} lost {} out of order {} dropped packets {drops}",
            t["sent"], t["received"], t["lost"], t["out_of_order"]
        );
        assert!(drops > 0, "{name}: the rule dropped nothing");
        assert_eq!(u(&t["sent"]), 5000, "{name}");
        assert_eq!(u(&t["received"]), 5000, "{name}: {t}");
        assert_eq!(u(&t["lost"]), 0, "{name}: {t}");
        assert_eq!(u(&t["out_of_order"]), 0, "{name}: {t}");
        assert_eq!(u(&t["duplicates"]), 0, "{name}: {t}");
        assert_eq!(u(&r["bad_samples"]), 0, "{name}");
    }
}

/// Who measures the one-way p50 through the relay.
#[derive(Clone, Copy, Debug)]
enum Meter {
    Pubsubperf,
    /// sockperf's busy ping-pong (`--nonblocked`, its fastest mode), client
    /// on core 0 and server on core 1 as ours (`--cpu 0,1`); its
    /// "percentile 50.000" line is one-way (RTT / 2), as ours.
    Sockperf,
}

/// p50 one-way of a 64-byte ping-pong through the relay with `delay`,
/// measured by `meter`, and the relay's mean lateness beyond `delay` (0
/// with no delay), in ns.
fn p50_through_relay(meter: Meter, binding: &str, delay: &str) -> (u64, f64) {
    let (mut lab, a, r, b) = Lab::three_hosts();
    let relay = lab.relay(&r, delay);
    let p50 = match meter {
        Meter::Pubsubperf => pubsubperf_p50(&mut lab, &a, &b, binding),
        Meter::Sockperf => sockperf_p50(&mut lab, &a, &b, binding),
    };
    let late = lab.stop_relay(relay);
    (p50, late)
}

fn pubsubperf_p50(lab: &mut Lab, a: &str, b: &str, binding: &str) -> u64 {
    let sub_at = format!("198.18.2.2:{CTRL}");
    // The control connection comes from the relay's address; the echoes go
    // to the publisher's own, which the agent is told it may send to.
    lab.sub_with(b, &sub_at, &["--allow-destination", "198.18.1.1"]);
    let d = tmp();
    let j = d.path().join("r.json");
    let o = lab.run(
        a,
        &[
            "latency",
            "-b",
            binding,
            "--connect",
            &sub_at,
            "-s",
            "64",
            "-n",
            "2000",
            "--warmup",
            "500ms",
            "--wait",
            "busy",
            // A remote subscriber is pinned only when asked: the same cores as sockperf's.
            "--cpu",
            "0,1",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{binding}: {}", stderr(&o));
    let r0 = &json(&j)["runs"][0];
    assert_eq!(u(&r0["latency_ns"]["count"]), 2000);
    u(&r0["latency_ns"]["p50"])
}

fn sockperf_p50(lab: &mut Lab, a: &str, b: &str, binding: &str) -> u64 {
    let tcp: &[&str] = if binding == "tcp" { &["--tcp"] } else { &[] };
    let endpoint = ["-i", "198.18.2.2", "-p", "11111", "--nonblocked"];
    let server = lab.spawn_program(
        b,
        &[
            &["taskset", "-c", "1", "sockperf", "server"],
            &endpoint[..],
            tcp,
        ]
        .concat(),
    );
    let mut said = String::new();
    // Kept open until the client is done: a server writing into a closed
    // pipe would die of SIGPIPE.
    let mut lines = BufReader::new(server.stdout.take().unwrap()).lines();
    while !said.contains("using ") {
        match lines.next() {
            Some(Ok(l)) => said.push_str(&l),
            _ => panic!("sockperf server in {b} ended before it listened: {said}"),
        }
    }
    let o = sh(&[
        &[
            "ip",
            "netns",
            "exec",
            a,
            "taskset",
            "-c",
            "0",
            "sockperf",
            "ping-pong",
        ],
        &endpoint[..],
        tcp,
        &["-m", "64", "-t", "3"],
    ]
    .concat());
    let out = String::from_utf8_lossy(&o.stdout);
    let us: f64 = out
        .lines()
        .find_map(|l| l.split("percentile 50.000 =").nth(1))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no p50 in sockperf's output: {out}"));
    (us * 1e3) as u64
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

/// Runnable tasks on the machine now (`procs_running` of /proc/stat).
fn procs_running() -> u64 {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| {
                    l.strip_prefix("procs_running ")
                        .map(|v| v.trim().parse().ok())
                })
                .flatten()
        })
        .unwrap_or(0)
}

/// Added delay, in ns, as each meter sees it: the medians of three
/// alternating runs through the relay with D = 1 ms minus those with D = 0.
struct Series {
    pubsubperf: f64,
    sockperf: f64,
    /// What the relay itself added: D plus its median lateness.
    relay: f64,
}

/// One meter's p50s through the relay, ns, one per round.
#[derive(Debug, Default)]
struct Runs {
    at_0: Vec<u64>,
    at_1ms: Vec<u64>,
}

impl Runs {
    /// Median p50 with D = 1 ms minus median p50 with D = 0, ns.
    fn added(&self) -> f64 {
        median(self.at_1ms.clone()) as f64 - median(self.at_0.clone()) as f64
    }
}

fn relay_series(binding: &str) -> Series {
    // Alternating, and the median p50 of three runs each: a run disturbed
    // by the rest of the machine does not decide.
    let (mut ours, mut reference, mut late) = (Runs::default(), Runs::default(), Vec::new());
    for _ in 0..3 {
        for (meter, runs) in [
            (Meter::Pubsubperf, &mut ours),
            (Meter::Sockperf, &mut reference),
        ] {
            runs.at_0.push(p50_through_relay(meter, binding, "0").0);
        }
        for (meter, runs) in [
            (Meter::Pubsubperf, &mut ours),
            (Meter::Sockperf, &mut reference),
        ] {
            let (p50, l) = p50_through_relay(meter, binding, "1ms");
            runs.at_1ms.push(p50);
            late.push(l as u64);
        }
    }
    let s = Series {
        pubsubperf: ours.added(),
        sockperf: reference.added(),
        relay: 1e6 + median(late.clone()) as f64,
    };
    eprintln!(
        "{binding}: p50 one-way through the relay (ns, 3 runs each): pubsubperf {ours:?}, sockperf {reference:?}; relay late by {late:?} ns mean; added: pubsubperf {:.1} us, sockperf {:.1} us (pubsubperf {:+.2} % of 1 ms from sockperf), the relay {:.1} us",
        s.pubsubperf / 1e3,
        s.sockperf / 1e3,
        (s.pubsubperf - s.sockperf) / 1e4,
        s.relay / 1e3,
    );
    s
}

// Both endpoints busy-poll, so that the two runs differ only by the relay:
// with blocking waits the D = 1 ms run also pays the endpoints' wake-up after
// 2 ms of idle (20-90 us on this VM), which back-to-back D = 0 does not.
//
// The known answer is what the reference tool, sockperf in its busy
// ping-pong, measures through the same relay in the same series: the path
// itself adds more than D plus the relay's own lateness (sockperf saw
// +2.7 to +5.1 % of 1 ms beyond it here, and pubsubperf within 2 us of
// sockperf), so D alone failed a correct tool (CI measured tcp +4.93 % and
// +3.40 % of 1 ms). The two must agree within 3 % of D; the test prints
// both and what the relay reports it added.
#[test]
fn relay_delay_of_1ms_is_measured_as_1ms() {
    require_netns();
    require::command("sockperf", "sockperf");
    require::command("taskset", "util-linux");
    let _labs = alone();
    // How busy the machine is while we measure: other work that competes
    // for the two cores with the spinning endpoints and the relay stretches
    // the figures.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let st = stop.clone();
    let sampler = std::thread::spawn(move || {
        let (mut sum, mut n) = (0u64, 0u64);
        while !st.load(Ordering::Relaxed) {
            sum += procs_running();
            n += 1;
            std::thread::sleep(Duration::from_millis(20));
        }
        sum as f64 / n.max(1) as f64
    });
    let mut results = Vec::new();
    for binding in ["udp", "tcp"] {
        // A second series only when the first falls outside the bound: one
        // disturbed series does not decide; a tool that measures wrong
        // fails both.
        let mut s = relay_series(binding);
        if (s.pubsubperf - s.sockperf).abs() > 30_000.0 {
            eprintln!("{binding}: outside +- 3 % of 1 ms from sockperf; measuring a second series");
            s = relay_series(binding);
        }
        results.push((binding, s));
    }
    stop.store(true, Ordering::Relaxed);
    let busy = sampler.join().unwrap();
    // Our own runs keep about 3 tasks runnable (two spinning endpoints, the relay).
    // On a busy machine (a developer's, shared) the figures say nothing about
    // the tool: the check is reported as not made. Where the machine runs
    // nothing else (scripts/test.sh sets PUBSUBPERF_TEST_QUIET_MACHINE, so
    // CI) a busy machine is a missing prerequisite and fails the test: CI
    // cannot stay green without this check made.
    if busy > 3.5 {
        let why = format!(
            "{busy:.1} runnable tasks on average during the runs (other work on this machine); the 1 ms +- 3 % check needs a quiet machine"
        );
        assert!(
            std::env::var_os("PUBSUBPERF_TEST_QUIET_MACHINE").is_none(),
            "prerequisite missing: a quiet machine: {why} (PUBSUBPERF_TEST_QUIET_MACHINE is set, as scripts/test.sh does)"
        );
        eprintln!("NOT ASSERTED: {why}");
        return;
    }
    eprintln!("machine load during the runs: {busy:.1} runnable tasks on average");
    for (binding, s) in results {
        assert!(
            (s.pubsubperf - s.sockperf).abs() <= 30_000.0,
            "{binding}: pubsubperf measured {:.0} ns added, sockperf {:.0} ns (the relay added {:.0}): expected within +- 3 % of 1 ms of each other",
            s.pubsubperf,
            s.sockperf,
            s.relay
        );
    }
}

/// One-way latency across hosts, against two known answers: the
/// subscriber's host runs in a time namespace 1000 s ahead (its clock
/// offset is known exactly), and the relay delays the data path by 1 ms
/// towards the subscriber only. The control connection, over which the
/// clocks are probed, takes a direct link of its own (a symmetric path, as
/// a clock synchronisation needs): the offset must be recovered within its
/// bound, and the 1 ms must show in the forward direction, not the back.
#[test]
fn one_way_across_hosts_shows_a_one_way_delay_and_recovers_the_clock_offset() {
    require_netns();
    pubsubperf_testkit::require::command("unshare", "util-linux");
    // The relay spins: the two cores are this test's.
    let _alone = alone();
    let (mut lab, a, r, b) = Lab::three_hosts();
    lab.link(&a, "pq0", "198.18.4.1/24", &b, "pq1", "198.18.4.2/24");
    let relay = lab.relay_with(&r, "1ms", &["--delay-to", "198.18.2.0/24"]);
    let sub_at = format!("198.18.4.2:{CTRL}");
    lab.serve_under(
        &b,
        &[
            "unshare",
            "--time",
            "--fork",
            "--kill-child",
            "--monotonic",
            "1000",
        ],
        &[
            "sub",
            "--listen",
            &sub_at,
            "--data-address",
            "pp1",
            "--allow-destination",
            "198.18.1.1",
        ],
    );
    let d = tmp();
    let j = d.path().join("r.json");
    let o = lab.run(
        &a,
        &[
            "latency",
            "-b",
            "udp",
            "--connect",
            &sub_at,
            "--data-address",
            "198.18.1.1",
            "-s",
            "64",
            "-n",
            "1000",
            "--warmup",
            "200ms",
            "--one-way",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ],
    );
    let late = lab.stop_relay(relay);
    assert!(o.status.success(), "{}", stderr(&o));
    let run = &json(&j)["runs"][0];
    let ow = &run["one_way"];
    assert_eq!(ow["clocks"], "estimated", "{ow}");
    let off = &ow["offsets"][0];
    let err = (i128::from(off["before_ns"].as_i64().unwrap()) - 1_000_000_000_000).unsigned_abs();
    assert!(
        err <= u128::from(u(&off["before_bound_ns"])),
        "offset off by {err} ns: {off}"
    );
    let bound = u(&ow["bound_ns"]) as f64;
    let (fwd, back) = (
        u(&ow["forward"]["p50"]) as f64,
        u(&ow["back"]["p50"]) as f64,
    );
    // What the relay added one way: 1 ms plus its own lateness. Each
    // direction is within the bound of the truth; 50 µs more for what
    // else differs between the two paths (the subscriber's turnaround is
    // in the back direction).
    let added = 1e6 + late;
    eprintln!(
        "one-way p50 forward {:.1} us, back {:.1} us, relay added {:.1} us, bound {:.1} us, offset {off}",
        fwd / 1e3,
        back / 1e3,
        added / 1e3,
        bound / 1e3
    );
    assert!(
        (fwd - back - added).abs() <= 2.0 * bound + 50e3,
        "forward {fwd} - back {back} should be the relay's {added} ns (bound {bound}): {ow}"
    );
}

/// A 30-second run of `test` over `binding` with `extra` flags, from host
/// a of a two-host lab to a `sub --listen` on host b, going on.
struct LongRun {
    lab: Lab,
    b: String,
    /// The `sub --listen`: its pid, and its index in `lab.procs`.
    sub_pid: u32,
    sub: usize,
    /// The publisher's index in `lab.procs`.
    publisher: usize,
    json: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl LongRun {
    fn start(test: &str, binding: &str, extra: &[&str]) -> LongRun {
        let (mut lab, a, b) = Lab::two_hosts();
        let sub_at = format!("198.18.0.2:{CTRL}");
        let sub_pid = lab.sub(&b, &sub_at);
        let sub = lab.procs.len() - 1;
        let dir = tmp();
        let json = dir.path().join("r.json");
        let mut args = vec![test, "-b", binding, "--connect", &sub_at];
        args.extend(extra);
        args.extend([
            "--duration",
            "30s",
            "--warmup",
            "0s",
            "-q",
            "--no-save",
            "--json",
        ]);
        args.push(json.to_str().unwrap());
        let publisher = publisher(&mut lab, &a, &args);
        LongRun {
            lab,
            b,
            sub_pid,
            sub,
            publisher,
            json,
            _dir: dir,
        }
    }

    /// The publisher's exit status (waited for at most `within`) and stderr.
    fn publisher_exit(&mut self, within: Duration) -> (std::process::ExitStatus, String) {
        let p = &mut self.lab.procs[self.publisher];
        let status = wait_exit(p, within, "publisher");
        let mut err = String::new();
        std::io::Read::read_to_string(p.stderr.as_mut().unwrap(), &mut err).unwrap();
        (status, err)
    }

    /// The run's result as written.
    fn result(&self) -> serde_json::Value {
        json(&self.json)["runs"][0].clone()
    }
}

#[test]
fn killed_subscriber_ends_the_run_and_keeps_results() {
    require_netns();
    let _labs = shared();
    for (test, binding) in [("latency", "tcp"), ("throughput", "udp")] {
        let mut run = LongRun::start(test, binding, &[]);
        std::thread::sleep(Duration::from_millis(1500));
        signal(run.sub_pid, libc::SIGKILL);
        let (status, err) = run.publisher_exit(Duration::from_secs(10));
        assert_eq!(status.code(), Some(1), "{test}: {err}");
        let r = &run.result();
        eprintln!(
            "kill -9 subscriber ({test} {binding}): exit 1, error: {}",
            r["error"]
        );
        assert_eq!(r["complete"], false);
        assert!(r["error"].as_str().unwrap().contains("subscriber"), "{r}");
        if test == "latency" {
            assert!(u(&r["latency_ns"]["count"]) > 0);
        } else {
            assert!(u(&r["throughput"]["sent"]) > 0);
        }
    }
}

#[test]
fn killed_publisher_releases_the_subscriber_and_keeps_finished_runs() {
    require_netns();
    let _labs = shared();
    let (mut lab, a, b) = Lab::two_hosts();
    let sub_at = format!("198.18.0.2:{CTRL}");
    lab.sub(&b, &sub_at);
    let sub_idx = lab.procs.len() - 1;
    let d = tmp();
    let j = d.path().join("r.json");
    let p = publisher(
        &mut lab,
        &a,
        &[
            "throughput",
            "-b",
            "udp",
            "--connect",
            &sub_at,
            "-s",
            "64,128,256,512",
            "--rate",
            "10000",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ],
    );
    // Kill it once the first run is written, in the middle of the next.
    let start = Instant::now();
    while !j.exists() || json(&j)["runs"].as_array().is_none_or(|r| r.is_empty()) {
        assert!(start.elapsed() < Duration::from_secs(20), "no run written");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let pid = lab.procs[p].id();
    signal(pid, libc::SIGKILL);
    let killed = Instant::now();
    let status = wait_exit(
        &mut lab.procs[sub_idx],
        Duration::from_secs(10),
        "sub --listen",
    );
    eprintln!(
        "kill -9 publisher: sub --listen exited ({status}) {:.2} s later",
        killed.elapsed().as_secs_f64()
    );
    let v = json(&j);
    let runs = v["runs"].as_array().unwrap();
    assert!(!runs.is_empty() && runs[0]["complete"] == true, "{v}");
}

/// A 6-s throughput run during which `fault` hits the subscriber's host for
/// 2 s; returns the run.
fn run_through_fault(binding: &str, fault: &str) -> serde_json::Value {
    let (mut lab, a, b) = Lab::two_hosts();
    let sub_at = format!("198.18.0.2:{CTRL}");
    let sub = lab.sub(&b, &sub_at);
    let d = tmp();
    let j = d.path().join("r.json");
    let p = publisher(
        &mut lab,
        &a,
        &[
            "throughput",
            "-b",
            binding,
            "--connect",
            &sub_at,
            "-s",
            "64",
            "--rate",
            "20000",
            "--duration",
            "6s",
            "--warmup",
            "0s",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ],
    );
    std::thread::sleep(Duration::from_millis(2000));
    match fault {
        "stop" => {
            // The agent serves the session in a process of its own.
            for p in std::iter::once(sub).chain(children(sub)) {
                signal(p, libc::SIGSTOP);
            }
            std::thread::sleep(Duration::from_secs(2));
            for p in std::iter::once(sub).chain(children(sub)) {
                signal(p, libc::SIGCONT);
            }
        }
        "link" => {
            sh(&["ip", "-n", &b, "link", "set", "pp1", "down"]);
            std::thread::sleep(Duration::from_secs(2));
            sh(&["ip", "-n", &b, "link", "set", "pp1", "up"]);
        }
        _ => unreachable!(),
    }
    let status = wait_exit(&mut lab.procs[p], Duration::from_secs(40), fault);
    let mut err = String::new();
    std::io::Read::read_to_string(lab.procs[p].stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{binding} {fault}: {err}");
    json(&j)["runs"][0].clone()
}

/// Largest time between two interval reports of a run, and the smallest
/// number received in one interval.
fn gap(r: &serde_json::Value) -> (f64, u64) {
    let iv = r["intervals"].as_array().unwrap();
    let mut worst = 0f64;
    let mut t0 = 0f64;
    for i in iv {
        let t = i["t_s"].as_f64().unwrap();
        worst = worst.max(t - t0);
        t0 = t;
    }
    let min_rx = iv.iter().map(|i| u(&i["received"])).min().unwrap_or(0);
    (worst, min_rx)
}

#[test]
fn stopped_subscriber_or_link_down_for_2s_shows_as_a_gap() {
    require_netns();
    let _labs = shared();
    for fault in ["stop", "link"] {
        for binding in ["udp", "tcp"] {
            let r = run_through_fault(binding, fault);
            let t = &r["throughput"];
            let (worst, min_rx) = gap(&r);
            eprintln!(
                "{fault} 2 s, {binding}: complete {}, sent {} received {} lost {}, longest interval {worst:.2} s, fewest received in an interval {min_rx}",
                r["complete"], t["sent"], t["received"], t["lost"]
            );
            assert_eq!(r["complete"], true, "{binding} {fault}: {r}");
            assert_eq!(u(&t["sent"]), u(&t["received"]) + u(&t["lost"]), "{t}");
            // The 2 s appear in the intervals: one that lasted about 3 s
            // (a stopped subscriber reports nothing) or one with nothing received.
            assert!(
                worst > 1.5 || min_rx == 0,
                "{binding} {fault}: no gap in {r}"
            );
            if binding == "udp" {
                // A stopped reader's socket buffer overflows, so datagrams
                // are lost. A link that goes down is another matter: the
                // sender's queue may hold or refuse the datagrams for the
                // 2 s and send them when the link is back (CI saw 120001
                // sent, 120001 received and an interval with none), so
                // only the gap above is asked of it.
                if fault == "stop" {
                    assert!(u(&t["lost"]) > 0, "{fault}: 2 s at 20000/s lost nothing");
                }
            } else {
                assert_eq!(u(&t["lost"]), 0, "{fault}: tcp lost samples");
            }
        }
    }
}

/// Perftest's several-subscriber run as its users script it: one
/// `perftest -sub` on each of two hosts, one `-pub` naming both with
/// `-peer` and `-numSubscribers 2`. Each `-sub` prints its own
/// subscriber's throughput summary (here into its `-outputFile`), as
/// Perftest's subscribers do; the `-pub` prints the latency (none here:
/// across several `-peer` hosts it echoes none unless told).
#[test]
fn perftest_subs_on_two_hosts_each_print_their_own_lines() {
    require_netns();
    let _labs = shared();
    let mut lab = Lab::new();
    let a = lab.ns("a");
    let b = lab.ns("b");
    let c = lab.ns("c");
    lab.link(&a, "pp0", "198.18.3.1/24", &b, "pp1", "198.18.3.2/24");
    lab.link(&a, "pp2", "198.18.4.1/24", &c, "pp3", "198.18.4.2/24");
    let dir = tmp();
    let files: Vec<String> = ["b", "c"]
        .iter()
        .map(|n| dir.path().join(format!("{n}.csv")).display().to_string())
        .collect();
    for (ns, file) in [(&b, &files[0]), (&c, &files[1])] {
        lab.serve(
            ns,
            &["perftest", "-sub", "-raw", "-noPrint", "-outputFile", file],
        );
    }
    let out = lab.run(
        &a,
        &[
            "perftest",
            "-pub",
            "-raw",
            "-peer",
            "198.18.3.2",
            "-peer",
            "198.18.4.2",
            "-numSubscribers",
            "2",
            "-noPrint",
            "-exec",
            "1",
            "-dataLen",
            "1024",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", stderr(&out));
    for p in lab.procs.iter_mut() {
        wait_exit(p, Duration::from_secs(15), "perftest -sub");
    }
    let mut received = 0u64;
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        assert!(
            lines
                .next()
                .is_some_and(|h| h.starts_with("Sample Size (Bytes), Total Samples,")),
            "{file}: {text}"
        );
        let row: Vec<&str> = lines
            .next()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .collect();
        assert_eq!(row[0], "1024", "{file}: {text}");
        received += row[1]
            .parse::<u64>()
            .unwrap_or_else(|_| panic!("{file}: {text}"));
    }
    assert!(received > 0, "no sample reached either -sub");
    // The publisher prints the latency, as Perftest's; across several
    // -peer hosts it echoes none unless -latencyCount is given, and says so.
    assert_eq!(stdout.trim(), "", "{stdout}");
    assert!(
        stderr(&out).contains("no pong came back for 1024 B"),
        "{}",
        stderr(&out)
    );
}

/// The seconds a silent peer may take to end a run, on either side: the
/// silence allowed (`pubsubperf_harness::session::PEER_SILENCE`, 5 s, the
/// figure docs/faults.md names) and 3 s for the run's end and the exit.
const SILENCE_ENDS_WITHIN: Duration = Duration::from_secs(8);

/// Blocks every packet between the two hosts on `ns`'s side of their
/// link, pp1 (nftables), until the namespace goes.
fn block_link(ns: &str) {
    sh_in(
        "table inet ppblock {\n\
           chain in { type filter hook input priority -300; iifname \"pp1\" drop; }\n\
           chain out { type filter hook output priority -300; oifname \"pp1\" drop; }\n\
         }\n",
        &["ip", "netns", "exec", ns, "nft", "-f", "-"],
    );
}

/// A reliable writer blocked longer than the peers' silence limit (5 s),
/// within its `--max-blocking-time`, while the control connection works:
/// the subscriber keeps hearing the publisher (its connection's reader
/// thread speaks while the measuring thread waits in the write), and the
/// run completes once the data flows again. (A subscriber that went by
/// the measuring thread's heartbeats alone ended its run after 5 s.)
#[test]
fn a_writer_blocked_longer_than_the_silence_limit_is_not_a_silent_publisher() {
    require_netns();
    let _labs = shared();
    let (mut lab, a, b) = Lab::two_hosts();
    let sub_at = format!("198.18.0.2:{CTRL}");
    lab.sub(&b, &sub_at);
    let d = tmp();
    let j = d.path().join("r.json");
    let args = [
        "throughput",
        "-b",
        "tcp",
        "--connect",
        &sub_at,
        "-s",
        "64",
        "-n",
        "20000",
        "--rate",
        "4000",
        "--socket-buffer",
        "16KiB",
        "--max-blocking-time",
        "40s",
        "--warmup",
        "0s",
        "-q",
        "--no-save",
        "--json",
        j.to_str().unwrap(),
    ];
    let p = publisher(&mut lab, &a, &args);
    std::thread::sleep(Duration::from_secs(2));
    // The data (to the reader's port) stops for 8 s; the control
    // connection (port CTRL) goes on.
    sh_in(
        &format!(
            "table inet pploss {{\n chain input {{ type filter hook input priority 0; policy accept;\n  tcp dport {DATA_PORTS} counter drop\n }}\n}}\n"
        ),
        &["ip", "netns", "exec", &b, "nft", "-f", "-"],
    );
    std::thread::sleep(Duration::from_secs(8));
    let drops = dropped(&b);
    remove_rules(&b);
    let proc = &mut lab.procs[p];
    let status = wait_exit(proc, Duration::from_secs(60), "publisher");
    let mut err = String::new();
    std::io::Read::read_to_string(proc.stderr.as_mut().unwrap(), &mut err).unwrap();
    eprintln!(
        "tcp, data blocked 8 s ({drops} segments dropped): {status}: {}",
        err.trim()
    );
    assert!(drops > 0, "the rule dropped nothing");
    assert!(status.success(), "{err}");
    let t = &json(&j)["runs"][0]["throughput"];
    assert_eq!(u(&t["sent"]), 20000, "{t}");
    assert_eq!(u(&t["received"]), 20000, "{t}");
}

#[test]
fn a_blocked_link_ends_the_run_and_frees_the_agent_within_the_documented_seconds() {
    blocked_link_ends_within(&[
        ("latency", "udp"),
        ("throughput", "udp"),
        ("latency", "tcp"),
        ("throughput", "tcp"),
    ]);
}

#[test]
fn a_blocked_link_ends_a_middleware_run_within_the_documented_seconds() {
    blocked_link_ends_within(&[
        ("latency", "cyclonedds"),
        ("throughput", "cyclonedds"),
        ("latency", "zenoh"),
        ("throughput", "zenoh"),
    ]);
}

/// Each (test, binding) run across the lab's link, blocked 3 s in: both
/// sides end within [`SILENCE_ENDS_WITHIN`] of the block.
fn blocked_link_ends_within(cells: &[(&str, &str)]) {
    require_netns();
    let _labs = shared();
    for &(test, binding) in cells {
        let mut run = LongRun::start(test, binding, &["-s", "64", "--rate", "2000"]);
        std::thread::sleep(Duration::from_secs(3));
        block_link(&run.b);
        let blocked = Instant::now();
        let (status, err) = run.publisher_exit(Duration::from_secs(60));
        let publisher_took = blocked.elapsed();
        let status_sub = wait_exit(
            &mut run.lab.procs[run.sub],
            Duration::from_secs(60),
            "sub --listen",
        );
        let agent_took = blocked.elapsed();
        eprintln!(
            "{test} {binding}: link blocked; the publisher exited after {:.1} s ({status}), the agent's session after {:.1} s ({status_sub}): {}",
            publisher_took.as_secs_f64(),
            agent_took.as_secs_f64(),
            err.trim()
        );
        assert_eq!(status.code(), Some(1), "{test} {binding}: {err}");
        assert!(err.contains("silent for"), "{test} {binding}: {err}");
        assert!(
            publisher_took < SILENCE_ENDS_WITHIN,
            "{test} {binding}: the publisher took {publisher_took:?}"
        );
        assert!(
            agent_took < SILENCE_ENDS_WITHIN,
            "{test} {binding}: the agent's session took {agent_took:?}"
        );
        // What was measured before is written.
        assert_eq!(run.result()["complete"], false, "{test} {binding}");
    }
}
