//! The topology file, TOML:
//!
//! ```toml
//! name = "chain"            # optional: the file's stem
//! binding = "cyclonedds"    # optional: --binding names it otherwise
//! duration = "10s"          # measured (default 10s)
//! warmup = "1s"             # sent first, not measured (default 1s)
//!
//! [topics.camera]
//! size = "1KiB"             # bytes, at least 48 (the route a sample carries)
//! rate = 100                # samples per second of each source (100, 2.5k)
//! reliability = "reliable"  # or "best-effort"; default: the binding's
//! history = "keep-last:8"   # or "keep-all" (DDS); default: the binding's
//! durability = "volatile"   # or "transient-local" (DDS)
//! deadline = "2ms"          # a hop slower than this is late
//! too_late = "10ms"         # ... and slower than this too late
//!
//! [topics.objects]
//! size = 256
//!
//! [nodes.camera]
//! publish = ["camera"]
//! cpu = 0                   # pin its threads to core 0
//! priority = 50             # SCHED_FIFO 1-99
//!
//! [nodes.detector]
//! relay = [{ from = "camera", to = "objects" }]
//! host = "ssh://lab2"       # run it on an agent (HOST:PORT or ssh://)
//! binding = "fastdds"       # this node's middleware (default: the run's)
//!
//! [nodes.planner]
//! subscribe = ["objects"]
//! ```
//!
//! Every error is one line naming the key at fault and what to write.

use crate::graph::{MAX_NODES, MAX_TOPICS, Node, Relay, StreamKind, Topic, Topology};
use crate::route::ROUTE_END;
use pubsubperf_core::{Durability, History, Reliability};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;

/// Largest topic sample: 1 GiB.
pub const MAX_SIZE: usize = 1 << 30;
/// Highest source rate: 10 M samples per second.
pub const MAX_RATE: f64 = 1e7;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: Option<String>,
    binding: Option<String>,
    duration: Option<String>,
    warmup: Option<String>,
    #[serde(default)]
    topics: BTreeMap<String, RawTopic>,
    #[serde(default)]
    nodes: BTreeMap<String, RawNode>,
}

/// A number or a string with a unit (`size = 1024`, `size = "1KiB"`).
#[derive(Deserialize)]
#[serde(untagged)]
enum NumOrText {
    Int(i64),
    Float(f64),
    Text(String),
}

impl NumOrText {
    fn text(&self) -> String {
        match self {
            NumOrText::Int(n) => n.to_string(),
            NumOrText::Float(f) => f.to_string(),
            NumOrText::Text(s) => s.clone(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTopic {
    size: Option<NumOrText>,
    rate: Option<NumOrText>,
    reliability: Option<String>,
    history: Option<String>,
    durability: Option<String>,
    deadline: Option<String>,
    too_late: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRelay {
    from: String,
    to: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    #[serde(default)]
    publish: Vec<String>,
    #[serde(default)]
    subscribe: Vec<String>,
    #[serde(default)]
    relay: Vec<RawRelay>,
    cpu: Option<i64>,
    priority: Option<i64>,
    host: Option<String>,
    binding: Option<String>,
}

/// Reads and checks a topology file; the error names the file.
pub fn read(path: &std::path::Path) -> Result<Topology, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "topology".into());
    parse(&text, &stem).map_err(|e| format!("{}: {e}", path.display()))
}

/// Parses and checks topology text; `default_name` names a topology
/// without `name`. Errors are one line naming the key.
pub fn parse(text: &str, default_name: &str) -> Result<Topology, String> {
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        e.message().replace('\n', " ")
            + &e.span()
                .map(|s| format!(" (at line {})", text[..s.start].lines().count().max(1)))
                .unwrap_or_default()
    })?;
    let name = raw.name.unwrap_or_else(|| default_name.to_string());
    check_name("name", &name)?;
    if let Some(b) = &raw.binding {
        check_name("binding", b)?;
    }
    let duration = time("duration", raw.duration.as_deref())?.unwrap_or(Duration::from_secs(10));
    if duration.is_zero() {
        return Err("duration = \"0s\": give how long to measure, like \"10s\"".into());
    }
    let warmup = time("warmup", raw.warmup.as_deref())?.unwrap_or(Duration::from_secs(1));
    if raw.topics.is_empty() {
        return Err("topics: none; add a [topics.NAME] table with its size".into());
    }
    if raw.nodes.is_empty() {
        return Err("nodes: none; add [nodes.NAME] tables that publish and subscribe".into());
    }
    if raw.topics.len() > MAX_TOPICS || raw.nodes.len() > MAX_NODES {
        return Err(format!(
            "{} topics and {} nodes: at most {MAX_TOPICS} topics and {MAX_NODES} nodes",
            raw.topics.len(),
            raw.nodes.len()
        ));
    }
    let topic_names: Vec<&String> = raw.topics.keys().collect();
    let topics = raw
        .topics
        .iter()
        .map(|(n, t)| topic(n, t))
        .collect::<Result<Vec<_>, _>>()?;
    let find = |at: &str, name: &str| -> Result<usize, String> {
        topic_names
            .iter()
            .position(|t| t.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = topic_names.iter().map(|s| s.as_str()).collect();
                format!(
                    "{at}: no topic '{}' (the file has {}); add [topics.{}] or fix the name",
                    name.escape_debug(),
                    known.join(", "),
                    name.escape_debug()
                )
            })
    };
    let nodes = raw
        .nodes
        .iter()
        .map(|(n, r)| node(n, r, &find))
        .collect::<Result<Vec<_>, _>>()?;
    let mut t = Topology {
        name,
        binding: raw.binding,
        duration,
        warmup,
        topics,
        nodes,
        streams: Vec::new(),
        readers: Vec::new(),
        paths: Vec::new(),
    };
    t.derive()?;
    check_topics(&t)?;
    Ok(t)
}

