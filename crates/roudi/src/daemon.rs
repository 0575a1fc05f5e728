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
    /// Names the private directory of our config and log files
    /// (`/tmp/pubsubperf-roudi-<run_id>-XXXXXX/`).
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
    /// The private directory of our config and log files, removed with
    /// them once it stopped.
    pub(crate) dir: PathBuf,
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
        let (dir, config, log) = our_files(&opts.run_id, &opts.pools)?;
        let child = spawn(&bin, &config, log).inspect_err(|_| {
            let _ = fs::remove_dir_all(&dir);
        })?;
        let log = dir.join(LOG_NAME);
        let mut roudi = Roudi {
            pid: child.id(),
            max_payload: opts.pools.iter().map(|p| p.size).max().unwrap_or(0),
            owned: Some(Owned {
                child,
                dir,
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

/// The names of our config and log files in their directory.
const CONFIG_NAME: &str = "roudi.toml";
const LOG_NAME: &str = "roudi.log";

/// A fresh private directory for `run_id`'s RouDi,
/// `/tmp/pubsubperf-roudi-<run_id>-XXXXXX` (mode 0700, made by mkdtemp:
/// nobody else can have made it or put a link in it; characters of the run
/// id other than ASCII letters, digits and '-' become '_'), and in it our
/// config for `pools` and an empty log, each created new (O_EXCL, mode
/// 0600). Returns the directory, the config and the log; on failure nothing
/// of ours is left.
fn our_files(run_id: &str, pools: &[Pool]) -> Result<(PathBuf, PathBuf, fs::File), RoudiError> {
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
    let (parent, prefix) = CONFIG_PREFIX
        .rsplit_once('/')
        .expect("CONFIG_PREFIX is a path");
    let dir = tempfile::Builder::new()
        .prefix(&format!("{prefix}{safe}-"))
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir_in(parent)
        .map_err(io_err(format!("creating a directory in {parent}")))?
        .keep();
    let create = |name: &str| {
        use std::os::unix::fs::OpenOptionsExt;
        let path = dir.join(name);
        fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(io_err(format!("creating {}", path.display())))
    };
    let made = (|| {
        use std::io::Write;
        let config = dir.join(CONFIG_NAME);
        create(CONFIG_NAME)?
            .write_all(config_toml(pools).as_bytes())
            .map_err(io_err(format!("writing {}", config.display())))?;
        Ok((config, create(LOG_NAME)?))
    })();
    match made {
        Ok((config, log)) => Ok((dir, config, log)),
        Err(e) => {
            let _ = fs::remove_dir_all(&dir);
            Err(e)
        }
    }
}

/// Starts RouDi with our `config`, its output to `log`.
fn spawn(bin: &Path, config: &Path, log: fs::File) -> Result<Child, RoudiError> {
    let err = log.try_clone().map_err(io_err(format!(
        "opening {} twice",
        config.with_file_name(LOG_NAME).display()
    )))?;
    use std::os::unix::process::CommandExt;
    Command::new(bin)
        // Its own process group: a Ctrl-C meant for the run must not stop
        // RouDi under its clients; the run stops it afterwards.
        .process_group(0)
        .arg("-c")
        .arg(config)
        .args(["-l", "warning"])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .spawn()
        .map_err(|e| RoudiError::Io {
            context: format!("starting {}", bin.display()),
            source: e,
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
        let _ = fs::remove_file(c.with_file_name(LOG_NAME));
        let _ = fs::remove_file(c.with_extension("log"));
        // Our private directory, once empty (never anything else in it).
        if let Some(d) = c.parent()
            && d.to_string_lossy().starts_with(CONFIG_PREFIX)
        {
            let _ = fs::remove_dir(d);
        }
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
        let _ = fs::remove_dir_all(&o.dir);
        // What RouDi left if it did not exit cleanly, and the runtime files
        // of clients that died without unregistering (a killed subscriber):
        // only once no RouDi runs.
        clean_stale();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn our_files_are_new_and_private_in_a_directory_of_their_own() {
        let mode = |p: &Path| fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777;
        let (dir, config, log) = our_files("../x/y", &default_pools()).unwrap();
        let (dir2, ..) = our_files("../x/y", &default_pools()).unwrap();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            dir.to_string_lossy().starts_with(CONFIG_PREFIX)
                && name.starts_with("pubsubperf-roudi-___x_y-"),
            "{}",
            dir.display()
        );
        assert_ne!(dir, dir2, "each RouDi has a directory of its own");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!((mode(&config), mode(&dir.join(LOG_NAME))), (0o600, 0o600));
        assert_eq!(config, dir.join(CONFIG_NAME));
        assert_eq!(owner_of(&config), Some(std::process::id() as i32));
        drop(log);
        for d in [dir, dir2] {
            fs::remove_dir_all(d).unwrap();
        }
    }
}
