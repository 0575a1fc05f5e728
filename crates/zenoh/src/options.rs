//! `--opt KEY=VALUE` options of the zenoh binding.

use pubsubperf_core::{BindingError, EndpointConfig, TopicSpec};
use zenoh::qos::Priority;

/// The binding's options, parsed and checked.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// `--opt express=`: each `put` goes out at once, not batched. None
    /// (not given): as zenoh's own tools, express for latency (`z_ping`,
    /// `z_pong`, and a throughput test's echoes), batched for a throughput
    /// test's data (`z_pub_thr`): [`Options::express_for`].
    pub express: Option<bool>,
    /// Priority of the publishers (default `data`).
    pub priority: Priority,
}

/// The priority names `--opt priority=` accepts, in zenoh's order.
pub const PRIORITIES: &[(&str, Priority)] = &[
    ("real-time", Priority::RealTime),
    ("interactive-high", Priority::InteractiveHigh),
    ("interactive-low", Priority::InteractiveLow),
    ("data-high", Priority::DataHigh),
    ("data", Priority::Data),
    ("data-low", Priority::DataLow),
    ("background", Priority::Background),
];

impl Options {
    /// Parses `cfg.options`; an unknown key or a bad value names `--opt KEY`.
    pub fn parse(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        let mut o = Options {
            express: None,
            priority: Priority::Data,
        };
        for (k, v) in &cfg.options {
            match k.as_str() {
                "express" => {
                    o.express = match v.as_str() {
                        "true" | "1" | "on" => Some(true),
                        "false" | "0" | "off" => Some(false),
                        _ => {
                            return Err(BindingError::Unsupported(format!(
                                "--opt express={v}: expected true or false"
                            )));
                        }
                    }
                }
                "priority" => {
                    o.priority = PRIORITIES
                        .iter()
                        .find(|(n, _)| n == v)
                        .map(|(_, p)| *p)
                        .ok_or_else(|| {
                            BindingError::Unsupported(format!(
                                "--opt priority={v}: expected one of {}",
                                PRIORITIES
                                    .iter()
                                    .map(|(n, _)| *n)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ))
                        })?
                }
                _ => {
                    return Err(BindingError::Unsupported(format!(
                        "--opt {k}: zenoh's options are express=true|false and priority=NAME"
                    )));
                }
            }
        }
        Ok(o)
    }

    /// Express mode for a writer of `topic`: `--opt express=`, else as
    /// zenoh's own tools run that topic (see [`Options::express`]).
    pub fn express_for(&self, topic: &TopicSpec) -> bool {
        self.express.unwrap_or(topic.is_ping() || topic.is_echo())
    }
}
