//! Helper threads (a control channel's reader) of a process whose main
//! thread measures, started so that the measuring thread stays the only
//! user of the process's file table.
//!
//! While threads share a file table, the kernel takes and drops a reference
//! on the file of every system call's descriptor (fdget); with one user it
//! does not: two atomic operations a socket call, which single-threaded
//! sockperf does not pay. A helper started here takes its own copy of the
//! table (`unshare(CLONE_FILES)`) and closes in it every descriptor but 0-2
//! and the one it owns; the starting thread waits for that, then closes the
//! owned one in its table. Measured with `throughput -b tcp --opt
//! nodelay=off --size 60` (four alternating rounds of 3 s): 1.10-1.12 M
//! samples/s with the table shared (4fb1197), 1.14-1.20 M with the helpers
//! on their own (0d9432a).
//!
//! Under a user-mode emulator ([`crate::environment::emulated`]) helpers
//! share the table: qemu-user keeps one table of descriptor translators per
//! process (a netlink socket's replies are rewritten for the guest), not one
//! per thread, so once the starting thread's copy of a helper's descriptor
//! is closed and its number reused for a netlink socket (RTI Connext's
//! UDPv4 transport opens one), qemu runs the helper's reads of its own
//! descriptor through the netlink translator, and they fail with EINVAL.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::mpsc::sync_channel;
use std::thread::JoinHandle;

/// Starts `work` on a helper thread, handing it `owned` (an object holding
/// one descriptor, as a stream): in the helper's own table that descriptor
/// and 0-2 stay open, nothing else; in the calling thread's table it is
/// closed once the helper has its copy. If the kernel refuses the copy, or
/// the process is emulated, the helper shares the table and nothing is
/// closed.
pub fn spawn_helper<R, T>(owned: R, work: impl FnOnce(R) -> T + Send + 'static) -> JoinHandle<T>
where
    R: AsRawFd + Send + 'static,
    T: Send + 'static,
{
    let fd = owned.as_raw_fd();
    let own_table = !crate::environment::emulated();
    let (tell, told) = sync_channel(1);
    let helper = std::thread::spawn(move || {
        let _ = tell.send(own_table && take_own_table(fd));
        work(owned)
    });
    if told.recv() == Ok(true) {
        // SAFETY: `owned` moved into the helper, whose table has its own
        // copy of `fd`; in this thread's table nothing owns `fd` any more.
        unsafe { libc::close(fd) };
    }
    helper
}

/// Gives the calling thread its own file table holding only 0-2 and
/// `keep`; false if it still shares the process's.
fn take_own_table(keep: RawFd) -> bool {
    // SAFETY: unshare(2) with CLONE_FILES changes only this thread's table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return false;
    }
    let closed = match u32::try_from(keep) {
        Ok(k) if k >= 3 => (k == 3 || close_range(3, k - 1)) && close_range(k + 1, u32::MAX),
        _ => close_range(3, u32::MAX),
    };
    if !closed {
        close_listed_but(keep);
    }
    true
}

/// close_range(2) of `first..=last` in this thread's table; false if the
/// kernel has no close_range (before 5.9) or refuses it.
fn close_range(first: u32, last: u32) -> bool {
    // SAFETY: closes descriptors of this thread's own table, none of which
    // an object of this thread holds (the owned one is outside the range).
    unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) == 0 }
}

/// Without close_range: closes each descriptor of this thread's table
/// (`/proc/thread-self/fd`; `/proc/self/fd` lists the main thread's) but
/// 0-2 and `keep`.
fn close_listed_but(keep: RawFd) {
    let Ok(dir) = std::fs::read_dir("/proc/thread-self/fd") else {
        return;
    };
    let listed: Vec<RawFd> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    // The directory's own descriptor was closed when `dir` was read out.
    for fd in listed.into_iter().filter(|&fd| fd > 2 && fd != keep) {
        // SAFETY: as in `close_range`.
        unsafe { libc::close(fd) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;

    fn open(fd: RawFd) -> bool {
        // SAFETY: F_GETFD only queries the descriptor.
        unsafe { libc::fcntl(fd, libc::F_GETFD) != -1 }
    }

    fn helper_sees(others: Vec<RawFd>) -> (bool, Vec<bool>, UnixStream) {
        let (mut mine, theirs) = UnixStream::pair().unwrap();
        let given = theirs.as_raw_fd();
        let helper = spawn_helper(theirs, move |mut theirs| {
            let seen = (open(given), others.iter().map(|&fd| open(fd)).collect());
            theirs.write_all(b"x").unwrap();
            seen
        });
        mine.set_read_timeout(Some(std::time::Duration::from_secs(5)))
            .unwrap();
        let mut b = [0u8; 1];
        mine.read_exact(&mut b).unwrap();
        let (has, others) = helper.join().unwrap();
        (has, others, mine)
    }

    #[test]
    fn a_helper_owns_what_it_was_given_and_nothing_else() {
        // Descriptors below and above the given one: the ranges on both sides.
        let below = UnixStream::pair().unwrap();
        let (has, others, mut mine) = {
            let above = UnixStream::pair().unwrap();
            let list = vec![below.0.as_raw_fd(), above.0.as_raw_fd()];
            helper_sees(list)
        };
        assert!(
            has && others == [false, false],
            "the helper has its own {has}, sees the others {others:?}: \
             is unshare(CLONE_FILES) or close_range(2) refused here?"
        );
        assert!(
            open(below.0.as_raw_fd()),
            "a descriptor not handed over was closed here"
        );
        // The helper ended and this thread's copy was closed: the end of the
        // stream (a copy left here would leave the read waiting, then fail).
        let mut b = [0u8; 1];
        assert_eq!(mine.read(&mut b).unwrap(), 0);
    }
}
