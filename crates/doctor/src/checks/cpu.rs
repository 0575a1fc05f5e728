//! The measuring cores: their frequency governor, turbo/boost, their SMT
//! siblings and what runs there, whether they are isolated from the
//! scheduler, timer ticks and RCU callbacks, and which interrupts land on
//! them.

use crate::host::{cpu_list, cpu_list_text};
use crate::{Finding, Host, Options, Verdict};

pub(crate) fn check(host: &Host, opts: &Options, out: &mut Vec<Finding>) {
    let cores = cores(host, opts);
    out.push(governor(host, &cores));
    out.push(boost(host));
    out.push(smt(host, &cores));
    out.push(isolation(host, &cores));
    out.push(irqs(host, &cores));
}

/// The cores the run uses, else every online core.
fn cores(host: &Host, opts: &Options) -> Vec<usize> {
    if !opts.cores.is_empty() {
        return opts.cores.clone();
    }
    host.read("/sys/devices/system/cpu/online")
        .and_then(|s| cpu_list(&s))
        .unwrap_or_else(|| vec![0])
}

fn cpu_path(cpu: usize, rest: &str) -> String {
    format!("/sys/devices/system/cpu/cpu{cpu}/{rest}")
}

fn governor(host: &Host, cores: &[usize]) -> Finding {
    let read: Vec<(usize, String)> = cores
        .iter()
        .filter_map(|&c| {
            host.read(&cpu_path(c, "cpufreq/scaling_governor"))
                .map(|g| (c, g))
        })
        .collect();
    if read.is_empty() {
        return Finding::ok(
            "governor",
            "no cpufreq (a fixed frequency, or the hypervisor's)",
        );
    }
    let slow: Vec<String> = read
        .iter()
        .filter(|(_, g)| g != "performance")
        .map(|(c, g)| format!("cpu{c} {g}"))
        .collect();
    if slow.is_empty() {
        Finding::ok("governor", "performance")
    } else {
        Finding::bad(
            "governor",
            Verdict::Warn,
            slow.join(", "),
            "the core slows down between samples and takes time to speed up: latency at low rates reads high and varies from run to run",
            format!(
                "cpupower -c {} frequency-set -g performance",
                cpu_list_text(&read.iter().map(|(c, _)| *c).collect::<Vec<_>>())
            ),
        )
    }
}

fn boost(host: &Host) -> Finding {
    const NO_TURBO: &str = "/sys/devices/system/cpu/intel_pstate/no_turbo";
    const BOOST: &str = "/sys/devices/system/cpu/cpufreq/boost";
    let why = "the clock rate depends on temperature and on how many cores are busy: the same test gives different figures from run to run";
    if let Some(v) = host.read(NO_TURBO) {
        return if v == "1" {
            Finding::ok("boost", "intel_pstate turbo off")
        } else {
            Finding::bad(
                "boost",
                Verdict::Warn,
                "intel_pstate turbo on",
                why,
                format!("echo 1 > {NO_TURBO}"),
            )
        };
    }
    match host.read(BOOST).as_deref() {
        Some("1") => Finding::bad(
            "boost",
            Verdict::Warn,
            "cpufreq boost on",
            why,
            format!("echo 0 > {BOOST}"),
        ),
        Some(_) => Finding::ok("boost", "cpufreq boost off"),
        None => Finding::ok("boost", "no turbo or boost control"),
    }
}

