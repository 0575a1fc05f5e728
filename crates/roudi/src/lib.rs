//! The iceoryx RouDi daemon (`iox-roudi`, iceoryx 2.0) for pubsubperf's
//! shared-memory runs (CycloneDDS over iceoryx, classic iceoryx).
//!
//! [`Roudi::ensure`] makes sure a RouDi runs:
//! - if one already runs (someone else's), it is used and left alone, and
//!   its largest chunk is read from its config file when its command line
//!   names one (otherwise iceoryx's built-in default, 4 MiB, is assumed);
//! - otherwise stale files of a dead RouDi are removed and one is started
//!   with our config ([`default_pools`]: chunks up to 256 MiB plus headers,
//!   about 1.3 GiB of shared memory in total), written to
//!   `/tmp/pubsubperf-roudi-<run id>.toml`; the call returns once RouDi says
//!   it is ready, or fails after a bounded wait with RouDi's own output.
//!
//! Dropping the returned [`Roudi`] stops a RouDi we started: SIGTERM, a
//! bounded wait, then SIGKILL, then removal of our files and, if RouDi did
//! not exit cleanly, of the files it left behind.
//!
//! ## RouDi must outlive its clients
//! An iceoryx runtime registers its *process* with RouDi and only
//! unregisters when the process exits (CycloneDDS keeps its runtime until
//! exit even after every entity is deleted). A RouDi that shuts down sends
//! SIGTERM to every registered process, and it aborts (leaving its shared
//! memory behind) when a registered client died less than ~1.5 s before.
//! So a process that is itself a client must not stop RouDi while it runs:
//! [`hold_until_exit`] keeps one RouDi per process and stops it at process
//! exit, after the iceoryx runtime has unregistered (C++ static destructors
//! registered later run first). If a client crashed shortly before, the
//! stop waits for RouDi's monitoring to drop it and, should RouDi still
//! abort, removes what it left.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The RouDi executable.
pub const ROUDI_BIN: &str = "iox-roudi";

/// The built-in largest chunk of iceoryx 2.0's default config (user payload bytes).
pub const ICEORYX_DEFAULT_MAX_PAYLOAD: usize = 4 * 1024 * 1024;

/// One mempool of the RouDi config: `count` chunks of `size` user-payload
/// bytes (RouDi adds its own chunk header on top).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    /// User payload bytes per chunk.
    pub size: usize,
    /// Number of chunks.
    pub count: u32,
}

/// Headroom above each power-of-two pool size, for the user headers that
/// middleware put in front of a sample (CycloneDDS's iceoryx header).
pub const HEADROOM: usize = 4096;

/// Our mempools: every size class up to 256 MiB (plus [`HEADROOM`]), with
/// chunk counts shrinking with size so that the total stays near 1.3 GiB
/// (RouDi touches all of it at start, which takes seconds on a small
/// machine). Enough for ping-pong at 256 MiB (three chunks: two in flight,
/// one being loaned) and
/// for throughput at smaller sizes.
pub fn default_pools() -> Vec<Pool> {
    const K: usize = 1024;
    const M: usize = 1024 * 1024;
    [
        (256, 10_000),
        (K + 256, 5_000),
        (16 * K + 256, 1_000),
        (128 * K + 256, 256),
        (M + HEADROOM, 64),
        (4 * M + HEADROOM, 16),
        (16 * M + HEADROOM, 8),
        (64 * M + HEADROOM, 3),
        (256 * M + HEADROOM, 3),
    ]
    .into_iter()
    .map(|(size, count)| Pool { size, count })
    .collect()
}

/// The RouDi config file text (TOML, iceoryx 2.0 format) for `pools`.
pub fn config_toml(pools: &[Pool]) -> String {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let mut s = format!(
        "# Written by pubsubperf; removed when its RouDi stops.\n{OWNER_TAG}{pid}\n[general]\nversion = 1\n\n[[segment]]\n",
    );
    for p in pools {
        s.push_str(&format!(
            "\n[[segment.mempool]]\nsize = {}\ncount = {}\n",
            p.size, p.count
        ));
    }
    s
}

/// The comment line of our config that names the process that started RouDi.
const OWNER_TAG: &str = "# owner pid ";

