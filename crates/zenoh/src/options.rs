//! `--opt KEY=VALUE` options of the zenoh binding.

use pubsubperf_core::{BindingError, EndpointConfig};
use zenoh::qos::Priority;

/// The binding's options, parsed and checked.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Express mode: each `put` goes out at once, not batched (default true).
    pub express: bool,
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
            express: true,
            priority: Priority::Data,
        };
        for (k, v) in &cfg.options {
            match k.as_str() {
                "express" => {
                    o.express = match v.as_str() {
                        "true" | "1" | "on" => true,
                        "false" | "0" | "off" => false,
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
}
