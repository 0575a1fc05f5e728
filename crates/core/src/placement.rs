//! Where a side's measuring thread really ran, read back from the kernel
//! (`placement` in results), and the run's conditions checked against its
//! plan (`conditions`).
//!
//! ## Method
//! The measuring thread reads its own records at the start and at the end
//! of the measurement ([`Watch::start`], [`Watch::finish`]), never in the
//! measuring loop:
//! - `affinity`: `sched_getaffinity` at the end; `policy` and `priority`:
//!   `pthread_getschedparam`.
//! - `ran_on`: the CPU it was on at the start and at the end
//!   (`sched_getcpu`). With `migrations` 0 that is every CPU it ran on;
//!   the kernel also never runs a thread outside its affinity.
//! - `migrations` (`se.nr_migrations` of `/proc/thread-self/sched`, when
//!   the kernel has `CONFIG_SCHED_DEBUG`), `voluntary_cs` and
//!   `involuntary_cs` (`/proc/thread-self/status`): differences over the
//!   measurement.
//! - `on_cpu_ns` and `run_queue_ns` (`/proc/thread-self/schedstat`): the
//!   time it ran, and the time it was runnable but waited for a CPU.
//! - `others_ns`: the time the CPUs of `ran_on` spent running anything
//!   else (other tasks, interrupts) during the measurement: the span on
//!   each of them less its idle and I/O-wait time from `/proc/stat`
//!   (which the kernel keeps exactly and reports in clock ticks, 10 ms at
//!   USER_HZ 100), less `on_cpu_ns`. Not its busy ticks: those are
//!   sampled at the tick and miss most of a thread that runs in short
//!   bursts. `steal_ns`: the time the hypervisor ran something else
//!   instead of them.

use serde::{Deserialize, Serialize};

/// One side's measuring thread as the kernel saw it (`placement[i]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Placement {
    /// `publisher`, `subscriber N`.
    pub side: String,
    /// The kernel it ran under (`/proc/sys/kernel/random/boot_id`): two
    /// sides with the same id share the same cores.
    pub kernel: String,
    /// The core the plan pinned it to; `None`: not pinned.
    pub planned_cpu: Option<usize>,
    /// The cores it was allowed on.
    pub affinity: Vec<usize>,
    /// The cores it was seen on (see the module's method).
    pub ran_on: Vec<usize>,
    /// Migrations between CPUs during the measurement.
    pub migrations: Option<u64>,
    /// Scheduling policy: `other`, `fifo`, `rr`, `batch`, `idle`.
    pub policy: String,
    /// Real-time priority (0 under `other`).
    pub priority: i32,
    /// Voluntary context switches (it blocked).
    pub voluntary_cs: u64,
    /// Involuntary context switches (it was preempted).
    pub involuntary_cs: u64,
    /// Time on a CPU, ns.
    pub on_cpu_ns: Option<u64>,
    /// Time runnable but waiting for a CPU, ns.
    pub run_queue_ns: Option<u64>,
    /// Time its CPUs ran anything else, ns (10 ms resolution).
    pub others_ns: Option<u64>,
    /// Time its CPUs were stolen by the hypervisor, ns (10 ms resolution).
    pub steal_ns: Option<u64>,
    /// How long the measurement lasted on this side, ns.
    pub span_ns: u64,
    /// How many CPUs the host has online.
    pub online: usize,
}

/// The thread's records at the start of a measurement.
pub struct Watch {
    at_ns: u64,
    cpu: Option<usize>,
    task: Task,
    stat: Vec<CpuTicks>,
}

impl Watch {
    /// Reads the calling thread's records: call it on the measuring thread
    /// just before measuring.
    pub fn start() -> Watch {
        Watch {
            at_ns: crate::clock::now_ns(),
            cpu: current_cpu(),
            task: Task::read(),
            stat: cpu_ticks(),
        }
    }

