//! Finding what runs on this host: the `iox-roudi` executable, running
//! RouDi processes, and the processes registered with RouDi as clients (by
//! their runtime sockets in /tmp).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The RouDi executable.
pub const ROUDI_BIN: &str = "iox-roudi";

/// Prefixes of the sockets (`/tmp/<runtime name>`) of iceoryx runtimes whose
/// name carries their pid: CycloneDDS's `iceoryx_rt_<pid>_<time>` and our
/// iceoryx binding's `pubsubperf_iox_<pid>_<n>`.
pub const RUNTIME_PREFIXES: [&str; 2] = ["iceoryx_rt_", "pubsubperf_iox_"];

/// Where `iox-roudi` is, if installed.
pub fn find_binary() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(ROUDI_BIN))
        .find(|p| p.is_file())
}

/// A RouDi process found running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Running {
    /// Its process id.
    pub pid: u32,
    /// The config file named on its command line (`-c`/`--config-file`).
    pub config: Option<PathBuf>,
}

/// The RouDi processes running on this host (any user).
pub fn running() -> Vec<Running> {
    let mut found = Vec::new();
    let Ok(dir) = fs::read_dir("/proc") else {
        return found;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(cmdline) = fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let is_roudi = args
            .first()
            .is_some_and(|a| Path::new(a).file_name().is_some_and(|n| n == ROUDI_BIN));
        // A zombie has an empty cmdline, so it is skipped here.
        if !is_roudi {
            continue;
        }
        let mut config = None;
        for (i, a) in args.iter().enumerate() {
            if a == "-c" || a == "--config-file" {
                config = args.get(i + 1).map(PathBuf::from);
            } else if let Some(p) = a.strip_prefix("--config-file=") {
                config = Some(PathBuf::from(p));
            }
        }
        found.push(Running { pid, config });
    }
    found
}

/// The name of the effective user (RouDi names its payload segment after it).
pub(crate) fn user_name() -> String {
    // SAFETY: getpwuid returns a pointer to static storage or null; the name
    // is copied out at once.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if pw.is_null() || (*pw).pw_name.is_null() {
            return "root".into();
        }
        std::ffi::CStr::from_ptr((*pw).pw_name)
            .to_string_lossy()
            .into_owned()
    }
}

/// True while a process `pid` exists (a zombie included).
pub(crate) fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH))
}

/// True when `pid` is a zombie (exited, not yet reaped).
pub(crate) fn zombie(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|r| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

/// The pids in the names of the iceoryx runtime sockets in /tmp.
pub(crate) fn runtime_pids() -> Vec<i32> {
    let mut v = Vec::new();
    if let Ok(d) = fs::read_dir("/tmp") {
        for e in d.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".lock") {
                continue;
            }
            for prefix in RUNTIME_PREFIXES {
                if let Some(pid) = name
                    .strip_prefix(prefix)
                    .and_then(|r| r.split('_').next())
                    .and_then(|p| p.parse::<i32>().ok())
                {
                    v.push(pid);
                }
            }
        }
    }
    v
}

/// Processes other than this one whose iceoryx runtime is still registered
/// (alive and not a zombie).
pub fn live_clients() -> Vec<i32> {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let mut v: Vec<i32> = runtime_pids()
        .into_iter()
        .filter(|p| *p != me && pid_alive(*p) && !zombie(*p))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// True when a client process registered with RouDi died (its runtime
/// socket remains), so RouDi may still hold it for ~1.5 s.
pub(crate) fn dead_client_present() -> bool {
    runtime_pids()
        .into_iter()
        .any(|p| !pid_alive(p) || zombie(p))
}
