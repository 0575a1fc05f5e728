//! `--receive listener` for any binding whose middleware calls a
//! data-available listener on its own receive thread: that thread runs the
//! subscriber's per-sample code while the thread in
//! [`Reader::recv_window`](crate::Reader::recv_window) sleeps. No thread is
//! woken per sample, as in ddsperf's and Perftest's default mode; with a
//! waitset, every arrival wakes our thread.
//!
//! The two threads hand the reader over through one atomic word:
//! - `OPEN`: a `recv_window` call is in progress and has set the job (its
//!   closure and the reader); a listener call may deliver.
//! - `BUSY`: one thread is delivering (taking and calling the closure).
//! - `PENDING`: data arrived while another thread was delivering; that one
//!   takes again before it leaves, so no arrival waits for the next one.
//! - `ARRIVED`: a delivery handed over samples (or failed); a call made
//!   with [`Until::FirstDelivery`] (the latency publisher waiting for its
//!   echo, [`Reader::recv_on_arrival`](crate::Reader::recv_on_arrival)) is
//!   unparked after it is set, and returns.
//!
//! Closed (no `recv_window` call), a listener call returns at once and the
//! samples stay in the reader: the next `recv_window` takes them first.

use crate::{BindingError, CancelToken, Received};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const OPEN: u32 = 1;
const BUSY: u32 = 2;
const PENDING: u32 = 4;
const ARRIVED: u32 = 8;

/// When a [`Handoff::receive`] call returns, before its time is up.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Until {
    /// Never: the subscriber's window is slept through.
    WindowEnds,
    /// After the first delivery that handed over samples: the ping's echo.
    FirstDelivery,
}

/// A reader a [`Handoff`] delivers from.
pub trait TakeAll {
    /// Takes every sample the reader holds now and calls `on_sample` for
    /// each; how many.
    fn take_all<F: FnMut(Received<'_>)>(
        &mut self,
        on_sample: &mut F,
    ) -> Result<usize, BindingError>;
}

