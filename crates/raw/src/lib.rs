//! Raw transport bindings: the physical baseline that middleware is measured
//! against (like Perftest's raw transport).
//!
//! - [`udp::Udp`]: one datagram per sample (or per batch), IPv4/IPv6,
//!   unicast or multicast; best effort only.
//! - [`stream::Tcp`] and [`stream::Uds`]: length-prefixed frames on a
//!   stream socket; reliable only.
//! - [`intra::Intra`]: a lock-free single-producer ring between threads of
//!   one process.

pub mod intra;
pub mod stream;
pub mod udp;
mod wait;

pub use intra::Intra;
pub use stream::{Tcp, Uds};
pub use udp::Udp;