/// The tasks that last ran on `cpu` and are runnable now (`/proc/*/stat`).
fn running_on(host: &Host, cpu: usize) -> Vec<String> {
    let mut v = Vec::new();
    for pid in host.list("/proc") {
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some(stat) = host.read(&format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ... ; the fields after the comm's ')'.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = head.split_once('(').map_or("", |(_, c)| c);
        let f: Vec<&str> = rest.split_whitespace().collect();
        // rest[0] is the state (field 3); the processor is field 39.
        if f.first() == Some(&"R") && f.get(36).and_then(|p| p.parse().ok()) == Some(cpu) {
            v.push(format!("{comm} ({pid})"));
        }
    }
    v
}

fn smt(host: &Host, cores: &[usize]) -> Finding {
    let mut shared = Vec::new();
    for &c in cores {
        let Some(sib) = host
            .read(&cpu_path(c, "topology/thread_siblings_list"))
            .and_then(|s| cpu_list(&s))
        else {
            continue;
        };
        for s in sib.into_iter().filter(|&s| s != c) {
            let what = if cores.contains(&s) {
                "also measuring".to_string()
            } else {
                let busy = running_on(host, s);
                if busy.is_empty() {
                    "idle now".into()
                } else {
                    format!("running {}", busy.join(", "))
                }
            };
            shared.push(format!("cpu{c} shares its core with cpu{s} ({what})"));
        }
    }
    if shared.is_empty() {
        return Finding::ok("smt", "no SMT sibling on the measuring cores");
    }
    Finding::bad(
        "smt",
        Verdict::Warn,
        shared.join("; "),
        "a sibling hyperthread shares the core's execution units and caches: whatever runs there slows the measurement",
        "pin the two sides to cores of different physical cores (--cpu), and keep the siblings idle or off: echo off > /sys/devices/system/cpu/smt/control",
    )
}

fn isolation(host: &Host, cores: &[usize]) -> Finding {
    let cmdline = host.read("/proc/cmdline").unwrap_or_default();
    let param = |name: &str, file: &str| -> Vec<usize> {
        host.read(&format!("/sys/devices/system/cpu/{file}"))
            .and_then(|s| cpu_list(&s))
            .or_else(|| {
                cmdline
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix(&format!("{name}=")))
                    // isolcpus may carry flags first: isolcpus=nohz,domain,2-3
                    .map(|v| v.rsplit(',').next().unwrap_or(v).to_string())
                    .and_then(|v| cpu_list(&v))
            })
            .unwrap_or_default()
    };
    let isolated = param("isolcpus", "isolated");
    let nohz = param("nohz_full", "nohz_full");
    let rcu: Vec<usize> = cmdline
        .split_whitespace()
        .find_map(|w| w.strip_prefix("rcu_nocbs="))
        .and_then(cpu_list)
        .unwrap_or_default();
    let missing: Vec<String> = [
        ("isolcpus", &isolated),
        ("nohz_full", &nohz),
        ("rcu_nocbs", &rcu),
    ]
    .into_iter()
    .filter(|(_, set)| !cores.iter().all(|c| set.contains(c)))
    .map(|(n, _)| n.to_string())
    .collect();
    let list = cpu_list_text(cores);
    if missing.is_empty() {
        return Finding::ok(
            "isolation",
            format!("cpu {list} isolated, tickless, no RCU callbacks"),
        );
    }
    Finding::bad(
        "isolation",
        Verdict::Warn,
        format!("cpu {list} not in {}", missing.join(", ")),
        "other tasks, the scheduler's tick and RCU callbacks run on the measuring cores and show as the tail of the latency",
        format!(
            "kernel command line: isolcpus={list} nohz_full={list} rcu_nocbs={list} (then reboot)"
        ),
    )
}

fn irqs(host: &Host, cores: &[usize]) -> Finding {
    let counts = interrupt_counts(host, cores);
    let mut on = Vec::new();
    for irq in host.list("/proc/irq") {
        if !irq.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some(aff) = host
            .read(&format!("/proc/irq/{irq}/effective_affinity_list"))
            .or_else(|| host.read(&format!("/proc/irq/{irq}/smp_affinity_list")))
            .and_then(|s| cpu_list(&s))
        else {
            continue;
        };
        let fired = counts.get(&irq).copied().unwrap_or(0);
        if fired > 0 && aff.iter().any(|c| cores.contains(c)) {
            on.push((irq, fired));
        }
    }
    if on.is_empty() {
        return Finding::ok(
            "irq",
            format!("no device interrupt on cpu {}", cpu_list_text(cores)),
        );
    }
    on.sort_by_key(|o| std::cmp::Reverse(o.1));
    let top: Vec<String> = on
        .iter()
        .take(5)
        .map(|(i, n)| format!("{i} ({n})"))
        .collect();
    let others: Vec<usize> = host
        .read("/sys/devices/system/cpu/online")
        .and_then(|s| cpu_list(&s))
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !cores.contains(c))
        .collect();
    let fix = if others.is_empty() {
        "no other core to move them to: a machine with more cores, or accept them".to_string()
    } else {
        format!(
            "for each: echo {} > /proc/irq/N/smp_affinity_list (and stop irqbalance, or ban the cores from it: IRQBALANCE_BANNED_CPULIST={})",
            cpu_list_text(&others),
            cpu_list_text(cores)
        )
    };
    Finding::bad(
        "irq",
        Verdict::Warn,
        format!(
            "{} interrupt{} on cpu {}: {}",
            on.len(),
            if on.len() == 1 { "" } else { "s" },
            cpu_list_text(cores),
            top.join(", ")
        ),
        "a device interrupt preempts the measuring thread: its handler's time shows in the latency tail",
        fix,
    )
}

/// Each numbered interrupt's count on `cores` (`/proc/interrupts`).
fn interrupt_counts(host: &Host, cores: &[usize]) -> std::collections::BTreeMap<String, u64> {
    let text = host.read("/proc/interrupts").unwrap_or_default();
    let mut lines = text.lines();
    let header: Vec<usize> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|c| c.strip_prefix("CPU").and_then(|n| n.parse().ok()))
        .collect();
    let mut m = std::collections::BTreeMap::new();
    for l in lines {
        let Some((irq, rest)) = l.trim_start().split_once(':') else {
            continue;
        };
        if !irq.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let n: u64 = rest
            .split_whitespace()
            .zip(&header)
            .filter(|(_, cpu)| cores.contains(cpu))
            .filter_map(|(v, _)| v.parse::<u64>().ok())
            .sum();
        m.insert(irq.to_string(), n);
    }
    m
}
