//! Helper threads (a control channel's reader) of a process whose main
//! thread measures, started so that the measuring thread stays the only
//! user of the process's file table.
//!
//! While threads share a file table, the kernel takes and drops a reference
//! on the file of every system call's descriptor (fdget); with one user it
//! does not: two atomic operations a socket call, which the single-threaded
//! peer tools (sockperf, iperf3) do not pay. A helper started here takes its
//! own copy of the table (`unshare(CLONE_FILES)`) and closes in it every
//! descriptor but 0-2 and the ones it was given; the starting thread waits
//! for that, then closes the given ones in its table. Measured with
//! `throughput -b tcp --opt nodelay=off --size 60` (four alternating rounds
//! of 3 s): 1.14-1.15 M samples/s with the table shared (4fb1197), 1.20-1.21
//! M with the helpers on their own.

use std::os::fd::RawFd;
use std::sync::mpsc::sync_channel;
use std::thread::JoinHandle;

/// Starts `work` on a helper thread that owns the descriptors `fds`: the
/// objects holding them must be moved into `work`, since they are closed in
/// the calling thread's table once the helper has its own. The helper keeps
/// no other descriptor but 0-2. If the kernel refuses the copy, the helper
/// shares the table and nothing is closed; on a kernel without close_range
/// (before 5.9) the helper's copy keeps the other descriptors open until it
/// ends.
pub fn spawn_helper<T: Send + 'static>(
    fds: &[RawFd],
    work: impl FnOnce() -> T + Send + 'static,
) -> JoinHandle<T> {
    let mut keep = fds.to_vec();
    keep.sort_unstable();
    let kept = keep.clone();
    let (own, owned) = sync_channel(1);
    let helper = std::thread::spawn(move || {
        let _ = own.send(take_own_table(&kept));
        work()
    });
    if owned.recv() == Ok(true) {
        for fd in keep {
            // SAFETY: the descriptor's owner moved into the helper, which has
            // its own copy of it; this thread's copy has no owner left.
            unsafe { libc::close(fd) };
        }
    }
    helper
}

/// Gives the calling thread its own file table holding 0-2 and `keep`
/// (sorted) only; false if it still shares the process's.
fn take_own_table(keep: &[RawFd]) -> bool {
    // SAFETY: unshare(2) with CLONE_FILES changes only this thread's table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return false;
    }
    let mut from: u32 = 3;
    for &fd in keep {
        let Ok(fd) = u32::try_from(fd) else { continue };
        if fd > from {
            close_range(from, fd - 1);
        }
        from = from.max(fd + 1);
    }
    close_range(from, u32::MAX);
    true
}

/// close_range(2) of `first..=last` in this thread's table.
fn close_range(first: u32, last: u32) {
    // SAFETY: closes descriptors of this thread's own table only, none of
    // which an object of this thread holds (the kept ones are skipped).
    unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::net::UnixStream;

    fn open(fd: RawFd) -> bool {
        // SAFETY: F_GETFD only queries the descriptor.
        unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
    }

    #[test]
    fn a_helper_owns_what_it_was_given_and_nothing_else() {
        let (mut mine, theirs) = UnixStream::pair().unwrap();
        let (other, _other_peer) = UnixStream::pair().unwrap();
        let (given, other_fd) = (theirs.as_raw_fd(), other.as_raw_fd());
        let helper = spawn_helper(&[given], move || {
            let mut theirs = theirs;
            let seen = (open(given), open(other_fd));
            theirs.write_all(b"x").unwrap();
            seen
        });
        assert!(open(other_fd), "a descriptor not given was closed here");
        mine.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut b = [0u8; 1];
        mine.read_exact(&mut b).unwrap();
        // In the helper: what it was given, and nothing else.
        assert_eq!(helper.join().unwrap(), (true, false));
        // The helper ended and this thread's copy was closed: the end of the
        // stream (a copy left here would leave the read waiting, then fail).
        assert_eq!(mine.read(&mut b).unwrap(), 0);
        drop(other);
    }
}
