//! Chainable test configurations: start from
//! [`EndpointConfig::for_test`] (reliable, blocking waits, bytes, 64 KiB
//! samples, loopback) and change what the test is about:
//!
//! ```
//! use pubsubperf_core::EndpointConfig;
//! use pubsubperf_testkit::TestConfig;
//! let c = EndpointConfig::for_test("t1").transport("shm").busy().zero_copy();
//! assert!(c.zero_copy);
//! ```

use pubsubperf_core::{DataType, EndpointConfig, ReceiveMode, Reliability, WaitMode};

/// Builder methods on [`EndpointConfig`] for tests; each returns the
/// changed configuration.
pub trait TestConfig: Sized {
    /// The binding's transport (`udp`, `shm`, ...).
    fn transport(self, t: &str) -> Self;
    /// Busy waits (spin on a non-blocking poll).
    fn busy(self) -> Self;
    /// The middleware's receive thread runs the subscriber (`--receive
    /// listener`): the checks' subscribers receive through `recv_window`,
    /// the ping-pong's pinging side through `recv_on_arrival`.
    fn listener(self) -> Self;
    /// Best-effort delivery.
    fn best_effort(self) -> Self;
    /// The zero-copy path.
    fn zero_copy(self) -> Self;
    /// The data type of samples.
    fn data_type(self, d: DataType) -> Self;
    /// The flat (fixed-layout, in-place) data type.
    fn flat(self) -> Self;
    /// The largest sample of the run.
    fn max_sample_size(self, bytes: usize) -> Self;
    /// Batching up to `bytes` per message.
    fn batch(self, bytes: usize) -> Self;
    /// IPv6 in place of IPv4.
    fn ipv6(self) -> Self;
    /// Multicast.
    fn multicast(self) -> Self;
    /// The number of subscribers of the run.
    fn subscribers(self, n: usize) -> Self;
    /// A binding-specific option (`-o KEY=VALUE`).
    fn option(self, key: &str, value: &str) -> Self;
}

impl TestConfig for EndpointConfig {
    fn transport(mut self, t: &str) -> Self {
        self.transport = t.to_string();
        self
    }
    fn busy(mut self) -> Self {
        self.wait = WaitMode::Busy;
        self
    }
    fn listener(mut self) -> Self {
        self.receive = ReceiveMode::Listener;
        self
    }
    fn best_effort(mut self) -> Self {
        self.reliability = Reliability::BestEffort;
        self
    }
    fn zero_copy(mut self) -> Self {
        self.zero_copy = true;
        self
    }
    fn data_type(mut self, d: DataType) -> Self {
        self.data_type = d;
        self
    }
    fn flat(self) -> Self {
        self.data_type(DataType::Flat)
    }
    fn max_sample_size(mut self, bytes: usize) -> Self {
        self.max_sample_size = bytes;
        self
    }
    fn batch(mut self, bytes: usize) -> Self {
        self.batch_bytes = bytes;
        self
    }
    fn ipv6(mut self) -> Self {
        self.ipv6 = true;
        self
    }
    fn multicast(mut self) -> Self {
        self.multicast = true;
        self
    }
    fn subscribers(mut self, n: usize) -> Self {
        self.subscribers = n;
        self
    }
    fn option(mut self, key: &str, value: &str) -> Self {
        self.options.insert(key.to_string(), value.to_string());
        self
    }
}
