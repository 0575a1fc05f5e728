//! The probes against workloads with known answers: threads that block,
//! a thread preempted by a named competitor, a CPU that idles. Needs root
//! and a kernel with BTF (the test fails naming what is missing).

use pubsubperf_explain::{KernelEvent, Recorder, Recording};
use std::sync::mpsc;
use std::time::Duration;

const RING: u32 = 1 << 24;

fn require_root() {
    // SAFETY: geteuid has no preconditions.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "these tests load eBPF programs: run them as root"
    );
    assert!(
        std::path::Path::new("/sys/kernel/btf/vmlinux").exists(),
        "the kernel has no BTF (/sys/kernel/btf/vmlinux)"
    );
}

fn tid() -> u32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() as u32 }
}

fn pin(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET and
    // sched_setaffinity get a valid pointer to it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set),
            0,
            "pinning to CPU {cpu}"
        );
    }
}

/// A real-time policy for the calling thread: no ordinary task preempts
/// it, so what the test sees is the test's own doing whatever else the
/// machine runs.
fn realtime(policy: libc::c_int, priority: i32) {
    let p = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: a valid sched_param for the calling thread.
    let rc = unsafe { libc::sched_setscheduler(0, policy, &p) };
    assert_eq!(rc, 0, "a real-time policy for the test's threads");
}

/// The tests pin threads to the same CPUs: one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn cpus() -> (usize, usize) {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        n >= 2,
        "these tests pin two threads to two CPUs; this machine has {n}"
    );
    (0, 1)
}

fn off_cpu(r: &Recording, of: u32) -> Vec<&KernelEvent> {
    r.events
        .iter()
        .filter(|e| matches!(e, KernelEvent::OffCpu { tid, .. } if *tid == of))
        .collect()
}

/// A thread that answers 50 pings on a pipe, each written 2 ms after its
/// previous answer arrived, is off its CPU at least once per ping: it
/// blocks in read(2), or, had it been kept from its read for 2 ms, it was
/// off its CPU then. Each wait is woken after it left and before it ran
/// again. (Pings written on a clock of their own queue up behind a waiter
/// woken late: on a busy machine a real-time thread's wake-up waited up to
/// 16 ms for a kernel section of another task to end, and the next read
/// then found its byte without waiting.)
#[test]
fn a_blocking_thread_is_off_its_cpu_once_per_wait_and_woken_each_time() {
    require_root();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (a, b) = cpus();
    let (tid_tx, tid_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (mut ping_rx, mut ping_tx) = std::io::pipe().expect("a pipe");
    let (mut pong_rx, mut pong_tx) = std::io::pipe().expect("a pipe");
    let recorder = Recorder::start(&[a, b], RING).expect("starting the recorder");
    let waiter = std::thread::spawn(move || {
        realtime(libc::SCHED_FIFO, 10);
        pin(a);
        tid_tx.send(tid()).unwrap();
        go_rx.recv().unwrap();
        for _ in 0..50 {
            std::io::Read::read_exact(&mut ping_rx, &mut [0u8]).unwrap();
            std::io::Write::write_all(&mut pong_tx, b"p").unwrap();
        }
    });
    let waiter_tid = tid_rx.recv().unwrap();
    recorder.watch(waiter_tid).unwrap();
    let pinger = std::thread::spawn(move || {
        realtime(libc::SCHED_FIFO, 10);
        pin(b);
        go_tx.send(()).unwrap();
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(2));
            std::io::Write::write_all(&mut ping_tx, b"p").unwrap();
            std::io::Read::read_exact(&mut pong_rx, &mut [0u8]).unwrap();
        }
    });
    pinger.join().unwrap();
    waiter.join().unwrap();
    let r = recorder.finish().unwrap();
    assert_eq!(r.lost, 0);
    assert!(r.missing.is_empty(), "missing probes: {:?}", r.missing);
    // A wait whose wake-up comes between the thread's setting itself
    // asleep and its switch leaves runnable, and reads as a preemption:
    // most are waits all the same.
    let offs = off_cpu(&r, waiter_tid);
    let trace: Vec<String> = offs
        .iter()
        .map(|o| match o {
            KernelEvent::OffCpu {
                left_ns,
                woken_ns,
                back_ns,
                preempted,
                left_for,
                ..
            } => format!(
                "{} {}us away{} (woken after {:?}us, for {})",
                left_ns / 1000,
                (back_ns - left_ns) / 1000,
                if *preempted { " preempted" } else { "" },
                woken_ns.map(|w| (w - left_ns) / 1000),
                left_for.name
            ),
            _ => unreachable!(),
        })
        .collect();
    assert!(
        offs.len() >= 50,
        "{} off-CPU periods for 50 waits: {trace:#?}",
        offs.len()
    );
    let mut woken = 0;
    for o in &offs {
        let KernelEvent::OffCpu {
            left_ns,
            woken_ns,
            back_ns,
            ..
        } = o
        else {
            unreachable!()
        };
        assert!(left_ns <= back_ns, "{o:?}");
        if let Some(w) = woken_ns {
            assert!(left_ns <= w && w <= back_ns, "{o:?}");
            woken += 1;
        }
    }
    assert!(woken >= 45, "{woken} of 50 waits ended by a wake-up");
}

