//! [`ZenohReader`]: the subscriber of one key expression and its queue.

use crate::*;
use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::handoff::{Handoff, TakeAll};
use pubsubperf_core::listener::{self, ListenerReader};
use pubsubperf_core::received::{Pieces, Received};
use pubsubperf_core::{BindingError, Reader, WaitMode};
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use zenoh::bytes::ZBytes;
use zenoh::handlers::{Callback, FifoChannelHandler, RingChannelHandler};
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::Subscriber;
use zenoh::sample::Sample;

/// A zenoh channel of `T`: FIFO (reliable: a full one holds zenoh's
/// receive task) or ring (best effort: a full one drops the oldest).
pub(crate) enum Channel<T> {
    Fifo(FifoChannelHandler<T>),
    Ring(RingChannelHandler<T>),
}

impl<T> Channel<T> {
    #[inline]
    fn try_recv(&self) -> zenoh::Result<Option<T>> {
        match self {
            Channel::Fifo(q) => q.try_recv(),
            Channel::Ring(q) => q.try_recv(),
        }
    }
    #[inline]
    fn recv_timeout(&self, t: Duration) -> zenoh::Result<Option<T>> {
        match self {
            Channel::Fifo(q) => q.recv_timeout(t),
            Channel::Ring(q) => q.recv_timeout(t),
        }
    }
}

/// The queue a subscriber's samples wait in until our thread takes them.
///
/// With `--receive listener --wait block` it holds copies: a sample waits
/// there only when it arrives between two receive windows, and zenoh's
/// sample would keep the whole receive batch it came in (a 64 KiB buffer of
/// zenoh's receive pool, one per sample at a paced rate) until taken. A
/// stall of our thread between windows then pinned up to the queue's 256
/// batches (16 MiB), which stayed in the allocator as the process's
/// high-water mark (`bench/soak.sh`: +2.8 MiB at the end of a loaded
/// hour). A copy holds only the sample's own bytes. With `--wait busy` the
/// latency publisher polls this queue for every echo (z_ping's busy mode
/// beside a callback), so there it holds zenoh's samples, uncopied.
pub(crate) enum Queue {
    Samples(Channel<Sample>),
    Copies(Channel<Vec<u8>>),
}

/// A sample taken from the [`Queue`].
#[allow(
    clippy::large_enum_variant,
    reason = "moved once per take; boxing zenoh's sample would allocate per sample"
)]
pub(crate) enum Taken {
    Sample(Sample),
    Copy(Vec<u8>),
}

impl Taken {
    /// Calls `f` with the sample: a payload in one piece is borrowed, one
    /// in pieces (defragmented large samples) handed over in its pieces
    /// (see [`with_received`]); a [`Taken::Copy`] is one piece, joined
    /// when it was queued.
    #[inline]
    fn deliver<F: FnMut(Received<'_>)>(&self, f: &mut F) {
        match self {
            Taken::Sample(s) => with_received(s.payload(), f),
            Taken::Copy(v) => f(Received::whole(v)),
        }
    }
}

/// A payload's slices after its first.
struct AfterFirst<'a>(&'a ZBytes);

impl Pieces for AfterFirst<'_> {
    fn for_each_after_first(&self, f: &mut dyn FnMut(&[u8])) {
        self.0.slices().skip(1).for_each(f);
    }
}

