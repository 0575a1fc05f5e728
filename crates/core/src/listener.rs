//! A reader's `--receive listener`, written once for every binding whose
//! middleware calls back when data arrives (a DDS data-available listener,
//! zenoh's subscriber callback): the reader sets that callback at its
//! first window, then each [`Reader::recv_window`] or
//! [`Reader::recv_on_arrival`] call opens the reader's [`Handoff`] for its
//! closure and sleeps while the middleware's thread delivers through it
//! ([`deliver`]). Without `--receive listener` the reader's own
//! [`Reader::recv`] runs, as before.
//!
//! A binding implements [`ListenerReader`] (where its hand-off is, how it
//! sets its callback) and makes [`recv_window`] and [`recv_on_arrival`] its
//! [`Reader`] methods; its callback calls [`deliver`] with the argument it
//! was set with. Everything is generic: no allocation, lock or dynamic call
//! per sample beyond the hand-off's own.

use crate::handoff::{Handoff, Job, TakeAll, Until};
use crate::{BindingError, CancelToken, Reader, Received};
use std::ffi::c_void;
use std::time::Duration;

/// A reader whose middleware can run the subscriber's per-sample code on
/// its own thread.
pub trait ListenerReader: Reader + TakeAll {
    /// The hand-off shared with the middleware's thread; None without
    /// `--receive listener`.
    fn handoff(&self) -> Option<&Handoff>;

    /// Makes sure the middleware calls [`deliver`] with `arg` (the
    /// hand-off) when data arrives: sets its callback at the first call
    /// and does nothing at the next ones (nor at all for a middleware
    /// whose callback was set with the reader). The binding keeps the
    /// hand-off alive until the callback is removed.
    ///
    /// # Safety
    /// `arg` points to this reader's [`ListenerReader::handoff`].
    unsafe fn set_listener(&mut self, arg: *mut c_void) -> Result<(), BindingError>;

    /// The run's cancel token.
    fn cancel(&self) -> &CancelToken;
}

/// [`Reader::recv_window`] of a [`ListenerReader`]: delivers on the
/// middleware's thread until `window` has passed (or on cancel).
pub fn recv_window<R: ListenerReader, F: FnMut(Received<'_>) + Send>(
    reader: &mut R,
    window: Duration,
    on_sample: &mut F,
) -> Result<usize, BindingError> {
    listen(reader, window, Until::WindowEnds, on_sample)
}

/// [`Reader::recv_on_arrival`] of a [`ListenerReader`]: delivers on the
/// middleware's thread and returns after the first delivery (or
/// `timeout`).
pub fn recv_on_arrival<R: ListenerReader, F: FnMut(Received<'_>) + Send>(
    reader: &mut R,
    timeout: Duration,
    on_sample: &mut F,
) -> Result<usize, BindingError> {
    listen(reader, timeout, Until::FirstDelivery, on_sample)
}

/// Opens the hand-off for `on_sample`, delivers what is already there,
/// sleeps while the middleware's thread delivers what arrives (through
/// `time`, or as `until` says), and closes. Without a hand-off,
/// [`Reader::recv`].
fn listen<R: ListenerReader, F: FnMut(Received<'_>) + Send>(
    reader: &mut R,
    time: Duration,
    until: Until,
    on_sample: &mut F,
) -> Result<usize, BindingError> {
    let Some(handoff) = reader.handoff() else {
        return reader.recv(time, on_sample);
    };
    let handoff: *const Handoff = handoff;
    // SAFETY: the reader's own hand-off.
    unsafe { reader.set_listener(handoff as *mut c_void)? };
    let cancel = reader.cancel().clone();
    // From here to the window's end, the reader is the deliverer's alone
    // (through the job's pointer): this thread touches only the hand-off
    // and the clone of the cancel token.
    let job = Job::new(on_sample, reader as *mut R);
    // SAFETY: the hand-off is the reader's, which outlives the call (&mut);
    // one call at a time (&mut); the job's closure and reader outlive the
    // call.
    unsafe { (*handoff).receive(job, time, until, &cancel) }
}

