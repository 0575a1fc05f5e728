//! Removal of Fast DDS shared-memory files left by dead processes.
//!
//! Fast DDS's SHM transport and data sharing create files in /dev/shm
//! (`fastrtps_<id>`, `fastrtps_port<N>`, `sem.fastrtps_port<N>_mutex`,
//! `fast_datasharing_*`). Each has a lock file (`<name>_el` or `<name>_sl`)
//! that its owner holds locked (flock) while alive, and a clean exit removes
//! them; a process killed with SIGKILL leaves them behind. This does what
//! `fastdds shm clean` does: any lock file that nobody holds any more marks
//! a dead owner, and its files are removed. Files of live processes (ours
//! included: their locks are held through Fast DDS's own descriptors) stay.

use std::ffi::CString;
use std::path::Path;

const DIR: &str = "/dev/shm";

/// True when `path` can be locked exclusively, i.e. no live process holds it.
fn unlocked(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    // SAFETY: plain open/flock/close on a NUL-terminated path.
    unsafe {
        let fd = libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let free = libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) == 0;
        libc::close(fd);
        free
    }
}

/// Removes the files of dead Fast DDS participants; returns how many files.
/// A segment counts as dead only when none of its lock files is held.
pub fn clean_zombies() -> usize {
    let Ok(dir) = std::fs::read_dir(DIR) else {
        return 0;
    };
    let mut bases: std::collections::BTreeMap<String, bool> = Default::default();
    let mut ports = Vec::new();
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("fastrtps_port") && name[13..].bytes().all(|b| b.is_ascii_digit()) {
            ports.push(name.clone());
        }
        if !(name.starts_with("fastrtps_") || name.starts_with("fast_datasharing")) {
            continue;
        }
        let Some(base) = name
            .strip_suffix("_el")
            .or_else(|| name.strip_suffix("_sl"))
        else {
            continue;
        };
        let free = unlocked(&Path::new(DIR).join(&name));
        let all_free = bases.entry(base.to_string()).or_insert(true);
        *all_free &= free;
    }
    // A port segment without any lock file has no listener (its owner died
    // and its lock was removed, or only senders ever opened it): dead too.
    for port in ports {
        if !bases.contains_key(&port)
            && !Path::new(DIR).join(format!("{port}_el")).exists()
            && !Path::new(DIR).join(format!("{port}_sl")).exists()
        {
            bases.insert(port, true);
        }
    }
    let mut removed = 0;
    for (base, dead) in bases {
        if !dead {
            continue;
        }
        for f in [
            format!("{base}_el"),
            format!("{base}_sl"),
            base.clone(),
            format!("sem.{base}_mutex"),
        ] {
            if std::fs::remove_file(Path::new(DIR).join(f)).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}
