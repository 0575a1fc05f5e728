//! `--profile`: a side (the publisher's process, each subscriber's) attaches
//! a system-call tracer to itself after set-up and discovery and detaches it
//! when its loop ends, so that the window holds the warm-up and the measured
//! samples and nothing else.
//!
//! The tracer, in order of preference: `strace -c -f -p PID` (ptrace:
//! counts and time per system call of every thread, threads started later
//! included), then `perf trace -s -p PID` (kernel tracepoints: the same
//! table per thread). strace comes first because it disturbs a run less on
//! small machines: on a 2-core VM perf trace's reader, competing for the
//! cores, slowed a udp ping-pong from 21 µs to 2 ms per ping (about 300
//! pings/s), strace to about 5400 pings/s.
//! `PUBSUBPERF_PROFILER=strace|perf|none` forces one (`none`: no
//! tracer); a tracer is looked for in `PATH`. Without one, the profile says
//! why and keeps the kernel's own counters (`getrusage`: context switches,
//! user and system CPU time of every thread).
//!
//! The busiest threads of the side (by name, their CPU time and context
//! switches in the window) come from the kernel's per-thread counters
//! (`threads`), with or without a tracer.
//!
//! A tracer slows every system call: before the window, this process times
//! `getppid` calls without and with the tracer attached and records the
//! difference ([`SideProfile::tracer_cost_ns`]); those calls are taken out
//! of the table.

mod parse;
mod threads;

use pubsubperf_core::clock;
use pubsubperf_core::profile::SideProfile;
use pubsubperf_core::sys::Usage;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `getppid` calls per calibration batch, and batches per side of it.
const BATCH: u64 = 200;
const BATCHES: u64 = 5;

/// The tracers tried, in this order, unless `PUBSUBPERF_PROFILER` names one.
const DEFAULT_ORDER: [Tool; 2] = [Tool::Strace, Tool::Perf];

/// A tracer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Perf,
    Strace,
}

impl Tool {
    fn program(self) -> &'static str {
        match self {
            Tool::Perf => "perf",
            Tool::Strace => "strace",
        }
    }

    fn method(self) -> &'static str {
        match self {
            Tool::Perf => "perf trace -s",
            Tool::Strace => "strace -c -f",
        }
    }

    fn command(self, exe: &Path, pid: u32, out: &Path) -> Command {
        let mut c = Command::new(exe);
        let pid = pid.to_string();
        match self {
            Tool::Perf => c.args(["trace", "-s", "-p", &pid, "-o"]),
            Tool::Strace => c.args(["-c", "-f", "-q", "-p", &pid, "-o"]),
        };
        c.arg(out)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        c
    }
}

/// A tracer attached to this process.
struct Tracer {
    tool: Tool,
    child: Child,
    /// The tracer's output file, in `_dir`.
    out: PathBuf,
    /// A private directory (mode 0700, made by mkdtemp) for `out`, so that
    /// no link planted in /tmp redirects the tracer's write; removed with
    /// it.
    _dir: tempfile::TempDir,
}

impl Drop for Tracer {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        // `_dir` goes next, with the file.
    }
}

/// One side's profiler, from attach to [`Profiler::finish`].
pub struct Profiler {
    tracer: Option<Tracer>,
    note: Option<String>,
    cost_ns: Option<f64>,
    usage0: Usage,
    threads0: Vec<threads::Counters>,
    t0: u64,
}

impl Profiler {
    /// Attaches the tracer to this process and waits until it traces (at
    /// most a few seconds); without one, notes why.
    pub fn attach() -> Profiler {
        let (tools, mut note) = match std::env::var("PUBSUBPERF_PROFILER").as_deref() {
            Ok("perf") => (vec![Tool::Perf], None),
            Ok("strace") => (vec![Tool::Strace], None),
            Ok("none") => (
                vec![],
                Some("no tracer: PUBSUBPERF_PROFILER=none".to_string()),
            ),
            _ => (DEFAULT_ORDER.to_vec(), None),
        };
        // Read before the tracer attaches and after it stops, so that the
        // reads are not in its table (a few calls per thread).
        let threads0 = threads::snapshot();
        let before = fastest_getppid_ns();
        let mut tracer = None;
        let mut failed = Vec::new();
        for tool in tools.iter().copied() {
            let Some(exe) = find_in_path(tool.program()) else {
                failed.push(format!("{} not found in PATH", tool.program()));
                continue;
            };
            match start(tool, &exe) {
                Ok(t) => {
                    tracer = Some(t);
                    break;
                }
                Err(why) => failed.push(why),
            }
        }
        if tracer.is_none() && note.is_none() {
            note = Some(format!(
                "no tracer: {} (install Debian strace or linux-perf)",
                failed.join("; ")
            ));
        }
        let cost_ns = tracer
            .as_ref()
            .map(|_| (fastest_getppid_ns() - before).max(0.0));
        Profiler {
            tracer,
            note,
            cost_ns,
            usage0: Usage::now(),
            threads0,
            t0: clock::now_ns(),
        }
    }