/// What the middleware's callback does: delivers what the reader holds
/// through the hand-off `arg`, if a window is open (else the samples wait
/// for the next one).
///
/// # Safety
/// `arg` is the argument [`ListenerReader::set_listener`] was given, and
/// its reader still holds the hand-off.
pub unsafe fn deliver(arg: *mut c_void) {
    // SAFETY: per the function's contract.
    let handoff = unsafe { &*(arg as *const Handoff) };
    handoff.deliver();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::atomic::{AtomicPtr, Ordering};
    use std::sync::{Arc, Mutex};

    /// A reader of a queue that another thread (the "middleware") fills,
    /// calling back through the argument its listener was set with.
    struct Queue {
        held: Arc<Mutex<VecDeque<u8>>>,
        handoff: Option<Box<Handoff>>,
        listener: Arc<AtomicPtr<c_void>>,
        sets: usize,
        refuse: bool,
        own_recvs: usize,
        cancel: CancelToken,
    }

    impl Queue {
        fn new(listener: bool) -> Queue {
            Queue {
                held: Arc::default(),
                handoff: listener.then(Handoff::new),
                listener: Arc::default(),
                sets: 0,
                refuse: false,
                own_recvs: 0,
                cancel: CancelToken::new(),
            }
        }
    }

    impl Reader for Queue {
        fn recv<F: FnMut(Received<'_>)>(
            &mut self,
            _timeout: Duration,
            on_sample: &mut F,
        ) -> Result<usize, BindingError> {
            self.own_recvs += 1;
            self.take_all(on_sample)
        }
    }

    impl TakeAll for Queue {
        fn take_all<F: FnMut(Received<'_>)>(
            &mut self,
            on_sample: &mut F,
        ) -> Result<usize, BindingError> {
            let mut n = 0;
            while let Some(b) = self.held.lock().unwrap().pop_front() {
                on_sample(Received::whole(&[b]));
                n += 1;
            }
            Ok(n)
        }
    }

    impl ListenerReader for Queue {
        fn handoff(&self) -> Option<&Handoff> {
            self.handoff.as_deref()
        }

        unsafe fn set_listener(&mut self, arg: *mut c_void) -> Result<(), BindingError> {
            if self.refuse {
                return Err(BindingError::Middleware("no listener here".into()));
            }
            if self.listener.load(Ordering::Acquire).is_null() {
                self.sets += 1;
                self.listener.store(arg, Ordering::Release);
            }
            Ok(())
        }

        fn cancel(&self) -> &CancelToken {
            &self.cancel
        }
    }

    /// The middleware's thread: queues `0..n` one at a time, calling the
    /// listener after each, once the listener is set.
    fn middleware(held: &Mutex<VecDeque<u8>>, listener: &AtomicPtr<c_void>, n: u8) {
        let arg = loop {
            let arg = listener.load(Ordering::Acquire);
            if !arg.is_null() {
                break arg;
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        for b in 0..n {
            held.lock().unwrap().push_back(b);
            // SAFETY: the reader (and its hand-off) outlives this thread.
            unsafe { deliver(arg) };
        }
    }

    #[test]
    fn without_a_listener_the_readers_own_recv_runs() {
        let mut q = Queue::new(false);
        q.held.lock().unwrap().extend([7, 8]);
        let mut got = Vec::new();
        let n = recv_window(&mut q, Duration::from_secs(5), &mut |r: Received| {
            got.push(r.to_vec()[0])
        });
        assert_eq!(
            (n.unwrap(), got, q.own_recvs, q.sets),
            (2, vec![7, 8], 1, 0)
        );
        let n = recv_on_arrival(&mut q, Duration::from_secs(5), &mut |_: Received| {});
        assert_eq!((n.unwrap(), q.own_recvs), (0, 2));
    }

    #[test]
    fn windows_set_the_listener_once_and_get_every_sample_in_order() {
        let mut q = Queue::new(true);
        let (held, listener) = (Arc::clone(&q.held), Arc::clone(&q.listener));
        let mut order = Vec::new();
        std::thread::scope(|s| {
            s.spawn(|| middleware(&held, &listener, 50));
            let mut total = 0;
            while total < 50 {
                total += recv_window(&mut q, Duration::from_millis(50), &mut |r: Received| {
                    order.push(r.to_vec()[0])
                })
                .unwrap();
            }
        });
        assert_eq!(order, (0..50).collect::<Vec<u8>>());
        assert_eq!((q.sets, q.own_recvs), (1, 0));
    }

    #[test]
    fn an_arrival_ends_the_wait_for_it() {
        let mut q = Queue::new(true);
        let (held, listener) = (Arc::clone(&q.held), Arc::clone(&q.listener));
        let start = std::time::Instant::now();
        let n = std::thread::scope(|s| {
            s.spawn(|| middleware(&held, &listener, 1));
            recv_on_arrival(&mut q, Duration::from_secs(600), &mut |r: Received| {
                assert_eq!(r.to_vec(), [0])
            })
        });
        assert_eq!(n.unwrap(), 1);
        // Woken by the arrival, not by the end of its 10 minutes.
        assert!(start.elapsed() < Duration::from_secs(300));
    }

    #[test]
    fn a_listener_that_cannot_be_set_fails_the_call() {
        let mut q = Queue::new(true);
        q.refuse = true;
        q.held.lock().unwrap().push_back(1);
        let e = recv_window(&mut q, Duration::from_secs(5), &mut |_: Received| {
            panic!("delivered without a listener")
        })
        .unwrap_err();
        assert!(e.to_string().contains("no listener here"), "{e}");
        assert_eq!(q.held.lock().unwrap().len(), 1);
    }
}
