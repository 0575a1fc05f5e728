//! Each sample's account, and the bands' (`--explain`).
//!
//! ## Method
//! A latency sample is a round trip: its window runs from the ping's send
//! to its echo's receipt on CLOCK_MONOTONIC, the clock of the kernel's
//! records. On each measuring CPU (a CPU a side is pinned to, read back
//! from the kernel), the window's time is classified:
//! - while a measuring thread was **ready but not running** (preempted, or
//!   woken and not yet back on its CPU): the tasks that ran instead (`SIDE
//!   preempted by NAME (pid N)`; a thread of another side: `shared core`),
//!   the CPU idle (`wake-up from idle`: the idle state's exit), and the
//!   rest (`SIDE wake-up latency`: the scheduler's own switch);
//! - while ready or running: hard interrupts, softirqs and scheduler IPIs
//!   on that CPU, by name (their time is taken out of the task or idle
//!   time they interrupted), and in a virtual machine the host's steal
//!   time (`hypervisor (steal time)`: the vCPU was not run; KVM's count,
//!   read at each task switch and spread evenly over the task's run).
//!
//! - while a side's own process ran on its core: `SIDE running on its
//!   core`, the time its main thread spent running its own code and
//!   system calls (a sample whose side computed or wrote something else
//!   for long), or `SIDE's other threads running on its core` (the
//!   middleware's, the control channel's). In a virtual machine this also
//!   holds the time the host held the vCPU without the guest knowing (a
//!   VM exit handled at length): the guest sees its thread running.
//!
//! Time asleep waiting for data is no cause: the sample's path is there.
//!
//! Every sample has some of each (a ping-pong always wakes its sides), so a
//! cause's **added** time is its time in the sample less its mean over the
//! samples between the run's p40 and p60 (the median's own account). A
//! sample's added time over the p50 is shared by its causes' added times
//! (scaled down to it when they exceed it, as when both sides were held up
//! at once) and the rest is `unexplained`. Times are one-way (half the
//! round trip's), as the latency is. The bands p50-p90 and p90-p99 are
//! accounted from a uniform reservoir of the run's samples, p99-p99.9 and
//! p99.9+ from its slowest samples, every one of them when they fit.

use crate::Recording;
use crate::timeline::{Cpu, Span, Timeline, merge, within};
use pubsubperf_core::explanation::{Band, CauseTime, Explanation, SampleAccount, Share};
use pubsubperf_core::tail::{Kept, TailSamples};
use std::collections::BTreeMap;

/// A side of the run: its processes and the CPUs it ran on.
#[derive(Debug, Clone)]
pub struct Side {
    /// `publisher`, `subscriber`, `subscriber 2`.
    pub name: String,
    pub pids: Vec<u32>,
    pub cpus: Vec<u32>,
}

/// The run's percentiles the bands are cut at (one-way, ns).
#[derive(Debug, Clone, Copy)]
pub struct Cuts {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
}

/// How many of the slowest samples a result lists with their accounts.
const LISTED: usize = 100;
/// Causes with a smaller share of a band, or after the first
/// [`MOST_CAUSES`], go under `other causes`.
const LEAST_SHARE: f64 = 0.02;
const MOST_CAUSES: usize = 6;

