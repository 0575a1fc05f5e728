//! pubsubperf's harness: runs latency and throughput tests over any
//! [`Binding`](pubsubperf_core::Binding).
//!
//! - [`registry`]: the bindings compiled in, by name, and dispatch from a
//!   name to the generic code (the one place a new binding is registered);
//! - [`spec`]: the specification of one run;
//! - [`protocol`]: the control channel's messages between publisher and
//!   subscribers; [`channel`]: its frames; [`auth`]: its handshake, keyed by
//!   the agent's [`token`];
//! - [`session`]: the publisher's control connections to its subscribers
//!   (processes it starts, threads, or remote hosts);
//! - [`run`] and [`subscriber`]: the two sides of a run, generic over the
//!   binding so the measuring loops are monomorphized (no dynamic dispatch
//!   per sample); [`extra`]: an extra publisher's side;
//! - [`serve`]: the subscriber host's end of a session; [`agent`]: a host
//!   that serves sessions one after another, each in a process of its own,
//!   to publishers that present its [`token`];
//! - [`graph`]: topology runs, a whole graph of nodes from a file;
//! - [`clock_offset`]: the two hosts' clock offset, for one-way latency
//!   across hosts;
//! - [`search`]: the maximum throughput search;
//! - [`profiler`]: `--profile`, a side's system calls traced over its run.
//!
//! Two subsystems share this crate and still import each other (issue 66
//! moves the control plane out): `session` starts each `run` on its
//! connections and `run` drives them through `session`; `protocol`
//! carries `graph` and `fan_out` types; `serve` runs `subscriber`,
//! `extra` and `graph`'s nodes, and `subscriber` reports through
//! `session`'s helpers. `spec`, `stream` and `registry` are used by all.

pub mod agent;
pub mod auth;
pub mod channel;
mod check_every;
pub mod clock_offset;
mod count_bounds;
pub mod destinations;
pub mod explaining;
/// Text from the network made safe to print (in core, shared with the
/// report's tables and CSV).
pub use pubsubperf_core::escape;
pub mod extra;
pub mod fan_out;
pub mod graph;
pub mod key_pipe;
pub mod multicast;
pub mod one_host;
pub mod profiler;
pub mod protocol;
pub mod qos_dir;
mod rate_window;
pub mod registry;
pub mod remote_check;
pub mod run;
pub mod search;
pub mod serve;
pub mod session;
pub mod spec;
pub mod ssh;
pub mod start_gate;
mod stream;
mod sub_interval;
pub mod subscriber;
pub mod token;

use std::sync::atomic::AtomicBool;

/// Set by the CLI's Ctrl-C handler; every loop checks it and ends its run
/// early, keeping what was measured.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Why a run or session failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Fault {
    /// The configuration is invalid (exit code 2); names the option.
    #[error("{0}")]
    Config(String),
    /// The binding failed.
    #[error("{0}")]
    Binding(String),
    /// The peer died, hung, refused, or never appeared.
    #[error("{0}")]
    Peer(String),
    /// A subscriber's publisher closed the control connection or went
    /// silent mid-run: its session is over.
    #[error("{0}")]
    Gone(String),
    /// Ctrl-C.
    #[error("interrupted")]
    Interrupted,
}

/// The tool's version, exchanged with peers.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
