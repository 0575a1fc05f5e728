//! What runs on chosen CPUs while nothing is measured (`pubsubperf doctor
//! --trace`): each CPU's time by task, interrupt, softirq, scheduler IPI
//! and idle, from one recording.

use crate::{ExplainError, KernelEvent, Recorder, Recording};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// One source of work on a CPU: how often and how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// A task (`name (tid N)`), `IRQ N name`, a softirq by its kernel name,
    /// or `scheduler IPI`.
    pub what: String,
    /// Times it ran (switches in, interrupts, softirqs).
    pub count: u64,
    /// Its time on the CPU, ns.
    pub ns: u64,
    /// Its longest time on the CPU at once, ns.
    pub longest_ns: u64,
}

/// One CPU over the recording.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CpuNoise {
    pub cpu: usize,
    /// The recording's length, ns.
    pub span_ns: u64,
    /// Idle, ns.
    pub idle_ns: u64,
    /// Tasks, most time first.
    pub tasks: Vec<Source>,
    /// Hard interrupts, softirqs and scheduler IPIs, most time first (their
    /// time is inside the tasks' or the idle time they interrupted).
    pub interrupts: Vec<Source>,
    /// Timer softirqs a second (the tick, where the kernel has one).
    pub timer_per_s: f64,
    /// Records the kernel had no room for (the account is short by them).
    pub lost: u64,
}

/// The kernel's names of the softirq vectors (include/linux/interrupt.h).
pub(crate) const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// The softirq vector that is the scheduler tick's.
const TIMER: u32 = 1;

/// Records `cpus` for `span` and says what ran there.
pub fn trace(cpus: &[usize], span: Duration) -> Result<Vec<CpuNoise>, ExplainError> {
    let recorder = Recorder::start(cpus, 1 << 26)?;
    std::thread::sleep(span);
    let r = recorder.finish()?;
    let span_ns = r.end_ns.saturating_sub(r.start_ns);
    Ok(summarize(&r, cpus, span_ns))
}

#[derive(Default)]
struct Tally(BTreeMap<String, (u64, u64, u64)>);

impl Tally {
    fn add(&mut self, what: String, ns: u64) {
        let e = self.0.entry(what).or_default();
        e.0 += 1;
        e.1 += ns;
        e.2 = e.2.max(ns);
    }

    fn sorted(self) -> Vec<Source> {
        let mut v: Vec<Source> = self
            .0
            .into_iter()
            .map(|(what, (count, ns, longest_ns))| Source {
                what,
                count,
                ns,
                longest_ns,
            })
            .collect();
        v.sort_by(|a, b| b.ns.cmp(&a.ns).then_with(|| a.what.cmp(&b.what)));
        v
    }
}

/// Each of `cpus` over a recording of `span_ns`.
pub fn summarize(r: &Recording, cpus: &[usize], span_ns: u64) -> Vec<CpuNoise> {
    cpus.iter()
        .map(|&cpu| {
            let on = |c: &u32| *c as usize == cpu;
            let (mut tasks, mut interrupts) = (Tally::default(), Tally::default());
            let (mut idle_ns, mut timers) = (0, 0u64);
            for e in &r.events {
                match e {
                    KernelEvent::Run {
                        cpu: c,
                        task,
                        start_ns,
                        end_ns,
                        ..
                    } if on(c) => tasks.add(
                        format!("{} (tid {})", task.name, task.tid),
                        end_ns - start_ns,
                    ),
                    KernelEvent::Idle {
                        cpu: c,
                        start_ns,
                        end_ns,
                        ..
                    } if on(c) => idle_ns += end_ns - start_ns,
                    KernelEvent::Irq {
                        cpu: c,
                        irq,
                        name,
                        start_ns,
                        end_ns,
                    } if on(c) => interrupts.add(format!("IRQ {irq} {name}"), end_ns - start_ns),
                    KernelEvent::Softirq {
                        cpu: c,
                        vector,
                        start_ns,
                        end_ns,
                    } if on(c) => {
                        timers += u64::from(*vector == TIMER);
                        let name = SOFTIRQS
                            .get(*vector as usize)
                            .map_or_else(|| format!("vector {vector}"), |n| n.to_string());
                        interrupts.add(format!("softirq {name}"), end_ns - start_ns)
                    }
                    KernelEvent::Ipi {
                        cpu: c,
                        start_ns,
                        end_ns,
                        ..
                    } if on(c) => interrupts.add("scheduler IPI".into(), end_ns - start_ns),
                    _ => {}
                }
            }
            CpuNoise {
                cpu,
                span_ns,
                idle_ns,
                tasks: tasks.sorted(),
                interrupts: interrupts.sorted(),
                timer_per_s: timers as f64 * 1e9 / span_ns.max(1) as f64,
                lost: r.lost,
            }
        })
        .collect()
}

