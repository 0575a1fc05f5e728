//! The files a RouDi and its clients leave on the host, and their removal.

use crate::config::CONFIG_PREFIX;
use crate::discovery::{RUNTIME_PREFIXES, pid_alive, running, user_name};
use std::fs;
use std::path::PathBuf;

/// The files a RouDi (and its clients) leave when they die without
/// cleaning up: RouDi's shared memory (`/dev/shm/iceoryx_mgmt`, the payload
/// segment named after the user), its socket and lock files in /tmp, and the
/// sockets and lock files of iceoryx runtimes (`/tmp/iceoryx_rt_<pid>_*`,
/// `/tmp/pubsubperf_iox_<pid>.lock`) whose process is gone.
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
                    // `<pid>`, `<pid>.lock`, `<pid>_<n>`.
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    let pid = digits.parse::<i32>().ok();
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
    let ours = CONFIG_PREFIX.trim_start_matches("/tmp/");
    if let Ok(dir) = std::fs::read_dir("/tmp") {
        for e in dir.flatten() {
            let n = e.file_name().to_string_lossy().into_owned();
            if n.starts_with(client_prefix) || n.starts_with(ours) {
                v.push(format!("/tmp/{n}"));
            }
        }
    }
    v
}