/// A busy thread (SCHED_FIFO 10) sharing its CPU with a thread named
/// "competitor" of a higher priority (SCHED_FIFO 20) that wakes every 5 ms
/// and works for 1 ms is preempted by it, and the record names it.
#[test]
fn a_preempted_thread_names_the_task_that_took_its_cpu() {
    require_root();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (_, b) = cpus();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spin = |stop: &std::sync::atomic::AtomicBool| {
        while !stop.load(std::sync::atomic::Ordering::Relaxed) {
            std::hint::spin_loop();
        }
    };
    let recorder = Recorder::start(&[b], RING).expect("starting the recorder");
    let (tid_tx, tid_rx) = mpsc::channel();
    let s = stop.clone();
    let competitor = std::thread::Builder::new()
        .name("competitor".into())
        .spawn(move || {
            // The policy first: a CFS thread moved onto a CPU a
            // SCHED_FIFO thread spins on would wait there for the
            // real-time throttle's 5 %.
            realtime(libc::SCHED_FIFO, 20);
            pin(b);
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
                let t = std::time::Instant::now();
                while t.elapsed() < Duration::from_millis(1) {
                    std::hint::spin_loop();
                }
            }
        })
        .unwrap();
    let s = stop.clone();
    let victim = std::thread::spawn(move || {
        realtime(libc::SCHED_FIFO, 10);
        pin(b);
        tid_tx.send(tid()).unwrap();
        spin(&s);
    });
    recorder.watch(tid_rx.recv().unwrap()).unwrap();
    std::thread::sleep(Duration::from_millis(450));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    victim.join().unwrap();
    competitor.join().unwrap();
    let r = recorder.finish().unwrap();
    let offs: Vec<_> = r
        .events
        .iter()
        .filter(|e| matches!(e, KernelEvent::OffCpu { .. }))
        .collect();
    let by_competitor = offs.iter().filter(|e| {
        matches!(e, KernelEvent::OffCpu { preempted: true, left_for, .. } if left_for.name == "competitor")
    });
    assert!(
        by_competitor.count() > 0,
        "no preemption by competitor in {offs:?} ({} events, {} lost)",
        r.events.len(),
        r.lost
    );
}

/// CPU `cpu`'s idle time so far, ns, as /proc/stat counts it (the
/// kernel's own idle accounting, nanoseconds shown in USER_HZ ticks).
fn proc_stat_idle_ns(cpu: usize) -> u64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let line = stat
        .lines()
        .find(|l| l.starts_with(&format!("cpu{cpu} ")))
        .expect("a line per CPU in /proc/stat");
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    let idle: u64 = line.split_whitespace().nth(4).unwrap().parse().unwrap();
    idle * 1_000_000_000 / hz
}

