//! What links the two sides: the core-to-core link's stability on one
//! host, the NIC's speed and the clocks' synchronisation across hosts.

use crate::{Finding, Host, Options, Verdict};

/// Two readings of the core-to-core link farther apart than this share
/// are a link that changes under the run.
const LINK_DRIFT: f64 = 0.25;

pub(crate) fn check(host: &Host, opts: &Options, out: &mut Vec<Finding>) {
    if let Some(l) = opts.link {
        out.push(core_link(l.first_ns, l.second_ns));
    }
    if let Some(i) = &opts.interface {
        out.push(nic(host, i));
        if interface_exists(host, i) {
            let e = opts.ethtool.clone().unwrap_or_default();
            out.push(offloads(i, e.features.as_deref()));
            out.push(coalescing(i, e.coalesce.as_deref()));
        } else {
            // ethtool's "No such device" is no answer about offloads.
            out.push(not_checkable("nic-offloads", i));
            out.push(not_checkable("nic-coalescing", i));
        }
        out.push(clock_sync(host, opts));
    }
}

fn interface_exists(host: &Host, name: &str) -> bool {
    host.exists(&format!("/sys/class/net/{name}"))
}

/// A check of an interface this host does not have.
fn not_checkable(check: &str, name: &str) -> Finding {
    Finding::bad(
        check,
        Verdict::Warn,
        format!("{name}: not checkable (no such interface)"),
        "the offloads and interrupt coalescing of an interface this host does not have cannot be read",
        "ip -br link (then --interface with one of its names)",
    )
}

/// The `name: value` lines of ethtool's output.
fn ethtool_value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == name).then(|| v.trim())
    })
}

/// ethtool's answer was an error (not supported, no such device).
fn ethtool_unusable(text: &str) -> bool {
    !text
        .lines()
        .any(|l| l.contains(':') && !l.starts_with("Cannot") && !l.contains("not supported"))
}

fn offloads(name: &str, features: Option<&str>) -> Finding {
    let Some(text) = features else {
        return missing_ethtool("nic-offloads");
    };
    if ethtool_unusable(text) {
        return Finding::ok("nic-offloads", "not reported by the driver");
    }
    let on: Vec<&str> = ["generic-receive-offload", "large-receive-offload"]
        .into_iter()
        .filter(|f| ethtool_value(text, f).is_some_and(|v| v.starts_with("on")))
        .collect();
    if on.is_empty() {
        return Finding::ok("nic-offloads", "receive offloads off");
    }
    Finding::bad(
        "nic-offloads",
        Verdict::Warn,
        format!("{name}: {} on", on.join(", ")),
        "the receive path holds packets to merge them: more throughput, and a small sample may wait for the next one",
        format!("ethtool -K {name} gro off lro off (for latency runs; keep them for throughput)"),
    )
}

fn coalescing(name: &str, coalesce: Option<&str>) -> Finding {
    let Some(text) = coalesce else {
        return missing_ethtool("nic-coalescing");
    };
    if ethtool_unusable(text) {
        return Finding::ok("nic-coalescing", "not reported by the driver");
    }
    let adaptive = text
        .lines()
        .find(|l| l.starts_with("Adaptive RX:"))
        .is_some_and(|l| l["Adaptive RX:".len()..].trim_start().starts_with("on"));
    let usecs = ethtool_value(text, "rx-usecs").and_then(|v| v.parse::<u64>().ok());
    let value = format!(
        "{name}: adaptive rx {}, rx-usecs {}",
        if adaptive { "on" } else { "off" },
        usecs.map_or("n/a".to_string(), |u| u.to_string())
    );
    if !adaptive && usecs.unwrap_or(0) == 0 {
        return Finding::ok("nic-coalescing", value);
    }
    Finding::bad(
        "nic-coalescing",
        Verdict::Warn,
        value,
        "the NIC delays its interrupt to gather packets: each sample may wait up to that long before the kernel sees it",
        format!("ethtool -C {name} adaptive-rx off rx-usecs 0 (for latency runs)"),
    )
}

fn missing_ethtool(check: &str) -> Finding {
    Finding::bad(
        check,
        Verdict::Warn,
        "unknown (ethtool did not run)",
        "the NIC's offloads and interrupt coalescing set the latency floor of a run across hosts",
        "apt-get install ethtool",
    )
}

fn core_link(a: f64, b: f64) -> Finding {
    let value = format!("round trip {a:.0} ns, then {b:.0} ns");
    let (lo, hi) = (a.min(b), a.max(b));
    if lo > 0.0 && (hi - lo) / lo <= LINK_DRIFT {
        return Finding::ok("core-link", value);
    }
    Finding::bad(
        "core-link",
        Verdict::Warn,
        value,
        "the link between the two cores changed between two readings a moment apart (a VM's vCPUs moved between physical cores): sub-microsecond latencies are not comparable from run to run",
        "pin the VM's vCPUs to physical cores, or measure on bare metal; compare runs only with their calibrate figure beside them",
    )
}

fn nic(host: &Host, name: &str) -> Finding {
    let check = "nic";
    let base = format!("/sys/class/net/{name}");
    if !interface_exists(host, name) {
        return Finding::bad(
            check,
            Verdict::Fail,
            format!("{name}: no such interface"),
            "the run's data address is on no interface of this host",
            "ip -br addr (then --data-address with one of its addresses)",
        );
    }
    let speed = host.read(&format!("{base}/speed"));
    let state = host
        .read(&format!("{base}/operstate"))
        .unwrap_or_else(|| "unknown".into());
    match speed.as_deref().and_then(|s| s.parse::<i64>().ok()) {
        Some(s) if s > 0 && state == "up" => Finding::ok(check, format!("{name} up, {s} Mbit/s")),
        _ if state != "up" && state != "unknown" => Finding::bad(
            check,
            Verdict::Fail,
            format!("{name} {state}"),
            "the link is down",
            format!("ip link set {name} up, and check the cable or the switch port"),
        ),
        _ => Finding::bad(
            check,
            Verdict::Warn,
            format!("{name} {state}, speed unknown"),
            "without the link's speed, throughput cannot be read against the line rate",
            format!("ethtool {name} (a virtual NIC reports none)"),
        ),
    }
}

/// Clock synchronisation daemons, by their process name.
const SYNC_DAEMONS: &[&str] = &["chronyd", "ptp4l", "phc2sys", "ntpd", "systemd-timesyn"];

fn clock_sync(host: &Host, opts: &Options) -> Finding {
    let running: Vec<String> = host
        .list("/proc")
        .into_iter()
        .filter(|p| p.bytes().all(|b| b.is_ascii_digit()))
        .filter_map(|p| host.read(&format!("/proc/{p}/comm")))
        .filter(|c| SYNC_DAEMONS.contains(&c.as_str()))
        .collect();
    let daemons = if running.is_empty() {
        "no synchronisation daemon".to_string()
    } else {
        running.join(", ")
    };
    match opts.clock {
        Some(c) if c.synchronised => Finding::ok(
            "clock-sync",
            format!(
                "synchronised, estimated error {} µs ({daemons})",
                c.est_error_us
            ),
        ),
        _ => Finding::bad(
            "clock-sync",
            Verdict::Warn,
            format!("not synchronised ({daemons})"),
            "one-way latency across hosts needs the two clocks' offset: an unsynchronised clock drifts during the run",
            "apt-get install chrony (or linuxptp for PTP: ptp4l and phc2sys) on both hosts",
        ),
    }
}