/// Where our config files live (`<prefix><run id>.toml`).
pub const CONFIG_PREFIX: &str = "/tmp/pubsubperf-roudi-";

/// The process that started a RouDi with one of our config files.
fn owner_of(config: &Path) -> Option<i32> {
    if !config.to_string_lossy().starts_with(CONFIG_PREFIX) {
        return None;
    }
    fs::read_to_string(config)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(OWNER_TAG)?.trim().parse().ok())
}

/// The largest user payload of a RouDi config file's text (the `size`
/// entries of its mempools), if it names any.
pub fn max_payload_of_config(toml: &str) -> Option<usize> {
    toml.lines()
        .filter_map(|l| {
            let l = l.split('#').next()?.trim();
            let (k, v) = l.split_once('=')?;
            (k.trim() == "size").then(|| v.trim().parse::<usize>().ok())?
        })
        .max()
}

/// Errors of [`Roudi::ensure`].
#[derive(Debug, thiserror::Error)]
pub enum RoudiError {
    /// `iox-roudi` is not installed.
    #[error("{ROUDI_BIN} not found in PATH (Debian: apt install iceoryx)")]
    NotInstalled,
    /// RouDi exited before it was ready.
    #[error("{ROUDI_BIN} exited before it was ready ({status}): {output}")]
    Exited {
        /// Its exit status.
        status: String,
        /// The end of its output.
        output: String,
    },
    /// RouDi did not say it was ready in time (it was stopped).
    #[error("{ROUDI_BIN} not ready within {0:?}: {1}")]
    NotReady(Duration, String),
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What failed.
        context: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> RoudiError {
    let context = context.into();
    move |source| RoudiError::Io { context, source }
}

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

fn user_name() -> String {
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

fn pid_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH))
}

/// The files a RouDi (and its clients) leave when they die without
/// cleaning up: RouDi's shared memory (`/dev/shm/iceoryx_mgmt`, the payload
/// segment named after the user), its socket and lock files in /tmp, and the
/// sockets of iceoryx runtimes (`/tmp/iceoryx_rt_<pid>_*`) whose process is gone.
pub fn stale_files() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "/dev/shm/iceoryx_mgmt".to_string(),
        format!("/dev/shm/{}", user_name()),
        "/tmp/roudi".into(),
        "/tmp/roudi.lock".into(),
        "/tmp/iox-unique-roudi.lock".into(),
    ]
    .into_iter()
    .map(PathBuf::from)
    .filter(|p| p.symlink_metadata().is_ok())
    .collect();
    if let Ok(d) = fs::read_dir("/tmp") {
        for e in d.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            for prefix in RUNTIME_PREFIXES {
                if let Some(rest) = name.strip_prefix(prefix) {
                    let pid = rest.split('_').next().and_then(|p| p.parse::<i32>().ok());
                    if pid.is_some_and(|p| !pid_alive(p)) {
                        v.push(e.path());
                    }
                }
            }
        }
    }
    v
}

/// Removes [`stale_files`], but only when no RouDi runs (a running one owns
/// them). Returns what was removed.
pub fn clean_stale() -> Vec<PathBuf> {
    if !running().is_empty() {
        return Vec::new();
    }
    stale_files()
        .into_iter()
        .filter(|p| fs::remove_file(p).is_ok())
        .collect()
}

/// How [`Roudi::ensure`] starts a RouDi.
#[derive(Debug, Clone)]
pub struct Options {
    /// Names our config and log files (`/tmp/pubsubperf-roudi-<run_id>.*`).
    pub run_id: String,
    /// The mempools of our config.
    pub pools: Vec<Pool>,
    /// How long RouDi may take to be ready (big configs take seconds).
    pub ready_timeout: Duration,
    /// How long RouDi may take to exit after SIGTERM before SIGKILL.
    pub stop_timeout: Duration,
}

impl Options {
    /// Our default pools and timeouts (ready: 90 s, generous for a loaded
    /// machine; stop: 5 s).
    pub fn new(run_id: &str) -> Self {
        Options {
            run_id: run_id.to_string(),
            pools: default_pools(),
            ready_timeout: Duration::from_secs(90),
            stop_timeout: Duration::from_secs(5),
        }
    }
}