    /// Reads them again and returns the difference: call it on the same
    /// thread just after measuring.
    pub fn finish(self, side: &str, planned_cpu: Option<usize>) -> Placement {
        let task = Task::read();
        let stat = cpu_ticks();
        let span_ns = crate::clock::now_ns().saturating_sub(self.at_ns);
        let mut ran_on: Vec<usize> = [self.cpu, current_cpu()].into_iter().flatten().collect();
        ran_on.sort_unstable();
        ran_on.dedup();
        let on_cpu_ns = sub(task.on_cpu_ns, self.task.on_cpu_ns);
        let ticks = |f: fn(&CpuTicks) -> u64| -> Option<u64> {
            let per_tick = tick_ns()?;
            let mut total = 0;
            for c in &ran_on {
                let a = self.stat.iter().find(|t| t.cpu == *c)?;
                let b = stat.iter().find(|t| t.cpu == *c)?;
                total += f(b).saturating_sub(f(a)) * per_tick;
            }
            Some(total)
        };
        let (policy, priority) = policy();
        Placement {
            side: side.into(),
            kernel: kernel_id(),
            planned_cpu,
            affinity: crate::cpus::affinity_of(0).unwrap_or_default(),
            migrations: sub(task.migrations, self.task.migrations),
            policy,
            priority,
            voluntary_cs: task.voluntary.saturating_sub(self.task.voluntary),
            involuntary_cs: task.involuntary.saturating_sub(self.task.involuntary),
            on_cpu_ns,
            run_queue_ns: sub(task.run_queue_ns, self.task.run_queue_ns),
            others_ns: ticks(|t| t.idle).map(|idle| {
                (span_ns * ran_on.len() as u64)
                    .saturating_sub(idle)
                    .saturating_sub(on_cpu_ns.unwrap_or(0))
            }),
            steal_ns: ticks(|t| t.steal),
            span_ns,
            online: crate::cpus::online().map_or(0, |v| v.len()),
            ran_on,
        }
    }
}

fn sub(b: Option<u64>, a: Option<u64>) -> Option<u64> {
    Some(b?.saturating_sub(a?))
}

/// What differs from the plan, one reason a line: a side pinned elsewhere
/// or not at all, and two sides on one kernel that shared a core they were
/// planned not to share (or that ran on one core of a host with more).
pub fn conditions(sides: &[Placement]) -> Vec<String> {
    let mut out = Vec::new();
    for p in sides {
        let Some(c) = p.planned_cpu else { continue };
        if p.affinity.is_empty() {
            continue;
        }
        if p.affinity != [c] {
            out.push(format!(
                "{} planned on core {c}, allowed on cores {}",
                p.side,
                pubsubperf_doctor::cpu_list_text(&p.affinity)
            ));
        } else if p.ran_on.iter().any(|&r| r != c) {
            out.push(format!(
                "{} planned on core {c}, ran on cores {}",
                p.side,
                pubsubperf_doctor::cpu_list_text(&p.ran_on)
            ));
        }
    }
    for (i, a) in sides.iter().enumerate() {
        for b in &sides[i + 1..] {
            if a.kernel != b.kernel || a.kernel.is_empty() {
                continue;
            }
            if let Some(why) = shared_core(a, b) {
                out.push(why);
            }
        }
    }
    out
}

/// Two sides of one host that shared a core against the plan.
fn shared_core(a: &Placement, b: &Placement) -> Option<String> {
    let planned_apart = matches!((a.planned_cpu, b.planned_cpu), (Some(x), Some(y)) if x != y);
    let planned_together = matches!((a.planned_cpu, b.planned_cpu), (Some(x), Some(y)) if x == y);
    let held = |p: &Placement| (p.affinity.len() == 1).then(|| p.affinity[0]);
    let common: Vec<usize> = a
        .ran_on
        .iter()
        .copied()
        .filter(|c| b.ran_on.contains(c))
        .collect();
    match (held(a), held(b)) {
        (Some(x), Some(y)) if x == y && !planned_together && (planned_apart || a.online > 1) => {
            Some(format!(
                "{} and {} were both held on core {x}{}",
                a.side,
                b.side,
                plan_text(a, b)
            ))
        }
        _ if planned_apart && !common.is_empty() => Some(format!(
            "{} and {} shared core {}{}",
            a.side,
            b.side,
            pubsubperf_doctor::cpu_list_text(&common),
            plan_text(a, b)
        )),
        _ => None,
    }
}

fn plan_text(a: &Placement, b: &Placement) -> String {
    let c = |p: &Placement| p.planned_cpu.map_or("any".to_string(), |c| c.to_string());
    format!(" (planned {} and {})", c(a), c(b))
}

/// A thread's counters from /proc/thread-self.
#[derive(Default)]
struct Task {
    migrations: Option<u64>,
    voluntary: u64,
    involuntary: u64,
    on_cpu_ns: Option<u64>,
    run_queue_ns: Option<u64>,
}

impl Task {
    fn read() -> Task {
        let status = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
        let field = |text: &str, key: &str| -> Option<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim_start_matches([':', ' ', '\t']).trim().parse().ok())
        };
        let sched = std::fs::read_to_string("/proc/thread-self/sched").unwrap_or_default();
        let schedstat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
        let mut ss = schedstat.split_whitespace().map(|v| v.parse::<u64>().ok());
        Task {
            migrations: field(&sched, "se.nr_migrations"),
            voluntary: field(&status, "voluntary_ctxt_switches").unwrap_or(0),
            involuntary: field(&status, "nonvoluntary_ctxt_switches").unwrap_or(0),
            on_cpu_ns: ss.next().flatten(),
            run_queue_ns: ss.next().flatten(),
        }
    }
}

