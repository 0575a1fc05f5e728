//! Why a binding refused one send ([`crate::BindingError::Refused`]): the
//! kernel's errno or a full writer queue, with what to check.

/// Why a send was refused ([`BindingError::Refused`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The kernel refused the send with this `errno` (`EPERM`, `ENOBUFS`,
    /// `EAGAIN`, `ECONNREFUSED`).
    Os(i32),
    /// The middleware's writer queue was full and the writer does not block.
    QueueFull,
}

impl Refusal {
    /// The kernel errors that refuse one send without breaking the writer:
    /// `Some` for them, `None` for any other error.
    pub fn of_os_error(e: &std::io::Error) -> Option<Refusal> {
        match e.raw_os_error()? {
            n @ (libc::EPERM | libc::ENOBUFS | libc::EAGAIN | libc::ECONNREFUSED) => {
                Some(Refusal::Os(n))
            }
            _ => None,
        }
    }

    /// The errno's name and what to check, in a few words.
    fn explain(self) -> (&'static str, &'static str) {
        match self {
            Refusal::Os(libc::EPERM) => (
                "EPERM",
                "a firewall rule on this host drops the packets (check `nft list ruleset` / `iptables -S OUTPUT`)",
            ),
            Refusal::Os(libc::ENOBUFS) => (
                "ENOBUFS",
                "the interface queue or socket send buffer is full (check --socket-buffer, `sysctl net.core.wmem_max`, the interface's txqueuelen)",
            ),
            Refusal::Os(libc::EAGAIN) => (
                "EAGAIN",
                "the socket or queue is full and the writer does not block (use --rate, a larger --socket-buffer or --send-queue)",
            ),
            Refusal::Os(libc::ECONNREFUSED) => (
                "ECONNREFUSED",
                "the reader's port is closed (check that the subscriber is running and reachable)",
            ),
            Refusal::Os(_) => ("the kernel", "see the error number"),
            Refusal::QueueFull => (
                "writer queue full",
                "the middleware's send queue is full (use --rate or a larger --send-queue)",
            ),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (name, check) = self.explain();
        match self {
            Refusal::Os(n) => write!(
                f,
                "{name} ({}): {check}",
                std::io::Error::from_raw_os_error(*n)
            ),
            Refusal::QueueFull => write!(f, "{name}: {check}"),
        }
    }
}
