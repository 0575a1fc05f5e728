//! A recording indexed for windows: for each CPU its tasks' runs, its
//! interrupts and its idle periods in time order, and the time each
//! measuring process's threads were ready to run but not running.

use crate::noise::SOFTIRQS;
use crate::{KernelEvent, Recording};
use std::collections::BTreeMap;

/// A span of time, ns on CLOCK_MONOTONIC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Span {
    pub start: u64,
    pub end: u64,
}

impl Span {
    /// The time `self` and `other` share.
    pub fn overlap(self, other: Span) -> u64 {
        self.end
            .min(other.end)
            .saturating_sub(self.start.max(other.start))
    }
}

/// What interrupted a CPU.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Interrupt {
    Irq(u32, String),
    Softirq(u32),
    Ipi,
}

impl Interrupt {
    pub fn name(&self) -> String {
        match self {
            Interrupt::Irq(n, name) => format!("IRQ {n} {name}"),
            Interrupt::Softirq(v) => format!(
                "softirq {}",
                SOFTIRQS.get(*v as usize).copied().unwrap_or("unknown")
            ),
            Interrupt::Ipi => "scheduler IPI".into(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Interrupt::Irq(..) => "irq",
            Interrupt::Softirq(_) => "softirq",
            Interrupt::Ipi => "ipi",
        }
    }
}

/// A task's run on a CPU.
#[derive(Debug, Clone)]
pub(crate) struct TaskRun {
    pub span: Span,
    pub tid: u32,
    pub pid: u32,
    pub name: String,
    /// The host's steal time inside it.
    pub steal: u64,
}

impl TaskRun {
    /// Its steal time within `s`, taken as spread evenly over the run.
    pub fn steal_within(&self, s: Span) -> u64 {
        let len = self.span.end - self.span.start;
        if len == 0 {
            return 0;
        }
        (self.steal as u128 * self.span.overlap(s) as u128 / len as u128) as u64
    }
}

/// One CPU's records, each list in time order.
#[derive(Debug, Default)]
pub(crate) struct Cpu {
    pub runs: Vec<TaskRun>,
    pub interrupts: Vec<(Span, Interrupt)>,
    pub idle: Vec<Span>,
    /// Times a measuring thread was ready to run here but not running
    /// (preempted, or woken and not yet back), merged into disjoint spans.
    pub waiting: Vec<Span>,
    /// The longest item of each list, for [`within`].
    pub longest_run: u64,
    pub longest_interrupt: u64,
    pub longest_idle: u64,
    pub longest_wait: u64,
}

/// The recording, by CPU, and the measuring processes' migrations and
/// faults.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    pub cpus: BTreeMap<u32, Cpu>,
    pub migrations: Vec<u64>,
    pub faults: Vec<u64>,
    /// The last time any record covers.
    pub last_ns: u64,
}

/// The items of `list` (by start time; none longer than `longest`) that
/// may overlap `w`: every one that does, and some that end before it
/// (nested spans, a softirq's hard interrupt, keep the ends out of order).
pub(crate) fn within<T>(list: &[T], w: Span, longest: u64, span: impl Fn(&T) -> Span) -> &[T] {
    let from = list.partition_point(|x| span(x).start < w.start.saturating_sub(longest));
    let to = list.partition_point(|x| span(x).start < w.end);
    &list[from..to.max(from)]
}

/// The longest of `spans`.
fn longest<'a>(spans: impl Iterator<Item = &'a Span>) -> u64 {
    spans.map(|s| s.end - s.start).max().unwrap_or(0)
}

/// Sorts `spans` and merges those that overlap.
pub(crate) fn merge(spans: &mut Vec<Span>) {
    spans.sort();
    let mut out: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans.drain(..) {
        match out.last_mut() {
            Some(last) if s.start <= last.end => last.end = last.end.max(s.end),
            _ => out.push(s),
        }
    }
    *spans = out;
}

