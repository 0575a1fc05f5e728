//! Every count a token holder's message carries, held to the bounds the
//! command line holds its own flags to: a `Setup` asking for 10^12
//! subscribers, or a `NodePeers` naming a million readers, is refused
//! before anything is sized by it.

use crate::Fault;
use crate::protocol::Msg;
use crate::serve::{Bounds, Limits};
use crate::spec::RunSpec;
use pubsubperf_topology::graph::{MAX_NODES, MAX_TOPICS};

impl Limits {
    /// Refuses a message from the network one of whose counts exceeds its
    /// bound; the message names the field and the bound. Sessions the
    /// publisher started itself are not checked (their counts are its
    /// command line's, already bounded).
    pub fn check_counts(&self, msg: &Msg) -> Result<(), Fault> {
        if !self.network {
            return Ok(());
        }
        bounded_counts(msg)
    }
}

/// Refuses a message one of whose counts exceeds its bound, wherever it
/// comes from: a topology node checks its `NodePeers` with it (a topic has
/// at most one reader per node, whoever sends the list).
pub(crate) fn bounded_counts(msg: &Msg) -> Result<(), Fault> {
    counts(msg).map_err(|m| Fault::Config(format!("refused by the agent: {m}")))
}

/// `field` of `v` is at most `max`.
fn at_most(field: &str, v: usize, max: usize) -> Result<(), String> {
    if v > max {
        Err(format!("{field} {v} exceeds the agent's bound {max}"))
    } else {
        Ok(())
    }
}

/// The counts of a run's settings the session sizes things by, besides
/// its `--subscribers` and `--publishers` ([`Limits::check`]).
fn spec_counts(spec: &RunSpec) -> Result<(), String> {
    at_most(
        "endpoint.subscribers",
        spec.endpoint.subscribers,
        Bounds::ENDPOINTS,
    )?;
    at_most(
        "endpoint.publishers",
        spec.endpoint.publishers,
        Bounds::ENDPOINTS,
    )?;
    at_most("topics", spec.topics, Bounds::ENDPOINTS)
}

fn counts(msg: &Msg) -> Result<(), String> {
    match msg {
        Msg::Setup { spec } => spec_counts(spec),
        Msg::PubSetup {
            spec,
            publisher,
            data,
        } => {
            spec_counts(spec)?;
            at_most("publisher", usize::from(*publisher), Bounds::ENDPOINTS - 1)?;
            at_most("data (locators)", data.len(), Bounds::ENDPOINTS)
        }
        Msg::NodeSetup { spec, plan, .. } => {
            spec_counts(spec)?;
            at_most("plan.readers", plan.readers.len(), MAX_TOPICS)?;
            at_most("plan.node", plan.node, MAX_NODES - 1)?;
            for w in &plan.writers {
                at_most("plan.writers[].topic", w.topic, MAX_TOPICS - 1)?;
                at_most("plan.writers[].readers", w.readers, MAX_NODES)?;
            }
            for r in &plan.readers {
                at_most("plan.readers[].topic", r.topic, MAX_TOPICS - 1)?;
                at_most("plan.readers[].index", r.index, MAX_NODES - 1)?;
            }
            Ok(())
        }
        Msg::NodePeers { writers } => {
            at_most("writers", writers.len(), MAX_TOPICS)?;
            writers
                .iter()
                .try_for_each(|w| at_most("writers[] (locators)", w.len(), MAX_NODES))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::TestKind;

    fn network() -> Limits {
        Limits {
            network: true,
            ..Limits::default()
        }
    }

    #[test]
    fn counts_of_a_trillion_are_refused_naming_the_field_and_bound() {
        let refused = |spec: RunSpec| {
            network()
                .check_counts(&Msg::Setup {
                    spec: Box::new(spec),
                })
                .unwrap_err()
                .to_string()
        };
        let base = RunSpec::for_test("c", TestKind::Throughput);
        let mut s = base.clone();
        s.endpoint.subscribers = 1_000_000_000_000;
        assert_eq!(
            refused(s),
            "refused by the agent: endpoint.subscribers 1000000000000 exceeds the agent's bound 64"
        );
        let mut s = base.clone();
        s.endpoint.publishers = 1_000_000_000_000;
        assert!(
            refused(s).contains("endpoint.publishers 1000000000000 exceeds the agent's bound 64")
        );
        let mut s = base.clone();
        s.topics = 1_000_000_000_000;
        assert!(refused(s).contains("topics 1000000000000 exceeds the agent's bound 64"));
        assert!(
            network()
                .check_counts(&Msg::Setup {
                    spec: Box::new(base.clone())
                })
                .is_ok()
        );
        let mut s = base;
        s.topics = 1_000_000_000_000;
        assert!(
            Limits::unlimited()
                .check_counts(&Msg::Setup { spec: Box::new(s) })
                .is_ok()
        );
        let peers = Msg::NodePeers {
            writers: vec![vec![String::new(); MAX_NODES + 1]],
        };
        let e = network().check_counts(&peers).unwrap_err().to_string();
        assert!(
            e.contains("writers[] (locators) 129 exceeds the agent's bound 128"),
            "{e}"
        );
    }
}