/// Names are printed and become nothing else: letters, digits, `_`, `-`
/// and `.`, at most 64.
fn check_name(at: &str, name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{at} = \"{}\": use 1-64 letters, digits, '_', '-' or '.'",
            name.escape_debug()
        ))
    }
}

fn time(at: &str, text: Option<&str>) -> Result<Option<Duration>, String> {
    text.map(|s| pubsubperf_core::time::parse_duration(s).map_err(|e| format!("{at} = {e}")))
        .transpose()
}

fn topic(name: &str, raw: &RawTopic) -> Result<Topic, String> {
    let at = format!("topics.{name}");
    check_name(&at, name)?;
    let size_text = raw.size.as_ref().map(NumOrText::text).ok_or_else(|| {
        format!("{at}.size: missing; give the sample size in bytes, like 1024 or \"64KiB\"")
    })?;
    let size =
        pubsubperf_core::size::parse_size(&size_text).map_err(|e| format!("{at}.size: {e}"))?;
    if !(ROUTE_END..=MAX_SIZE).contains(&size) {
        return Err(format!(
            "{at}.size = {size}: must be {ROUTE_END} B (the route a sample carries) to 1 GiB"
        ));
    }
    let rate = raw
        .rate
        .as_ref()
        .map(|r| match pubsubperf_core::rate::parse_rate(&r.text()) {
            Ok(v) if v > 0.0 && v <= MAX_RATE => Ok(v),
            Ok(_) => Err(format!(
                "{at}.rate = {}: give samples per second from 0.001 to 10M (a source paces; max is not a rate here)",
                r.text()
            )),
            Err(e) => Err(format!("{at}.rate: {e}")),
        })
        .transpose()?;
    let reliability = match raw.reliability.as_deref() {
        None => None,
        Some("reliable") => Some(Reliability::Reliable),
        Some("best-effort") => Some(Reliability::BestEffort),
        Some(other) => {
            return Err(format!(
                "{at}.reliability = \"{}\": use \"reliable\" or \"best-effort\"",
                other.escape_debug()
            ));
        }
    };
    let history = raw
        .history
        .as_deref()
        .map(|h| {
            h.parse::<History>()
                .map_err(|e| format!("{at}.history: {e}"))
        })
        .transpose()?;
    let durability = match raw.durability.as_deref() {
        None => None,
        Some("volatile") => Some(Durability::Volatile),
        Some("transient-local") => Some(Durability::TransientLocal),
        Some(other) => {
            return Err(format!(
                "{at}.durability = \"{}\": use \"volatile\" or \"transient-local\"",
                other.escape_debug()
            ));
        }
    };
    let deadline = time(&format!("{at}.deadline"), raw.deadline.as_deref())?;
    let too_late = time(&format!("{at}.too_late"), raw.too_late.as_deref())?;
    if let (Some(d), Some(t)) = (deadline, too_late)
        && t < d
    {
        return Err(format!(
            "{at}.too_late ({t:?}) is shorter than its deadline ({d:?}); too late must be later than late"
        ));
    }
    Ok(Topic {
        name: name.to_string(),
        size,
        rate,
        reliability,
        history,
        durability,
        deadline,
        too_late,
    })
}

