//! The protocol's field table in docs/protocol.md ("What a remote
//! publisher can ask") against the protocol's types: every message of
//! [`Msg`] is in its message table, and every field of every message an
//! agent reads, found by serializing a fully populated value of it, is in
//! its field table; neither table names one that is gone.

use super::Msg;
use crate::graph::NodePlan;
use crate::graph::plan::{PathPlan, ReaderPlan, TopicQos, WriterPlan};
use crate::spec::{RoundTripClock, RunSpec};
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{
    DataType, Durability, EndpointConfig, History, ReceiveMode, Reliability, WaitMode,
};
use std::collections::BTreeSet;

const DOC: &str = include_str!("../../../../docs/protocol.md");
const SECTION: &str = "## What a remote publisher can ask";

/// Whether an agent acts on `m` from a publisher (its fields are in the
/// field table) or ignores it. Exhaustive: a new message does not build
/// until it is placed here (and, if the agent reads it, in [`read`]).
fn agent_reads(m: &Msg) -> bool {
    match m {
        Msg::Hello { .. }
        | Msg::Proof { .. }
        | Msg::Error { .. }
        | Msg::Setup { .. }
        | Msg::PubSetup { .. }
        | Msg::NodeSetup { .. }
        | Msg::Peer { .. }
        | Msg::NodePeers { .. }
        | Msg::Start
        | Msg::Stop { .. }
        | Msg::Drain
        | Msg::Heartbeat
        | Msg::ClockProbe { .. }
        | Msg::Bye => true,
        Msg::Challenge { .. }
        | Msg::Welcome { .. }
        | Msg::Locators { .. }
        | Msg::Ready { .. }
        | Msg::Interval { .. }
        | Msg::PubDone { .. }
        | Msg::Result { .. }
        | Msg::ClockEcho { .. }
        | Msg::NodeLocators { .. }
        | Msg::NodeDone
        | Msg::NodeResult { .. } => false,
    }
}

/// A run specification with every field set to a value that is
/// serialized (struct literals: a new field does not build until it is
/// set here).
fn spec() -> Box<RunSpec> {
    let endpoint = EndpointConfig {
        run_id: "pp1x2x3s0".into(),
        transport: "udp".into(),
        reliability: Reliability::Reliable,
        wait: WaitMode::Block,
        receive: ReceiveMode::Listener,
        data_type: DataType::Bytes,
        zero_copy: true,
        max_sample_size: 64,
        subscribers: 1,
        publishers: 1,
        batch_bytes: 1,
        multicast: true,
        ipv6: true,
        bind_ip: "127.0.0.1".into(),
        socket_buffer: 1,
        send_queue: 1,
        receive_queue: 1,
        reliable_block_timeout_ms: 1,
        history: Some(History::KeepLast(1)),
        durability: Some(Durability::TransientLocal),
        async_publish: true,
        domain: Some(1),
        qos_file: Some("a.xml".into()),
        instances: 1,
        no_positive_acks: true,
        bandwidth_limit: 1,
        no_push_on_write: true,
        multicast_ttl: Some(1),
        multicast_address: Some("239.255.0.1".into()),
        // A map: its keys are data, not fields (empty, it is one leaf).
        options: Default::default(),
        cancel: Default::default(),
        sample_key: Some(1),
        held_discovery: Some(vec![std::net::Ipv4Addr::LOCALHOST.into()]),
    };
    Box::new(RunSpec {
        binding: "udp".into(),
        peer_binding: "udp".into(),
        test: TestKind::Latency,
        size: 64,
        endpoint,
        warmup_ns: 1,
        duration_ns: 1,
        count: 1,
        rate: 1.0,
        sleep_ns: 1,
        pace_sleep: true,
        demand: 1,
        recovery_ms: 1,
        latency_every: 1,
        check: true,
        pub_cpu: Some(0),
        sub_cpu: Some(1),
        rt_priority: Some(1),
        mlock: true,
        subscribers: 2,
        publishers: 2,
        subscriber_index: 1,
        fan_out_every: 1,
        topics: 2,
        echo_timeout_ms: 1,
        interval_ms: 10,
        one_way: true,
        clock: RoundTripClock::Tsc,
        profile: true,
        explain: true,
        data_address: Some("127.0.0.1".into()),
        run_key: 1,
    })
}

/// A topology node's plan with every field set.
fn plan() -> Box<NodePlan> {
    let qos = TopicQos {
        reliability: Reliability::Reliable,
        history: Some(History::KeepAll),
        durability: Some(Durability::Volatile),
    };
    Box::new(NodePlan {
        node: 1,
        cpu: Some(1),
        priority: Some(1),
        readers: vec![ReaderPlan {
            topic: 1,
            index: 1,
            qos,
            writers: vec![1],
            paths: vec![PathPlan {
                path: 1,
                streams: vec![1],
            }],
            deadline_ns: Some(1),
            too_late_ns: Some(1),
        }],
        writers: vec![WriterPlan {
            stream: 1,
            topic: 1,
            size: 64,
            qos,
            readers: 1,
            rate: Some(1.0),
            from_reader: Some(0),
            receptions: 1,
        }],
        clock_deltas_ns: vec![1],
    })
}

