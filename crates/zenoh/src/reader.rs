//! [`ZenohReader`]: the subscriber of one key expression and its queue.

use crate::*;
use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::{BindingError, Reader, WaitMode};
use std::time::{Duration, Instant};
use zenoh::Session;
use zenoh::handlers::{FifoChannelHandler, RingChannelHandler};
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Subscriber;
use zenoh::sample::Sample;

pub(crate) enum Sub {
    Fifo(Subscriber<FifoChannelHandler<Sample>>),
    Ring(Subscriber<RingChannelHandler<Sample>>),
}

impl Sub {
    #[inline]
    pub(crate) fn try_recv(&self) -> zenoh::Result<Option<Sample>> {
        match self {
            Sub::Fifo(s) => s.try_recv(),
            Sub::Ring(s) => s.try_recv(),
        }
    }
    #[inline]
    pub(crate) fn recv_timeout(&self, t: Duration) -> zenoh::Result<Option<Sample>> {
        match self {
            Sub::Fifo(s) => s.recv_timeout(t),
            Sub::Ring(s) => s.recv_timeout(t),
        }
    }
}

/// Reader of the `zenoh` binding: a subscriber with a FIFO (reliable) or ring
/// (best effort) channel on the listening session.
pub struct ZenohReader {
    pub(crate) sub: Sub,
    pub(crate) _token: LivelinessToken,
    pub(crate) writers_key: String,
    pub(crate) session: Session,
    pub(crate) wait: WaitMode,
    pub(crate) cancel: pubsubperf_core::CancelToken,
}

impl Reader for ZenohReader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        wait_tokens(
            &self.session,
            &self.writers_key,
            1,
            timeout,
            &self.cancel,
            || true,
        )
    }

    #[inline]
    fn recv<F: FnMut(&[u8])>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        let sample = loop {
            let got = match self.wait {
                WaitMode::Busy => self.sub.try_recv(),
                WaitMode::Block => {
                    let left = timeout.saturating_sub(start.elapsed()).min(CANCEL_POLL);
                    self.sub.recv_timeout(left)
                }
            }
            .map_err(|e| BindingError::Middleware(format!("zenoh receive: {e}")))?;
            if let Some(s) = got {
                break s;
            }
            if self.cancel.is_cancelled() {
                return Err(BindingError::Cancelled);
            }
            if start.elapsed() >= timeout {
                return Ok(0);
            }
            if self.wait == WaitMode::Busy {
                std::hint::spin_loop();
            }
        };
        // Contiguous payloads (every one here: small messages, defragmented
        // large ones, SHM buffers) are borrowed, not copied.
        let bytes = sample.payload().to_bytes();
        on_sample(&bytes);
        Ok(1)
    }
}
