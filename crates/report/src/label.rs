//! Series labels of plots and tables: a series is named by what a reader
//! compares. That is the binding (with its transport when it is not the
//! binding's own name, and the peer of a mixed pair), its mode (zero copy,
//! the middleware's listener, busy polling), its batching (`batched N B`;
//! `batched` where the middleware batches by its own default, zenoh's
//! throughput),
//! and its reliability or data type where series of the same binding differ
//! in them.
//!
//! Other settings appear only to tell apart series that would otherwise
//! share a name, as `name value` (`socket buffer 65536`). A throughput
//! search's outputs and settings (`find_max.*`, the rate it settled on),
//! absent settings and structured values (lists, objects) never appear: no
//! label holds `=` or JSON. Series still alike are numbered (`udp #2`).

use crate::key::SeriesKey;
use crate::search;

/// Settings the named parts already say.
const NAMED: &[&str] = &[
    "peer_binding",
    "endpoint.receive",
    "endpoint.wait",
    "endpoint.batch_bytes",
];

/// One label per key, in the same order. Labels are unique among the keys
/// of one test; the same variant of a binding gets the same label in the
/// latency and the throughput test.
pub fn series_labels(keys: &[SeriesKey]) -> Vec<String> {
    let mut labels: Vec<String> = keys
        .iter()
        .map(|k| {
            let mut parts = named(k, keys);
            parts.extend(qos_differences(k, keys));
            parts.join(" ")
        })
        .collect();
    tell_apart(keys, &mut labels);
    number_repeats(keys, &mut labels);
    labels
}

/// The other series of the same binding in the same test (and `k` itself).
fn siblings<'a>(k: &'a SeriesKey, keys: &'a [SeriesKey]) -> impl Iterator<Item = &'a SeriesKey> {
    keys.iter()
        .filter(move |o| o.binding == k.binding && o.test == k.test)
}

fn setting<'a>(k: &'a SeriesKey, name: &str) -> Option<&'a str> {
    k.essentials.get(name).map(String::as_str)
}

/// The binding, its transport, peer, mode and batching.
fn named(k: &SeriesKey, keys: &[SeriesKey]) -> Vec<String> {
    let transports_differ = siblings(k, keys).any(|o| o.transport != k.transport);
    let mut parts = vec![if transports_differ || k.transport != k.binding {
        format!("{}/{}", k.binding, k.transport)
    } else {
        k.binding.clone()
    }];
    if let Some(peer) = setting(k, "peer_binding").filter(|p| *p != k.binding) {
        parts.push(format!("to {peer}"));
    }
    if k.zero_copy {
        parts.push("zero-copy".into());
    }
    if setting(k, "endpoint.receive") == Some("listener") {
        parts.push("listener".into());
    }
    if setting(k, "endpoint.wait") == Some("busy") {
        parts.push("busy-poll".into());
    }
    if let Some(b) = setting(k, "endpoint.batch_bytes")
        .and_then(|b| b.parse::<u64>().ok())
        .filter(|b| *b > 0)
    {
        parts.push(format!("batched {b} B"));
    }
    if setting(k, crate::key::BATCHED) == Some("true") {
        parts.push(crate::key::BATCHED.into());
    }
    parts
}

/// Reliability and data type, where series of the same binding differ.
fn qos_differences(k: &SeriesKey, keys: &[SeriesKey]) -> Vec<String> {
    let mut parts = Vec::new();
    if siblings(k, keys).any(|o| o.reliable != k.reliable) {
        parts.push(
            if k.reliable {
                "reliable"
            } else {
                "best-effort"
            }
            .to_string(),
        );
    }
    if siblings(k, keys).any(|o| o.data_type != k.data_type) {
        parts.push(k.data_type.clone());
    }
    parts
}

/// True for a setting of `k` that may tell series apart in a label: not
/// one the named parts say or a search's, and a plain present value.
fn sayable(k: &SeriesKey, name: &str, value: &str) -> bool {
    let unsaid = NAMED.contains(&name)
        || name.starts_with(search::RECORD)
        || (search::searched(k.essentials.keys()) && search::is_output(name));
    let blank = value.is_empty() || value == "null" || value.starts_with(['[', '{']);
    !(unsaid || blank)
}

/// `socket_buffer` → `socket buffer`, `endpoint.options.express` → `express`.
fn short(name: &str) -> String {
    name.rsplit('.').next().unwrap_or(name).replace('_', " ")
}

/// A setting's value as a reader says it: a rate as the tables print it
/// (`1k/s`, `max` for no limit), anything else as recorded.
fn value_text(name: &str, value: &str) -> String {
    match value.parse::<f64>() {
        Ok(r) if name == "rate" => pubsubperf_core::rate::format_rate(r),
        _ => value.to_string(),
    }
}

/// Series of one test with the same label get the settings they differ in.
fn tell_apart(keys: &[SeriesKey], labels: &mut [String]) {
    let before = labels.to_vec();
    for (i, k) in keys.iter().enumerate() {
        let alike: Vec<&SeriesKey> = keys
            .iter()
            .zip(&before)
            .filter(|(o, l)| o.test == k.test && **l == before[i])
            .map(|(o, _)| o)
            .collect();
        if alike.len() < 2 {
            continue;
        }
        let mut names: Vec<&String> = alike.iter().flat_map(|o| o.essentials.keys()).collect();
        names.sort();
        names.dedup();
        for n in names {
            let Some(mine) = k.essentials.get(n) else {
                continue;
            };
            if sayable(k, n, mine) && alike.iter().any(|o| o.essentials.get(n) != Some(mine)) {
                labels[i].push_str(&format!(" {} {}", short(n), value_text(n, mine)));
            }
        }
    }
}

