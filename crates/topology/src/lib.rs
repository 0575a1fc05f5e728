//! Topology files: a whole graph of nodes exchanging samples over topics,
//! described in TOML ([`file`]), checked into a [`Topology`] whose writers,
//! readers and paths are numbered once ([`graph`]), so that a node needs
//! only small numbers to play its part and a sample carries its route as a
//! few bytes ([`route`]).
//!
//! The harness runs a topology (`pubsubperf_harness::graph`); the CLI's
//! `pubsubperf topology FILE` prints and stores what it measured.

pub mod file;
pub mod graph;
pub mod route;

pub use file::{parse, read};
pub use graph::{Node, Path, Reader, Relay, Stream, StreamKind, Topic, Topology};
