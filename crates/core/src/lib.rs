//! Measurement core of pubsubperf.
//!
//! This crate knows nothing about command lines or processes. It defines:
//! - [`binding`]: the interface every middleware or raw transport implements
//!   (a [`binding::Binding`] opens writers and readers; capability methods say
//!   what it supports), plus the [`binding::EndpointConfig`] every run hands it;
//! - [`received`]: a sample as a reader delivers it (in one piece, or in
//!   the middleware's pieces, of which the measurement reads the head);
//! - [`sample`]: the 16-byte header every sample starts with (sequence
//!   number, publisher id, flags, send timestamp) and the integrity pattern;
//! - [`stats`]: latency recording into an HDR histogram with exact
//!   count/mean/std/min/max, and lossless (V2 compressed) serialization;
//! - [`escape`]: text from the network or an imported file made safe to
//!   print;
//! - [`seq`]: loss, duplicate and reordering accounting per publisher;
//! - [`result`]: the JSON result schema (the output contract);
//! - [`size`], [`rate`], [`clock`], [`sys`]: size and rate parsing, the timestamp clock, and
//!   operating-system knobs (affinity, priority, mlock, resource usage).

pub mod binding;
pub mod busy;
pub mod calibrate;
pub mod clock;
pub mod cpus;
pub mod dds;
pub mod environment;
pub mod escape;
pub mod explanation;
pub mod graph_result;
pub mod handoff;
pub mod helper;
pub mod listener;
pub mod page_buf;
pub mod placement;
pub mod profile;
pub mod rate;
pub mod received;
mod refusal;
pub mod result;
pub mod room;
pub mod sample;
pub mod seq;
mod shim_fns;
pub mod size;
pub mod stats;
pub mod sys;
pub mod tail;

pub use pubsubperf_doctor as doctor;
pub mod time;

pub use binding::{
    Binding, BindingError, BindingInfo, CancelToken, Capabilities, DataType, Durability,
    EndpointConfig, History, Locator, Reader, ReceiveMode, Refusal, Reliability, TopicSpec,
    WaitMode, WireProtocol, Writer,
};
pub use received::Received;
