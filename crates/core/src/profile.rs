//! `--profile`: what one side's process did per sample during a run's
//! profiled window (`profile.publisher` / `profile.subscribers[i]` in
//! results): system calls by name with the time spent in them, context
//! switches, user and system CPU time.

use serde::{Deserialize, Serialize};

/// The profiles of every side of a run (`profile` in results).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunProfile {
    /// The publisher's process (this one).
    pub publisher: SideProfile,
    /// Each subscriber's process, by subscriber index.
    pub subscribers: Vec<SideProfile>,
    /// The same cell measured just before without a tracer, for the
    /// tracer's effect on the figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unprofiled: Option<Unprofiled>,
}

/// The figures of the unprofiled run of a profiled cell.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Unprofiled {
    /// One-way latency p50, ns (latency runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ns: Option<u64>,
    /// Samples received per second (throughput runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples_per_s: Option<f64>,
}

/// One side's profile.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SideProfile {
    /// How the system calls were counted: `perf trace -s`, `strace -c -f`,
    /// or `none` (no tracer: only the kernel's per-process counters).
    pub method: String,
    /// Why there are no system-call figures (no tracer found, the tracer
    /// failed or reported nothing), when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The samples this side handled in the window: the divisor of every
    /// per-sample figure (see `samples_are`).
    pub samples: u64,
    /// What `samples` counts, e.g. `pings sent (warm-up included)`.
    pub samples_are: String,
    /// Length of the window, seconds: from the tracer's attach (after
    /// set-up and discovery, before the warm-up) to the end of this side's
    /// loop.
    pub window_s: f64,
    /// System calls in the window, most frequent first.
    pub syscalls: Vec<SyscallCount>,
    /// What the tracer added to one system call, ns: the mean time of a
    /// `getppid` with the tracer attached minus without it, measured on
    /// this process just before the window (those calls are not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracer_cost_ns: Option<f64>,
    /// Voluntary context switches in the window (all threads).
    pub voluntary_cs: u64,
    /// Involuntary context switches in the window (all threads).
    pub involuntary_cs: u64,
    /// User CPU time in the window, ms (all threads).
    pub user_ms: f64,
    /// System CPU time in the window, ms (all threads).
    pub system_ms: f64,
    /// The busiest threads in the window (most CPU time first, at most
    /// [`TOP_THREADS`]), from the kernel's per-thread counters; empty in
    /// profiles of earlier versions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub threads: Vec<ThreadProfile>,
}

/// Threads kept per side in [`SideProfile::threads`].
pub const TOP_THREADS: usize = 5;

/// What one thread of a side did in the window: the differences of its
/// counters in `/proc/PID/task/TID/stat` and `status` between the attach
/// and the end of the loop (a thread started in the window counts from 0;
/// one that ended in it is missing).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ThreadProfile {
    /// The thread's name (`/proc/PID/task/TID/comm`: at most 15 bytes,
    /// e.g. `recvUC`, `pubsubperf`).
    pub name: String,
    /// Its thread id.
    pub tid: u32,
    /// User CPU time, ms.
    pub user_ms: f64,
    /// System CPU time, ms.
    pub system_ms: f64,
    /// Voluntary context switches (it blocked or slept).
    pub voluntary_cs: u64,
    /// Involuntary context switches (it was preempted).
    pub involuntary_cs: u64,
}

/// One system call's count and time in a window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SyscallCount {
    /// The system call's name (`sendto`, `futex`, ...).
    pub name: String,
    /// Calls.
    pub calls: u64,
    /// Calls that returned an error (`EAGAIN` of a non-blocking read, a
    /// timed-out futex wait ...).
    pub errors: u64,
    /// Time spent inside the calls, µs, blocked time included.
    pub time_us: f64,
}

impl SideProfile {
    /// `n` per sample (0 without samples).
    pub fn per_sample(&self, n: f64) -> f64 {
        if self.samples == 0 {
            0.0
        } else {
            n / self.samples as f64
        }
    }

    /// Every system call in the window.
    pub fn total_calls(&self) -> u64 {
        self.syscalls.iter().map(|s| s.calls).sum()
    }

    /// `futex` calls: waits and wakes of locks and condition variables.
    pub fn futex_calls(&self) -> u64 {
        self.syscalls
            .iter()
            .filter(|s| s.name == "futex")
            .map(|s| s.calls)
            .sum()
    }
}

/// Adds `more` into `into` by name (threads' or calls' tables), keeping the
/// most frequent first.
pub fn merge_syscalls(into: &mut Vec<SyscallCount>, more: impl IntoIterator<Item = SyscallCount>) {
    for m in more {
        match into.iter_mut().find(|s| s.name == m.name) {
            Some(s) => {
                s.calls += m.calls;
                s.errors += m.errors;
                s.time_us += m.time_us;
            }
            None => into.push(m),
        }
    }
    into.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.name.cmp(&b.name)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str, calls: u64) -> SyscallCount {
        SyscallCount {
            name: name.into(),
            calls,
            errors: 0,
            time_us: calls as f64,
        }
    }

    #[test]
    fn merge_adds_by_name_most_frequent_first() {
        let mut t = vec![c("read", 3)];
        merge_syscalls(&mut t, [c("futex", 2), c("read", 1), c("sendto", 9)]);
        let names: Vec<_> = t.iter().map(|s| (s.name.as_str(), s.calls)).collect();
        assert_eq!(names, [("sendto", 9), ("read", 4), ("futex", 2)]);
        assert_eq!(t[1].time_us, 4.0);
    }

    #[test]
    fn per_sample_divides_by_samples() {
        let p = SideProfile {
            samples: 4,
            syscalls: vec![c("futex", 2), c("sendto", 8)],
            ..Default::default()
        };
        assert_eq!(p.per_sample(p.total_calls() as f64), 2.5);
        assert_eq!(p.futex_calls(), 2);
        assert_eq!(SideProfile::default().per_sample(5.0), 0.0);
    }
}
