//! [`Iceoryx2Reader`]: receives samples of one service and waits on its
//! listener.

use super::*;
use crate::tidy::Tidy;
use iceoryx2::port::listener::{Listener, ListenerWaitError};
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::service::port_factory::event::PortFactory as EventService;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSubService;
use pubsubperf_core::Received;
use pubsubperf_core::binding::CANCEL_POLL;
use pubsubperf_core::{BindingError, CancelToken, Reader, WaitMode};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Reader of the iceoryx2 binding: a subscriber (and, when it blocks, a
/// listener) of one topic's services.
pub struct Iceoryx2Reader {
    pub(crate) subscriber: Subscriber<Svc, [u8], ()>,
    pub(crate) listener: Option<Listener<Svc>>,
    pub(crate) service: PubSubService<Svc, [u8], ()>,
    pub(crate) events: Option<EventService<Svc>>,
    pub(crate) publishers: usize,
    /// Copy mode: the application's private buffer samples are copied into.
    pub(crate) private: Vec<u8>,
    pub(crate) zero_copy: bool,
    pub(crate) wait: WaitMode,
    /// Most samples delivered by one `recv` (the buffer and one more), so a
    /// fast writer cannot keep `recv` from returning.
    pub(crate) drain_max: usize,
    pub(crate) cancel: CancelToken,
    pub(crate) name: String,
    /// Declared last: dropped after the ports.
    pub(crate) _tidy: Arc<Tidy>,
}

// SAFETY: see `Iceoryx2Writer`: samples never outlive `recv`.
unsafe impl Send for Iceoryx2Reader {}

impl Iceoryx2Reader {
    /// Delivers the samples available now (at most `drain_max`).
    #[inline(always)]
    pub(crate) fn drain<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let mut n = 0;
        while n < self.drain_max {
            let sample = match self.subscriber.receive() {
                Ok(Some(s)) => s,
                Ok(None) => break,
                Err(e) => return Err(mw(format!("receive on {}: {e:?}", self.name))),
            };
            n += 1;
            if self.zero_copy {
                on_sample(Received::whole(sample.payload()));
                drop(sample);
            } else {
                let p = sample.payload();
                let len = p.len();
                if len > self.private.len() {
                    return Err(BindingError::Malformed(format!(
                        "{len}-byte sample on {} (largest {})",
                        self.name,
                        self.private.len()
                    )));
                }
                self.private[..len].copy_from_slice(p);
                // The chunk goes back to the publisher before the
                // application looks at its copy.
                drop(sample);
                on_sample(Received::whole(&self.private[..len]));
            }
        }
        Ok(n)
    }

    #[cold]
    pub(crate) fn wait_event(&self, left: Duration) -> Result<(), BindingError> {
        let Some(l) = &self.listener else {
            return Ok(());
        };
        match l.timed_wait(|_| {}, left.min(CANCEL_POLL)) {
            Ok(_) | Err(ListenerWaitError::InterruptSignal) => Ok(()),
            Err(e) => Err(mw(format!("waiting on {} events: {e:?}", self.name))),
        }
    }
}

impl Reader for Iceoryx2Reader {
    fn wait_matched(&mut self, timeout: Duration) -> Result<(), BindingError> {
        let want = self.publishers;
        let (service, events) = (&self.service, &self.events);
        let counts = || {
            (
                service.dynamic_config().number_of_publishers(),
                events
                    .as_ref()
                    .map_or(want, |e| e.dynamic_config().number_of_notifiers()),
            )
        };
        wait_until(
            timeout,
            &self.cancel,
            || {
                let (p, n) = counts();
                format!("{p} of {want} publishers ({n} notifiers) on {}", self.name)
            },
            || {
                let (p, n) = counts();
                Ok(p >= want && n >= want)
            },
        )?;
        // Attach to the publishers' connections now: until the subscriber
        // has, a reliable publisher does not block on its full buffer (it
        // drops instead), and the first `recv` would pay for connecting.
        self.subscriber
            .has_samples()
            .map_err(|e| mw(format!("connecting {}: {e:?}", self.name)))?;
        Ok(())
    }

    #[inline]
    fn recv<F: FnMut(Received<'_>)>(
        &mut self,
        timeout: Duration,
        on_sample: &mut F,
    ) -> Result<usize, BindingError> {
        let n = self.drain(on_sample)?;
        if n > 0 {
            return Ok(n);
        }
        match self.wait {
            WaitMode::Busy => {
                // The clock is first read after 256 empty polls: a sample
                // that comes sooner costs no clock read.
                let mut start = None::<Instant>;
                let mut spins = 0u32;
                loop {
                    let n = self.drain(on_sample)?;
                    if n > 0 {
                        return Ok(n);
                    }
                    spins = spins.wrapping_add(1);
                    if spins.is_multiple_of(256) {
                        if self.cancel.is_cancelled() {
                            return Err(BindingError::Cancelled);
                        }
                        if start.get_or_insert_with(Instant::now).elapsed() >= timeout {
                            return Ok(0);
                        }
                    }
                    std::hint::spin_loop();
                }
            }
            WaitMode::Block => {
                let start = Instant::now();
                loop {
                    if self.cancel.is_cancelled() {
                        return Err(BindingError::Cancelled);
                    }
                    let elapsed = start.elapsed();
                    if elapsed >= timeout {
                        return Ok(0);
                    }
                    // The writer notifies after each send, so a sample that
                    // arrives after the drain above wakes this wait.
                    self.wait_event(timeout - elapsed)?;
                    let n = self.drain(on_sample)?;
                    if n > 0 {
                        return Ok(n);
                    }
                }
            }
        }
    }
}