/// `R::take_all` with `F`, behind untyped pointers.
type Run = unsafe fn(*mut (), *mut ()) -> Result<usize, BindingError>;
/// `F` called on one sample, behind an untyped pointer.
type Call = unsafe fn(*mut (), Received<'_>);

/// What a delivery does: set by `open`, read by the holder of `BUSY`.
#[derive(Clone, Copy)]
pub struct Job {
    run: Run,
    call: Call,
    on_sample: *mut (),
    reader: *mut (),
}

impl Job {
    /// A job calling `on_sample` for the samples of `reader`.
    pub fn new<F: FnMut(Received<'_>) + Send, R: TakeAll>(
        on_sample: &mut F,
        reader: *mut R,
    ) -> Job {
        Job {
            run: take_all::<F, R>,
            call: call::<F>,
            on_sample: on_sample as *mut F as *mut (),
            reader: reader as *mut (),
        }
    }
}

/// # Safety
/// `f` points to an `F` and `reader` to an `R`, both exclusively ours
/// while we hold `BUSY`.
unsafe fn take_all<F: FnMut(Received<'_>), R: TakeAll>(
    f: *mut (),
    reader: *mut (),
) -> Result<usize, BindingError> {
    // SAFETY: per the caller.
    let (f, reader) = unsafe { (&mut *(f as *mut F), &mut *(reader as *mut R)) };
    reader.take_all(f)
}

/// # Safety
/// `f` points to an `F`, exclusively ours while we hold `BUSY`.
unsafe fn call<F: FnMut(Received<'_>)>(f: *mut (), sample: Received<'_>) {
    // SAFETY: per the caller.
    unsafe { (*(f as *mut F))(sample) }
}

/// What the deliveries of one `recv_window` call came to.
#[derive(Default)]
struct Outcome {
    delivered: usize,
    error: Option<BindingError>,
}

/// The state both threads share; boxed, so that its address (the
/// listener's argument) stays put.
pub struct Handoff {
    state: AtomicU32,
    job: UnsafeCell<Option<Job>>,
    outcome: UnsafeCell<Outcome>,
    /// Unparked after a delivery that handed over samples, when set.
    waiter: UnsafeCell<Option<std::thread::Thread>>,
}

// SAFETY: `job`, `outcome` and `waiter` are touched only by the thread holding BUSY,
// or by the `recv_window` thread while the state is closed and not BUSY;
// the state's acquire/release orders those accesses.
unsafe impl Sync for Handoff {}
// SAFETY: as above; the raw pointers in `job` are used only under BUSY.
unsafe impl Send for Handoff {}

impl Handoff {
    pub fn new() -> Box<Handoff> {
        Box::new(Handoff {
            state: AtomicU32::new(0),
            job: UnsafeCell::new(None),
            outcome: UnsafeCell::new(Outcome::default()),
            waiter: UnsafeCell::new(None),
        })
    }

    /// One `recv_window` or `recv_on_arrival`: opens for deliveries of
    /// `job`, delivers what is already there, sleeps through `time` (or
    /// until cancelled, or as `until` says) while the middleware's listener
    /// delivers what arrives, and closes; how many samples that delivered.
    ///
    /// # Safety
    /// Not called from two threads at once; `job`'s closure and reader stay
    /// valid until it returns, and the caller does not touch them meanwhile.
    pub unsafe fn receive(
        &self,
        job: Job,
        time: Duration,
        until: Until,
        cancel: &CancelToken,
    ) -> Result<usize, BindingError> {
        let start = Instant::now();
        let first = until == Until::FirstDelivery;
        // SAFETY: closed since the last call (per the caller, one at a time).
        unsafe { self.open(job, first.then(std::thread::current)) };
        self.deliver();
        loop {
            let left = time.saturating_sub(start.elapsed());
            if left.is_zero() || cancel.is_cancelled() || (first && self.arrived()) {
                break;
            }
            let nap = left.min(crate::binding::CANCEL_POLL);
            if first {
                std::thread::park_timeout(nap);
            } else {
                std::thread::sleep(nap);
            }
        }
        let out = self.close();
        match out.error {
            Some(e) => Err(e),
            None if out.delivered == 0 && cancel.is_cancelled() => Err(BindingError::Cancelled),
            None => Ok(out.delivered),
        }
    }

    /// Opens for deliveries of `job`; each delivery that hands over
    /// samples unparks `waiter`, when given.
    ///
    /// # Safety
    /// Closed before: no other thread touches `job`, `outcome` or `waiter`.
    unsafe fn open(&self, job: Job, waiter: Option<std::thread::Thread>) {
        // SAFETY: per the caller.
        unsafe {
            *self.job.get() = Some(job);
            *self.outcome.get() = Outcome::default();
            *self.waiter.get() = waiter;
        }
        self.state.store(OPEN, Ordering::Release);
    }

    /// A delivery since `open` handed over samples (or failed).
    #[inline]
    fn arrived(&self) -> bool {
        self.state.load(Ordering::Acquire) & ARRIVED != 0
    }

    /// Delivers what the reader holds if no other thread is delivering
    /// (which, marked PENDING, then takes again before it leaves). Both
    /// the listener and `window`'s first take come here.
    pub fn deliver(&self) {
        if self.enter() {
            self.deliver_held();
        }
    }

    /// For a middleware that hands each sample to its callback (zenoh):
    /// delivers what the reader holds, then `sample`, straight to the open
    /// job; false, with nothing delivered, when closed or when another
    /// thread delivers: the caller then queues the sample where
    /// [`TakeAll::take_all`] finds it and calls [`Handoff::deliver`].
    pub fn offer(&self, sample: Received<'_>) -> bool {
        if !self.enter() {
            return false;
        }
        // SAFETY: we hold BUSY: `job` (set while OPEN) and `outcome` are ours.
        unsafe {
            let out = &mut *self.outcome.get();
            if let Some(job) = *self.job.get() {
                self.run_job(&job, out);
                if out.error.is_none() {
                    (job.call)(job.on_sample, sample);
                    out.delivered += 1;
                    self.arrival();
                }
            }
        }
        if self.leave() {
            self.deliver_held();
        }
        true
    }

    /// Holding BUSY: takes what the reader holds until no other thread
    /// asked for a take meanwhile, then leaves BUSY.
    fn deliver_held(&self) {
        loop {
            // SAFETY: we hold BUSY: `job` (set while OPEN) and `outcome`
            // are ours.
            unsafe {
                if let Some(job) = *self.job.get() {
                    self.run_job(&job, &mut *self.outcome.get());
                }
            }
            if !self.leave() {
                return;
            }
        }
    }

    /// Holding BUSY: the job's take of every sample held, counted into
    /// `out` (nothing once a take failed).
    ///
    /// # Safety
    /// The caller holds BUSY, and `job` is the one set while OPEN.
    unsafe fn run_job(&self, job: &Job, out: &mut Outcome) {
        if out.error.is_some() {
            return;
        }
        // SAFETY: per the caller, the job's closure and reader are ours.
        match unsafe { (job.run)(job.on_sample, job.reader) } {
            Ok(0) => {}
            Ok(n) => {
                out.delivered += n;
                self.arrival();
            }
            Err(e) => {
                out.error = Some(e);
                self.arrival();
            }
        }
    }

    /// Holding BUSY: marks that samples were handed over (or a take
    /// failed), and unparks the waiter, if any.
    fn arrival(&self) {
        self.state.fetch_or(ARRIVED, Ordering::Release);
        // SAFETY: the caller holds BUSY, so `waiter` is ours to read.
        if let Some(w) = unsafe { &*self.waiter.get() } {
            w.unpark();
        }
    }

    /// Becomes the deliverer; false when closed, or when another thread
    /// delivers (then marked PENDING for it).
    fn enter(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            if s & OPEN == 0 {
                return false;
            }
            let next = if s & BUSY != 0 {
                s | PENDING
            } else {
                (s | BUSY) & !PENDING
            };
            match self
                .state
                .compare_exchange_weak(s, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return s & BUSY == 0,
                Err(now) => s = now,
            }
        }
    }

    /// Leaves BUSY, unless data arrived meanwhile (PENDING): then clears
    /// that and returns true, still BUSY, to take again.
    fn leave(&self) -> bool {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            let (next, again) = if s & PENDING != 0 {
                (s & !PENDING, true)
            } else {
                (s & !BUSY, false)
            };
            match self
                .state
                .compare_exchange_weak(s, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return again,
                Err(now) => s = now,
            }
        }
    }

    /// Closes, waiting for a delivery in progress to finish; what the
    /// deliveries since `open` came to.
    fn close(&self) -> Outcome {
        let mut spins = 0u32;
        loop {
            let s = self.state.load(Ordering::Acquire);
            if s & BUSY == 0
                && self
                    .state
                    .compare_exchange(s, 0, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                break;
            }
            spins += 1;
            if spins < 1000 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        // SAFETY: closed and not BUSY: no other thread touches them.
        unsafe {
            *self.job.get() = None;
            *self.waiter.get() = None;
            std::mem::take(&mut *self.outcome.get())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;
    use std::sync::{Arc, Mutex};

    /// A reader whose held samples another thread can add.
    struct Held(Arc<Mutex<VecDeque<Vec<u8>>>>);

    impl TakeAll for Held {
        fn take_all<F: FnMut(Received<'_>)>(
            &mut self,
            on_sample: &mut F,
        ) -> Result<usize, BindingError> {
            let mut n = 0;
            while let Some(s) = self.0.lock().unwrap().pop_front() {
                on_sample(Received::whole(&s));
                n += 1;
            }
            Ok(n)
        }
    }

    #[test]
    fn a_closed_handoff_takes_no_offer() {
        let h = Handoff::new();
        assert!(!h.offer(Received::whole(b"x")));
        h.deliver();
    }

    #[test]
    fn an_offer_wakes_the_first_delivery_waiter_and_follows_what_was_held() {
        let h = Handoff::new();
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let mut reader = Held(Arc::clone(&queue));
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut on_sample = |b: Received| got.push(b.to_vec());
        let cancel = CancelToken::new();
        let done = std::sync::atomic::AtomicBool::new(false);
        let n = std::thread::scope(|s| {
            s.spawn(|| {
                queue.lock().unwrap().push_back(b"held".to_vec());
                while !h.offer(Received::whole(b"offered")) && !done.load(Ordering::Acquire) {
                    std::thread::sleep(Duration::from_millis(1));
                }
            });
            let job = Job::new(&mut on_sample, &mut reader as *mut Held);
            // SAFETY: one call; closure and reader outlive it.
            let n =
                unsafe { h.receive(job, Duration::from_secs(10), Until::FirstDelivery, &cancel) };
            done.store(true, Ordering::Release);
            n
        });
        let n = n.unwrap();
        // The waiter may return after the held sample alone, then the
        // offer found the hand-off closed and delivered nothing.
        assert!(n == 1 || n == 2, "{n}");
        assert_eq!(got[0], b"held");
        if n == 2 {
            assert_eq!(got[1], b"offered");
        }
    }

    #[test]
    fn a_window_gets_the_held_samples_then_the_offers_in_order() {
        let h = Handoff::new();
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let mut reader = Held(Arc::clone(&queue));
        let mut got: Vec<Vec<u8>> = Vec::new();
        let mut on_sample = |b: Received| got.push(b.to_vec());
        let cancel = CancelToken::new();
        let n = std::thread::scope(|s| {
            s.spawn(|| {
                queue.lock().unwrap().push_back(b"0".to_vec());
                for i in 1..100u8 {
                    let b = [b'0' + i % 10];
                    if !h.offer(Received::whole(&b)) {
                        queue.lock().unwrap().push_back(b.to_vec());
                        h.deliver();
                    }
                }
                h.deliver();
            });
            let job = Job::new(&mut on_sample, &mut reader as *mut Held);
            // SAFETY: one call; closure and reader outlive it.
            unsafe { h.receive(job, Duration::from_millis(300), Until::WindowEnds, &cancel) }
        });
        let held = queue.lock().unwrap().len();
        assert_eq!(n.unwrap() + held, 100);
        for (i, b) in got.iter().enumerate() {
            assert_eq!(b[0], b'0' + (i % 10) as u8, "sample {i} out of order");
        }
    }
}
