//! [`ZenohWriter`]: puts samples on one key expression (copies, or loaned
//! shared-memory buffers).

use crate::payloads::Payloads;
use crate::*;
use pubsubperf_core::room::wait_for_room;
use pubsubperf_core::{BindingError, Refusal, Writer};
use std::time::Duration;
use zenoh::bytes::ZBytes;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Publisher;
use zenoh::shm::{Defragment, GarbageCollect, PosixShmProviderBackend, ShmProvider};
use zenoh::{Session, Wait};

/// Writer of the `zenoh` binding: its own session, connected to the readers.
pub struct ZenohWriter {
    pub(crate) publisher: Option<Publisher<'static>>,
    pub(crate) _token: Option<LivelinessToken>,
    pub(crate) session: Option<Session>,
    pub(crate) provider: Option<ShmProvider<PosixShmProviderBackend>>,
    pub(crate) readers_key: String,
    /// Copy mode's scratch buffer, filled before the copy into a loaned
    /// SHM buffer (`--transport shm` without `--zero-copy`).
    pub(crate) scratch: Vec<u8>,
    /// The payload buffers of tcp and udp.
    pub(crate) payloads: Payloads,
    pub(crate) max: usize,
    pub(crate) zero_copy: bool,
    pub(crate) reliable: bool,
    pub(crate) block_timeout: Duration,
    pub(crate) cancel: pubsubperf_core::CancelToken,
}

impl ZenohWriter {
    /// A buffer of `len` bytes from the SHM provider; waits for buffers the
    /// readers still hold (bounded for reliable; best effort refuses the
    /// send, counted as rejected).
    pub(crate) fn shm_buffer(&self, len: usize) -> Result<zenoh::shm::ZShmMut, BindingError> {
        let provider = self.provider.as_ref().expect("shm writer has a provider");
        let alloc = || {
            provider
                .alloc(len)
                .with_policy::<Defragment<GarbageCollect>>()
                .wait()
                .ok()
        };
        if let Some(b) = alloc() {
            return Ok(b);
        }
        if !self.reliable {
            return Err(BindingError::Refused {
                what: "zenoh shm alloc",
                refusal: Refusal::QueueFull,
            });
        }
        wait_for_room(self.block_timeout, &self.cancel, alloc)
    }
}

impl Writer for ZenohWriter {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        let session = self.session.as_ref().expect("open writer");
        let publisher = self.publisher.as_ref().expect("open writer");
        let matched = || {
            publisher
                .matching_status()
                .wait()
                .map(|m| m.matching())
                .unwrap_or(false)
        };
        wait_tokens(
            session,
            &self.readers_key,
            readers,
            timeout,
            &self.cancel,
            matched,
        )
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            });
        }
        let payload = if self.provider.is_some() {
            let mut buf = self.shm_buffer(len)?;
            if self.zero_copy {
                fill(&mut buf[..len]);
            } else {
                let s = &mut self.scratch[..len];
                fill(s);
                buf[..len].copy_from_slice(s);
            }
            ZBytes::from(buf)
        } else {
            // zenoh's put takes an owned payload: a buffer of ours that it
            // holds until it is done with it (src/payloads.rs).
            self.payloads.fill(len, fill)
        };
        self.publisher
            .as_ref()
            .expect("open writer")
            .put(payload)
            .wait()
            .map_err(mw("put"))
    }
}

impl Drop for ZenohWriter {
    fn drop(&mut self) {
        // Undeclare, close the session, then free the SHM pool and remove
        // segments nobody holds any more (src/closing.rs: within a second,
        // or in the background over a dead link).
        self.publisher.take();
        self._token.take();
        let provider = self.provider.take();
        let free_pool = move || {
            if provider.is_some() {
                drop(provider);
                zenoh::shm::cleanup_orphaned_shm_segments();
            }
        };
        match self.session.take() {
            Some(s) => crate::closing::let_go(s, free_pool),
            None => free_pool(),
        }
    }
}
