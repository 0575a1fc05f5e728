//! The records of the ring buffer, read into typed events.

use serde::Serialize;

/// A task by thread id and name (`comm`), as the kernel had it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    /// Thread id (0: the CPU's idle task).
    pub tid: u32,
    /// Its process (thread group) id.
    pub pid: u32,
    /// Its name, up to 15 bytes.
    pub name: String,
}

/// One thing the kernel did; times are CLOCK_MONOTONIC ns, the clock of
/// the harness's timestamps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KernelEvent {
    /// A measuring thread off its CPU, from leaving it to running again.
    OffCpu {
        tid: u32,
        /// Its process.
        pid: u32,
        /// The CPU it came back on.
        cpu: u32,
        left_ns: u64,
        /// When it was woken (None: preempted, so never asleep).
        woken_ns: Option<u64>,
        back_ns: u64,
        /// It left runnable (preempted) rather than to wait.
        preempted: bool,
        /// The task that got the CPU when it left.
        left_for: Task,
        /// The task that ran just before it came back.
        back_after: Task,
    },
    /// A hard interrupt's handler on a measuring CPU.
    Irq {
        cpu: u32,
        irq: u32,
        name: String,
        start_ns: u64,
        end_ns: u64,
    },
    /// A softirq on a measuring CPU (its vector: 3 NET_RX, 1 TIMER, ...).
    Softirq {
        cpu: u32,
        vector: u32,
        start_ns: u64,
        end_ns: u64,
    },
    /// The scheduler's inter-processor interrupt on a measuring CPU.
    Ipi {
        cpu: u32,
        vector: u32,
        start_ns: u64,
        end_ns: u64,
    },
    /// A measuring CPU idle, in the given state.
    Idle {
        cpu: u32,
        state: u32,
        start_ns: u64,
        end_ns: u64,
    },
    /// A page fault of a measuring thread.
    Fault {
        tid: u32,
        pid: u32,
        cpu: u32,
        at_ns: u64,
        address: u64,
    },
    /// A measuring thread moved to another CPU.
    Migrate {
        tid: u32,
        pid: u32,
        at_ns: u64,
        to_cpu: u32,
    },
    /// A task's time on a measuring CPU, from its switch in to its switch
    /// out (the idle task's is in [`KernelEvent::Idle`]).
    Run {
        cpu: u32,
        task: Task,
        start_ns: u64,
        end_ns: u64,
        /// Of that time, the host ran something else instead of this
        /// virtual CPU (a KVM guest's steal time; 0 on bare metal).
        steal_ns: u64,
    },
}

/// The record's layout (struct event of src/bpf/record.bpf.c).
const SIZE: usize = 96;
const COMM: usize = 16;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn name_at(b: &[u8], at: usize) -> String {
    let s = &b[at..at + COMM];
    let end = s.iter().position(|&c| c == 0).unwrap_or(COMM);
    String::from_utf8_lossy(&s[..end]).into_owned()
}

/// The layout of a measuring CPU's state (struct inside of
/// src/bpf/record.bpf.c), read back as the recording ends.
const INSIDE_SIZE: usize = 112;

/// What a CPU was inside of as the recording ended: the run or idle period
/// still open then, closed at `end_ns`. None for a CPU that had no event
/// during the recording (its state is unknown, so nothing is made up).
pub(crate) fn still_open(b: &[u8], cpu: u32, end_ns: u64) -> Option<KernelEvent> {
    if b.len() < INSIDE_SIZE || u32_at(b, 80) == 0 {
        return None;
    }
    let (run_start, idle_start) = (u64_at(b, 0), u64_at(b, 32));
    if run_start != 0 && run_start <= end_ns {
        return Some(KernelEvent::Run {
            cpu,
            task: Task {
                tid: u32_at(b, 84),
                pid: u32_at(b, 88),
                name: name_at(b, 96),
            },
            start_ns: run_start,
            end_ns,
            // The run queue's steal count is read at switches: what the
            // host took since the last one is not known here.
            steal_ns: 0,
        });
    }
    (idle_start != 0 && idle_start <= end_ns).then_some(KernelEvent::Idle {
        cpu,
        state: u32_at(b, 56),
        start_ns: idle_start,
        end_ns,
    })
}

