//! Only a connection that proves the run's key is served: a writer of a
//! run with a key ([`EndpointConfig::sample_key`]) opens each connection it
//! makes with a key frame (before its hello, [`super::links`]), and a
//! reader of such a run serves the first connection whose first bytes are
//! that frame. Connections that send anything else, or nothing within
//! [`PROOF_TIME`], are closed, and the reader keeps accepting: a
//! stranger's idle connection to a reader's port no longer holds a run up
//! (it blocked one until it was killed 17 s later). Up to [`WAITING_MAX`]
//! connections are screened side by side; beyond that the oldest is
//! closed, so a flood of strangers delays the real writer by no more than
//! its own connection's first round trip.
//!
//! The key is the one every sample already carries in the clear (bytes
//! 16..24 of its header): it proves the writer knows the run, which only
//! the run's two sides and whoever sees their traffic do.
//!
//! [`EndpointConfig::sample_key`]: pubsubperf_core::EndpointConfig::sample_key

use super::StreamSocket;
use std::time::{Duration, Instant};

/// Marker of a key frame (in place of a sample's length prefix, as the
/// hello's and turn's markers).
const KEY: u32 = u32::MAX - 2;
/// A key frame's length: marker, body length (8), the key.
pub(super) const KEY_FRAME: usize = 16;
/// How long an accepted connection has to send its key frame.
pub const PROOF_TIME: Duration = Duration::from_secs(2);
/// Connections screened at once.
pub const WAITING_MAX: usize = 8;

/// The key frame proving `key`.
pub(super) fn key_frame(key: u64) -> [u8; KEY_FRAME] {
    let mut f = [0u8; KEY_FRAME];
    f[..4].copy_from_slice(&KEY.to_le_bytes());
    f[4..8].copy_from_slice(&8u32.to_le_bytes());
    f[8..].copy_from_slice(&key.to_le_bytes());
    f
}

/// What a reader of a keyed run has accepted and not yet served.
pub(super) struct Screen<S> {
    proof: [u8; KEY_FRAME],
    waiting: Vec<(S, Instant)>,
}

/// What a look at a waiting connection's first bytes found.
enum Look {
    Proven,
    Waiting,
    Stranger,
}

impl<S: StreamSocket> Screen<S> {
    pub(super) fn new(key: u64) -> Self {
        Screen {
            proof: key_frame(key),
            waiting: Vec::new(),
        }
    }

    /// A connection just accepted; the oldest waiting one is closed when
    /// [`WAITING_MAX`] already wait.
    pub(super) fn admit(&mut self, s: S) {
        if self.waiting.len() >= WAITING_MAX {
            self.waiting.remove(0);
        }
        self.waiting.push((s, Instant::now()));
    }

    /// The first waiting connection that proved the key, its key frame
    /// read; strangers and connections past [`PROOF_TIME`] are closed.
    pub(super) fn proven(&mut self) -> Option<S> {
        let mut at = 0;
        while at < self.waiting.len() {
            let (s, since) = &self.waiting[at];
            match self.look(s) {
                Look::Proven => {
                    let (s, _) = self.waiting.remove(at);
                    let mut head = [0u8; KEY_FRAME];
                    // Peeked whole, so this read returns it at once.
                    if crate::sys::recv(&s, &mut head, libc::MSG_DONTWAIT).ok() == Some(KEY_FRAME) {
                        return Some(s);
                    }
                    continue;
                }
                Look::Waiting if since.elapsed() < PROOF_TIME => at += 1,
                Look::Waiting | Look::Stranger => {
                    self.waiting.remove(at);
                }
            }
        }
        None
    }

    /// Closes every connection still waiting (the reader has its writer).
    pub(super) fn close_waiting(&mut self) {
        self.waiting.clear();
    }

    fn look(&self, s: &S) -> Look {
        let mut head = [0u8; KEY_FRAME];
        match crate::sys::recv(s, &mut head, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
            // Closed by the peer.
            Ok(0) => Look::Stranger,
            Ok(n) if head[..n] != self.proof[..n] => Look::Stranger,
            Ok(KEY_FRAME) => Look::Proven,
            Ok(_) => Look::Waiting,
            Err(e) if crate::wait::is_wait(&e) => Look::Waiting,
            Err(_) => Look::Stranger,
        }
    }
}