    /// Detaches the tracer and returns the profile of the window, per
    /// `samples` (which count `samples_are`).
    pub fn finish(mut self, samples: u64, samples_are: &str) -> SideProfile {
        let r = Usage::now().since(&self.usage0);
        let window_s = (clock::now_ns() - self.t0) as f64 / 1e9;
        let mut p = SideProfile {
            method: "none".into(),
            note: self.note.take(),
            samples,
            samples_are: samples_are.into(),
            window_s,
            syscalls: Vec::new(),
            tracer_cost_ns: self.cost_ns,
            voluntary_cs: r.voluntary_cs,
            involuntary_cs: r.involuntary_cs,
            user_ms: r.cpu_user_percent * window_s * 10.0,
            system_ms: r.cpu_system_percent * window_s * 10.0,
            threads: Vec::new(),
        };
        if let Some(t) = self.tracer.take() {
            p.method = t.tool.method().into();
            match stop(t) {
                Ok(mut calls) => {
                    // The calibration's calls are not the run's.
                    if let Some(i) = calls.iter().position(|c| c.name == "getppid") {
                        let c = &mut calls[i];
                        let n = c.calls.min(BATCH * BATCHES);
                        c.time_us -= c.time_us * n as f64 / c.calls as f64;
                        c.calls -= n;
                        if c.calls == 0 {
                            calls.remove(i);
                        }
                    }
                    if calls.is_empty() {
                        p.note = Some(format!(
                            "{} reported no system call in the window",
                            p.method
                        ));
                    }
                    p.syscalls = calls;
                }
                Err(why) => p.note = Some(why),
            }
        }
        p.threads = threads::busiest(&self.threads0, &threads::snapshot(), threads::tick_ms());
        p
    }
}

/// Starts `tool` on this process and waits until it traces it.
fn start(tool: Tool, exe: &Path) -> Result<Tracer, String> {
    let pid = std::process::id();
    let dir = tempfile::Builder::new()
        .prefix(&format!("pubsubperf-profile-{pid}-"))
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .map_err(|e| format!("a directory for {}'s output: {e}", tool.program()))?;
    let out = dir.path().join("trace.txt");
    let child = tool
        .command(exe, pid, &out)
        .spawn()
        .map_err(|e| format!("{}: {e}", exe.display()))?;
    let mut t = Tracer {
        tool,
        child,
        out,
        _dir: dir,
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(Some(status)) = t.child.try_wait() {
            return Err(format!(
                "{} exited ({status}) before attaching: {}",
                tool.program(),
                first_line(&mut t.child)
            ));
        }
        if attached(&t) {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("{} did not attach within 10 s", tool.program()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if tool == Tool::Perf {
        // perf has opened its events; let it enable them all. Spinning on
        // the vDSO clock: a sleep would be a system call in the window.
        clock::spin_until(clock::now_ns() + 300_000_000);
    }
    Ok(t)
}

/// Whether the tracer traces this process: strace ptrace-attached to every
/// thread; perf holds its events open.
fn attached(t: &Tracer) -> bool {
    match t.tool {
        Tool::Strace => std::fs::read_dir("/proc/self/task").is_ok_and(|d| {
            d.flatten().all(|e| {
                std::fs::read_to_string(e.path().join("status")).is_ok_and(|s| {
                    s.lines()
                        .find_map(|l| l.strip_prefix("TracerPid:"))
                        .is_some_and(|v| v.trim() != "0")
                })
            })
        }),
        Tool::Perf => std::fs::read_dir(format!("/proc/{}/fd", t.child.id())).is_ok_and(|d| {
            d.flatten().any(|e| {
                std::fs::read_link(e.path())
                    .is_ok_and(|l| l.to_string_lossy().contains("perf_event"))
            })
        }),
    }
}

/// Stops the tracer (SIGINT: it detaches and writes its summary) and reads
/// its table.
fn stop(mut t: Tracer) -> Result<Vec<pubsubperf_core::profile::SyscallCount>, String> {
    // SAFETY: a signal to our own child, which we have not waited for yet.
    unsafe { libc::kill(t.child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match t.child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                return Err(format!(
                    "{} did not stop within 10 s of SIGINT",
                    t.tool.program()
                ));
            }
        }
    };
    let text = std::fs::read_to_string(&t.out).unwrap_or_default();
    let calls = match t.tool {
        Tool::Perf => parse::perf_trace(&text),
        Tool::Strace => parse::strace(&text),
    };
    if calls.is_empty() && !status.success() {
        return Err(format!(
            "{} failed ({status}): {}",
            t.tool.program(),
            first_line(&mut t.child)
        ));
    }
    Ok(calls)
}

/// The first line the tracer wrote to its standard error.
fn first_line(child: &mut Child) -> String {
    use std::io::Read;
    let mut s = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut s);
    }
    s.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no message")
        .to_string()
}

/// `name`'s path in `PATH`, if it is there and executable.
fn find_in_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The mean time of one `getppid` system call, ns: the fastest of a few
/// batches (the least disturbed by other work on the machine).
fn fastest_getppid_ns() -> f64 {
    let mut best = f64::MAX;
    for _ in 0..BATCHES {
        let t = clock::now_ns();
        for _ in 0..BATCH {
            // SAFETY: a system call without arguments or effects.
            unsafe { libc::syscall(libc::SYS_getppid) };
        }
        best = best.min((clock::now_ns() - t) as f64 / BATCH as f64);
    }
    best
}
