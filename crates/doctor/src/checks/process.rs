//! What this process may do and where it is confined: its real-time and
//! locked-memory limits, its cgroup's CPU quota and cpuset, seccomp and
//! AppArmor.

use crate::host::{cpu_list, cpu_list_text};
use crate::{Finding, Host, Options, Verdict};

pub(crate) fn check(host: &Host, opts: &Options, out: &mut Vec<Finding>) {
    let limits = host.read("/proc/self/limits").unwrap_or_default();
    let root = host
        .read("/proc/self/status")
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|u| u.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false);
    out.push(rtprio(&limits, root));
    out.push(memlock(&limits, root));
    let group = cgroup_dir(host);
    out.push(quota(host, &group));
    out.push(cpuset(host, &group, opts));
    out.push(confinement(host));
}

/// A `/proc/self/limits` line's soft value (`unlimited` or a number).
fn soft_limit(limits: &str, name: &str) -> Option<String> {
    let line = limits.lines().find(|l| l.starts_with(name))?;
    line[name.len()..]
        .split_whitespace()
        .next()
        .map(String::from)
}

fn rtprio(limits: &str, root: bool) -> Finding {
    let v = soft_limit(limits, "Max realtime priority").unwrap_or_else(|| "unknown".into());
    if root || v == "unlimited" || v.parse::<u32>().is_ok_and(|p| p > 0) {
        Finding::ok(
            "rtprio",
            format!("{v}{}", if root { " (root)" } else { "" }),
        )
    } else {
        Finding::bad(
            "rtprio",
            Verdict::Warn,
            v,
            "--rt-priority cannot give the measuring threads a real-time priority",
            "add '<user> - rtprio 99' to /etc/security/limits.conf (or run as root)",
        )
    }
}

fn memlock(limits: &str, root: bool) -> Finding {
    let v = soft_limit(limits, "Max locked memory").unwrap_or_else(|| "unknown".into());
    let enough = v == "unlimited" || v.parse::<u64>().is_ok_and(|b| b >= 1 << 30);
    if root || enough {
        Finding::ok(
            "memlock",
            format!("{v}{}", if root { " (root)" } else { "" }),
        )
    } else {
        Finding::bad(
            "memlock",
            Verdict::Warn,
            format!("{v} bytes"),
            "--mlock cannot lock the run's memory: a page may be reclaimed and faulted in again mid-run",
            "add '<user> - memlock unlimited' to /etc/security/limits.conf (or ulimit -l unlimited)",
        )
    }
}

/// This process's cgroup v2 directory under `/sys/fs/cgroup`.
fn cgroup_dir(host: &Host) -> String {
    let path = host
        .read("/proc/self/cgroup")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("0::").map(String::from))
        .unwrap_or_else(|| "/".into());
    format!("/sys/fs/cgroup{}", if path == "/" { "" } else { &path })
}

fn quota(host: &Host, group: &str) -> Finding {
    let Some(max) = host.read(&format!("{group}/cpu.max")) else {
        return Finding::ok("cgroup-quota", "none");
    };
    let mut it = max.split_whitespace();
    match (it.next(), it.next().and_then(|p| p.parse::<u64>().ok())) {
        (Some("max"), _) | (None, _) => Finding::ok("cgroup-quota", "none"),
        (Some(q), Some(period)) => {
            let cores = q.parse::<u64>().map_or(0.0, |q| q as f64 / period as f64);
            Finding::bad(
                "cgroup-quota",
                Verdict::Warn,
                format!("{q} of every {period} µs ({cores:.2} cores) in {group}"),
                "when the container has used its quota it is stopped until the next period: pauses of milliseconds, worst for busy-polling sides",
                "run without a CPU quota (docker run --cpus unset; systemd: CPUQuota=)",
            )
        }
        (Some(q), None) => Finding::ok("cgroup-quota", q.to_string()),
    }
}

fn cpuset(host: &Host, group: &str, opts: &Options) -> Finding {
    let Some(set) = host
        .read(&format!("{group}/cpuset.cpus.effective"))
        .and_then(|s| cpu_list(&s))
    else {
        return Finding::ok("cpuset", "no cpuset");
    };
    let outside: Vec<usize> = opts
        .cores
        .iter()
        .copied()
        .filter(|c| !set.contains(c))
        .collect();
    if outside.is_empty() {
        return Finding::ok("cpuset", cpu_list_text(&set));
    }
    Finding::bad(
        "cpuset",
        Verdict::Fail,
        format!(
            "cpu {} outside the cpuset {}",
            cpu_list_text(&outside),
            cpu_list_text(&set)
        ),
        "the run cannot pin to a core its cgroup does not have",
        format!("--cpu with cores of {}", cpu_list_text(&set)),
    )
}

fn confinement(host: &Host) -> Finding {
    let seccomp = host
        .read("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Seccomp:").map(|v| v.trim().to_string()))
        .unwrap_or_else(|| "0".into());
    let apparmor = host
        .read("/proc/self/attr/apparmor/current")
        .or_else(|| host.read("/proc/self/attr/current"))
        .unwrap_or_else(|| "unconfined".into());
    let mut found = Vec::new();
    if seccomp == "2" {
        found.push("a seccomp filter".to_string());
    }
    if apparmor != "unconfined" && !apparmor.is_empty() {
        found.push(format!("AppArmor profile {apparmor}"));
    }
    if found.is_empty() {
        return Finding::ok("confinement", "none");
    }
    Finding::bad(
        "confinement",
        Verdict::Warn,
        found.join(", "),
        "every system call goes through the filter or the profile's checks: a container's default profile slows the socket calls each sample makes",
        "run outside the container, or with --security-opt seccomp=unconfined --security-opt apparmor=unconfined",
    )
}
