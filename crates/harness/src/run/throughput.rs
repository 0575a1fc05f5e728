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
    // Latency under load: a thread records echoes while this one sends.
    let stop = Arc::new(AtomicBool::new(false));
    let spec_key = spec.run_key;
    let echo_thread = if every > 0 {
        let mut readers = std::mem::take(&mut ep.echo);
        let stop = stop.clone();
        Some(std::thread::spawn(move || {
            // Left unpinned: it shares the publisher's core budget.
            let (mut rec, mut foreign) = (LatencyRecorder::new(), 0u64);
            let key = spec_key;
            let slice = Duration::from_millis(if readers.len() > 1 { 1 } else { 20 });
            while !stop.load(Ordering::Acquire) {
                for r in readers.iter_mut() {
                    let _ = r.recv(slice, &mut |b: Received| match Header::read(b.head()) {
                        Some(h) if h.key == key => {
                            if h.flags & FLAG_WARMUP == 0 {
                                rec.record((B::now_ns().saturating_sub(h.timestamp)) / 2);
                            }
                        }
                        _ => foreign += 1,
                    });
                }
            }
            (rec, foreign, readers)
        }))
    } else {
        None
    };
    let streamed = send_stream::<B>(
        &mut ep.writer,
        spec,
        0,
        every,
        &mut || {
            check_peers(s)?;
            drain_intervals(s, true, intervals, on_interval);
            Ok(Poll::Go)
        },
        &|e| send_fault(e, s),
    );
    drain_intervals(s, true, intervals, on_interval);
    let mut foreign = 0;
    let rec = echo_thread.map(|t| {
        // Let the last echoes come back.
        std::thread::sleep(Duration::from_millis(50));
        stop.store(true, Ordering::Release);
        let (rec, not_ours, readers) = t
            .join()
            .unwrap_or_else(|_| (LatencyRecorder::new(), 0, Vec::new()));
        ep.echo = readers;
        foreign = not_ours;
        rec
    });
    Measured {
        rec,
        sent: streamed.sent,
        rejected: streamed.rejected,
        first_refusal: streamed.first_refusal,
        duration_ns: streamed.duration_ns,
        fault: streamed.fault,
        echoed: 0,
        warmup: streamed.warmup,
        foreign,
    }
}
