//! An extra publisher (`--publishers M`): a process that writes its own
//! numbered stream (publisher id 1..M-1) to every subscriber, started and
//! stopped by the main publisher over the control channel. Publisher 0 (the
//! process the user runs) measures; extra publishers only send and report
//! how many samples they sent, so each subscriber can account loss per
//! publisher.

use crate::protocol::{self, ControlError, Msg};
use crate::spec::RunSpec;
use crate::{Fault, INTERRUPTED};
use pubsubperf_core::sample::{FLAG_WARMUP, Header};
use pubsubperf_core::sys::{self, Usage};
use pubsubperf_core::{Binding, TopicSpec, Writer, clock};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn ctl_err(e: ControlError) -> Fault {
    Fault::Peer(format!("publisher 0: {e}"))
}

/// Serves one run as publisher `id` on binding `B`.
pub fn serve_publisher<B: Binding>(
    ctl: &mut TcpStream,
    spec: &RunSpec,
    id: u8,
    readers: &[String],
    setup_timeout: Duration,
) -> Result<(), Fault> {
    let mut cfg = spec.endpoint.clone();
    cfg.bind_ip = ctl
        .local_addr()
        .map(|a| a.ip().to_string())
        .unwrap_or_else(|_| "127.0.0.1".into());
    if let Some(p) = spec.rt_priority {
        sys::set_rt_priority(p).map_err(Fault::Config)?;
    }
    let bind = |e: pubsubperf_core::BindingError| Fault::Binding(e.to_string());
    let mut binding = B::open(&cfg).map_err(bind)?;
    let mut w = binding
        .create_writer(
            &TopicSpec {
                name: "data".into(),
                index: 0,
            },
            readers,
        )
        .map_err(bind)?;
    w.wait_matched(readers.len(), setup_timeout).map_err(bind)?;
    protocol::send(ctl, &Msg::Ready).map_err(ctl_err)?;
    match protocol::recv(ctl, Some(setup_timeout)).map_err(ctl_err)? {
        Msg::Start => {}
        other => return Err(Fault::Peer(format!("unexpected {other:?}"))),
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut rd = ctl.try_clone().map_err(|e| Fault::Peer(e.to_string()))?;
    let st = stop.clone();
    let cancel = cfg.cancel.clone();
    let control = std::thread::spawn(move || {
        loop {
            match protocol::recv(&mut rd, Some(Duration::from_millis(200))) {
                Ok(Msg::Stop { .. }) => break,
                Ok(_) => {}
                Err(ControlError::Timeout(_)) => {
                    if st.load(Ordering::Acquire) {
                        return;
                    }
                }
                Err(_) => {
                    cancel.cancel();
                    break;
                }
            }
        }
        st.store(true, Ordering::Release);
    });
    let usage = Usage::now();
    let size = spec.size;
    let period = if spec.rate > 0.0 {
        1e9 / spec.rate
    } else {
        0.0
    };
    let start = clock::now_ns();
    let warm_end = start + spec.warmup_ns;
    let mut i = 0u64;
    let mut fault = None;
    while clock::now_ns() < warm_end && !stop.load(Ordering::Relaxed) {
        if period > 0.0 {
            clock::wait_until(start + (i as f64 * period) as u64);
        }
        let seq = i;
        if let Err(e) = w.send(size, |b| {
            Header {
                seq,
                publisher: id,
                flags: FLAG_WARMUP,
                timestamp: clock::now_ns(),
            }
            .write(b)
        }) {
            fault = Some(Fault::Binding(e.to_string()));
            break;
        }
        i += 1;
    }
    let m_start = clock::now_ns();
    let end = if spec.duration_ns > 0 {
        m_start + spec.duration_ns
    } else {
        u64::MAX
    };
    let count = if spec.count > 0 { spec.count } else { u64::MAX };
    let mut seq = 0u64;
    while fault.is_none() && seq < count {
        if period > 0.0 {
            clock::wait_until(m_start + (seq as f64 * period) as u64);
        }
        let this = seq;
        if let Err(e) = w.send(size, |b| {
            Header {
                seq: this,
                publisher: id,
                flags: 0,
                timestamp: clock::now_ns(),
            }
            .write(b)
        }) {
            fault = Some(Fault::Binding(e.to_string()));
            break;
        }
        seq += 1;
        if (seq.is_multiple_of(64) || period > 0.0)
            && (clock::now_ns() >= end
                || stop.load(Ordering::Relaxed)
                || INTERRUPTED.load(Ordering::Relaxed))
        {
            break;
        }
    }
    let _ = w.flush();
    let duration_ns = clock::now_ns() - m_start;
    let resources = Usage::now().since(&usage);
    stop.store(true, Ordering::Release);
    let _ = control.join();
    drop(w);
    drop(binding);
    if let Some(f) = fault {
        return Err(f);
    }
    protocol::send(
        ctl,
        &Msg::PubDone {
            sent: seq,
            duration_ns,
            resources,
        },
    )
    .map_err(ctl_err)
}