/// Calls `f` with `payload` as received: borrowed when in one slice (small
/// samples, SHM buffers); in its slices when zenoh defragmented it (a
/// sample larger than a batch: each fragment's bytes stay in the batch it
/// arrived in), which are joined only if the first is too short for the
/// sample's head.
#[inline]
fn with_received<R>(payload: &ZBytes, f: impl FnOnce(Received<'_>) -> R) -> R {
    let mut slices = payload.slices();
    let first = slices.next().unwrap_or_default();
    if slices.next().is_none() {
        return f(Received::whole(first));
    }
    let rest = AfterFirst(payload);
    match Received::in_pieces(first, payload.len(), &rest) {
        Some(r) => f(r),
        None => f(Received::whole(&payload.to_bytes())),
    }
}

impl Queue {
    #[inline]
    fn try_recv(&self) -> zenoh::Result<Option<Taken>> {
        Ok(match self {
            Queue::Samples(c) => c.try_recv()?.map(Taken::Sample),
            Queue::Copies(c) => c.try_recv()?.map(Taken::Copy),
        })
    }
    #[inline]
    fn recv_timeout(&self, t: Duration) -> zenoh::Result<Option<Taken>> {
        Ok(match self {
            Queue::Samples(c) => c.recv_timeout(t)?.map(Taken::Sample),
            Queue::Copies(c) => c.recv_timeout(t)?.map(Taken::Copy),
        })
    }
}

/// What the `--receive listener` callback shares with the reader.
pub(crate) struct Listening {
    pub(crate) handoff: Box<Handoff>,
    /// Samples pushed into the queue and not yet taken (a ring that dropped
    /// one leaves this above the truth, which only costs a look at the
    /// queue).
    pub(crate) held: AtomicUsize,
}

/// How the `--receive listener` callback queues a sample it cannot hand
/// over: as a copy, or as zenoh's sample (see [`Queue`]).
pub(crate) enum Hold {
    Copies(Callback<Vec<u8>>),
    Samples(Callback<Sample>),
}

impl Listening {
    /// The subscriber's callback: straight to the open job, else queued
    /// (through `hold`, the queue's own callback) for the next take.
    pub(crate) fn on_sample(&self, sample: Sample, hold: &Hold) {
        if with_received(sample.payload(), |r| self.handoff.offer(r)) {
            return;
        }
        // Counted before it is queued, so that a take never finds more
        // samples than the count says.
        self.held.fetch_add(1, Ordering::AcqRel);
        match hold {
            Hold::Copies(queue) => {
                let copy = sample.payload().to_bytes().into_owned();
                drop(sample);
                queue.call(copy);
            }
            Hold::Samples(queue) => queue.call(sample),
        }
        self.handoff.deliver();
    }
}

/// Reader of the `zenoh` binding: a subscriber with a FIFO (reliable) or ring
/// (best effort) channel on the listening session.
pub struct ZenohReader {
    pub(crate) sub: Subscriber<Queue>,
    /// `--receive listener`: the subscriber's callback (zenoh's receive
    /// task) delivers each sample through the hand-off while a
    /// `recv_window`/`recv_on_arrival` call is open; what arrives while it
    /// is closed waits in the queue for the next take.
    pub(crate) listening: Option<Arc<Listening>>,
    pub(crate) _token: LivelinessToken,
    pub(crate) writers_key: String,
    /// Let go last, after the subscriber and its token.
    pub(crate) session: crate::closing::Held,
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
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        let sample = loop {
            let got = match self.wait {
                WaitMode::Busy => self.try_recv(),
                WaitMode::Block => {
                    let left = timeout.saturating_sub(start.elapsed()).min(CANCEL_POLL);
                    self.recv_timeout(left)
                }
            }?;
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
                pubsubperf_core::busy::yield_between_polls();
            }
        };
        sample.deliver(on_sample);
        Ok(1)
    }

    fn recv_window<F: FnMut(Received<'_>) + Send>(
        &mut self,
        window: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        listener::recv_window(self, window, on_sample)
    }

    fn recv_on_arrival<F: FnMut(Received<'_>) + Send>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        listener::recv_on_arrival(self, timeout, on_sample)
    }
}

fn receive_error(e: zenoh::Error) -> BindingError {
    BindingError::Middleware(format!("zenoh receive: {e}"))
}

impl ZenohReader {
    /// A sample from the queue, if one is there.
    #[inline]
    fn try_recv(&self) -> Result<Option<Taken>, BindingError> {
        if let Some(l) = &self.listening
            && l.held.load(Ordering::Acquire) == 0
        {
            return Ok(None);
        }
        let got = self.sub.try_recv().map_err(receive_error)?;
        self.taken(&got);
        Ok(got)
    }

    /// A sample from the queue, waiting up to `t` for one.
    #[inline]
    fn recv_timeout(&self, t: Duration) -> Result<Option<Taken>, BindingError> {
        let got = self.sub.recv_timeout(t).map_err(receive_error)?;
        self.taken(&got);
        Ok(got)
    }

    #[inline]
    fn taken(&self, got: &Option<Taken>) {
        if let (Some(l), Some(_)) = (&self.listening, got) {
            l.held.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl TakeAll for ZenohReader {
    fn take_all<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let mut n = 0;
        while let Some(s) = self.try_recv()? {
            s.deliver(on_sample);
            n += 1;
        }
        Ok(n)
    }
}

impl ListenerReader for ZenohReader {
    fn handoff(&self) -> Option<&Handoff> {
        self.listening.as_deref().map(|l| &*l.handoff)
    }

    /// The subscriber's callback was set with it ([`Listening::on_sample`]).
    unsafe fn set_listener(&mut self, _arg: *mut c_void) -> Result<(), BindingError> {
        Ok(())
    }

    fn cancel(&self) -> &pubsubperf_core::CancelToken {
        &self.cancel
    }
}