/// One CPU's line of /proc/stat, in clock ticks: its idle time (idle and
/// I/O wait, which the kernel keeps exactly and reports in ticks) and the
/// time stolen from it.
struct CpuTicks {
    cpu: usize,
    idle: u64,
    steal: u64,
}

fn cpu_ticks() -> Vec<CpuTicks> {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    stat.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let cpu = f.next()?.strip_prefix("cpu")?.parse().ok()?;
            let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
            Some(CpuTicks {
                cpu,
                idle: v.get(3)? + v.get(4)?,
                steal: v.get(7).copied().unwrap_or(0),
            })
        })
        .collect()
}

fn tick_ns() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| 1_000_000_000 / hz as u64)
}

fn current_cpu() -> Option<usize> {
    // SAFETY: sched_getcpu has no preconditions.
    let c = unsafe { libc::sched_getcpu() };
    (c >= 0).then_some(c as usize)
}

fn policy() -> (String, i32) {
    // SAFETY: plain data filled by the kernel for our own thread.
    let (rc, policy, param) = unsafe {
        let mut policy = 0;
        let mut param: libc::sched_param = std::mem::zeroed();
        let rc = libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param);
        (rc, policy, param)
    };
    if rc != 0 {
        return ("unknown".into(), 0);
    }
    let name = match policy {
        libc::SCHED_OTHER => "other",
        libc::SCHED_FIFO => "fifo",
        libc::SCHED_RR => "rr",
        libc::SCHED_BATCH => "batch",
        libc::SCHED_IDLE => "idle",
        _ => "unknown",
    };
    (name.into(), param.sched_priority)
}

/// This kernel's boot id: the same on every process of one host.
pub fn kernel_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(name: &str, planned: Option<usize>, affinity: &[usize], ran_on: &[usize]) -> Placement {
        Placement {
            side: name.into(),
            kernel: "k".into(),
            planned_cpu: planned,
            affinity: affinity.to_vec(),
            ran_on: ran_on.to_vec(),
            online: 2,
            ..Placement::default()
        }
    }

    #[test]
    fn sides_as_planned_raise_nothing() {
        let s = [
            side("publisher", Some(0), &[0], &[0]),
            side("subscriber 0", Some(1), &[1], &[1]),
        ];
        assert!(conditions(&s).is_empty());
    }

    /// The defect this records: the second run planned no pinning and its
    /// subscriber inherited the publisher's core.
    #[test]
    fn both_held_on_one_core_is_named() {
        let s = [
            side("publisher", None, &[0], &[0]),
            side("subscriber 0", None, &[0], &[0]),
        ];
        assert_eq!(
            conditions(&s),
            ["publisher and subscriber 0 were both held on core 0 (planned any and any)"]
        );
    }

    #[test]
    fn a_side_pinned_elsewhere_is_named() {
        let s = [
            side("publisher", Some(0), &[0], &[0]),
            side("subscriber 0", Some(1), &[0], &[0]),
        ];
        let c = conditions(&s);
        assert_eq!(c[0], "subscriber 0 planned on core 1, allowed on cores 0");
        assert_eq!(
            c[1],
            "publisher and subscriber 0 were both held on core 0 (planned 0 and 1)"
        );
    }

    #[test]
    fn unpinned_sides_that_met_on_a_core_are_not_a_fault() {
        let s = [
            side("publisher", None, &[0, 1], &[0, 1]),
            side("subscriber 0", None, &[0, 1], &[0]),
        ];
        assert!(conditions(&s).is_empty());
    }

    #[test]
    fn other_hosts_cores_do_not_clash() {
        let mut b = side("subscriber 0", None, &[0], &[0]);
        b.kernel = "other".into();
        assert!(conditions(&[side("publisher", None, &[0], &[0]), b]).is_empty());
    }

    #[test]
    fn planned_on_one_core_is_as_planned() {
        let s = [
            side("publisher", Some(0), &[0], &[0]),
            side("subscriber 0", Some(0), &[0], &[0]),
        ];
        assert!(conditions(&s).is_empty());
    }

    /// The records are the kernel's: a thread pinned to a core reads back
    /// that core, its policy, and time on a CPU.
    #[test]
    fn a_watch_reads_the_thread_back() {
        let p = std::thread::spawn(|| {
            let c = crate::cpus::cpus()[0];
            crate::sys::pin_to_cpu(c).expect("pin");
            let w = Watch::start();
            crate::clock::spin_until(crate::clock::now_ns() + 30_000_000);
            (c, w.finish("publisher", Some(c)))
        })
        .join()
        .expect("thread");
        let (c, p) = p;
        assert_eq!(p.affinity, vec![c]);
        assert_eq!(p.ran_on, vec![c]);
        assert_eq!(p.policy, "other");
        assert!(p.on_cpu_ns.expect("schedstat") > 0);
        assert!(!p.kernel.is_empty());
        assert!(conditions(&[p]).is_empty());
    }
}
