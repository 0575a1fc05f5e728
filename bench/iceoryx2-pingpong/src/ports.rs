//! One side's ports: a publisher on one topic, a subscriber on the other,
//! and with `--wait block` a notifier and a listener on each topic's event
//! service.

use crate::Opts;
use iceoryx2::port::listener::Listener;
use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::port::update_connections::UpdateConnections;
use iceoryx2::prelude::*;
use std::time::{Duration, Instant};

type Svc = ipc::Service;
type PubSub = iceoryx2::service::port_factory::publish_subscribe::PortFactory<Svc, [u8], ()>;
type Event = iceoryx2::service::port_factory::event::PortFactory<Svc>;

/// How long a blocking wait lasts at most before the caller looks again.
const WAIT_SLICE: Duration = Duration::from_millis(100);

pub struct Side {
    tx: Publisher<Svc, [u8], ()>,
    rx: Subscriber<Svc, [u8], ()>,
    notifier: Option<Notifier<Svc>>,
    listener: Option<Listener<Svc>>,
    pub out: PubSub,
    inp: PubSub,
    events: Vec<Event>,
    copy: bool,
    /// The application's own buffers in copy mode: written into each loan,
    /// and each received sample copied into.
    scratch_out: Vec<u8>,
    scratch_in: Vec<u8>,
    _node: Node<Svc>,
}

fn retry<T, E: std::fmt::Debug>(what: &str, mut f: impl FnMut() -> Result<T, E>) -> T {
    let start = Instant::now();
    loop {
        match f() {
            Ok(s) => return s,
            Err(e) if start.elapsed() > Duration::from_secs(5) => panic!("{what}: {e:?}"),
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn pubsub(node: &Node<Svc>, name: &str) -> PubSub {
    let sn = ServiceName::new(name).expect("service name");
    retry(name, || {
        node.service_builder(&sn)
            .publish_subscribe::<[u8]>()
            .max_publishers(1)
            .max_subscribers(1)
            .max_nodes(2)
            .subscriber_max_buffer_size(256)
            .subscriber_max_borrowed_samples(1)
            .history_size(0)
            .enable_safe_overflow(false)
            .open_or_create()
    })
}

fn event(node: &Node<Svc>, name: &str) -> Event {
    let name = format!("{name}/event");
    let sn = ServiceName::new(&name).expect("service name");
    retry(&name, || {
        node.service_builder(&sn)
            .event()
            .max_notifiers(1)
            .max_listeners(1)
            .max_nodes(2)
            .open_or_create()
    })
}

impl Side {
    /// Publishes on `iceoryx2-pingpong/TAG/SEND`, subscribes to `.../RECV`.
    pub fn new(tag: &str, send: &str, recv: &str, o: &Opts) -> Side {
        let node = NodeBuilder::new()
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<Svc>()
            .expect("node");
        let (sname, rname) = (
            format!("iceoryx2-pingpong/{tag}/{send}"),
            format!("iceoryx2-pingpong/{tag}/{recv}"),
        );
        let out = pubsub(&node, &sname);
        let inp = pubsub(&node, &rname);
        let tx = out
            .publisher_builder()
            .initial_max_slice_len(o.size)
            .allocation_strategy(AllocationStrategy::Static)
            .max_loaned_samples(1)
            .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
            .create()
            .expect("publisher");
        let rx = inp
            .subscriber_builder()
            .buffer_size(256)
            .create()
            .expect("subscriber");
        let (mut notifier, mut listener, mut events) = (None, None, Vec::new());
        if o.block {
            let es = event(&node, &sname);
            let er = event(&node, &rname);
            notifier = Some(es.notifier_builder().create().expect("notifier"));
            listener = Some(er.listener_builder().create().expect("listener"));
            events = vec![es, er];
        }
        let n = if o.copy { o.size } else { 0 };
        Side {
            tx,
            rx,
            notifier,
            listener,
            out,
            inp,
            events,
            copy: o.copy,
            scratch_out: vec![0xA5; n],
            scratch_in: vec![0; n],
            _node: node,
        }
    }

    /// Returns once both ends of both topics (and events) exist, connected.
    pub fn wait_peer(&self) {
        let start = Instant::now();
        while self.out.dynamic_config().number_of_subscribers() < 1
            || self.inp.dynamic_config().number_of_publishers() < 1
            || self.events.iter().any(|e| {
                e.dynamic_config().number_of_listeners() < 1
                    || e.dynamic_config().number_of_notifiers() < 1
            })
        {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "no peer within 60 s: {} subscribers, {} publishers",
                self.out.dynamic_config().number_of_subscribers(),
                self.inp.dynamic_config().number_of_publishers()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        self.tx.update_connections().expect("connect");
        self.rx.has_samples().expect("connect");
    }

    /// Sends `len` bytes carrying `seq` in the first 8.
    #[inline(always)]
    pub fn send(&mut self, len: usize, seq: u64) {
        let mut s = self.tx.loan_slice_uninit(len).expect("loan");
        let s = if self.copy {
            self.scratch_out[..8].copy_from_slice(&seq.to_le_bytes());
            s.write_from_slice(&self.scratch_out[..len])
        } else {
            for (d, b) in s.payload_mut().iter_mut().zip(seq.to_le_bytes()) {
                d.write(b);
            }
            // SAFETY: shared memory from mmap is initialized (zero pages or
            // earlier samples); the first 8 bytes were just written.
            unsafe { s.assume_init() }
        };
        s.send().expect("send");
        if let Some(n) = &self.notifier {
            n.notify().expect("notify");
        }
    }

    /// The next sample's sequence number, waiting at most `timeout` (busy
    /// or blocking as asked); `None` after the timeout. The clock is read
    /// only once nothing is there (iceoryx2's benchmark reads none per
    /// sample): with event waits a subscriber slower per sample sleeps
    /// less often, so the publisher pays fewer wake-ups, and a clock read
    /// per call raised this program's throughput by about 6 %.
    #[inline(always)]
    pub fn recv(&mut self, timeout: Duration) -> Option<u64> {
        let mut start = None::<Instant>;
        let mut spins = 0u32;
        loop {
            if let Some(smp) = self.rx.receive().expect("receive") {
                let p = smp.payload();
                let seq = if self.copy {
                    self.scratch_in[..p.len()].copy_from_slice(p);
                    drop(smp);
                    u64::from_le_bytes(self.scratch_in[..8].try_into().expect("8 bytes"))
                } else {
                    u64::from_le_bytes(p[..8].try_into().expect("8 bytes"))
                };
                return Some(seq);
            }
            if let Some(l) = &self.listener {
                let t0 = *start.get_or_insert_with(Instant::now);
                l.timed_wait(|_| {}, WAIT_SLICE).expect("wait");
                if t0.elapsed() > timeout {
                    return None;
                }
            } else {
                spins = spins.wrapping_add(1);
                if spins.is_multiple_of(1024)
                    && start.get_or_insert_with(Instant::now).elapsed() > timeout
                {
                    return None;
                }
                std::hint::spin_loop();
            }
        }
    }

    /// A sample's sequence number if one is there now (no wait).
    pub fn poll(&mut self) -> Option<u64> {
        let smp = self.rx.receive().expect("receive")?;
        Some(u64::from_le_bytes(
            smp.payload()[..8].try_into().expect("8 bytes"),
        ))
    }

    /// Stays until the peer's subscriber is gone: a dropped publisher takes
    /// its undelivered samples with it.
    pub fn linger(&self) {
        let start = Instant::now();
        while self.out.dynamic_config().number_of_subscribers() > 0
            && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}
