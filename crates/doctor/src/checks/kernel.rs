//! Kernel settings that reach into a run: real-time throttling,
//! transparent huge pages, swap.

use crate::{Finding, Host, Verdict};

pub(crate) fn check(host: &Host, out: &mut Vec<Finding>) {
    out.push(rt_throttling(host));
    out.push(thp(host));
    out.push(swap(host));
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
