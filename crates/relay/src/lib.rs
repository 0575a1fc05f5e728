//! pubsubperf's delaying relay (`pubsubperf relay`): a small forwarder that
//! adds a fixed delay D to each direction of UDP datagram flows and TCP
//! connections. It is a stand-in for `tc qdisc ... netem delay D` on machines
//! whose kernel has no netem, and is what the namespace tests use to check
//! that a known added delay is measured as such.
//!
//! Two ways to choose where traffic goes:
//! - [`Target::Fixed`]: everything received on the listen address goes to one
//!   target address (a classic port forwarder). UDP replies from the target go
//!   back to the client that sent the flow (clients are remembered per source
//!   address).
//! - [`Target::Transparent`]: the listen sockets are `IP_TRANSPARENT` and the
//!   target of each flow or connection is its original destination, as set by
//!   an nftables `tproxy` rule in the relay's network namespace. Traffic to any
//!   address and port then crosses the relay, which is how a whole pubsubperf
//!   run (control channel, data, echoes on ephemeral ports) is routed through
//!   it (see the README, section "Across hosts and under faults").
//!
//! ## Delay
//! Each direction has a timed FIFO: a packet (UDP) or a read chunk (TCP) is
//! stamped when it is read and written at stamp + D by the direction's
//! delivery thread, which sleeps until about 250 µs before that time and
//! spins for the rest (with a 1 ns timer slack), so the added delay is D plus
//! a few microseconds (with `rt_priority`, the relay's threads run
//! SCHED_FIFO so that a busy machine does not stretch D). With D = 0 the reading thread forwards at once. The
//! delay is constant, so the FIFO never reorders. With `delay_to`, only
//! the directions towards that network are delayed (a path slower one way
//! than the other).
//!
//! Every thread wakes at least every 100 ms to check the stop flag; dropping
//! (or [`Relay::stop`]) ends and joins them all.

mod line;
mod tcp;
mod udp;

pub use ipnetwork::IpNetwork;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often blocked threads wake to check the stop flag.
pub(crate) const POLL: Duration = Duration::from_millis(100);

/// Where the relay sends what it receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Everything goes to this address.
    Fixed(SocketAddr),
    /// Each flow goes to its original destination (nftables `tproxy`).
    Transparent,
}

/// A relay's configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Where to listen (UDP and/or TCP, same address and port).
    pub listen: SocketAddr,
    /// Where to forward.
    pub target: Target,
    /// Delay added to each direction.
    pub delay: Duration,
    /// Only traffic to this network is delayed (the other direction of a
    /// flow passes at once): an asymmetric path, for one-way latency's
    /// known answer. `None`: every direction.
    pub delay_to: Option<ipnetwork::IpNetwork>,
    /// Relay UDP datagrams.
    pub udp: bool,
    /// Relay TCP connections.
    pub tcp: bool,
    /// SCHED_FIFO priority of the relay's threads (keeps the added delay
    /// exact on a busy machine); `None`: normal scheduling.
    pub rt_priority: Option<i32>,
}

/// Errors starting a relay.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// A socket could not be set up.
    #[error("{what} {addr}: {source}")]
    Socket {
        /// What was being done.
        what: &'static str,
        /// On which address.
        addr: SocketAddr,
        /// The system's error.
        source: std::io::Error,
    },
    /// The configuration makes no sense.
    #[error("{0}")]
    Config(String),
}

/// What the relay forwarded so far.
#[derive(Debug, Default)]
pub struct Counters {
    /// UDP datagrams sent on towards their target.
    pub udp_forward: AtomicU64,
    /// UDP datagrams sent back to their client.
    pub udp_back: AtomicU64,
    /// UDP flows (distinct client, destination pairs) seen.
    pub udp_flows: AtomicU64,
    /// TCP connections relayed.
    pub tcp_connections: AtomicU64,
    /// TCP bytes sent on towards the target.
    pub tcp_forward_bytes: AtomicU64,
    /// TCP bytes sent back to the client.
    pub tcp_back_bytes: AtomicU64,
    /// Connections that could not reach their target, sends that failed.
    pub errors: AtomicU64,
    /// Items (datagrams, chunks) held for the delay.
    pub delayed: AtomicU64,
    /// Sum over delayed items of how late they left (after read time + D), ns.
    pub late_ns_sum: AtomicU64,
    /// The latest any delayed item left, ns.
    pub late_ns_max: AtomicU64,
}

/// A snapshot of [`Counters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// UDP datagrams sent on towards their target.
    pub udp_forward: u64,
    /// UDP datagrams sent back to their client.
    pub udp_back: u64,
    /// UDP flows seen.
    pub udp_flows: u64,
    /// TCP connections relayed.
    pub tcp_connections: u64,
    /// TCP bytes towards the target.
    pub tcp_forward_bytes: u64,
    /// TCP bytes back to the client.
    pub tcp_back_bytes: u64,
    /// Failures.
    pub errors: u64,
    /// Items held for the delay.
    pub delayed: u64,
    /// Mean lateness of delayed items (beyond D), ns.
    pub late_ns_mean: u64,
    /// Largest lateness, ns.
    pub late_ns_max: u64,
}

