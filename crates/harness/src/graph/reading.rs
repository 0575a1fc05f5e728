//! A node's reader thread: records each sample of the run in the reader's
//! books and writes it again on each relay the reader feeds.

use super::books::ReaderBooks;
use super::lockstep;
use super::node::{Sent, Shared, bind};
use super::plan::WriterPlan;
use crate::Fault;
use pubsubperf_core::sample::{FLAG_WARMUP, Header};
use pubsubperf_core::stats::LatencyRecorder;
use pubsubperf_core::{Binding, BindingError, Reader, Received, Reliability, Writer};
use pubsubperf_topology::route::{ROUTE_END, Route};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// One relay fed by the reader: its writer, counts and residence.
pub struct Relay<W> {
    plan: WriterPlan,
    writer: W,
    sent: Sent,
    residence: LatencyRecorder,
}

impl<W: Writer> Relay<W> {
    /// A relay writing with `writer`.
    pub fn new(plan: WriterPlan, writer: W) -> Relay<W> {
        Relay {
            plan,
            writer,
            sent: Sent::default(),
            residence: LatencyRecorder::new(),
        }
    }

    /// Writes again the sample with header `h` and route `route`, received
    /// at `rx_ns`, stamped `stamp_ns`.
    #[inline]
    fn forward(
        &mut self,
        h: &Header,
        route: &Route,
        rx_ns: u64,
        stamp_ns: u64,
    ) -> Result<(), BindingError> {
        let Some(next) = route.then(self.plan.stream) else {
            return Ok(());
        };
        let warm = h.flags & FLAG_WARMUP != 0;
        if !warm {
            self.residence.record(stamp_ns.saturating_sub(rx_ns));
        }
        let header = Header {
            seq: self.sent.measured,
            publisher: self.plan.stream,
            flags: h.flags & FLAG_WARMUP,
            timestamp: stamp_ns,
            key: h.key,
        };
        match self.writer.send(self.plan.size, |buf| {
            header.write(buf);
            next.write(buf);
        }) {
            Ok(()) => self.sent.measured += u64::from(!warm),
            Err(BindingError::Refused { .. })
                if self.plan.qos.reliability == Reliability::BestEffort =>
            {
                self.sent.rejected += u64::from(!warm);
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Its stream, counts and residence; the writer stays open for the
    /// caller to close.
    pub fn finish(mut self) -> ((u8, Sent, LatencyRecorder), W) {
        let _ = self.writer.flush();
        ((self.plan.stream, self.sent, self.residence), self.writer)
    }
}

/// The first [`ROUTE_END`] bytes of a sample, whatever its pieces.
#[inline]
fn head(s: &Received<'_>) -> Option<[u8; ROUTE_END]> {
    if s.len() < ROUTE_END {
        return None;
    }
    let mut out = [0u8; ROUTE_END];
    if s.head().len() >= ROUTE_END {
        out.copy_from_slice(&s.head()[..ROUTE_END]);
    } else {
        s.for_each_piece(|at, piece| {
            if at < ROUTE_END {
                let n = piece.len().min(ROUTE_END - at);
                out[at..at + n].copy_from_slice(&piece[..n]);
            }
        });
    }
    Some(out)
}

/// What one reader thread ends with.
pub struct ReadOutcome<W> {
    /// Its books.
    pub books: ReaderBooks,
    /// Its relays, finished.
    pub relays: Vec<((u8, Sent, LatencyRecorder), W)>,
    /// Samples without the run's key (or too short to carry a route).
    pub foreign: u64,
}

/// The reader's state while it takes samples.
struct Taking<'a, W> {
    books: ReaderBooks,
    relays: Vec<Relay<W>>,
    key: u64,
    sink: bool,
    foreign: u64,
    failure: Option<BindingError>,
    shared: &'a Shared,
}

impl<W: Writer> Taking<'_, W> {
    /// Records one sample received at `rx_ns` of `B`'s clock and relays it.
    #[inline]
    fn take<B: Binding<Writer = W>>(&mut self, s: Received<'_>, rx_ns: u64) {
        // Real time for the drain: the same reading unless the clock is
        // virtual (no second clock read per sample).
        self.shared
            .last_rx_ns
            .store(crate::stream::real_time::<B>(rx_ns), Ordering::Release);
        let parsed = head(&s).and_then(|b| Some((Header::read(&b)?, Route::read(&b)?)));
        let Some((h, route)) = parsed.filter(|(h, _)| h.key == self.key) else {
            self.foreign += 1;
            return;
        };
        if h.flags & FLAG_WARMUP == 0 {
            let origin = self.sink.then_some(route.origin_ns);
            let (stream, streams) = (h.publisher, route.streams());
            self.books
                .record(stream, h.seq, rx_ns, h.timestamp, streams, origin);
        }
        for relay in &mut self.relays {
            if self.failure.is_none()
                && let Err(e) = relay.forward(&h, &route, rx_ns, B::now_ns())
            {
                self.failure = Some(e);
            }
        }
    }
}

/// A reader's thread: takes samples until the node stops its readers.
pub fn read<B: Binding>(
    mut reader: B::Reader,
    books: ReaderBooks,
    relays: Vec<Relay<B::Writer>>,
    key: u64,
    sink: bool,
    shared: &Shared,
) -> Result<ReadOutcome<B::Writer>, Fault> {
    let mut taking = Taking {
        books,
        relays,
        key,
        sink,
        foreign: 0,
        failure: None,
        shared,
    };
    let mut on_sample = |s: Received<'_>| {
        taking.take::<B>(s, B::now_ns());
        if B::VIRTUAL_CLOCK {
            lockstep::received();
        }
    };
    while !shared.stop_readers.load(Ordering::Acquire) {
        match reader.recv(Duration::from_millis(20), &mut on_sample) {
            Ok(_) => {}
            Err(BindingError::Cancelled) => break,
            // An upstream node that finished may close its end while this
            // one drains (a stream binding's connection).
            Err(BindingError::Disconnected) if shared.stop_sources.load(Ordering::Acquire) => {
                break;
            }
            Err(e) => {
                shared.fail(bind(e));
                break;
            }
        }
    }
    if let Some(e) = taking.failure {
        shared.fail(bind(e));
    }
    Ok(ReadOutcome {
        books: taking.books,
        relays: taking.relays.into_iter().map(Relay::finish).collect(),
        foreign: taking.foreign,
    })
}
