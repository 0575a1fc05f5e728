//! `--opt KEY=VALUE` options of the zenoh binding.

use pubsubperf_core::result::TestKind;
use pubsubperf_core::{BindingError, EndpointConfig, Reliability, TopicSpec};
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

    /// What a run of `test` with these options sets differently from
    /// zenoh's defaults ([`pubsubperf_core::Binding::deviations`]): express
    /// writers (zenoh batches by default; `z_ping`/`z_pong` set express; a
    /// throughput test's data, batched as zenoh's default, says `batched`), a
    /// priority other than `data`, a blocking time other than zenoh's
    /// `wait_before_close` (`default_block_ms`).
    pub fn deviations(
        &self,
        test: TestKind,
        cfg: &EndpointConfig,
        default_block_ms: u64,
    ) -> Vec<String> {
        let mut d = Vec::new();
        // As express_for: a latency test's pings and echoes are express. A
        // batched throughput test is zenoh's default, but its figures
        // depend on it: said too.
        let latency = test == TestKind::Latency;
        match self.express.unwrap_or(latency) {
            true => d.push("express".into()),
            false if !latency => d.push(pubsubperf_core::binding::BATCHED_BY_DEFAULT.into()),
            false => {}
        }
        if let Some((name, _)) = PRIORITIES
            .iter()
            .find(|(_, p)| *p == self.priority && *p != Priority::Data)
        {
            d.push(format!("priority {name}"));
        }
        if cfg.reliability == Reliability::Reliable
            && cfg.reliable_block_timeout_ms != default_block_ms
        {
            d.push(format!(
                "blocking time {}",
                pubsubperf_core::time::format_millis(cfg.reliable_block_timeout_ms)
            ));
        }
        d
    }

    /// Express mode for a writer of `topic`: `--opt express=`, else as
    /// zenoh's own tools run that topic (see [`Options::express`]).
    pub fn express_for(&self, topic: &TopicSpec) -> bool {
        self.express.unwrap_or(topic.is_ping() || topic.is_echo())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deviations(opts: &[(&str, &str)], test: TestKind, block_ms: u64) -> Vec<String> {
        let mut c = EndpointConfig::for_test("z");
        c.transport = "tcp".into();
        c.reliable_block_timeout_ms = block_ms;
        for (k, v) in opts {
            c.options.insert((*k).into(), (*v).into());
        }
        Options::parse(&c).unwrap().deviations(test, &c, 5000)
    }

    #[test]
    fn latency_is_express_and_throughput_batched_as_zenohs_tools_run_them() {
        assert_eq!(deviations(&[], TestKind::Latency, 5000), ["express"]);
        assert_eq!(deviations(&[], TestKind::Throughput, 5000), ["batched"]);
        assert_eq!(
            deviations(&[("express", "true")], TestKind::Throughput, 5000),
            ["express"]
        );
        assert!(deviations(&[("express", "false")], TestKind::Latency, 5000).is_empty());
    }

    #[test]
    fn a_priority_and_a_blocking_time_of_the_users_are_said() {
        assert_eq!(
            deviations(&[("priority", "real-time")], TestKind::Latency, 250),
            ["express", "priority real-time", "blocking time 250 ms"]
        );
    }
}