/// The idle periods recorded on a watched CPU over 300 ms add up to what
/// the kernel's own accounting (/proc/stat) says it idled, within its
/// 10 ms ticks and 10 %: on a busy machine both are near 0, on a quiet one
/// near 300 ms.
#[test]
fn a_cpus_idle_periods_add_up_to_its_idle_time() {
    require_root();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (_, b) = cpus();
    let recorder = Recorder::start(&[b], RING).expect("starting the recorder");
    let before = proc_stat_idle_ns(b);
    std::thread::sleep(Duration::from_millis(300));
    let kernel = proc_stat_idle_ns(b) - before;
    let r = recorder.finish().unwrap();
    let recorded: u64 = r
        .events
        .iter()
        .filter_map(|e| match e {
            KernelEvent::Idle {
                cpu,
                start_ns,
                end_ns,
                ..
            } if *cpu as usize == b => Some(end_ns - start_ns),
            _ => None,
        })
        .sum();
    let slack = 20_000_000 + kernel / 10;
    assert!(
        recorded.abs_diff(kernel) <= slack,
        "recorded idle {recorded} ns, /proc/stat {kernel} ns"
    );
}

/// A thread that runs through the whole recording without ever being
/// switched (real-time, alone on its CPU, a busy loop begun before the
/// probes and ended after them) is accounted from the recording's start
/// to its end: the probes see no switch of it, so its time comes from
/// the CPU's state at the first and the last instant.
#[test]
fn a_task_never_switched_during_the_recording_is_accounted_all_along() {
    require_root();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (_, b) = cpus();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tid_tx, tid_rx) = mpsc::channel();
    let spinner = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            pin(b);
            realtime(libc::SCHED_FIFO, 10);
            tid_tx.send(tid()).unwrap();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        })
    };
    let spinner_tid = tid_rx.recv().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let recorder = Recorder::start(&[b], RING).expect("starting the recorder");
    std::thread::sleep(Duration::from_millis(300));
    let r = recorder.finish().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    spinner.join().unwrap();
    let span = r.end_ns - r.start_ns;
    let ran: u64 = r
        .events
        .iter()
        .filter_map(|e| match e {
            KernelEvent::Run {
                cpu,
                task,
                start_ns,
                end_ns,
                ..
            } if *cpu as usize == b && task.tid == spinner_tid => Some(end_ns - start_ns),
            _ => None,
        })
        .sum();
    // Real-time tasks above it (migration/N) and interrupts may take a
    // little; the spinner's time is the rest.
    assert!(
        ran * 10 >= span * 9,
        "the spinner ran {ran} ns of the {span} ns recorded on CPU {b}; its records: {:#?}",
        r.events
            .iter()
            .filter(|e| matches!(e, KernelEvent::Run { cpu, .. } if *cpu as usize == b))
            .collect::<Vec<_>>()
    );
}

/// A watched process is watched in every thread, named by its process id:
/// a shell that waits for three `sleep`s in turn is off its CPU while each
/// runs, and each of its records names the shell's process; its children
/// (processes of their own) are not watched.
#[test]
fn a_watched_process_is_seen_in_its_own_threads_only() {
    require_root();
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let (a, b) = cpus();
    let recorder = Recorder::start(&[a, b], RING).expect("starting the recorder");
    let mut shell = std::process::Command::new("sh")
        .args(["-c", "read _; sleep 0.05; sleep 0.05; sleep 0.05"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("sh");
    let pid = shell.id();
    recorder.watch_process(pid).unwrap();
    std::io::Write::write_all(shell.stdin.as_mut().unwrap(), b"go\n").unwrap();
    assert!(shell.wait().unwrap().success());
    let r = recorder.finish().unwrap();
    let mut pids: Vec<u32> = r
        .events
        .iter()
        .filter_map(|e| match e {
            KernelEvent::OffCpu { pid, tid, .. } => Some((*pid, *tid)),
            _ => None,
        })
        .map(|(p, t)| {
            assert_eq!(p, t, "the shell has one thread");
            p
        })
        .collect();
    let waits = pids.len();
    pids.dedup();
    assert_eq!(pids, vec![pid], "off-CPU records of the shell only");
    assert!(
        waits >= 3,
        "the shell waits for each of its three sleeps: {waits} waits"
    );
}
