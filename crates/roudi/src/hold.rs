//! One RouDi per process, kept until the process exits (see the crate docs,
//! "RouDi must outlive its clients"), and handed to a detached watcher when
//! the other side of a run still uses it at exit.

use crate::daemon::{DEAD_CLIENT_GRACE, Options, Roudi};
use crate::discovery::{live_clients, running, user_name};
use crate::error::RoudiError;
use std::fs;
use std::io;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static HELD: Mutex<Option<Roudi>> = Mutex::new(None);

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

/// True when process `pid`'s parent is this process.
fn is_my_child(pid: i32) -> bool {
    let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // "PID (COMM) STATE PPID ...": COMM may hold spaces or parentheses.
    let ppid = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
        .and_then(|p| p.parse::<u32>().ok());
    ppid == Some(std::process::id())
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

/// How long the exit waits for the other clients of our RouDi that are
/// our children (the run's subscriber processes, told to stop before this
/// process exits) before it leaves RouDi to a watcher.
const CHILDREN_EXIT_WAIT: Duration = Duration::from_secs(5);

extern "C" fn stop_held() {
    let r = HELD.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(mut r) = r {
        let mut others = live_clients();
        // Only children are waited for: a parent (the publisher of a
        // subscriber process that started RouDi) waits for us instead.
        let start = Instant::now();
        while r.owned.is_some()
            && !others.is_empty()
            && others.iter().all(|p| is_my_child(*p))
            && start.elapsed() < CHILDREN_EXIT_WAIT
        {
            std::thread::sleep(Duration::from_millis(20));
            others = live_clients();
        }
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
    // Made of CONFIG_PREFIX, letters, digits, '-' and '_' (our_files):
    // nothing to escape between single quotes.
    let dir = format!("'{}'", o.dir.display());
    let stop_tenths = (o.stop_timeout.as_millis() / 100).max(1);
    let script = format!(
        r#"r={roudi}
gone() {{ ! kill -0 $1 2>/dev/null || grep -q '^[0-9]* (.*) Z' /proc/$1/stat 2>/dev/null; }}
for p in {pids}; do while ! gone $p; do sleep 0.1; done; done
sleep {grace}
kill -TERM $r 2>/dev/null
i=0; while ! gone $r && [ $i -lt {stop_tenths} ]; do sleep 0.1; i=$((i+1)); done
rm -rf {dir}
if ! gone $r; then kill -KILL $r; sleep 0.2; rm -f /dev/shm/iceoryx_mgmt '/dev/shm/{user}' /tmp/roudi /tmp/roudi.lock /tmp/iox-unique-roudi.lock; fi
"#,
        roudi = r.pid,
        pids = pids.join(" "),
        grace = DEAD_CLIENT_GRACE.as_secs_f64(),
        user = user_name(),
        dir = dir,
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
