//! A RouDi in use by this process: found running and reused, or started
//! with our config and stopped when dropped.

use crate::config::{CONFIG_PREFIX, default_pools, owner_of};
use crate::config::{ICEORYX_DEFAULT_MAX_PAYLOAD, Pool, config_toml, max_payload_of_config};
use crate::discovery::{
    Running, dead_client_present, find_binary, live_clients, pid_alive, running, zombie,
};
use crate::error::{RoudiError, io_err};
use crate::files::clean_stale;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds RouDi's monitoring needs to drop a client that died (it aborts
/// when asked to stop before that).
pub(crate) const DEAD_CLIENT_GRACE: Duration = Duration::from_millis(1800);

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
    pub(crate) pid: u32,
    pub(crate) max_payload: usize,
    /// Set when this process started it; taken by whoever stops it.
    pub(crate) owned: Option<Owned>,
}

/// What stopping a RouDi we started needs.
#[derive(Debug)]
pub(crate) struct Owned {
    pub(crate) child: Child,
    /// Our config and log files, removed once it stopped.
    pub(crate) files: Vec<PathBuf>,
    pub(crate) stop_timeout: Duration,
}

impl Roudi {
    /// Uses the running RouDi, or starts ours and waits until it is ready.
    pub fn ensure(opts: &Options) -> Result<Roudi, RoudiError> {
        retire_orphan(opts);
        if let Some(r) = running().into_iter().next() {
            return Ok(Roudi::attach(&r));
        }
        let bin = find_binary().ok_or(RoudiError::NotInstalled)?;
        clean_stale();
        let (config, log) = our_files(&opts.run_id);
        let child = spawn(&bin, &config, &log, &opts.pools)?;
        let mut roudi = Roudi {
            pid: child.id(),
            max_payload: opts.pools.iter().map(|p| p.size).max().unwrap_or(0),
            owned: Some(Owned {
                child,
                files: vec![config, log.clone()],
                stop_timeout: opts.stop_timeout,
            }),
        };
        roudi.wait_ready(&log, opts.ready_timeout)?;
        Ok(roudi)
    }

    /// Someone else's RouDi: its largest chunk from the config file its
    /// command line names, else iceoryx's built-in default.
    fn attach(r: &Running) -> Roudi {
        let max_payload = r
            .config
            .as_ref()
            .and_then(|c| fs::read_to_string(c).ok())
            .and_then(|t| max_payload_of_config(&t))
            .unwrap_or(ICEORYX_DEFAULT_MAX_PAYLOAD);
        Roudi {
            pid: r.pid,
            max_payload,
            owned: None,
        }
    }

    /// Waits until our RouDi says it is ready in `log`. On an error the
    /// caller drops `self`, which stops RouDi and removes our files.
    fn wait_ready(&mut self, log: &Path, within: Duration) -> Result<(), RoudiError> {
        let start = Instant::now();
        loop {
            let text = fs::read_to_string(log).unwrap_or_default();
            if text.contains("RouDi is ready for clients") {
                return Ok(());
            }
            let owned = self.owned.as_mut().expect("owned");
            if let Ok(Some(status)) = owned.child.try_wait() {
                return Err(RoudiError::Exited {
                    status: status.to_string(),
                    output: tail(&text),
                });
            }
            if start.elapsed() > within {
                return Err(RoudiError::NotReady(within, tail(&text)));
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

/// Our config and log file for `run_id` (characters other than ASCII
/// letters, digits and '-' become '_').
fn our_files(run_id: &str) -> (PathBuf, PathBuf) {
    let safe: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    (
        PathBuf::from(format!("{CONFIG_PREFIX}{safe}.toml")),
        PathBuf::from(format!("{CONFIG_PREFIX}{safe}.log")),
    )
}

/// Writes our config for `pools` and starts RouDi with it, its output to
/// `log`. On failure nothing of ours is left.
fn spawn(bin: &Path, config: &Path, log: &Path, pools: &[Pool]) -> Result<Child, RoudiError> {
    fs::write(config, config_toml(pools))
        .map_err(io_err(format!("writing {}", config.display())))?;
    let out = fs::File::create(log).map_err(io_err(format!("creating {}", log.display())))?;
    let err = out
        .try_clone()
        .map_err(io_err(format!("creating {}", log.display())))?;
    use std::os::unix::process::CommandExt;
    Command::new(bin)
        // Its own process group: a Ctrl-C meant for the run must not stop
        // RouDi under its clients; the run stops it afterwards.
        .process_group(0)
        .arg("-c")
        .arg(config)
        .args(["-l", "warning"])
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| {
            let _ = fs::remove_file(config);
            let _ = fs::remove_file(log);
            RoudiError::Io {
                context: format!("starting {}", bin.display()),
                source: e,
            }
        })
}

/// A RouDi started by one of our processes that has exited is being
/// stopped by its watcher (see [`hold_until_exit`](crate::hold_until_exit)),
/// or was orphaned when its process was killed: wait for it to go (bounded)
/// so that a new run does not attach to a RouDi about to stop, and stop it
/// ourselves if it stays without clients.
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
                stop_orphan(&r, opts.stop_timeout);
            }
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Stops an orphaned RouDi of ours that nobody uses (SIGTERM, bounded wait,
/// SIGKILL) and removes its config and log files.
fn stop_orphan(r: &Running, stop_timeout: Duration) {
    let pid = r.pid as i32;
    // SAFETY: signalling a RouDi of ours that nobody uses.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let t = Instant::now();
    while pid_alive(pid) && !zombie(pid) && t.elapsed() < stop_timeout {
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

/// The last five lines of RouDi's output, on one line.
fn tail(text: &str) -> String {
    let t: Vec<&str> = text.lines().rev().take(5).collect();
    let s = t.into_iter().rev().collect::<Vec<_>>().join(" | ");
    if s.is_empty() { "no output".into() } else { s }
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
        for f in &o.files {
            let _ = fs::remove_file(f);
        }
        // What RouDi left if it did not exit cleanly, and the runtime files
        // of clients that died without unregistering (a killed subscriber):
        // only once no RouDi runs.
        clean_stale();
    }
}
