//! The control channel's messages between the publisher (the process the
//! user runs) and each subscriber process: JSON, one per length-prefixed
//! frame of a TCP connection ([`crate::channel`]: the frames, keyed after
//! the handshake of [`crate::auth`]).
//!
//! The subscriber receives its whole configuration here ([`Msg::Setup`]),
//! so the user never repeats flags on the subscriber's host, and sends its
//! results back ([`Msg::Result`]), so one process prints and writes the
//! whole result. The control channel is never on the measured path.

use crate::spec::RunSpec;
use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{Interval, Throughput};
use pubsubperf_core::sys::Resources;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Bumped whenever a message changes shape. Peers with different tool
/// versions refuse each other (see [`Msg::Hello`]). 3: the token is never
/// sent; a challenge-response proves it and keys every later frame. 4:
/// every sample carries the run's key (`RunSpec::run_key`), the header is
/// 24 bytes, subscribers count foreign samples. 5: clock probes
/// ([`Msg::ClockProbe`]) for one-way latency across hosts. 6: topology
/// nodes ([`Msg::NodeSetup`]).
pub const PROTOCOL: u32 = 6;

/// A control message.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Msg {
    /// Publisher → subscriber, first message.
    Hello {
        /// Tool version of the sender.
        version: String,
        /// Protocol version of the sender.
        protocol: u32,
        /// The publisher's nonce (32 bytes, hex) when it holds the agent's
        /// token and the two prove it to each other ([`crate::auth`]); None
        /// for the subscribers a publisher starts itself, over SSH, or to an
        /// `--insecure` agent. (The token itself is never sent.)
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nonce: Option<String>,
    },
    /// Agent → publisher, in answer to a Hello with a nonce: the agent's
    /// nonce and its proof that it holds the token.
    Challenge {
        /// The agent's nonce (32 bytes, hex).
        nonce: String,
        /// HMAC-SHA256 of the agent's label and both nonces (hex).
        proof: String,
    },
    /// Publisher → agent: its proof that it holds the token.
    Proof {
        /// HMAC-SHA256 of the publisher's label and both nonces (hex).
        proof: String,
    },
    /// Subscriber → publisher: accepted; here is my host.
    Welcome {
        /// Tool version of the subscriber.
        version: String,
        /// The subscriber host's environment.
        environment: Box<Environment>,
        /// The publisher's address as the subscriber's host sees it, when
        /// the control connection cannot tell (an agent over SSH): the
        /// publisher's endpoints bind there.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        seen_from: Option<String>,
    },
    /// Either side: refused or failed, with the reason. Ends the session.
    Error {
        /// What went wrong.
        message: String,
    },
    /// Publisher → subscriber: set up one run.
    Setup {
        /// The run's full specification.
        spec: Box<RunSpec>,
    },
    /// Subscriber → publisher: where my readers are.
    Locators {
        /// Locator of the data reader.
        data: String,
    },
    /// Publisher → subscriber: where the publisher's echo reader is.
    Peer {
        /// Locator of the echo reader for this subscriber.
        echo: String,
    },
    /// Subscriber (or extra publisher) → publisher: endpoints matched,
    /// ready to measure.
    Ready {
        /// A subscriber's discovery times so far.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        discovery: Option<pubsubperf_core::result::SubscriberDiscovery>,
        /// What this side's endpoints set beyond the run's settings, as
        /// [`Binding::deviations`] says it: a session from the network
        /// holds the middleware's discovery to unicast
        /// ([`pubsubperf_core::EndpointConfig::held_discovery`]).
        ///
        /// [`Binding::deviations`]: pubsubperf_core::Binding::deviations
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        deviations: Vec<String>,
    },
    /// Publisher → subscriber: measurement starts now.
    Start,
    /// Subscriber → publisher: one interval's figures (also a heartbeat).
    Interval {
        /// The interval.
        interval: Interval,
    },
    /// Subscriber → publisher: alive, nothing measured yet (warm-up).
    Heartbeat,
    /// Publisher → subscriber: the publisher stopped sending.
    Stop {
        /// Measured samples sent by publisher 0 (sequence numbers 0..sent).
        sent: u64,
        /// Measured samples sent by each publisher, by publisher id (empty:
        /// only publisher 0, which sent `sent`).
        #[serde(default)]
        sent_by: Vec<u64>,
        /// Measured sends the publishers' middleware or kernel refused (best
        /// effort; not sent): a subscriber's result carries them, for the
        /// front ends whose subscriber prints them (the Throughput example's
        /// Nreject).
        #[serde(default)]
        rejected: u64,
    },
    /// Publisher → an extra publisher process: set up one run as publisher
    /// `publisher`, writing to the subscribers' `data` readers.
    PubSetup {
        /// The run's specification.
        spec: Box<RunSpec>,
        /// Publisher id (1..M) written into every sample header.
        publisher: u8,
        /// Locators of every subscriber's data reader.
        data: Vec<String>,
    },
    /// Extra publisher → publisher: done sending.
    PubDone {
        /// Measured samples sent.
        sent: u64,
        /// Measured sends refused (best effort).
        #[serde(default)]
        rejected: u64,
        /// Measured sending time, ns.
        duration_ns: u64,
        /// Resources used while measuring.
        resources: Resources,
        /// Where its sending thread ran (absent from agents before 0.2.0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placement: Option<Box<pubsubperf_core::placement::Placement>>,
    },
    /// Subscriber → publisher: the run's results on this side.
    Result {
        /// Counters (throughput test).
        throughput: Option<Throughput>,
        /// Counters per publisher id (several publishers).
        #[serde(default)]
        by_publisher: Vec<Throughput>,
        /// Samples echoed.
        echoed: u64,
        /// Samples that failed the `--check` pattern.
        bad_samples: u64,
        /// Samples without the run's key (see [`pubsubperf_core::sample`]).
        #[serde(default)]
        foreign: u64,
        /// Resources used while measuring.
        resources: Resources,
        /// `--profile`: this subscriber's profile.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        profile: Option<Box<pubsubperf_core::profile::SideProfile>>,
        /// From the creation of its data reader to its first sample, ns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        first_sample_ns: Option<u64>,
        /// Fan-out: the delays of the samples it recorded, by slot
        /// ([`crate::fan_out`]).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        arrivals: Vec<u32>,
        /// Where its measuring thread ran (absent from agents before 0.2.0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        placement: Option<Box<pubsubperf_core::placement::Placement>>,
    },
    /// Publisher → subscriber, between runs: one probe of the two hosts'
    /// clocks ([`crate::clock_offset`]); answered at once with a
    /// [`Msg::ClockEcho`].
    ClockProbe {
        /// The publisher's `CLOCK_MONOTONIC` when it sent the probe, ns.
        t1: u64,
    },
    /// Subscriber → publisher: the answer to a [`Msg::ClockProbe`].
    ClockEcho {
        /// The probe's `t1`.
        t1: u64,
        /// The subscriber's `CLOCK_MONOTONIC` when the probe arrived, ns.
        t2: u64,
        /// The subscriber's `CLOCK_MONOTONIC` when it sent this answer, ns.
        t3: u64,
        /// The publisher's `CLOCK_MONOTONIC` when this answer arrived, ns:
        /// stamped by the publisher's reader thread, never on the wire.
        #[serde(skip)]
        t4: u64,
    },
    /// Orchestrator → node: play this node of a topology
    /// ([`crate::graph`]); answered with [`Msg::NodeLocators`].
    NodeSetup {
        /// The run's settings (binding, endpoint, warm-up, duration, key).
        spec: Box<RunSpec>,
        /// The node's part.
        plan: Box<crate::graph::NodePlan>,
        /// Where its endpoints bind, for a node of the orchestrator's own
        /// host when other nodes are on agents (honoured only by the
        /// sessions the orchestrator started itself).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bind_ip: Option<String>,
    },
    /// Node → orchestrator: where its readers are, in its plan's order.
    NodeLocators {
        /// One locator per reader.
        readers: Vec<String>,
    },
    /// Orchestrator → node: the readers each of its writers writes to.
    NodePeers {
        /// Per writer, in its plan's order, the locators of the topic's readers.
        writers: Vec<Vec<String>>,
    },
    /// Node → orchestrator: its sources sent all they had to.
    NodeDone,
    /// Orchestrator → node: the sources stop; drain and report.
    Drain,
    /// Node → orchestrator: what it measured.
    NodeResult {
        /// Its report.
        report: Box<crate::graph::NodeReport>,
    },
    /// Publisher → subscriber: the session is over.
    Bye,
}