impl std::fmt::Display for Totals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "udp: {} flows, {} datagrams forward, {} back; tcp: {} connections, {} bytes forward, {} back; {} errors; {} delayed, late by {:.1} us mean, {:.1} us max",
            self.udp_flows,
            self.udp_forward,
            self.udp_back,
            self.tcp_connections,
            self.tcp_forward_bytes,
            self.tcp_back_bytes,
            self.errors,
            self.delayed,
            self.late_ns_mean as f64 / 1e3,
            self.late_ns_max as f64 / 1e3
        )
    }
}

/// State shared by every thread of a relay.
pub(crate) struct Shared {
    pub stop: AtomicBool,
    pub counters: Counters,
    pub threads: Mutex<Vec<JoinHandle<()>>>,
    pub delay_ns: u64,
    pub delay_to: Option<ipnetwork::IpNetwork>,
    pub rt_priority: Option<i32>,
}

impl Shared {
    /// The delay of traffic towards `to`.
    pub fn delay_toward(&self, to: std::net::IpAddr) -> u64 {
        match self.delay_to {
            Some(net) if !net.contains(to) => 0,
            _ => self.delay_ns,
        }
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Starts a thread that the relay joins when it stops.
    pub fn spawn(self: &Arc<Self>, name: &str, f: impl FnOnce() + Send + 'static) {
        let rt = self.rt_priority;
        let h = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                if let Some(p) = rt {
                    let _ = pubsubperf_core::sys::set_rt_priority(p);
                }
                f()
            })
            .expect("spawn relay thread");
        let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        // Forget threads that are done, so a long-lived relay does not grow.
        t.retain(|h| !h.is_finished());
        t.push(h);
    }
}

/// A running relay.
pub struct Relay {
    shared: Arc<Shared>,
    udp_local: Option<SocketAddr>,
    tcp_local: Option<SocketAddr>,
}

impl Relay {
    /// Binds the listen sockets and starts forwarding.
    pub fn start(cfg: &Config) -> Result<Relay, RelayError> {
        if !cfg.udp && !cfg.tcp {
            return Err(RelayError::Config(
                "nothing to relay: enable udp, tcp or both".into(),
            ));
        }
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            counters: Counters::default(),
            threads: Mutex::new(Vec::new()),
            delay_ns: cfg.delay.as_nanos().min(u128::from(u64::MAX)) as u64,
            delay_to: cfg.delay_to,
            rt_priority: cfg.rt_priority,
        });
        if let Some(p) = cfg.rt_priority {
            // Fail now, with a clear reason, rather than in a delivery thread.
            pubsubperf_core::sys::set_rt_priority(p).map_err(RelayError::Config)?;
            // Only the relay's own threads run real-time; the caller goes back.
            pubsubperf_core::sys::set_normal_priority();
        }
        let mut relay = Relay {
            shared: shared.clone(),
            udp_local: None,
            tcp_local: None,
        };
        if cfg.tcp {
            relay.tcp_local = Some(tcp::start(&shared, cfg)?);
        }
        if cfg.udp {
            // Same port as TCP when the user asked for port 0.
            let mut c = cfg.clone();
            if let (0, Some(t)) = (c.listen.port(), relay.tcp_local) {
                c.listen.set_port(t.port());
            }
            relay.udp_local = Some(udp::start(&shared, &c)?);
        }
        Ok(relay)
    }

    /// The bound UDP address, if UDP is relayed.
    pub fn udp_addr(&self) -> Option<SocketAddr> {
        self.udp_local
    }

    /// The bound TCP address, if TCP is relayed.
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp_local
    }

    /// What was forwarded so far.
    pub fn totals(&self) -> Totals {
        let c = &self.shared.counters;
        let l = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Totals {
            udp_forward: l(&c.udp_forward),
            udp_back: l(&c.udp_back),
            udp_flows: l(&c.udp_flows),
            tcp_connections: l(&c.tcp_connections),
            tcp_forward_bytes: l(&c.tcp_forward_bytes),
            tcp_back_bytes: l(&c.tcp_back_bytes),
            errors: l(&c.errors),
            delayed: l(&c.delayed),
            late_ns_mean: l(&c.late_ns_sum) / l(&c.delayed).max(1),
            late_ns_max: l(&c.late_ns_max),
        }
    }

    /// Stops every thread and closes every socket (also done on drop).
    pub fn stop(self) -> Totals {
        self.totals()
    }

    fn shutdown(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        loop {
            let batch: Vec<JoinHandle<()>> = {
                let mut t = self
                    .shared
                    .threads
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                t.drain(..).collect()
            };
            if batch.is_empty() {
                break;
            }
            for h in batch {
                let _ = h.join();
            }
        }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests;