/// The trace as text: per CPU, idle and busy shares, then each source with
/// its share of the span, count, mean and longest time at once.
pub fn text(cpus: &[CpuNoise]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for c in cpus {
        let pct = |ns: u64| 100.0 * ns as f64 / c.span_ns.max(1) as f64;
        let _ = writeln!(
            out,
            "cpu {}: idle {:.1} %, {:.0} timer softirqs/s, over {:.2} s",
            c.cpu,
            pct(c.idle_ns),
            c.timer_per_s,
            c.span_ns as f64 / 1e9
        );
        let _ = writeln!(
            out,
            "    {:>9}  {:>9} {:>9} {:>11}",
            "share", "times", "mean µs", "longest µs"
        );
        for (heading, list) in [("tasks", &c.tasks), ("interrupts", &c.interrupts)] {
            if list.is_empty() {
                continue;
            }
            let _ = writeln!(out, "  {heading}:");
            for s in list {
                let _ = writeln!(
                    out,
                    "    {:>7.2} %  {:>7} x {:>9.1} {:>11.1}  {}",
                    pct(s.ns),
                    s.count,
                    s.ns as f64 / 1e3 / s.count.max(1) as f64,
                    s.longest_ns as f64 / 1e3,
                    s.what
                );
            }
        }
        if c.lost > 0 {
            let _ = writeln!(
                out,
                "  ({} records lost: the kernel's buffer was full; the account is short by them)",
                c.lost
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Task;

    fn run(cpu: u32, tid: u32, name: &str, start: u64, end: u64) -> KernelEvent {
        KernelEvent::Run {
            cpu,
            task: Task {
                tid,
                pid: tid,
                name: name.into(),
            },
            start_ns: start,
            end_ns: end,
            steal_ns: 0,
        }
    }

    #[test]
    fn each_cpus_time_is_summed_by_source_most_first() {
        let r = Recording {
            events: vec![
                run(1, 7, "hog", 0, 600),
                run(1, 7, "hog", 700, 900),
                run(1, 9, "kworker/1:0", 600, 700),
                run(0, 5, "elsewhere", 0, 1000),
                KernelEvent::Idle {
                    cpu: 1,
                    state: 0,
                    start_ns: 900,
                    end_ns: 1000,
                },
                KernelEvent::Softirq {
                    cpu: 1,
                    vector: 1,
                    start_ns: 100,
                    end_ns: 110,
                },
                KernelEvent::Irq {
                    cpu: 1,
                    irq: 36,
                    name: "virtio0-input".into(),
                    start_ns: 200,
                    end_ns: 230,
                },
            ],
            ..Recording::default()
        };
        let c = &summarize(&r, &[1], 1000)[0];
        assert_eq!(c.idle_ns, 100);
        assert_eq!(
            c.tasks,
            vec![
                Source {
                    what: "hog (tid 7)".into(),
                    count: 2,
                    ns: 800,
                    longest_ns: 600
                },
                Source {
                    what: "kworker/1:0 (tid 9)".into(),
                    count: 1,
                    ns: 100,
                    longest_ns: 100
                },
            ]
        );
        assert_eq!(c.interrupts[0].what, "IRQ 36 virtio0-input");
        assert_eq!(c.interrupts[1].what, "softirq TIMER");
        assert_eq!(c.timer_per_s, 1e6);
        let t = text(std::slice::from_ref(c));
        assert!(t.contains("cpu 1: idle 10.0 %"), "{t}");
        assert!(
            t.contains("      80.00 %        2 x       0.4         0.6  hog (tid 7)"),
            "{t}"
        );
    }
}