fn node(
    name: &str,
    raw: &RawNode,
    find: &dyn Fn(&str, &str) -> Result<usize, String>,
) -> Result<Node, String> {
    let at = format!("nodes.{name}");
    check_name(&at, name)?;
    let list = |key: &str, names: &[String]| -> Result<Vec<usize>, String> {
        let mut out = Vec::new();
        for n in names {
            let t = find(&format!("{at}.{key}"), n)?;
            if out.contains(&t) {
                return Err(format!("{at}.{key}: '{n}' is listed twice; give it once"));
            }
            out.push(t);
        }
        Ok(out)
    };
    let publish = list("publish", &raw.publish)?;
    let subscribe = list("subscribe", &raw.subscribe)?;
    let mut relay = Vec::new();
    for r in &raw.relay {
        let from = find(&format!("{at}.relay.from"), &r.from)?;
        let to = find(&format!("{at}.relay.to"), &r.to)?;
        if from == to {
            return Err(format!(
                "{at}.relay: from and to are both '{}'; a relay writes another topic",
                r.from
            ));
        }
        if relay.contains(&Relay { from, to }) {
            return Err(format!(
                "{at}.relay: '{}' to '{}' is listed twice; give it once",
                r.from, r.to
            ));
        }
        relay.push(Relay { from, to });
    }
    if publish.is_empty() && subscribe.is_empty() && relay.is_empty() {
        return Err(format!(
            "{at}: does nothing; give it publish, subscribe or relay"
        ));
    }
    let cpu = raw
        .cpu
        .map(|c| {
            usize::try_from(c)
                .ok()
                .filter(|c| *c < 4096)
                .ok_or_else(|| format!("{at}.cpu = {c}: give a core number from 0"))
        })
        .transpose()?;
    let priority = raw
        .priority
        .map(|p| {
            i32::try_from(p)
                .ok()
                .filter(|p| (1..=99).contains(p))
                .ok_or_else(|| {
                    format!("{at}.priority = {p}: give a SCHED_FIFO priority from 1 to 99")
                })
        })
        .transpose()?;
    if let Some(h) = &raw.host {
        check_host(&format!("{at}.host"), h)?;
    }
    if let Some(b) = &raw.binding {
        check_name(&format!("{at}.binding"), b)?;
    }
    Ok(Node {
        name: name.to_string(),
        cpu,
        priority,
        host: raw.host.clone(),
        binding: raw.binding.clone(),
        publish,
        subscribe,
        relay,
    })
}

/// An agent's address: `HOST:PORT` or `ssh://[user@]host[:port]`, printable.
fn check_host(at: &str, h: &str) -> Result<(), String> {
    let body = h.strip_prefix("ssh://").unwrap_or(h);
    let ok = !body.is_empty()
        && h.len() <= 255
        && body.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '@' | '[' | ']')
        })
        && (h.starts_with("ssh://")
            || body
                .rsplit_once(':')
                .is_some_and(|(_, p)| p.parse::<u16>().is_ok()));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{at} = \"{}\": give an agent as HOST:PORT or ssh://[user@]host[:port]",
            h.escape_debug()
        ))
    }
}

/// Each topic has a writer and a reader; a rate exactly where a source
/// writes it.
fn check_topics(t: &Topology) -> Result<(), String> {
    for (i, topic) in t.topics.iter().enumerate() {
        let at = format!("topics.{}", topic.name);
        let sources = t
            .writers_of(i)
            .filter(|(_, s)| s.kind == StreamKind::Source)
            .count();
        if t.writers_of(i).next().is_none() {
            return Err(format!(
                "{at}: no node publishes or relays to it; add it to a node's publish (or remove the topic)"
            ));
        }
        if t.readers_of(i).next().is_none() {
            return Err(format!(
                "{at}: no node subscribes to or relays it; add it to a node's subscribe (or remove the topic)"
            ));
        }
        match (sources, topic.rate) {
            (0, Some(_)) => {
                return Err(format!(
                    "{at}.rate: only relays write it, at the rate they receive; remove the rate"
                ));
            }
            (n, None) if n > 0 => {
                return Err(format!(
                    "{at}.rate: missing; a node publishes it (give samples per second, like 100 or \"1k\")"
                ));
            }
            _ => {}
        }
    }
    if t.paths.is_empty() {
        return Err("nodes: no path reaches a subscriber; add subscribe to a node".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
