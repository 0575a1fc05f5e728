//! The socket calls of the hot paths (udp, tcp, uds), entering the kernel
//! through `syscall(2)`, not glibc's wrappers: those are cancellation
//! points, and in a process with threads (ours always has) glibc brackets
//! each call with two atomic updates of the thread's cancellation state, a
//! cost per sample that sockperf's single-threaded client does not pay
//! (`throughput -b tcp --opt nodelay=off --size 64`, 3 alternating runs of
//! 4 s: 1.15-1.22 M samples/s through glibc's `send`, 1.26-1.48 M this
//! way). pubsubperf never cancels a thread.

use std::io::IoSlice;
use std::os::fd::AsRawFd;

/// The result of a raw socket `syscall`: a length or `errno`.
#[inline]
fn sys_len(n: libc::c_long) -> std::io::Result<usize> {
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// `recv(2)` with `flags` into `buf`.
#[inline]
pub(crate) fn recv(s: &impl AsRawFd, buf: &mut [u8], flags: i32) -> std::io::Result<usize> {
    let no_addr = std::ptr::null_mut::<libc::c_void>();
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the call;
    // recvfrom(2) with no address buffer.
    sys_len(unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            s.as_raw_fd(),
            buf.as_mut_ptr(),
            buf.len(),
            flags,
            no_addr,
            no_addr,
        )
    })
}

/// `send(2)` of `bytes`, without `SIGPIPE` on a closed connection (as
/// `std`'s `write`): how many bytes went.
#[inline]
pub(crate) fn send(s: &impl AsRawFd, bytes: &[u8]) -> std::io::Result<usize> {
    // sendto(2) with no address is send(2).
    sendto(s, bytes, std::ptr::null(), 0)
}

/// `sendto(2)` of `bytes` to `to` (what `std`'s `send_to` does, with the
/// same conversion of the address per call): how many bytes went.
#[inline]
pub(crate) fn send_to(
    s: &impl AsRawFd,
    bytes: &[u8],
    to: &std::net::SocketAddr,
) -> std::io::Result<usize> {
    let to = socket2::SockAddr::from(*to);
    sendto(s, bytes, to.as_ptr(), to.len())
}

/// `sendto(2)` without `SIGPIPE`; `to` holds `len` bytes of address, or is
/// null with `len` 0.
#[inline]
fn sendto(
    s: &impl AsRawFd,
    bytes: &[u8],
    to: *const libc::sockaddr,
    len: libc::socklen_t,
) -> std::io::Result<usize> {
    // SAFETY: `bytes` is valid for reads of `bytes.len()` bytes and `to`
    // for `len` bytes (the callers' addresses live across the call).
    sys_len(unsafe {
        libc::syscall(
            libc::SYS_sendto,
            s.as_raw_fd(),
            bytes.as_ptr(),
            bytes.len(),
            libc::MSG_NOSIGNAL,
            to,
            len,
        )
    })
}

/// `sendmsg(2)` of `parts` in order, without `SIGPIPE` on a closed
/// connection (as `std`'s `write`): how many bytes went.
#[inline]
pub(crate) fn send_parts(s: &impl AsRawFd, parts: &[IoSlice<'_>]) -> std::io::Result<usize> {
    // SAFETY: an all-zero msghdr is valid (no address, no control data).
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    // `IoSlice` is ABI-compatible with `iovec` on Unix; sendmsg only reads them.
    msg.msg_iov = parts.as_ptr() as *mut libc::iovec;
    msg.msg_iovlen = parts.len() as _;
    // SAFETY: `msg` points at `parts`, valid for the call.
    sys_len(unsafe {
        libc::syscall(
            libc::SYS_sendmsg,
            s.as_raw_fd(),
            &msg as *const libc::msghdr,
            libc::MSG_NOSIGNAL,
        )
    })
}
