//! Whether the machine is virtual, and how much time the hypervisor has
//! taken from it (steal time).

use crate::{Finding, Host, Verdict};

pub(crate) fn check(host: &Host, out: &mut Vec<Finding>) {
    out.push(virtualization(host));
    out.push(steal(host));
}

fn virtualization(host: &Host) -> Finding {
    let cpuinfo = host.read("/proc/cpuinfo").unwrap_or_default();
    let hypervisor = super::cpu_flags(&cpuinfo).contains(&"hypervisor");
    let vendor = host
        .read("/sys/class/dmi/id/sys_vendor")
        .unwrap_or_default();
    let product = host
        .read("/sys/class/dmi/id/product_name")
        .unwrap_or_default();
    if !hypervisor {
        return Finding::ok("virtualization", "bare metal");
    }
    let what = [vendor, product]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    Finding::bad(
        "virtualization",
        Verdict::Warn,
        if what.is_empty() {
            "virtual machine".to_string()
        } else {
            format!("virtual machine ({what})")
        },
        "the vCPUs share physical cores with other guests: the link between two vCPUs and a vCPU's wake-up change from minute to minute",
        "measure on bare metal for figures to publish; on a VM, pin the vCPUs to dedicated physical cores",
    )
}

/// The share of CPU time stolen since boot (`/proc/stat`'s `cpu` line).
fn steal(host: &Host) -> Finding {
    let stat = host.read("/proc/stat").unwrap_or_default();
    let Some(cpu) = stat.lines().find(|l| l.starts_with("cpu ")) else {
        return Finding::ok("steal", "unknown (no /proc/stat)");
    };
    let f: Vec<u64> = cpu
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal guest guest_nice:
    // guest time is counted in user already.
    let total: u64 = f.iter().take(8).sum();
    let stolen = f.get(7).copied().unwrap_or(0);
    if total == 0 {
        return Finding::ok("steal", "unknown");
    }
    let pct = stolen as f64 * 100.0 / total as f64;
    if pct < 1.0 {
        Finding::ok("steal", format!("{pct:.2} % since boot"))
    } else {
        Finding::bad(
            "steal",
            Verdict::Warn,
            format!("{pct:.2} % since boot"),
            "the hypervisor ran other guests on this machine's vCPUs: a measuring thread waits for its vCPU to come back",
            "a VM with dedicated cores (no overcommit), or bare metal",
        )
    }
}