/// A RouDi in use by this process: ours (stopped on drop) or someone else's
/// (left alone).
#[derive(Debug)]
pub struct Roudi {
    pid: u32,
    max_payload: usize,
    owned: Option<Owned>,
}

#[derive(Debug)]
struct Owned {
    child: Child,
    files: Vec<PathBuf>,
    stop_timeout: Duration,
}

impl Roudi {
    /// Uses the running RouDi, or starts ours and waits until it is ready.
    pub fn ensure(opts: &Options) -> Result<Roudi, RoudiError> {
        retire_orphan(opts);
        if let Some(r) = running().into_iter().next() {
            let max_payload = r
                .config
                .as_ref()
                .and_then(|c| fs::read_to_string(c).ok())
                .and_then(|t| max_payload_of_config(&t))
                .unwrap_or(ICEORYX_DEFAULT_MAX_PAYLOAD);
            return Ok(Roudi {
                pid: r.pid,
                max_payload,
                owned: None,
            });
        }
        let bin = find_binary().ok_or(RoudiError::NotInstalled)?;
        clean_stale();
        let safe: String = opts
            .run_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let config = PathBuf::from(format!("{CONFIG_PREFIX}{safe}.toml"));
        let log = PathBuf::from(format!("{CONFIG_PREFIX}{safe}.log"));
        fs::write(&config, config_toml(&opts.pools))
            .map_err(io_err(format!("writing {}", config.display())))?;
        let out = fs::File::create(&log).map_err(io_err(format!("creating {}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(io_err(format!("creating {}", log.display())))?;
        use std::os::unix::process::CommandExt;
        let child = Command::new(&bin)
            // Its own process group: a Ctrl-C meant for the run must not stop
            // RouDi under its clients; the run stops it afterwards.
            .process_group(0)
            .arg("-c")
            .arg(&config)
            .args(["-l", "warning"])
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn();
        let child = match child {
            Ok(c) => c,
            Err(e) => {
                let _ = fs::remove_file(&config);
                let _ = fs::remove_file(&log);
                return Err(RoudiError::Io {
                    context: format!("starting {}", bin.display()),
                    source: e,
                });
            }
        };
        let mut roudi = Roudi {
            pid: child.id(),
            max_payload: opts.pools.iter().map(|p| p.size).max().unwrap_or(0),
            owned: Some(Owned {
                child,
                files: vec![config, log.clone()],
                stop_timeout: opts.stop_timeout,
            }),
        };
        let start = Instant::now();
        loop {
            let text = fs::read_to_string(&log).unwrap_or_default();
            if text.contains("RouDi is ready for clients") {
                return Ok(roudi);
            }
            let owned = roudi.owned.as_mut().expect("owned");
            if let Ok(Some(status)) = owned.child.try_wait() {
                let output = tail(&text);
                // Nothing to stop; drop removes our files.
                return Err(RoudiError::Exited {
                    status: status.to_string(),
                    output,
                });
            }
            if start.elapsed() > opts.ready_timeout {
                return Err(RoudiError::NotReady(opts.ready_timeout, tail(&text)));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// RouDi's process id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// True when this process started it (and stops it on drop).
    pub fn is_owned(&self) -> bool {
        self.owned.is_some()
    }

    /// The largest chunk user payload (bytes) its config allows.
    pub fn max_payload(&self) -> usize {
        self.max_payload
    }
}

/// A RouDi started by one of our processes that has exited is being
/// stopped by its watcher (see [`hold_until_exit`]), or was orphaned when
/// its process was killed: wait for it to go (bounded) so that a new run
/// does not attach to a RouDi about to stop, and stop it ourselves if it
/// stays without clients.
fn retire_orphan(opts: &Options) {
    let start = Instant::now();
    loop {
        let Some(r) = running().into_iter().next() else {
            return;
        };
        let owner = r.config.as_deref().and_then(owner_of);
        let orphan = owner.is_some_and(|p| !pid_alive(p) || zombie(p));
        if !orphan {
            return;
        }
        if start.elapsed() > opts.ready_timeout.min(Duration::from_secs(8)) {
            if live_clients().is_empty() {
                let pid = r.pid as i32;
                // SAFETY: signalling a RouDi of ours that nobody uses.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                let t = Instant::now();
                while pid_alive(pid) && !zombie(pid) && t.elapsed() < opts.stop_timeout {
                    std::thread::sleep(Duration::from_millis(20));
                }
                if pid_alive(pid) && !zombie(pid) {
                    // SAFETY: as above.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    std::thread::sleep(Duration::from_millis(200));
                }
                if let Some(c) = &r.config {
                    let _ = fs::remove_file(c);
                    let _ = fs::remove_file(c.with_extension("log"));
                }
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn tail(text: &str) -> String {
    let t: Vec<&str> = text.lines().rev().take(5).collect();
    let s = t.into_iter().rev().collect::<Vec<_>>().join(" | ");
    if s.is_empty() { "no output".into() } else { s }
}

/// Seconds RouDi's monitoring needs to drop a client that died (it aborts
/// when asked to stop before that).
const DEAD_CLIENT_GRACE: Duration = Duration::from_millis(1800);

/// Prefixes of the sockets (`/tmp/<runtime name>`) of iceoryx runtimes whose
/// name carries their pid: CycloneDDS's `iceoryx_rt_<pid>_<time>` and our
/// iceoryx binding's `pubsubperf_iox_<pid>_<n>`.
pub const RUNTIME_PREFIXES: [&str; 2] = ["iceoryx_rt_", "pubsubperf_iox_"];

fn runtime_pids() -> Vec<i32> {
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

fn zombie(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit(')')
                .next()
                .map(|r| r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
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
fn dead_client_present() -> bool {
    runtime_pids()
        .into_iter()
        .any(|p| !pid_alive(p) || zombie(p))
}

impl Drop for Roudi {
    fn drop(&mut self) {
        let Some(mut o) = self.owned.take() else {
            return;
        };
        if let Ok(None) = o.child.try_wait() {
            if dead_client_present() {
                std::thread::sleep(DEAD_CLIENT_GRACE);
            }
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe {
                libc::kill(o.child.id() as i32, libc::SIGTERM);
            }
            let start = Instant::now();
            loop {
                match o.child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if start.elapsed() > o.stop_timeout => {
                        let _ = o.child.kill();
                        let _ = o.child.wait();
                        break;
                    }
                    Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        }
        let clean_exit = matches!(o.child.try_wait(), Ok(Some(s)) if s.success());
        for f in &o.files {
            let _ = fs::remove_file(f);
        }
        if !clean_exit {
            clean_stale();
        }
    }
}

static HELD: Mutex<Option<Roudi>> = Mutex::new(None);

extern "C" fn stop_held() {
    let r = HELD.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut r) = r {
        let others = live_clients();
        if r.owned.is_some() && !others.is_empty() {
            // Another process (the other side of the run) still uses RouDi:
            // a detached watcher stops it once they are gone.
            if hand_over(&mut r, &others).is_ok() {
                return;
            }
        }
        drop(r);
    }
}

/// Leaves our RouDi to a detached shell that waits for `clients` to exit,
/// then stops it like [`Roudi`]'s drop does (grace for crashed clients,
/// SIGTERM, bounded wait, SIGKILL) and removes our files and, if RouDi had
/// to be killed, its own.
fn hand_over(r: &mut Roudi, clients: &[i32]) -> io::Result<()> {
    use std::os::unix::process::CommandExt;
    let o = r.owned.as_ref().expect("owned");
    let pids: Vec<String> = clients.iter().map(|p| p.to_string()).collect();
    let files: Vec<String> = o
        .files
        .iter()
        .map(|f| format!("'{}'", f.display()))
        .collect();
    let stop_tenths = (o.stop_timeout.as_millis() / 100).max(1);
    let script = format!(
        r#"r={roudi}
gone() {{ ! kill -0 $1 2>/dev/null || grep -q '^[0-9]* (.*) Z' /proc/$1/stat 2>/dev/null; }}
for p in {pids}; do while ! gone $p; do sleep 0.1; done; done
sleep {grace}
kill -TERM $r 2>/dev/null
i=0; while ! gone $r && [ $i -lt {stop_tenths} ]; do sleep 0.1; i=$((i+1)); done
rm -f {files}
if ! gone $r; then kill -KILL $r; sleep 0.2; rm -f /dev/shm/iceoryx_mgmt '/dev/shm/{user}' /tmp/roudi /tmp/roudi.lock /tmp/iox-unique-roudi.lock; fi
"#,
        roudi = r.pid,
        pids = pids.join(" "),
        grace = DEAD_CLIENT_GRACE.as_secs_f64(),
        user = user_name(),
        files = files.join(" "),
    );
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(
            std::env::var_os("PUBSUBPERF_ROUDI_WATCH_LOG")
                .and_then(|p| fs::File::create(p).ok())
                .map_or_else(Stdio::null, Stdio::from),
        )
        .spawn()?;
    // The watcher owns RouDi now: forget our handle without stopping it.
    r.owned = None;
    Ok(())
}

/// What a client of [`hold_until_exit`] needs to know about its RouDi.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// RouDi's process id.
    pub pid: u32,
    /// This process started it.
    pub owned: bool,
    /// The largest chunk user payload it allows.
    pub max_payload: usize,
}

/// Ensures a RouDi for this process and keeps it until the process exits
/// (see the crate docs for why a client process must not stop it earlier).
/// Later calls reuse it while it runs; one that died is replaced.
pub fn hold_until_exit(opts: &Options) -> Result<Held, RoudiError> {
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    let alive = match held.as_mut() {
        Some(r) => match r.owned.as_mut() {
            Some(o) => matches!(o.child.try_wait(), Ok(None)),
            None => running().iter().any(|x| x.pid == r.pid),
        },
        None => false,
    };
    if !alive {
        let first = held.is_none();
        *held = None;
        let r = Roudi::ensure(opts)?;
        if first && r.is_owned() {
            register_atexit();
        }
        *held = Some(r);
    }
    let r = held.as_ref().expect("held");
    Ok(Held {
        pid: r.pid,
        owned: r.is_owned(),
        max_payload: r.max_payload,
    })
}

fn register_atexit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: registers a plain extern "C" function without arguments.
        unsafe {
            libc::atexit(stop_held);
        }
    });
}

/// Files an iceoryx run can leave on this host: RouDi's management segment,
/// lock and socket files, the user's payload segment, our RouDi configs, and
/// the runtime files of clients whose names start with `client_prefix`.
/// Used by the bindings' tests to show that a run leaves nothing behind.
pub fn leftover_files(client_prefix: &str) -> Vec<String> {
    let mut v = Vec::new();
    for p in [
        "/dev/shm/iceoryx_mgmt",
        "/tmp/roudi",
        "/tmp/roudi.lock",
        "/tmp/iox-unique-roudi.lock",
    ] {
        if std::path::Path::new(p).exists() {
            v.push(p.to_string());
        }
    }
    // The payload segment is named after the user.
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    if std::path::Path::new(&format!("/dev/shm/{user}")).exists() {
        v.push(format!("/dev/shm/{user}"));
    }
    if let Ok(dir) = std::fs::read_dir("/tmp") {
        for e in dir.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(client_prefix) || n.starts_with("pubsubperf-roudi-") {
                v.push(format!("/tmp/{n}"));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_round_trips_largest_payload() {
        let pools = default_pools();
        let toml = config_toml(&pools);
        assert_eq!(
            max_payload_of_config(&toml),
            Some(256 * 1024 * 1024 + HEADROOM)
        );
        assert!(toml.contains("[[segment.mempool]]"));
    }

    #[test]
    fn pools_stay_near_1_3_gib() {
        let total: usize = default_pools()
            .iter()
            .map(|p| (p.size + 64) * p.count as usize)
            .sum();
        assert!(total < 1400 * 1024 * 1024, "{total}");
    }

    #[test]
    fn parses_comments_and_spaces() {
        let t = "[[segment.mempool]]\n size= 128 # small\ncount = 3\nsize =4096\n";
        assert_eq!(max_payload_of_config(t), Some(4096));
        assert_eq!(max_payload_of_config("[general]\nversion = 1\n"), None);
    }
}
