//! [`Iceoryx2Writer`]: loans and sends samples of one service.

use super::*;
use crate::tidy::Tidy;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::port::{LoanError, SendError};
use iceoryx2::service::port_factory::event::PortFactory as EventService;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSubService;
use pubsubperf_core::{BindingError, CancelToken, Writer};
use std::sync::Arc;
use std::time::Duration;

/// Writer of the iceoryx2 binding: a publisher (and, when readers block, a
/// notifier) of one topic's services.
pub struct Iceoryx2Writer {
    pub(crate) publisher: Publisher<Svc, [u8], ()>,
    pub(crate) notifier: Option<Notifier<Svc>>,
    pub(crate) service: PubSubService<Svc, [u8], ()>,
    pub(crate) events: Option<EventService<Svc>>,
    /// Copy mode: the application's private sample.
    pub(crate) scratch: Vec<u8>,
    pub(crate) max: usize,
    pub(crate) zero_copy: bool,
    pub(crate) reliable: bool,
    pub(crate) block_timeout: Duration,
    pub(crate) cancel: CancelToken,
    pub(crate) name: String,
    /// Declared last: dropped after the ports.
    pub(crate) _tidy: Arc<Tidy>,
}

// SAFETY: iceoryx2's `ipc::Service` ports are `!Send` only because a port
// shares its state through an `Rc` with the samples it loans or receives
// (`SingleThreaded` arc policy). Those samples never outlive a `send` or
// `recv` call, so every clone of each `Rc` moves with the port; the service
// and node handles the ports reach are `Arc`s with their own locking.
unsafe impl Send for Iceoryx2Writer {}

impl Iceoryx2Writer {
    /// Maps an iceoryx2 send error; `UnableToDeliver` is the backpressure
    /// handler's verdict (block timeout or cancellation).
    #[cold]
    pub(crate) fn send_error(&self, e: SendError) -> BindingError {
        match e {
            SendError::UnableToDeliver if self.cancel.is_cancelled() => BindingError::Cancelled,
            SendError::UnableToDeliver => BindingError::WriteTimeout(self.block_timeout),
            SendError::ConnectionBrokenSinceSenderNoLongerExists => BindingError::Disconnected,
            e => mw(format!("send on {}: {e:?}", self.name)),
        }
    }

    /// A loan failed. Every chunk is in use only when a reader holds more
    /// than its share, which iceoryx2 prevents; so this is an error, except
    /// `OutOfMemory` under best effort, which drops the sample.
    #[cold]
    pub(crate) fn loan_error(&self, len: usize, e: LoanError) -> Result<(), BindingError> {
        match e {
            LoanError::ExceedsMaxLoanSize => Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            }),
            LoanError::OutOfMemory if !self.reliable => Ok(()),
            e => Err(mw(format!("loan on {}: {e:?}", self.name))),
        }
    }

    #[inline(always)]
    pub(crate) fn notify(&self) {
        if let Some(n) = &self.notifier {
            // A failed notification only delays the reader: it polls at
            // least every 100 ms.
            let _ = n.notify();
        }
    }
}

impl Writer for Iceoryx2Writer {
    fn wait_matched(&mut self, readers: usize, timeout: Duration) -> Result<(), BindingError> {
        let cancel = self.cancel.clone();
        let (service, events) = (&self.service, &self.events);
        let counts = || {
            (
                service.dynamic_config().number_of_subscribers(),
                events
                    .as_ref()
                    .map_or(readers, |e| e.dynamic_config().number_of_listeners()),
            )
        };
        wait_until(
            timeout,
            &cancel,
            || {
                let (s, l) = counts();
                format!(
                    "{s} of {readers} subscribers ({l} listeners) on {}",
                    self.name
                )
            },
            || {
                let (s, l) = counts();
                Ok(s >= readers && l >= readers)
            },
        )?;
        // Connect now, so the first sample is not the one that does it.
        self.publisher
            .update_connections()
            .map_err(|e| mw(format!("connecting {}: {e:?}", self.name)))?;
        if let Some(n) = &self.notifier {
            n.update_connections()
                .map_err(|e| mw(format!("connecting {} events: {e:?}", self.name)))?;
        }
        Ok(())
    }

    #[inline]
    fn send<F: FnOnce(&mut [u8])>(&mut self, len: usize, fill: F) -> Result<(), BindingError> {
        if len > self.max {
            return Err(BindingError::TooLarge {
                size: len,
                limit: self.max,
            });
        }
        let mut loan = match self.publisher.loan_slice_uninit(len) {
            Ok(l) => l,
            Err(e) => return self.loan_error(len, e),
        };
        let sample = if self.zero_copy {
            let p = loan.payload_mut();
            // SAFETY: the loaned chunk is `len` bytes of the publisher's
            // mmap'd data segment, ours until `send`. Its bytes are always
            // initialized memory (zero pages, then earlier samples):
            // `MaybeUninit` only records that iceoryx2 did not write them,
            // and `fill` may write fewer than all of them.
            let buf = unsafe { std::slice::from_raw_parts_mut(p.as_mut_ptr().cast::<u8>(), len) };
            fill(buf);
            // SAFETY: as above, every byte is initialized.
            unsafe { loan.assume_init() }
        } else {
            let buf = &mut self.scratch[..len];
            fill(buf);
            loan.write_from_slice(buf)
        };
        if let Err(e) = sample.send() {
            let err = self.send_error(e);
            // Under reliable delivery the sample may have reached other
            // readers; wake them anyway.
            self.notify();
            return Err(err);
        }
        self.notify();
        Ok(())
    }
}

// ---------------------------------------------------------------- reader