/// Every message an agent reads, every field set.
fn read() -> Vec<Msg> {
    vec![
        Msg::Hello {
            version: "v".into(),
            protocol: 1,
            nonce: Some("n".into()),
        },
        Msg::Proof { proof: "p".into() },
        Msg::Error {
            message: "m".into(),
        },
        Msg::Setup { spec: spec() },
        Msg::PubSetup {
            spec: spec(),
            publisher: 1,
            data: vec!["d".into()],
        },
        Msg::NodeSetup {
            spec: spec(),
            plan: plan(),
            bind_ip: Some("127.0.0.1".into()),
        },
        Msg::Peer { echo: "e".into() },
        Msg::NodePeers {
            writers: vec![vec!["w".into()]],
        },
        Msg::Start,
        Msg::Stop {
            sent: 1,
            sent_by: vec![1],
            rejected: 1,
        },
        Msg::Drain,
        Msg::Heartbeat,
        Msg::ClockProbe { t1: 1 },
        Msg::Bye,
    ]
}

/// `pub_setup` as `PubSetup`.
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Every message of the protocol, by name: serde's own list, from the
/// error it gives for a type that is none of them.
fn every_message() -> BTreeSet<String> {
    let e = serde_json::from_str::<Msg>(r#"{"type":"?"}"#)
        .unwrap_err()
        .to_string();
    let list = e
        .split_once("expected one of ")
        .unwrap_or_else(|| panic!("serde's error lists no variants: {e}"))
        .1;
    list.split(',')
        .filter_map(|v| v.trim().strip_prefix('`')?.split('`').next())
        .map(camel)
        .collect()
}

/// The leaves of `v` under `path`: an object's fields and a list's
/// elements (`[]`) are walked; anything else, or an empty object or list,
/// is one leaf.
fn leaves(path: &str, v: &serde_json::Value, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(o) if !o.is_empty() => {
            for (k, v) in o {
                leaves(&format!("{path}.{k}"), v, out);
            }
        }
        serde_json::Value::Array(a) if a.first().is_some_and(|e| e.is_object()) => {
            leaves(&format!("{path}[]"), &a[0], out)
        }
        _ => {
            out.insert(path.to_string());
        }
    }
}

/// The fields of `m` as the table names them: `Setup.spec` and the run
/// specification's own under `spec.`.
fn fields(m: &Msg) -> BTreeSet<String> {
    let mut v = serde_json::to_value(m).expect("messages serialize");
    let o = v.as_object_mut().expect("a message is an object");
    let name = camel(
        o.remove("type")
            .and_then(|t| t.as_str().map(String::from))
            .as_deref()
            .unwrap_or(""),
    );
    let mut out = BTreeSet::new();
    for (k, v) in o.iter() {
        if k == "spec" {
            out.insert(format!("{name}.spec"));
            let mut inner = BTreeSet::new();
            leaves("spec", v, &mut inner);
            out.extend(inner);
        } else {
            leaves(&format!("{name}.{k}"), v, &mut out);
        }
    }
    out
}

/// What the section's tables name in their first column, backquoted.
struct Table {
    /// Every message (a name without a dot).
    messages: BTreeSet<String>,
    /// The messages whose row says the agent ignores them.
    ignored: BTreeSet<String>,
    /// Every field (a name with a dot).
    fields: BTreeSet<String>,
}

fn table() -> Table {
    let start = DOC
        .find(SECTION)
        .unwrap_or_else(|| panic!("docs/protocol.md has no '{SECTION}'"));
    let rest = &DOC[start + SECTION.len()..];
    let section = &rest[..rest.find("\n#").unwrap_or(rest.len())];
    let mut t = Table {
        messages: BTreeSet::new(),
        ignored: BTreeSet::new(),
        fields: BTreeSet::new(),
    };
    for line in section.lines() {
        let Some(first) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
            continue;
        };
        let ignored = line.contains("| ignored when a publisher sends them");
        for name in first.split('`').skip(1).step_by(2) {
            if name.contains('.') {
                t.fields.insert(name.to_string());
            } else {
                t.messages.insert(name.to_string());
                if ignored {
                    t.ignored.insert(name.to_string());
                }
            }
        }
    }
    t
}

fn differ(what: &str, code: &BTreeSet<String>, doc: &BTreeSet<String>) -> Vec<String> {
    let missing = code
        .difference(doc)
        .map(|n| format!("{what} {n} is not in the table"));
    let gone = doc
        .difference(code)
        .map(|n| format!("the table names {what} {n}, which the protocol does not have"));
    missing.chain(gone).collect()
}

/// The `type` of `m`, as the table names it.
fn name(m: &Msg) -> String {
    let v = serde_json::to_value(m).expect("messages serialize");
    camel(v["type"].as_str().expect("a message has a type"))
}

#[test]
fn the_field_table_covers_every_message_and_field() {
    let doc = table();
    let messages = every_message();
    assert!(messages.len() > 20, "serde listed {messages:?}");
    let read = read();
    let mut fields_read = BTreeSet::new();
    for m in &read {
        assert!(agent_reads(m), "{m:?} is in read() but agent_reads says no");
        fields_read.extend(fields(m));
    }
    let mut problems = differ("message", &messages, &doc.messages);
    // The messages the table says an agent reads are those read() has
    // (with every field), so none goes unchecked.
    let read_names: BTreeSet<String> = read.iter().map(name).collect();
    let doc_read: BTreeSet<String> = doc.messages.difference(&doc.ignored).cloned().collect();
    problems.extend(differ("a message the agent reads,", &read_names, &doc_read));
    problems.extend(differ("field", &fields_read, &doc.fields));
    assert!(
        problems.is_empty(),
        "docs/protocol.md, '{SECTION}':\n{}",
        problems.join("\n")
    );
    // The walk reaches into the run's specification and the node's plan.
    for deep in [
        "spec.endpoint.run_id",
        "NodeSetup.plan.readers[].paths[].streams",
    ] {
        assert!(fields_read.contains(deep), "{deep} not in {fields_read:?}");
    }
}
