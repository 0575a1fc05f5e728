//! Kernel settings that reach into a run: real-time throttling,
//! transparent huge pages, swap, DAMON's memory monitoring.

use crate::host::{cpu_list, cpu_list_text};
use crate::{Finding, Host, Options, Verdict};

pub(crate) fn check(host: &Host, opts: &Options, out: &mut Vec<Finding>) {
    out.push(rt_throttling(host));
    out.push(thp(host));
    out.push(swap(host));
    out.push(damon(host, &opts.cores));
}

fn rt_throttling(host: &Host) -> Finding {
    const RUNTIME: &str = "/proc/sys/kernel/sched_rt_runtime_us";
    let runtime = host.read(RUNTIME);
    let period = host
        .read("/proc/sys/kernel/sched_rt_period_us")
        .unwrap_or_else(|| "1000000".into());
    match runtime.as_deref() {
        None => Finding::ok("rt-throttling", "unknown (no sched_rt_runtime_us)"),
        Some("-1") => Finding::ok("rt-throttling", "off"),
        Some(r) => Finding::bad(
            "rt-throttling",
            Verdict::Warn,
            format!("{r} of every {period} µs"),
            "a real-time (--rt-priority) busy-polling side is stopped for the rest of each period: a pause of tens of milliseconds every second",
            format!("sysctl -w kernel.sched_rt_runtime_us=-1 (or echo -1 > {RUNTIME})"),
        ),
    }
}

fn thp(host: &Host) -> Finding {
    const ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";
    let Some(v) = host.read(ENABLED) else {
        return Finding::ok("thp", "no transparent huge pages");
    };
    // "always [madvise] never": the chosen one is in brackets.
    let chosen = v
        .split_whitespace()
        .find(|w| w.starts_with('['))
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .unwrap_or(v);
    if chosen == "always" {
        Finding::bad(
            "thp",
            Verdict::Warn,
            "always",
            "khugepaged compacts memory and page faults may allocate a huge page: occasional stalls of milliseconds in the tail",
            format!("echo madvise > {ENABLED}"),
        )
    } else {
        Finding::ok("thp", chosen)
    }
}

fn swap(host: &Host) -> Finding {
    let swaps = host.read("/proc/swaps").unwrap_or_default();
    let devices: Vec<&str> = swaps
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    if devices.is_empty() {
        return Finding::ok("swap", "none");
    }
    let swappiness = host
        .read("/proc/sys/vm/swappiness")
        .unwrap_or_else(|| "?".into());
    Finding::bad(
        "swap",
        Verdict::Warn,
        format!("{} (swappiness {swappiness})", devices.join(", ")),
        "a page of the run swapped out is a fault of milliseconds when it is touched again",
        "swapoff -a, or run with --mlock",
    )
}

/// DAMON's monitoring threads (`kdamond.N`), started by the system (a
/// virtual machine's memory management, a reclaim policy): each wakes every
/// sampling interval and scans memory for up to milliseconds at a time on
/// whichever core it may run (`doctor --trace` saw kdamond.0 hold a
/// measuring core of this project's VM for 4.4 ms at once). Warned of when
/// one that is on may run on the run's cores (on any core, when the run
/// names none).
fn damon(host: &Host, cores: &[usize]) -> Finding {
    const ADMIN: &str = "/sys/kernel/mm/damon/admin/kdamonds";
    let mut near = Vec::new();
    let mut away = Vec::new();
    for n in host.list(ADMIN) {
        if !n.chars().all(|c| c.is_ascii_digit())
            || host.read(&format!("{ADMIN}/{n}/state")).as_deref() != Some("on")
        {
            continue;
        }
        let pid = host.read(&format!("{ADMIN}/{n}/pid")).unwrap_or_default();
        let allowed = host
            .read(&format!("/proc/{pid}/status"))
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                    .and_then(|v| cpu_list(v.trim()))
            })
            .unwrap_or_default();
        let reaches =
            cores.is_empty() || allowed.is_empty() || allowed.iter().any(|c| cores.contains(c));
        let what = if allowed.is_empty() {
            format!("kdamond.{n} (pid {pid})")
        } else {
            format!("kdamond.{n} (pid {pid}, cpu {})", cpu_list_text(&allowed))
        };
        if reaches {
            near.push((n, pid, what));
        } else {
            away.push(what);
        }
    }
    let Some((n, pid, _)) = near.first() else {
        return Finding::ok(
            "damon",
            if away.is_empty() {
                "off".to_string()
            } else {
                format!("{} on, off the run's cores", away.join(", "))
            },
        );
    };
    Finding::bad(
        "damon",
        Verdict::Warn,
        format!(
            "{} on, may run on the run's cores",
            near.iter()
                .map(|(_, _, w)| w.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        "DAMON's kdamond wakes every sampling interval and scans memory, holding the core it runs on for up to milliseconds: a measuring thread that needs that core waits behind it",
        format!(
            "echo off > {ADMIN}/{n}/state (if nothing on this host needs DAMON), or keep it off the run's cores: taskset -pc CPUS {pid}"
        ),
    )
}