impl KernelEvent {
    /// Reads one ring-buffer record; None for a record of another size or
    /// an unknown kind (a program of another version).
    pub(crate) fn parse(b: &[u8]) -> Option<KernelEvent> {
        if b.len() != SIZE {
            return None;
        }
        let (start, end, mid) = (u64_at(b, 0), u64_at(b, 8), u64_at(b, 16));
        let (kind, cpu, tid, num) = (u32_at(b, 24), u32_at(b, 28), u32_at(b, 32), u32_at(b, 36));
        let pid = u32_at(b, 80);
        let task = |tid_at: usize, pid_at: usize, name: usize| Task {
            tid: u32_at(b, tid_at),
            pid: u32_at(b, pid_at),
            name: name_at(b, name),
        };
        Some(match kind {
            1 => KernelEvent::OffCpu {
                tid,
                pid,
                cpu,
                left_ns: start,
                woken_ns: (mid != 0).then_some(mid),
                back_ns: end,
                preempted: num != 0,
                left_for: task(40, 84, 48),
                back_after: task(44, 88, 64),
            },
            2 => KernelEvent::Irq {
                cpu,
                irq: num,
                name: name_at(b, 48),
                start_ns: start,
                end_ns: end,
            },
            3 => KernelEvent::Softirq {
                cpu,
                vector: num,
                start_ns: start,
                end_ns: end,
            },
            4 => KernelEvent::Idle {
                cpu,
                state: num,
                start_ns: start,
                end_ns: end,
            },
            5 => KernelEvent::Fault {
                tid,
                pid,
                cpu,
                at_ns: start,
                address: mid,
            },
            6 => KernelEvent::Migrate {
                tid,
                pid,
                at_ns: start,
                to_cpu: num,
            },
            8 => KernelEvent::Run {
                cpu,
                task: Task {
                    tid,
                    pid,
                    name: name_at(b, 48),
                },
                start_ns: start,
                end_ns: end,
                steal_ns: mid,
            },
            7 => KernelEvent::Ipi {
                cpu,
                vector: num,
                start_ns: start,
                end_ns: end,
            },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u32, fill: impl FnOnce(&mut [u8])) -> Vec<u8> {
        let mut b = vec![0u8; SIZE];
        b[24..28].copy_from_slice(&kind.to_ne_bytes());
        fill(&mut b);
        b
    }

    #[test]
    fn an_off_cpu_record_reads_back_with_both_tasks() {
        let b = record(1, |b| {
            b[0..8].copy_from_slice(&100u64.to_ne_bytes());
            b[8..16].copy_from_slice(&300u64.to_ne_bytes());
            b[16..24].copy_from_slice(&250u64.to_ne_bytes());
            b[28..32].copy_from_slice(&1u32.to_ne_bytes());
            b[32..36].copy_from_slice(&42u32.to_ne_bytes());
            b[40..44].copy_from_slice(&7u32.to_ne_bytes());
            b[44..48].copy_from_slice(&9u32.to_ne_bytes());
            b[48..54].copy_from_slice(b"kworke");
            b[64..68].copy_from_slice(b"ksof");
            b[80..84].copy_from_slice(&40u32.to_ne_bytes());
            b[84..88].copy_from_slice(&7u32.to_ne_bytes());
            b[88..92].copy_from_slice(&8u32.to_ne_bytes());
        });
        assert_eq!(
            KernelEvent::parse(&b),
            Some(KernelEvent::OffCpu {
                tid: 42,
                pid: 40,
                cpu: 1,
                left_ns: 100,
                woken_ns: Some(250),
                back_ns: 300,
                preempted: false,
                left_for: Task {
                    tid: 7,
                    pid: 7,
                    name: "kworke".into()
                },
                back_after: Task {
                    tid: 9,
                    pid: 8,
                    name: "ksof".into()
                },
            })
        );
    }

    #[test]
    fn a_record_of_another_size_or_kind_is_not_read() {
        assert_eq!(KernelEvent::parse(&[0u8; 64]), None);
        assert_eq!(KernelEvent::parse(&record(99, |_| {})), None);
    }

    fn inside(fill: impl FnOnce(&mut [u8])) -> Vec<u8> {
        let mut b = vec![0u8; INSIDE_SIZE];
        fill(&mut b);
        b
    }

    #[test]
    fn the_run_open_at_the_end_is_closed_there_with_its_task() {
        let b = inside(|b| {
            b[0..8].copy_from_slice(&100u64.to_ne_bytes());
            b[32..40].copy_from_slice(&50u64.to_ne_bytes());
            b[80..84].copy_from_slice(&1u32.to_ne_bytes());
            b[84..88].copy_from_slice(&42u32.to_ne_bytes());
            b[88..92].copy_from_slice(&40u32.to_ne_bytes());
            b[96..99].copy_from_slice(b"yes");
        });
        assert_eq!(
            still_open(&b, 1, 900),
            Some(KernelEvent::Run {
                cpu: 1,
                task: Task {
                    tid: 42,
                    pid: 40,
                    name: "yes".into()
                },
                start_ns: 100,
                end_ns: 900,
                steal_ns: 0,
            })
        );
    }

    #[test]
    fn an_idle_period_open_at_the_end_is_closed_there() {
        let b = inside(|b| {
            b[32..40].copy_from_slice(&50u64.to_ne_bytes());
            b[56..60].copy_from_slice(&2u32.to_ne_bytes());
            b[80..84].copy_from_slice(&1u32.to_ne_bytes());
        });
        assert_eq!(
            still_open(&b, 0, 900),
            Some(KernelEvent::Idle {
                cpu: 0,
                state: 2,
                start_ns: 50,
                end_ns: 900,
            })
        );
    }

    #[test]
    fn a_cpu_without_an_event_is_not_made_up() {
        let b = inside(|b| b[0..8].copy_from_slice(&100u64.to_ne_bytes()));
        assert_eq!(still_open(&b, 0, 900), None);
        assert_eq!(still_open(&[0u8; 16], 0, 900), None);
    }
}