/// Labels still alike within one test: the second and later get `#2`, `#3`.
fn number_repeats(keys: &[SeriesKey], labels: &mut [String]) {
    let before = labels.to_vec();
    for i in 0..labels.len() {
        let earlier = (0..i)
            .filter(|&j| keys[j].test == keys[i].test && before[j] == before[i])
            .count();
        if earlier > 0 {
            labels[i].push_str(&format!(" #{}", earlier + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn key(binding: &str, transport: &str, test: &str, settings: &[(&str, &str)]) -> SeriesKey {
        SeriesKey {
            binding: binding.into(),
            transport: transport.into(),
            test: test.into(),
            reliable: true,
            zero_copy: false,
            data_type: "bytes".into(),
            essentials: settings
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    const PLAIN: &[(&str, &str)] = &[
        ("endpoint.wait", "block"),
        ("endpoint.batch_bytes", "0"),
        ("rate", "0.0"),
    ];

    #[test]
    fn a_middleware_batching_by_default_says_batched() {
        let batched = [("endpoint.wait", "block"), (crate::key::BATCHED, "true")];
        let keys = [
            key("zenoh", "tcp", "throughput", &batched),
            key("zenoh", "tcp", "latency", PLAIN),
        ];
        assert_eq!(series_labels(&keys), ["zenoh/tcp batched", "zenoh/tcp"]);
    }

    #[test]
    fn the_quick_comparisons_series_are_named_by_binding() {
        // A search's key keeps its bound and trial limit (settings), which
        // the latency series of the same binding lacks.
        let searched = [
            ("endpoint.wait", "block"),
            ("endpoint.batch_bytes", "0"),
            ("find_max.max_loss_percent", "0.1"),
            ("find_max.max_trials", "6"),
        ];
        let keys = [
            key("tcp", "tcp", "latency", PLAIN),
            key("tcp", "tcp", "throughput", PLAIN),
            key("udp", "udp", "latency", PLAIN),
            key("udp", "udp", "throughput", &searched),
        ];
        assert_eq!(series_labels(&keys), ["tcp", "tcp", "udp", "udp"]);
    }

    #[test]
    fn transport_mode_and_batching_are_named() {
        let batched = [
            ("endpoint.receive", "listener"),
            ("endpoint.batch_bytes", "14720"),
            ("peer_binding", "cyclonedds"),
        ];
        let busy = [("endpoint.wait", "busy"), ("peer_binding", "cyclonedds")];
        let mut zero_copy = key("iceoryx2", "shm", "latency", PLAIN);
        zero_copy.zero_copy = true;
        let keys = [
            key("cyclonedds", "udp", "throughput", &batched),
            key("fastdds", "udp", "latency", &busy),
            zero_copy,
        ];
        assert_eq!(
            series_labels(&keys),
            [
                "cyclonedds/udp listener batched 14720 B",
                "fastdds/udp to cyclonedds busy-poll",
                "iceoryx2/shm zero-copy",
            ]
        );
    }

    #[test]
    fn reliability_and_transport_where_a_binding_has_several() {
        let mut best_effort = key("zenoh", "tcp", "latency", PLAIN);
        best_effort.reliable = false;
        let keys = [
            key("zenoh", "tcp", "latency", PLAIN),
            best_effort,
            key("tcp", "tcp", "latency", PLAIN),
        ];
        assert_eq!(
            series_labels(&keys),
            ["zenoh/tcp reliable", "zenoh/tcp best-effort", "tcp"]
        );
    }

    /// A throughput series with one setting.
    fn tp(binding: &str, transport: &str, setting: (&str, &str)) -> SeriesKey {
        key(binding, transport, "throughput", &[setting])
    }

    #[test]
    fn other_settings_only_tell_alike_series_apart() {
        let keys = [
            tp("tcp", "tcp", ("endpoint.socket_buffer", "0")),
            tp("tcp", "tcp", ("endpoint.socket_buffer", "65536")),
            tp("zenoh", "tcp", ("endpoint.options.express", "false")),
            tp("zenoh", "tcp", ("endpoint.options.express", "true")),
            tp("udp", "udp", ("endpoint.socket_buffer", "0")),
            tp("uds", "uds", ("rate", "1000.0")),
            tp("uds", "uds", ("rate", "10000.0")),
        ];
        assert_eq!(
            series_labels(&keys),
            [
                "tcp socket buffer 0",
                "tcp socket buffer 65536",
                "zenoh/tcp express false",
                "zenoh/tcp express true",
                "udp",
                "uds rate 1k/s",
                "uds rate 10k/s",
            ]
        );
    }

    #[test]
    fn search_settings_absent_and_structured_values_never_appear() {
        let udp = |settings: &[(&str, &str)]| key("udp", "udp", "throughput", settings);
        let keys = [
            udp(&[("find_max.max_loss_percent", "0.1"), ("rate", "0.0")]),
            udp(&[("find_max.max_loss_percent", "1"), ("rate", "21315.7")]),
            udp(&[("endpoint.options", "{}"), ("x", "[1]")]),
            udp(&[("x", "null")]),
        ];
        let labels = series_labels(&keys);
        assert_eq!(labels, ["udp", "udp #2", "udp #3", "udp #4"]);
        for l in &labels {
            assert!(!l.contains(['=', '{', '[', '"']), "{l}");
        }
    }
}
