//! The clock every timestamp comes from: the kernel's clock source, and on
//! x86 whether the time-stamp counter runs at a constant rate through
//! frequency and sleep states. On HPET or ACPI PM, `clock_gettime` is a
//! system call of a microsecond or more (iceoryx2 issues 434 and 783: a
//! benchmark ten times slower than published).

use crate::{Finding, Host, Verdict};

const SOURCE: &str = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
const AVAILABLE: &str = "/sys/devices/system/clocksource/clocksource0/available_clocksource";

pub(crate) fn check(host: &Host, out: &mut Vec<Finding>) {
    let cpuinfo = host.read("/proc/cpuinfo").unwrap_or_default();
    let flags = super::cpu_flags(&cpuinfo);
    let x86 = flags.contains(&"tsc");
    out.push(source(host, x86));
    if x86 {
        out.push(tsc(&flags));
    }
}

fn source(host: &Host, x86: bool) -> Finding {
    let Some(current) = host.read(SOURCE) else {
        return Finding::bad(
            "clocksource",
            Verdict::Warn,
            "unknown (no current_clocksource)",
            "the clock behind every timestamp cannot be told",
            format!("check that sysfs is mounted (read {SOURCE})"),
        );
    };
    let available = host.read(AVAILABLE).unwrap_or_default();
    match current.as_str() {
        // The CPU's own counters: read in user space through the vDSO.
        "tsc" | "arch_sys_counter" | "riscv_clocksource" => Finding::ok("clocksource", current),
        "kvm-clock" => Finding::bad(
            "clocksource",
            Verdict::Warn,
            format!("kvm-clock (available: {available})"),
            "a paravirtual clock: read in user space, but through the hypervisor's page, slower than the TSC and subject to its corrections",
            tsc_fix(x86, &available),
        ),
        "hpet" | "acpi_pm" | "jiffies" => Finding::bad(
            "clocksource",
            Verdict::Fail,
            format!("{current} (available: {available})"),
            "clock_gettime becomes a system call of about a microsecond: every timestamp costs that, and latencies read high",
            tsc_fix(x86, &available),
        ),
        other => Finding::bad(
            "clocksource",
            Verdict::Warn,
            format!("{other} (available: {available})"),
            "not a CPU counter read in user space: timestamps may cost a system call",
            tsc_fix(x86, &available),
        ),
    }
}

fn tsc_fix(x86: bool, available: &str) -> String {
    if x86 && available.split_whitespace().any(|s| s == "tsc") {
        format!(
            "echo tsc > {SOURCE} (and tsc=reliable clocksource=tsc on the kernel command line to keep it)"
        )
    } else if x86 {
        "boot with tsc=reliable clocksource=tsc on the kernel command line (the kernel did not trust the TSC)".into()
    } else {
        format!("echo arch_sys_counter > {SOURCE}")
    }
}

fn tsc(flags: &[&str]) -> Finding {
    let has = |f: &str| flags.contains(&f);
    let missing: Vec<&str> = ["constant_tsc", "nonstop_tsc"]
        .into_iter()
        .filter(|f| !has(f))
        .collect();
    if missing.is_empty() {
        Finding::ok("tsc", "constant_tsc nonstop_tsc")
    } else {
        Finding::bad(
            "tsc",
            Verdict::Warn,
            format!("missing {}", missing.join(" ")),
            "a TSC that changes rate with the CPU's frequency or stops in deep sleep states gives wrong intervals; the kernel may then leave it for a slower clock",
            "on a VM, expose an invariant TSC to the guest (e.g. QEMU -cpu host,+invtsc); on hardware, enable it in the firmware",
        )
    }
}
