//! `--receive listener`: CycloneDDS's own receive thread runs the
//! subscriber's per-sample code, in a data-available listener, while the
//! thread in [`CycloneReader::recv_window`] sleeps. No thread is woken per
//! sample, as in ddsperf's default mode; with a waitset, every arrival
//! wakes our thread (a condition broadcast and a futex wake).
//!
//! The two threads hand the reader over through one atomic word:
//! - `OPEN`: a `recv_window` call is in progress and has set the job (its
//!   closure and the reader); a listener call may deliver.
//! - `BUSY`: one thread is delivering (taking and calling the closure).
//! - `PENDING`: data arrived while another thread was delivering; that one
//!   takes again before it leaves, so no arrival waits for the next one.
//! - `ARRIVED`: a delivery handed over at least one sample; the thread in
//!   [`CycloneReader::recv_on_arrival`](pubsubperf_core::Reader::recv_on_arrival),
//!   which waits for the first one, is unparked after it is set.
//!
//! Closed (no `recv_window` call), a listener call returns at once and the
//! samples stay in the reader: the next `recv_window` takes them first.

use crate::CycloneReader;
use pubsubperf_core::BindingError;
use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};

const OPEN: u32 = 1;
const BUSY: u32 = 2;
const PENDING: u32 = 4;
const ARRIVED: u32 = 8;

/// Takes every sample there is from the reader and calls the closure for
/// each; how many.
type Run = unsafe fn(*mut (), *mut CycloneReader) -> Result<usize, BindingError>;

/// What a delivery does: set by `open`, read by the holder of `BUSY`.
#[derive(Clone, Copy)]
pub(crate) struct Job {
    run: Run,
    on_sample: *mut (),
    reader: *mut CycloneReader,
}

impl Job {
    /// A job calling `on_sample` for the samples of `reader`.
    pub(crate) fn new<F: FnMut(&[u8]) + Send>(
        on_sample: &mut F,
        reader: *mut CycloneReader,
    ) -> Job {
        Job {
            run: take_all::<F>,
            on_sample: on_sample as *mut F as *mut (),
            reader,
        }
    }
}

/// # Safety
/// `f` points to an `F` and `reader` to a reader, both exclusively ours
/// while we hold `BUSY`.
unsafe fn take_all<F: FnMut(&[u8])>(
    f: *mut (),
    reader: *mut CycloneReader,
) -> Result<usize, BindingError> {
    // SAFETY: per the caller.
    let (f, reader) = unsafe { (&mut *(f as *mut F), &mut *reader) };
    let mut total = 0;
    loop {
        total += reader.take(f)?;
        if !reader.full {
            return Ok(total);
        }
    }
}

/// What the deliveries of one `recv_window` call came to.
#[derive(Default)]
pub(crate) struct Outcome {
    pub(crate) delivered: usize,
    pub(crate) error: Option<BindingError>,
}

/// The state both threads share; boxed, so that its address (the
/// listener's argument) stays put.
pub(crate) struct Handoff {
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
    pub(crate) fn new() -> Box<Handoff> {
        Box::new(Handoff {
            state: AtomicU32::new(0),
            job: UnsafeCell::new(None),
            outcome: UnsafeCell::new(Outcome::default()),
            waiter: UnsafeCell::new(None),
        })
    }

    /// Opens for deliveries of `job`; each delivery that hands over
    /// samples unparks `waiter`, when given.
    ///
    /// # Safety
    /// Closed before: no other thread touches `job`, `outcome` or `waiter`.
    pub(crate) unsafe fn open(&self, job: Job, waiter: Option<std::thread::Thread>) {
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
    pub(crate) fn arrived(&self) -> bool {
        self.state.load(Ordering::Acquire) & ARRIVED != 0
    }

    /// Delivers what the reader holds if no other thread is delivering
    /// (which, marked PENDING, then takes again before it leaves). Both
    /// the listener and `recv_window`'s first take come here.
    pub(crate) fn deliver(&self) {
        if !self.enter() {
            return;
        }
        loop {
            // SAFETY: we hold BUSY: `job` (set while OPEN), `outcome` and
            // `waiter` are ours.
            unsafe {
                let out = &mut *self.outcome.get();
                if out.error.is_none()
                    && let Some(job) = *self.job.get()
                {
                    let handed = match (job.run)(job.on_sample, job.reader) {
                        Ok(n) => {
                            out.delivered += n;
                            n > 0
                        }
                        Err(e) => {
                            out.error = Some(e);
                            true
                        }
                    };
                    if handed {
                        self.state.fetch_or(ARRIVED, Ordering::Release);
                        if let Some(w) = &*self.waiter.get() {
                            w.unpark();
                        }
                    }
                }
            }
            if !self.leave() {
                return;
            }
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
    pub(crate) fn close(&self) -> Outcome {
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

/// The data-available listener: `arg` is the reader's [`Handoff`].
///
/// # Safety
/// Called by CycloneDDS with the argument the reader registered, which
/// outlives the listener (the reader clears the listener before dropping it).
pub(crate) unsafe extern "C" fn on_data_available(_reader: i32, arg: *mut c_void) {
    // SAFETY: per the function's contract.
    let handoff = unsafe { &*(arg as *const Handoff) };
    handoff.deliver();
}
