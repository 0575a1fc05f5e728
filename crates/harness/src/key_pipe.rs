//! How an agent hands a session's keys to the process that serves it: on a
//! pipe the process inherits, never in its environment or command line
//! (`/proc/PID/environ` and `/proc/PID/cmdline` are readable by the same
//! user and by root; the command line by everyone).
//!
//! The agent writes the keys into a pipe and closes its writing end before
//! the session process starts; the process is told only the number of the
//! reading end (`sub --session-stdin --session-keys-fd N`), reads the keys
//! to the end and closes it.

use crate::Fault;
use crate::channel::SessionKeys;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The reading end of a pipe that holds `keys`, its writing end closed.
/// Close-on-exec, and never one of the standard descriptors (0, 1, 2: a
/// child's standard streams would replace it); [`inherit`] lets one child
/// have it.
pub fn hand(keys: &SessionKeys) -> std::io::Result<OwnedFd> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two descriptors it opens.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just opened and are this function's.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // 128 bytes: far below a pipe's buffer, so this never blocks.
    std::fs::File::from(write).write_all(keys.to_hex().as_bytes())?;
    if read.as_raw_fd() > 2 {
        return Ok(read);
    }
    // SAFETY: F_DUPFD_CLOEXEC opens a new descriptor (3 or above), ours.
    match unsafe { libc::fcntl(read.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 3) } {
        -1 => Err(std::io::Error::last_os_error()),
        fd => Ok(unsafe { OwnedFd::from_raw_fd(fd) }),
    }
}

/// In a child between fork and exec: keeps `fd` open across the exec.
/// Async-signal-safe (one `fcntl`).
pub fn inherit(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl on a descriptor number; it changes only its flag.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The keys on the pipe `fd` an agent handed this process, read to its end;
/// the pipe is closed. Call it before anything else of this process opens a
/// descriptor that could take that number.
pub fn take(fd: RawFd) -> Result<SessionKeys, Fault> {
    let bad = |why: &str| {
        Fault::Config(format!(
            "--session-keys-fd {fd}: {why} (this option is the agent's)"
        ))
    };
    if fd <= 2 {
        return Err(bad("a standard descriptor holds no keys"));
    }
    // SAFETY: fstat only fills `st`; a closed fd fails.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(bad("not an open descriptor"));
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFIFO {
        return Err(bad("not a pipe"));
    }
    // SAFETY: an open pipe that nothing else in this process uses: the
    // agent opened it for this process alone, and from here it is ours.
    let pipe = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let mut hex = String::new();
    pipe.take(256)
        .read_to_string(&mut hex)
        .map_err(|e| bad(&e.to_string()))?;
    SessionKeys::from_hex(hex.trim()).ok_or_else(|| bad("not a pair of session keys"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_cross_the_pipe_whose_writing_end_is_closed() {
        let keys = SessionKeys {
            send: [7; 32],
            recv: [9; 32],
        };
        let read = hand(&keys).unwrap();
        let fd = read.as_raw_fd();
        assert!(fd > 2);
        // Handed over as a child process takes it: by number (read to its
        // end, so the writing end is closed: it would block otherwise).
        std::mem::forget(read);
        assert_eq!(take(fd).unwrap(), keys);
    }

    #[test]
    fn anything_but_a_pipe_is_refused_naming_the_option() {
        let e = take(0).unwrap_err().to_string();
        assert!(e.starts_with("--session-keys-fd 0: "), "{e}");
        let f = tempfile::tempfile().unwrap();
        let e = take(f.as_raw_fd()).unwrap_err().to_string();
        assert!(e.contains("not a pipe"), "{e}");
    }
}