/// Errors of the control channel.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The peer closed the connection.
    #[error("the peer closed the control connection")]
    Closed,
    /// No message within the allowed time.
    #[error("the peer did not answer within {0:?}")]
    Timeout(Duration),
    /// A message could not be decoded.
    #[error("bad control message: {0}")]
    Bad(String),
    /// A keyed frame failed its tag: changed, replayed, reordered, or not
    /// from the peer that did the handshake.
    #[error("a control message failed its authentication (changed, replayed or forged on the way)")]
    Forged,
    /// The connection failed.
    #[error("control connection: {0}")]
    Io(#[from] std::io::Error),
}

/// A message's frame body (JSON).
pub fn encode_body(msg: &Msg) -> Vec<u8> {
    serde_json::to_vec(msg).expect("control messages serialize")
}

/// Encodes a message into an unkeyed frame (length, then body).
pub fn encode(msg: &Msg) -> Vec<u8> {
    let body = encode_body(msg);
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Decodes one message from a frame body (untrusted input: never panics;
/// the error quotes what it could not read, e.g. an unknown type, made
/// printable by [`crate::escape::printable`]).
pub fn decode(body: &[u8]) -> Result<Msg, ControlError> {
    serde_json::from_slice(body)
        .map_err(|e| ControlError::Bad(crate::escape::printable(&e.to_string(), 400)))
}

#[cfg(test)]
mod field_table;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let m = Msg::Stop {
            sent: 42,
            sent_by: vec![],
            rejected: 0,
        };
        let f = encode(&m);
        assert_eq!(
            u32::from_le_bytes(f[..4].try_into().unwrap()) as usize,
            f.len() - 4
        );
        match decode(&f[4..]).unwrap() {
            Msg::Stop { sent, .. } => assert_eq!(sent, 42),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for junk in [
            &b""[..],
            b"{",
            b"\xff\xfe",
            b"{\"type\":\"nope\"}",
            b"[1,2]",
        ] {
            assert!(decode(junk).is_err());
        }
    }
}