/// A cause: its name and kind.
type Cause = (String, &'static str);

/// The host running something else than this virtual CPU.
static STEAL: std::sync::LazyLock<Cause> =
    std::sync::LazyLock::new(|| ("hypervisor (steal time)".into(), "steal"));

/// One sample's causes, round-trip ns.
#[derive(Default)]
struct Causes(BTreeMap<Cause, u64>);

impl Causes {
    fn add(&mut self, c: Cause, ns: u64) {
        if ns > 0 {
            *self.0.entry(c).or_default() += ns;
        }
    }
}

/// Accounts for the samples of a latency run.
pub fn account(
    recording: &Recording,
    sides: &[Side],
    samples: &TailSamples,
    cuts: Cuts,
    measure_start_ns: u64,
) -> Explanation {
    let measuring = |pid: u32| sides.iter().any(|s| s.pids.contains(&pid));
    let t = Timeline::new(recording, measuring);
    let covered = |k: &Kept| recording.lost == 0 || k.end_ns <= t.last_ns;
    let of = |k: &Kept| {
        causes(
            &t,
            sides,
            Span {
                start: k.start_ns,
                end: k.end_ns,
            },
        )
    };
    let mid = middle(&samples.reservoir);
    let baseline = baseline(&mid, &of);
    let mut median = BandSum::default();
    for k in &mid {
        median.add(&added(k, &of(k), &BTreeMap::new(), 0));
    }
    let mut bands = Vec::new();
    let mut uncovered = 0u64;
    let edges = [
        ("p50-p90", cuts.p50, cuts.p90),
        ("p90-p99", cuts.p90, cuts.p99),
        ("p99-p99.9", cuts.p99, cuts.p999),
        ("p99.9+", cuts.p999, u64::MAX),
    ];
    let account_of = |k: &Kept| added(k, &of(k), &baseline, cuts.p50);
    // The slowest samples' accounts, made once for their bands and the list.
    let covered_slow: Vec<&Kept> = samples.slowest.iter().filter(|k| covered(k)).collect();
    let slow: Vec<SampleAccount> = covered_slow.iter().map(|k| account_of(k)).collect();
    for (i, (name, lo, hi)) in edges.into_iter().enumerate() {
        let within = |latency: u64| (lo..hi).contains(&latency);
        let mut sum = BandSum::default();
        if i < 2 {
            for k in samples.reservoir.iter().filter(|k| within(k.latency_ns)) {
                if covered(k) {
                    sum.add(&account_of(k));
                } else {
                    uncovered += 1;
                }
            }
        } else {
            uncovered += samples
                .slowest
                .iter()
                .filter(|k| within(k.latency_ns) && !covered(k))
                .count() as u64;
            for a in slow.iter().filter(|a| within(a.latency_ns)) {
                sum.add(a);
            }
        }
        bands.push(sum.band(name));
    }
    // The slowest kept fill the keeper: more above the p99 than it holds.
    let kept_above = samples
        .slowest
        .iter()
        .filter(|k| k.latency_ns >= cuts.p99)
        .count() as u64;
    if kept_above == samples.slowest.len() as u64 {
        uncovered += (samples.seen / 100).saturating_sub(kept_above);
    }
    let slowest = covered_slow
        .into_iter()
        .zip(slow)
        .take(LISTED)
        .map(|(k, mut a)| {
            let w = Span {
                start: k.start_ns,
                end: k.end_ns,
            };
            a.at_ns = k.start_ns.saturating_sub(measure_start_ns);
            a.migrations = Timeline::count(&t.migrations, w);
            a.faults = Timeline::count(&t.faults, w);
            a
        })
        .collect();
    let events = recording.events.len() as u64;
    Explanation {
        method: "kernel scheduler, interrupt and idle events (eBPF) in each sample's send-to-echo window on the measuring CPUs; each cause's time less its mean at the p40-p60 (docs/explain.md)".into(),
        events,
        events_per_sample: events as f64 / samples.seen.max(1) as f64,
        lost_events: recording.lost,
        missing_probes: recording.missing.clone(),
        p50_ns: cuts.p50,
        median: median.band("p40-p60"),
        samples: bands.iter().map(|b| b.samples).sum(),
        uncovered,
        bands,
        slowest,
    }
}

/// The reservoir's samples between its p40 and p60.
fn middle(reservoir: &[Kept]) -> Vec<&Kept> {
    let mut sorted: Vec<&Kept> = reservoir.iter().collect();
    sorted.sort_by_key(|k| k.latency_ns);
    let n = sorted.len();
    sorted.drain(n * 3 / 5..);
    sorted.drain(..n * 2 / 5);
    sorted
}

/// The mean time of each cause (round-trip ns) over `mid`.
fn baseline(mid: &[&Kept], of: &impl Fn(&Kept) -> Causes) -> BTreeMap<Cause, f64> {
    let mut sum: BTreeMap<Cause, f64> = BTreeMap::new();
    for k in mid {
        for (c, ns) in of(k).0 {
            *sum.entry(c).or_default() += ns as f64;
        }
    }
    for v in sum.values_mut() {
        *v /= mid.len().max(1) as f64;
    }
    sum
}

/// A sample's account: its causes' added times (one-way), fitted into its
/// time over the p50.
fn added(k: &Kept, c: &Causes, baseline: &BTreeMap<Cause, f64>, p50: u64) -> SampleAccount {
    let over = k.latency_ns.saturating_sub(p50);
    let mut each: Vec<(Cause, f64)> =
        c.0.iter()
            .map(|(cause, &ns)| {
                let base = baseline.get(cause).copied().unwrap_or(0.0);
                (cause.clone(), (ns as f64 - base).max(0.0) / 2.0)
            })
            .filter(|(_, ns)| *ns > 0.0)
            .collect();
    let total: f64 = each.iter().map(|(_, ns)| ns).sum();
    if total > over as f64 {
        let scale = over as f64 / total;
        each.iter_mut().for_each(|(_, ns)| *ns *= scale);
    }
    each.sort_by(|a, b| b.1.total_cmp(&a.1));
    let explained: f64 = each.iter().map(|(_, ns)| ns).sum();
    SampleAccount {
        latency_ns: k.latency_ns,
        at_ns: 0,
        added_ns: over,
        causes: each
            .into_iter()
            .map(|((cause, kind), ns)| CauseTime {
                cause,
                kind: kind.into(),
                ns: ns.round() as u64,
            })
            .collect(),
        unexplained_ns: (over as f64 - explained).max(0.0).round() as u64,
        migrations: 0,
        faults: 0,
    }
}

/// A band's samples summed.
#[derive(Default)]
struct BandSum {
    n: u64,
    added: f64,
    unexplained: f64,
    causes: BTreeMap<(String, String), f64>,
}

impl BandSum {
    fn add(&mut self, a: &SampleAccount) {
        self.n += 1;
        self.added += a.added_ns as f64;
        self.unexplained += a.unexplained_ns as f64;
        for c in &a.causes {
            *self
                .causes
                .entry((c.cause.clone(), c.kind.clone()))
                .or_default() += c.ns as f64;
        }
    }

    fn band(self, name: &str) -> Band {
        let total = self.added.max(1.0);
        let mut causes: Vec<Share> = Vec::new();
        let mut other = 0.0;
        for ((cause, kind), ns) in self.causes {
            causes.push(Share {
                cause,
                kind,
                share: ns / total,
            });
        }
        causes.sort_by(|a, b| b.share.total_cmp(&a.share));
        let first_other = causes
            .iter()
            .position(|c| c.share < LEAST_SHARE)
            .unwrap_or(causes.len())
            .min(MOST_CAUSES);
        for c in causes.drain(first_other..) {
            other += c.share;
        }
        if other > 0.0 {
            causes.push(Share {
                cause: "other causes".into(),
                kind: "other".into(),
                share: other,
            });
        }
        Band {
            band: name.into(),
            samples: self.n,
            added_ns: (self.added / self.n.max(1) as f64).round() as u64,
            causes,
            unexplained: if self.added > 0.0 {
                self.unexplained / total
            } else {
                0.0
            },
        }
    }
}

/// The causes in window `w` on every measuring CPU (round-trip ns).
fn causes(t: &Timeline, sides: &[Side], w: Span) -> Causes {
    let mut out = Causes::default();
    for (&cpu, c) in &t.cpus {
        let owners: Vec<&Side> = sides.iter().filter(|s| s.cpus.contains(&cpu)).collect();
        if owners.is_empty() {
            continue;
        }
        cpu_causes(c, &owners, sides, w, &mut out);
    }
    out
}

/// The causes on one CPU, whose `owners` are the sides pinned there.
fn cpu_causes(c: &Cpu, owners: &[&Side], sides: &[Side], w: Span, out: &mut Causes) {
    let label = owners
        .iter()
        .map(|s| s.name.as_str())
        .collect::<Vec<_>>()
        .join("/");
    let owned = |pid: u32| owners.iter().any(|s| s.pids.contains(&pid));
    let other_side = |pid: u32| sides.iter().any(|s| s.pids.contains(&pid));
    let waits: Vec<Span> = within(&c.waiting, w, c.longest_wait, |s| *s)
        .iter()
        .filter_map(|s| clip(*s, w))
        .collect();
    // The time an owner was ready or running: interrupts there held it up.
    let interrupted = |s: Span| -> u64 {
        within(&c.interrupts, s, c.longest_interrupt, |i| i.0)
            .iter()
            .map(|i| i.0.overlap(s))
            .sum()
    };
    let mut held: Vec<Span> = waits.clone();
    for r in within(&c.runs, w, c.longest_run, |r| r.span) {
        if owned(r.pid)
            && let Some(s) = clip(r.span, w)
        {
            held.push(s);
            let stolen = r.steal_within(s);
            out.add(STEAL.clone(), stolen);
            // Its time outside the waits (which say who held them up).
            let in_waits: u64 = waits.iter().map(|p| p.overlap(s)).sum();
            let whose = if r.tid == r.pid {
                format!("{label} running on its core")
            } else {
                format!("{label}'s other threads running on its core")
            };
            out.add(
                (whose, "own_work"),
                (s.end - s.start).saturating_sub(interrupted(s) + stolen + in_waits),
            );
        }
    }
    merge(&mut held);
    for s in held {
        for (span, what) in within(&c.interrupts, s, c.longest_interrupt, |i| i.0) {
            out.add((what.name(), what.kind()), span.overlap(s));
        }
    }
    for p in waits {
        let mut accounted = interrupted(p);
        for r in within(&c.runs, p, c.longest_run, |r| r.span) {
            let Some(s) = clip(r.span, p) else { continue };
            let stolen = r.steal_within(s);
            let ns = (s.end - s.start).saturating_sub(interrupted(s) + stolen);
            accounted += ns + stolen;
            out.add(STEAL.clone(), stolen);
            if owners.len() > 1 && owned(r.pid) || !owned(r.pid) && other_side(r.pid) {
                out.add(
                    (
                        "shared core: each side waits for the other's time slice".into(),
                        "shared_core",
                    ),
                    ns,
                );
            } else if owned(r.pid) {
                out.add(
                    (
                        format!("{label} waits for its own thread {}", r.name),
                        "own_thread",
                    ),
                    ns,
                );
            } else {
                out.add(
                    (
                        format!("{label} preempted by {} (pid {})", r.name, r.tid),
                        "preempted",
                    ),
                    ns,
                );
            }
        }
        for i in within(&c.idle, p, c.longest_idle, |s| *s) {
            let Some(s) = clip(*i, p) else { continue };
            let ns = (s.end - s.start).saturating_sub(interrupted(s));
            accounted += ns;
            out.add(("wake-up from idle".into(), "wake_from_idle"), ns);
        }
        out.add(
            (format!("{label} wake-up latency"), "wakeup"),
            (p.end - p.start).saturating_sub(accounted),
        );
    }
}

/// `s` within `w`, if they share any time.
fn clip(s: Span, w: Span) -> Option<Span> {
    let (start, end) = (s.start.max(w.start), s.end.min(w.end));
    (start < end).then_some(Span { start, end })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KernelEvent, Task};

    const PUB: u32 = 100;
    const SUB: u32 = 200;
    const P50: u64 = 10_000;

    fn sides(pub_cpu: u32, sub_cpu: u32) -> Vec<Side> {
        vec![
            Side {
                name: "publisher".into(),
                pids: vec![PUB],
                cpus: vec![pub_cpu],
            },
            Side {
                name: "subscriber".into(),
                pids: vec![SUB],
                cpus: vec![sub_cpu],
            },
        ]
    }

    fn task(tid: u32, pid: u32, name: &str) -> Task {
        Task {
            tid,
            pid,
            name: name.into(),
        }
    }

    /// The subscriber asleep from `left`, woken at `woken`, back at `back`.
    fn wait(cpu: u32, left: u64, woken: u64, back: u64, after: Task) -> KernelEvent {
        KernelEvent::OffCpu {
            tid: SUB,
            pid: SUB,
            cpu,
            left_ns: left,
            woken_ns: Some(woken),
            back_ns: back,
            preempted: false,
            left_for: task(0, 0, "swapper"),
            back_after: after,
        }
    }

    fn run(cpu: u32, t: Task, start: u64, end: u64) -> KernelEvent {
        KernelEvent::Run {
            cpu,
            task: t,
            start_ns: start,
            end_ns: end,
            steal_ns: 0,
        }
    }

    /// 100 samples at the p50, each 1 ms apart, whose subscriber is woken
    /// 2 µs before it runs (the median's own wake-up), and one slow sample
    /// at 10 ms with what `slow` says happened in it.
    fn recording(slow: impl FnOnce(u64, &mut Vec<KernelEvent>)) -> (Recording, TailSamples) {
        let mut events = Vec::new();
        let mut reservoir = Vec::new();
        for i in 0..100u64 {
            let s = i * 1_000_000;
            reservoir.push(Kept {
                latency_ns: P50,
                start_ns: s,
                end_ns: s + 2 * P50,
            });
            events.push(wait(1, s, s + 5_000, s + 7_000, task(0, 0, "swapper")));
        }
        let s = 200_000_000;
        slow(s, &mut events);
        let slow = Kept {
            latency_ns: P50 + 1_000_000,
            start_ns: s,
            end_ns: s + 2 * (P50 + 1_000_000),
        };
        let samples = TailSamples {
            slowest: vec![slow],
            reservoir,
            seen: 101,
        };
        (
            Recording {
                events,
                lost: 0,
                missing: Vec::new(),
                ..Recording::default()
            },
            samples,
        )
    }

    fn cuts() -> Cuts {
        Cuts {
            p50: P50,
            p90: P50,
            p99: P50,
            p999: P50 + 1,
        }
    }

    fn top(e: &Explanation) -> &Band {
        e.bands.iter().find(|b| b.band == "p99.9+").unwrap()
    }

    #[test]
    fn a_task_that_ran_while_the_subscriber_waited_is_named_for_the_added_time() {
        let (r, samples) = recording(|s, ev| {
            let hog = task(77, 77, "hog");
            ev.push(wait(1, s + 1_000, s + 5_000, s + 2_007_000, hog.clone()));
            ev.push(run(1, hog, s + 5_000, s + 2_005_000));
        });
        let e = account(&r, &sides(0, 1), &samples, cuts(), 0);
        let b = top(&e);
        assert_eq!(b.samples, 1);
        assert_eq!(b.added_ns, 1_000_000);
        assert_eq!(b.causes[0].cause, "subscriber preempted by hog (pid 77)");
        assert_eq!(b.causes[0].kind, "preempted");
        assert!(b.causes[0].share > 0.99, "{b:?}");
        assert_eq!(e.slowest[0].causes[0].ns, 1_000_000);
    }

    #[test]
    fn the_other_side_on_the_same_core_is_a_shared_core() {
        let (r, samples) = recording(|s, ev| {
            let publisher = task(PUB, PUB, "pubsubperf");
            ev.push(wait(
                1,
                s + 1_000,
                s + 5_000,
                s + 2_007_000,
                publisher.clone(),
            ));
            ev.push(run(1, publisher, s + 5_000, s + 2_005_000));
        });
        let e = account(&r, &sides(1, 1), &samples, cuts(), 0);
        let b = top(&e);
        assert_eq!(b.causes[0].kind, "shared_core", "{b:?}");
        assert!(b.causes[0].share > 0.99, "{b:?}");
    }

    #[test]
    fn an_interrupt_while_the_subscriber_runs_is_named_and_taken_out_of_its_task() {
        let (r, samples) = recording(|s, ev| {
            ev.push(run(1, task(SUB, SUB, "sub"), s, s + 2_020_000));
            ev.push(KernelEvent::Irq {
                cpu: 1,
                irq: 36,
                name: "virtio0-input".into(),
                start_ns: s + 10_000,
                end_ns: s + 2_010_000,
            });
        });
        let e = account(&r, &sides(0, 1), &samples, cuts(), 0);
        let b = top(&e);
        assert_eq!(b.causes[0].cause, "IRQ 36 virtio0-input");
        assert!(b.causes[0].share > 0.99, "{b:?}");
    }

    #[test]
    fn a_side_that_ran_its_own_code_for_long_is_named_for_it() {
        let (r, samples) = recording(|s, ev| {
            ev.push(run(
                1,
                task(SUB, SUB, "pubsubperf"),
                s + 5_000,
                s + 2_010_000,
            ));
        });
        let e = account(&r, &sides(0, 1), &samples, cuts(), 0);
        let b = top(&e);
        assert_eq!(b.causes[0].cause, "subscriber running on its core");
        assert!(b.causes[0].share > 0.99, "{b:?}");
    }

    #[test]
    fn the_hosts_steal_while_a_side_ran_is_named() {
        let (r, samples) = recording(|s, ev| {
            ev.push(KernelEvent::Run {
                cpu: 0,
                task: task(PUB, PUB, "pubsubperf"),
                start_ns: s,
                end_ns: s + 2_020_000,
                steal_ns: 2_000_000,
            });
        });
        let e = account(&r, &sides(0, 1), &samples, cuts(), 0);
        let b = top(&e);
        assert_eq!(b.causes[0].kind, "steal", "{b:?}");
        assert!(b.causes[0].share > 0.99, "{b:?}");
    }

    #[test]
    fn what_no_event_covers_is_unexplained_and_the_medians_own_wake_up_is_not_a_cause() {
        let (r, samples) = recording(|s, ev| {
            // The median's 2 µs wake-up, and nothing else.
            ev.push(wait(1, s, s + 5_000, s + 7_000, task(0, 0, "swapper")));
        });
        let e = account(&r, &sides(0, 1), &samples, cuts(), 0);
        let b = top(&e);
        assert!(b.causes.is_empty(), "{b:?}");
        assert_eq!(b.unexplained, 1.0);
    }

    #[test]
    fn a_wake_up_from_idle_is_its_idle_time_after_the_wake_up() {
        let (r, samples) = recording(|s, ev| {
            ev.push(wait(
                1,
                s + 1_000,
                s + 5_000,
                s + 2_005_000,
                task(0, 0, "swapper"),
            ));
            ev.push(KernelEvent::Idle {
                cpu: 1,
                state: 2,
                start_ns: s + 1_000,
                end_ns: s + 2_004_000,
            });
        });
        let e = account(&r, &sides(0, 1), &samples, cuts(), 0);
        let b = top(&e);
        assert_eq!(b.causes[0].kind, "wake_from_idle", "{b:?}");
        assert!(b.causes[0].share > 0.99, "{b:?}");
    }

    #[test]
    fn samples_after_the_first_lost_event_are_not_accounted() {
        let (mut r, samples) = recording(|_, _| {});
        r.lost = 5;
        let e = account(&r, &sides(0, 1), &samples, cuts(), 0);
        assert_eq!(top(&e).samples, 0);
        assert_eq!(e.uncovered, 1);
    }
}
