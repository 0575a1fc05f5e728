//! The throughput test's loop: samples as fast as the binding takes them (or
//! at `--rate`), with an echo thread for latency under load.

use super::*;

pub(super) fn throughput_loop<B: Binding>(
    s: &Session,
    spec: &RunSpec,
    ep: &mut Endpoints<B>,
    intervals: &mut Vec<Interval>,
    on_interval: &mut dyn FnMut(&Interval),
) -> Measured {
    let every = spec.latency_every;
    // Latency under load: a thread records echoes while this one sends,
    // and hands this one an interval of them each report interval.
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, echo_intervals) = std::sync::mpsc::channel::<Interval>();
    let spec_key = spec.run_key;
    let interval_ns = spec.interval_ms.max(1) * 1_000_000;
    let explain = spec.explain;
    let echo_thread = if every > 0 {
        let mut readers = std::mem::take(&mut ep.echo);
        let stop = stop.clone();
        Some(std::thread::spawn(move || {
            // Left unpinned: it shares the publisher's core budget.
            let (mut rec, mut foreign) = (LatencyRecorder::new(), 0u64);
            let mut tail = explain.then(TailKeeper::for_explain);
            let mut books = IntervalBooks::new();
            // The first measured echo's time, and the next report's.
            let mut first: Option<u64> = None;
            let mut next_report = u64::MAX;
            let key = spec_key;
            let slice = Duration::from_millis(if readers.len() > 1 { 1 } else { 20 });
            while !stop.load(Ordering::Acquire) {
                for r in readers.iter_mut() {
                    let _ = r.recv(slice, &mut |b: Received| match Header::read(b.head()) {
                        Some(h) if h.key == key => {
                            if h.flags & FLAG_WARMUP == 0 {
                                let now = B::now_ns();
                                let v = now.saturating_sub(h.timestamp) / 2;
                                rec.record(v);
                                books.record(v);
                                if let Some(t) = tail.as_mut() {
                                    t.record(Kept {
                                        latency_ns: v,
                                        start_ns: h.timestamp,
                                        end_ns: now,
                                    });
                                }
                                if first.is_none() {
                                    first = Some(now);
                                    next_report = now + interval_ns;
                                    books.restart_cpu();
                                }
                            }
                        }
                        _ => foreign += 1,
                    });
                }
                let now = B::now_ns();
                if now >= next_report {
                    let t = now - first.unwrap_or(now);
                    if let Some(iv) = books.close(t, interval_ns) {
                        let _ = tx.send(iv);
                    }
                    next_report += interval_ns;
                }
            }
            if let Some(f) = first {
                let now = B::now_ns();
                if let Some(iv) = books.close(now - f, interval_ns) {
                    let _ = tx.send(iv);
                }
            }
            let tail = tail.map(|t| (t.finish(), first.unwrap_or(0)));
            (rec, foreign, readers, tail)
        }))
    } else {
        None
    };
    // The echo thread's intervals go to the caller only (the run's
    // intervals are its subscribers').
    let pass_echoes = |on_interval: &mut dyn FnMut(&Interval)| {
        for iv in echo_intervals.try_iter() {
            on_interval(&iv);
        }
    };
    let stamp_every = crate::fan_out::every_of(spec, &s.subs);
    let streamed = send_stream::<B>(
        &mut ep.writer,
        spec,
        0,
        (every, stamp_every),
        &mut || {
            check_peers(s)?;
            drain_intervals(s, true, intervals, on_interval);
            pass_echoes(on_interval);
            Ok(Poll::Go)
        },
        &|e| send_fault(e, s),
    );
    drain_intervals(s, true, intervals, on_interval);
    let mut foreign = 0;
    let mut tail = None;
    let rec = echo_thread.map(|t| {
        // Let the last echoes come back.
        std::thread::sleep(Duration::from_millis(50));
        stop.store(true, Ordering::Release);
        let (rec, not_ours, readers, kept) = t
            .join()
            .unwrap_or_else(|_| (LatencyRecorder::new(), 0, Vec::new(), None));
        ep.echo = readers;
        foreign = not_ours;
        tail = kept;
        rec
    });
    pass_echoes(on_interval);
    Measured {
        rec,
        directions: None,
        by_subscriber: Vec::new(),
        sent: streamed.sent,
        rejected: streamed.rejected,
        first_refusal: streamed.first_refusal,
        duration_ns: streamed.duration_ns,
        fault: streamed.fault,
        echoed: 0,
        warmup: streamed.warmup,
        foreign,
        tail,
    }
}
