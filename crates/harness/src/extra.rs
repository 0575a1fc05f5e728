//! An extra publisher (`--publishers M`): a process that writes its own
//! numbered stream (publisher id 1..M-1) to every subscriber, started and
//! stopped by the main publisher over the control channel. Publisher 0 (the
//! process the user runs) measures; extra publishers only send and report
//! how many samples they sent, so each subscriber can account loss per
//! publisher.

use crate::channel::Ctl;
use crate::protocol::{ControlError, Msg};
use crate::session::{HEARTBEAT, PEER_SILENCE};
use crate::spec::RunSpec;
use crate::stream::{Poll, send_stream};
use crate::{Fault, INTERRUPTED};
use pubsubperf_core::sys::{self, Usage};
use pubsubperf_core::{Binding, TopicSpec, Writer};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn ctl_err(e: ControlError) -> Fault {
    Fault::Peer(format!("publisher 0: {e}"))
}

/// Serves one run as publisher `id` on binding `B`.
pub fn serve_publisher<B: Binding>(
    ctl: &Ctl,
    spec: &RunSpec,
    id: u8,
    readers: &[String],
    setup_timeout: Duration,
) -> Result<(), Fault> {
    // The serving side set `bind_ip` (crate::serve).
    let cfg = spec.keyed_endpoint();
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
    ctl.send(&Msg::Ready {
        discovery: None,
        deviations: crate::registry::held_deviations(&spec.binding, spec.test, &cfg),
    })
    .map_err(ctl_err)?;
    match ctl.recv(Some(setup_timeout)).map_err(ctl_err)? {
        Msg::Start => {}
        other => return Err(Fault::Peer(format!("unexpected {other:?}"))),
    }
    let stop = Arc::new(AtomicBool::new(false));
    // Publisher 0 tells this side it is alive once a second during the
    // run; silent for PEER_SILENCE (hung, or the link blocked), the run
    // ends here too, in the same seconds as a subscriber's.
    let silent = Arc::new(AtomicBool::new(false));
    let rd = ctl.try_clone().map_err(|e| Fault::Peer(e.to_string()))?;
    let (st, quiet) = (stop.clone(), silent.clone());
    let cancel = cfg.cancel.clone();
    let control = pubsubperf_core::helper::spawn_helper(rd, move |rd| {
        let mut heard = std::time::Instant::now();
        loop {
            match rd.recv(Some(Duration::from_millis(200))) {
                Ok(Msg::Stop { .. }) => break,
                Ok(_) => heard = std::time::Instant::now(),
                Err(ControlError::Timeout(_)) => {
                    if st.load(Ordering::Acquire) {
                        return;
                    }
                    if heard.elapsed() > PEER_SILENCE {
                        quiet.store(true, Ordering::Release);
                        cancel.cancel();
                        break;
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
    let mut told = std::time::Instant::now();
    let usage = Usage::now();
    let placed = pubsubperf_core::placement::Watch::start();
    let streamed = send_stream::<B>(
        &mut w,
        spec,
        id,
        (0, 0),
        &mut || {
            if told.elapsed() >= HEARTBEAT {
                told = std::time::Instant::now();
                // A failed send shows as the connection's end, in the control thread.
                let _ = ctl.send(&Msg::Heartbeat);
            }
            if stop.load(Ordering::Relaxed) || INTERRUPTED.load(Ordering::Relaxed) {
                Ok(Poll::Stop)
            } else {
                Ok(Poll::Go)
            }
        },
        &|e| Fault::Binding(e.to_string()),
    );
    let placement = placed.finish(&format!("publisher {id}"), None);
    let resources = Usage::now().since(&usage);
    stop.store(true, Ordering::Release);
    let _ = control.join();
    drop(w);
    drop(binding);
    if silent.load(Ordering::Acquire) {
        return Err(Fault::Gone(format!(
            "publisher 0 has been silent for {} s (hung or unreachable)",
            PEER_SILENCE.as_secs()
        )));
    }
    if let Some(f) = streamed.fault {
        return Err(f);
    }
    ctl.send(&Msg::PubDone {
        sent: streamed.sent,
        rejected: streamed.rejected,
        duration_ns: streamed.duration_ns,
        resources,
        placement: Some(Box::new(placement)),
    })
    .map_err(ctl_err)
}