impl Timeline {
    /// Indexes `r`; `measuring` tells a measuring process by its id.
    pub fn new(r: &Recording, measuring: impl Fn(u32) -> bool) -> Timeline {
        let mut t = Timeline::default();
        for e in &r.events {
            match e {
                KernelEvent::Run {
                    cpu,
                    task,
                    start_ns,
                    end_ns,
                    steal_ns,
                } => t.cpu(*cpu).runs.push(TaskRun {
                    steal: *steal_ns,
                    span: Span {
                        start: *start_ns,
                        end: *end_ns,
                    },
                    tid: task.tid,
                    pid: task.pid,
                    name: task.name.clone(),
                }),
                KernelEvent::Irq {
                    cpu,
                    irq,
                    name,
                    start_ns,
                    end_ns,
                } => t.interrupt(*cpu, *start_ns, *end_ns, Interrupt::Irq(*irq, name.clone())),
                KernelEvent::Softirq {
                    cpu,
                    vector,
                    start_ns,
                    end_ns,
                } => t.interrupt(*cpu, *start_ns, *end_ns, Interrupt::Softirq(*vector)),
                KernelEvent::Ipi {
                    cpu,
                    start_ns,
                    end_ns,
                    ..
                } => t.interrupt(*cpu, *start_ns, *end_ns, Interrupt::Ipi),
                KernelEvent::Idle {
                    cpu,
                    start_ns,
                    end_ns,
                    ..
                } => t.cpu(*cpu).idle.push(Span {
                    start: *start_ns,
                    end: *end_ns,
                }),
                KernelEvent::OffCpu {
                    pid,
                    cpu,
                    left_ns,
                    woken_ns,
                    back_ns,
                    preempted,
                    ..
                } if measuring(*pid) => {
                    let ready = if *preempted {
                        Some(*left_ns)
                    } else {
                        *woken_ns
                    };
                    if let Some(ready) = ready {
                        t.cpu(*cpu).waiting.push(Span {
                            start: ready.min(*back_ns),
                            end: *back_ns,
                        });
                    }
                }
                KernelEvent::Migrate { pid, at_ns, .. } if measuring(*pid) => {
                    t.migrations.push(*at_ns)
                }
                KernelEvent::Fault { pid, at_ns, .. } if measuring(*pid) => t.faults.push(*at_ns),
                _ => {}
            }
            t.last_ns = t.last_ns.max(end_of(e));
        }
        for c in t.cpus.values_mut() {
            c.runs.sort_by_key(|r| r.span);
            c.interrupts.sort_by_key(|i| i.0);
            c.idle.sort();
            merge(&mut c.waiting);
            c.longest_run = longest(c.runs.iter().map(|r| &r.span));
            c.longest_interrupt = longest(c.interrupts.iter().map(|i| &i.0));
            c.longest_idle = longest(c.idle.iter());
            c.longest_wait = longest(c.waiting.iter());
        }
        t.migrations.sort();
        t.faults.sort();
        t
    }

    fn cpu(&mut self, cpu: u32) -> &mut Cpu {
        self.cpus.entry(cpu).or_default()
    }

    fn interrupt(&mut self, cpu: u32, start: u64, end: u64, what: Interrupt) {
        self.cpu(cpu).interrupts.push((Span { start, end }, what));
    }

    /// How many of `times` (sorted) fall in `w`.
    pub fn count(times: &[u64], w: Span) -> u32 {
        let from = times.partition_point(|&t| t < w.start);
        let to = times.partition_point(|&t| t < w.end);
        (to - from) as u32
    }
}

fn end_of(e: &KernelEvent) -> u64 {
    match e {
        KernelEvent::OffCpu { back_ns, .. } => *back_ns,
        KernelEvent::Irq { end_ns, .. }
        | KernelEvent::Softirq { end_ns, .. }
        | KernelEvent::Ipi { end_ns, .. }
        | KernelEvent::Idle { end_ns, .. }
        | KernelEvent::Run { end_ns, .. } => *end_ns,
        KernelEvent::Fault { at_ns, .. } | KernelEvent::Migrate { at_ns, .. } => *at_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(start: u64, end: u64) -> Span {
        Span { start, end }
    }

    #[test]
    fn within_finds_every_overlapping_item() {
        let list = [s(0, 10), s(10, 20), s(25, 30), s(40, 50)];
        let hits = |w| -> Vec<Span> {
            within(&list, w, 10, |x| *x)
                .iter()
                .copied()
                .filter(|x| x.overlap(w) > 0)
                .collect()
        };
        assert_eq!(hits(s(12, 26)), vec![s(10, 20), s(25, 30)]);
        assert_eq!(hits(s(20, 25)), vec![]);
        assert_eq!(hits(s(0, 100)).len(), 4);
        // Nested: a long span holding a short one that ends first.
        let nested = [s(0, 100), s(50, 60), s(120, 130)];
        assert_eq!(
            within(&nested, s(70, 80), 100, |x| *x).first(),
            Some(&s(0, 100))
        );
    }

    #[test]
    fn overlapping_waits_merge_into_one() {
        let mut v = vec![s(30, 40), s(0, 10), s(5, 20), s(20, 25)];
        merge(&mut v);
        assert_eq!(v, vec![s(0, 25), s(30, 40)]);
    }
}
