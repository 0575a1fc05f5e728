//! Nodes and clean-up: what the binding leaves on the machine.
//!
//! iceoryx2 keeps its state in files: shared-memory segments in /dev/shm
//! (`iox2_*`) and, under its root path `/tmp/iceoryx2/`, static service
//! configs, node details, monitor locks and event sockets. Dropping ports,
//! services and nodes removes almost all of them; a process killed with
//! SIGKILL leaves everything. This module:
//!
//! - creates each side's node with a fixed configuration (iceoryx2's
//!   defaults, no config file, no signal handlers: the harness handles
//!   Ctrl-C), and right after, removes the stale resources of *dead* nodes
//!   (processes that no longer exist) with `Node::try_cleanup_dead_nodes`;
//! - when the last port of a side is gone ([`Tidy`] dropped), removes dead
//!   nodes again (a peer killed during this run) and, if no iceoryx2 node is
//!   left on the machine, the domain's last files: the 16-byte global
//!   management segment (a node counter) and the empty `nodes` and
//!   `services` directories. iceoryx2 states that the global segment may be
//!   removed only when no process uses the domain; node ids also carry the
//!   pid and the creation time, so even a node starting at that very moment
//!   in another process gets a unique id.

use iceoryx2::prelude::*;
use pubsubperf_core::BindingError;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

type Svc = ipc::Service;

/// Serializes node creation and the final clean-up within this process, so
/// one binding's clean-up never races another's start.
static LOCK: Mutex<()> = Mutex::new(());

fn lock() -> MutexGuard<'static, ()> {
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// The iceoryx2 configuration of every pubsubperf node: iceoryx2's
/// defaults (so both sides agree whatever config files the machine has),
/// with dead-node clean-up on.
pub fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| {
        // Errors only: otherwise iceoryx2 warns about every missing file.
        set_log_level(LogLevel::Error);
        let mut c = Config::default();
        c.global.node.cleanup_dead_nodes_on_creation = true;
        c.global.node.cleanup_dead_nodes_on_destruction = true;
        c.global.service.cleanup_dead_nodes_on_open = true;
        c
    })
}

/// Whether iceoryx2 can run here: it needs /dev/shm and its root path.
pub fn available() -> Result<(), String> {
    match std::fs::metadata("/dev/shm") {
        Ok(m) if m.is_dir() => {}
        _ => return Err("/dev/shm is missing (POSIX shared memory needs a tmpfs there)".into()),
    }
    let root = root_path();
    let parent = std::path::Path::new(&root)
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_else(|| "/".into());
    match std::fs::metadata(&parent) {
        Ok(m) if m.is_dir() => Ok(()),
        _ => Err(format!(
            "{} is missing (iceoryx2's root path {root})",
            parent.display()
        )),
    }
}

/// iceoryx2's root path (`/tmp/iceoryx2`), without a trailing slash.
pub fn root_path() -> String {
    config()
        .global
        .root_path()
        .to_string()
        .trim_end_matches('/')
        .to_string()
}

/// Held by a binding and each of its readers and writers (always as their
/// last field); dropping the last one cleans up (see the module docs).
#[derive(Debug)]
pub struct Tidy(());

impl Drop for Tidy {
    fn drop(&mut self) {
        let _g = lock();
        finish();
    }
}

/// Creates this side's node, then removes the resources of dead nodes.
pub(crate) fn create_node(run_id: &str) -> Result<(Node<Svc>, Arc<Tidy>), BindingError> {
    let cfg = config();
    let mut label = format!("pubsubperf-{run_id}");
    label.truncate(120);
    let name = NodeName::new(&label)
        .map_err(|e| BindingError::Middleware(format!("node name {label}: {e:?}")))?;
    let _g = lock();
    let mut tries = 0;
    let node = loop {
        match NodeBuilder::new()
            .name(&name)
            .config(cfg)
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<Svc>()
        {
            Ok(n) => break n,
            // A node ending in another process may be removing the
            // directories this one needs: try again.
            Err(_) if tries < 20 => {
                tries += 1;
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => {
                return Err(BindingError::Middleware(format!(
                    "creating the iceoryx2 node: {e:?}"
                )));
            }
        }
    };
    node.try_cleanup_dead_nodes();
    Ok((node, Arc::new(Tidy(()))))
}

/// The iceoryx2 nodes on this machine: `(alive, dead)`; `dead` counts the
/// nodes of processes that are gone and whose resources are still there.
pub fn count_nodes() -> (usize, usize) {
    let (mut alive, mut dead) = (0, 0);
    let _ = Node::<Svc>::list(config(), |state| {
        match state {
            NodeState::Dead(_) => dead += 1,
            _ => alive += 1,
        }
        CallbackProgression::Continue
    });
    (alive, dead)
}

/// Removes the stale resources of every dead iceoryx2 node; returns how many
/// nodes were cleaned up and how many could not be.
pub fn cleanup_dead_nodes() -> (u64, u64) {
    let (mut ok, mut failed) = (0, 0);
    let _ = Node::<Svc>::list(config(), |state| {
        if let NodeState::Dead(view) = state {
            match view.try_remove_stale_resources() {
                Ok(()) => ok += 1,
                Err(_) => failed += 1,
            }
        }
        CallbackProgression::Continue
    });
    (ok, failed)
}

/// The end of a side: dead nodes go; with no node left, the domain's last
/// files go too.
fn finish() {
    cleanup_dead_nodes();
    let (alive, dead) = count_nodes();
    if alive + dead > 0 {
        return;
    }
    // SAFETY: no iceoryx2 node exists on this machine (see the module docs
    // for one that is starting right now).
    let _ = unsafe { iceoryx2::testing::remove_global_mgmt_segment::<Svc>(config()) };
    let g = &config().global;
    for dir in [
        g.node_dir().to_string(),
        g.service_dir().to_string(),
        root_path(),
    ] {
        // Only empty directories go; anything else stays.
        let _ = std::fs::remove_dir(dir.trim_end_matches('/'));
    }
}

/// What iceoryx2 (in its default domain) has on this machine now: the
/// `iox2_*` entries in /dev/shm and every path under its root path. For
/// tests and diagnostics.
pub fn leftovers() -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(d) = std::fs::read_dir("/dev/shm") {
        for e in d.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(config().global.prefix.to_string().as_str()) {
                found.push(format!("/dev/shm/{n}"));
            }
        }
    }
    fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        if let Ok(d) = std::fs::read_dir(dir) {
            for e in d.flatten() {
                let p = e.path();
                found.push(p.display().to_string());
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    walk(&p, found);
                }
            }
        }
    }
    let root = root_path();
    if std::path::Path::new(&root).exists() {
        found.push(root.clone());
        walk(std::path::Path::new(&root), &mut found);
    }
    found.sort();
    found
}
