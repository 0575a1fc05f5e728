//! Issue 47 item 2: topology files. The mock's virtual clock gives exact
//! hop, path and residence latencies and exact late and too-late counts;
//! real bindings show that a path's latency is exactly the sum of its hops
//! and its relays' residences (one clock, exact sums); bad files and flags
//! get one line naming the key, exit 2. No test asserts a latency figure of
//! a real binding.

use pubsubperf_testkit::process::{children, wait_gone_within};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
}

/// Writes `text` as a topology file in `dir`.
fn file(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Runs `pubsubperf topology ARGS --json F --no-save` (tests never write
/// the user's results database) to its end, watching its child
/// processes; asserts it succeeded and every child is gone. Returns the
/// graph and how many children there were.
fn run(dir: &Path, args: &[&str]) -> (Value, usize) {
    let json = dir.join("g.json");
    let mut child = bin()
        .arg("topology")
        .args(args)
        .args(["--json", json.to_str().unwrap(), "--no-save"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let pid = child.id();
    let mut seen = BTreeSet::new();
    while child.try_wait().expect("wait").is_none() {
        seen.extend(children(pid));
        std::thread::sleep(Duration::from_millis(10));
    }
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    for k in &seen {
        wait_gone_within(*k, "a node process", Duration::from_secs(5));
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    (v["graphs"][0].clone(), seen.len())
}

fn find(list: &Value, pred: impl Fn(&Value) -> bool) -> &Value {
    list.as_array()
        .unwrap()
        .iter()
        .find(|x| pred(x))
        .expect("listed")
}

fn sum(latency: &Value) -> u128 {
    latency["sum"].as_str().unwrap().parse().unwrap()
}

const MOCK_CHAIN: &str = r#"
binding = "mock"
duration = "1s"
warmup = "50ms"

[topics.a]
size = 64
rate = "1k"
deadline = "800ns"
too_late = "950ns"

[topics.b]
size = 128

[nodes.src]
publish = ["a"]

[nodes.mid]
subscribe = ["a"]
relay = [{ from = "a", to = "b" }]

[nodes.sink1]
subscribe = ["b"]

[nodes.sink2]
subscribe = ["b"]
"#;

#[test]
fn the_mock_gives_exact_hops_paths_residences_and_deadline_classes() {
    let d = tempfile::tempdir().unwrap();
    let f = file(d.path(), "chain.toml", MOCK_CHAIN);
    // Each send advances the virtual clock by 500 + 10 * (k mod 50) ns:
    // hops take 500..990 ns, each value 20 times in 1000 samples.
    let (g, _) = run(
        d.path(),
        &[
            &f,
            "--opt",
            "delay-ns=500",
            "--opt",
            "step-ns=10",
            "--opt",
            "period=50",
        ],
    );
    assert_eq!(g["clock"], "virtual");
    let a = find(&g["topics"], |t| t["name"] == "a");
    let b = find(&g["topics"], |t| t["name"] == "b");
    assert_eq!(
        (a["sent"].as_u64(), a["received"].as_u64()),
        (Some(1000), Some(1000))
    );
    assert_eq!(
        (b["sent"].as_u64(), b["received"].as_u64()),
        (Some(1000), Some(2000))
    );
    assert_eq!((a["lost"].as_u64(), b["lost"].as_u64()), (Some(0), Some(0)));
    // Late: 810..950 ns, 15 values; too late: 960..990 ns, 4 values.
    assert_eq!(
        (a["late"].as_u64(), a["too_late"].as_u64()),
        (Some(300), Some(80))
    );
    assert_eq!(
        (b["late"].as_u64(), b["too_late"].as_u64()),
        (Some(0), Some(0))
    );
    for h in g["hops"].as_array().unwrap() {
        let l = &h["latency_ns"];
        assert_eq!(
            (
                l["count"].as_u64(),
                l["min"].as_u64(),
                l["max"].as_u64(),
                l["mean"].as_f64()
            ),
            (Some(1000), Some(500), Some(990), Some(745.0)),
            "{h}"
        );
        assert_eq!(sum(l), 745_000);
    }
    // The relay's copy is stamped before its send moves the clock: no
    // time inside the node (recorded as 1 ns, the histograms' floor).
    let stay = &find(&g["relays"], |r| r["node"] == "mid")["residence_ns"];
    assert_eq!(
        (stay["count"].as_u64(), stay["max"].as_u64()),
        (Some(1000), Some(1))
    );
    let paths = g["paths"].as_array().unwrap();
    assert_eq!(paths.len(), 3);
    let first = find(&g["paths"], |p| p["name"] == "src -a-> mid");
    assert_eq!(first["latency_ns"]["max"], 990);
    for sink in ["sink1", "sink2"] {
        let p = find(&g["paths"], |p| {
            p["name"] == format!("src -a-> mid -b-> {sink}").as_str()
        });
        let l = &p["latency_ns"];
        assert_eq!(
            (
                l["count"].as_u64(),
                l["min"].as_u64(),
                l["max"].as_u64(),
                l["mean"].as_f64()
            ),
            (Some(1000), Some(1000), Some(1980), Some(1490.0))
        );
        assert_eq!(p["nodes"], serde_json::json!(["src", "mid", sink]));
        assert_eq!(p["topics"], serde_json::json!(["a", "b"]));
    }
    let places: Vec<&str> = g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["place"].as_str().unwrap())
        .collect();
    assert_eq!(places, ["thread"; 4]);
}

/// A 3-node chain over a real, reliable binding: every sample's path
/// latency is its two hops plus the relay's residence, all read from one
/// clock, so the exact sums agree to the nanosecond.
fn path_is_the_sum_of_hops_and_residence(binding: &str) {
    path_is_the_sum_of_hops_and_residence_with(binding, "")
}

/// [`path_is_the_sum_of_hops_and_residence`] with `relay_binding` lines
/// for the relay node (a binding of its own).
fn path_is_the_sum_of_hops_and_residence_with(binding: &str, relay_binding: &str) {
    let d = tempfile::tempdir().unwrap();
    let f = file(
        d.path(),
        "chain3.toml",
        r#"
duration = "1s"
warmup = "200ms"
[topics.in]
size = 256
rate = 500
[topics.out]
size = 1024
[nodes.a]
publish = ["in"]
[nodes.b]
relay = [{ from = "in", to = "out" }]
RELAY_BINDING
[nodes.c]
subscribe = ["out"]
"#
        .replace("RELAY_BINDING", relay_binding)
        .as_str(),
    );
    let (g, children) = run(d.path(), &[&f, "--binding", binding, "--reliable"]);
    assert_eq!(children, 3, "a process per node");
    let hop = |topic: &str| &find(&g["hops"], |h| h["topic"] == topic)["latency_ns"];
    let stay = &find(&g["relays"], |r| r["node"] == "b")["residence_ns"];
    let path = &find(&g["paths"], |p| p["name"] == "a -in-> b -out-> c")["latency_ns"];
    let counts = [hop("in"), hop("out"), stay, path].map(|l| l["count"].as_u64().unwrap());
    assert_eq!(
        counts, [500; 4],
        "{binding}: every sample measured on every part"
    );
    assert_eq!(
        sum(path),
        sum(hop("in")) + sum(hop("out")) + sum(stay),
        "{binding}: the path's latency is the sum of its parts"
    );
    for t in g["topics"].as_array().unwrap() {
        assert_eq!(
            (t["sent"].as_u64(), t["lost"].as_u64()),
            (Some(500), Some(0)),
            "{t}"
        );
    }
    let relay = find(&g["nodes"], |n| n["name"] == "b");
    match relay_binding.split('"').nth(1) {
        Some(own) => assert_eq!(relay["binding"], own, "{relay}"),
        None => assert!(relay.get("binding").is_none(), "{relay}"),
    }
    for n in g["nodes"].as_array().unwrap() {
        assert_eq!(n["place"], "process");
        assert!(n["resources"]["max_rss_kib"].as_u64().unwrap() > 0);
    }
}

#[test]
fn a_tcp_chain_s_path_is_the_sum_of_its_hops_and_relay() {
    path_is_the_sum_of_hops_and_residence("tcp");
}

#[test]
fn a_cyclonedds_chain_s_path_is_the_sum_of_its_hops_and_relay() {
    path_is_the_sum_of_hops_and_residence("cyclonedds");
}

/// Mixed bindings where they interoperate: a cyclonedds chain whose relay
/// runs Fast DDS (RTPS between the vendors).
#[test]
fn a_chain_with_a_fastdds_relay_between_cyclonedds_nodes() {
    path_is_the_sum_of_hops_and_residence_with("cyclonedds", "binding = \"fastdds\"");
}

fn refused(args: &[&str]) -> String {
    let o: Output = bin().arg("topology").args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn bad_files_and_flags_get_one_line_naming_the_key() {
    let d = tempfile::tempdir().unwrap();
    let no_rate = file(
        d.path(),
        "no_rate.toml",
        "binding = \"udp\"\n[topics.a]\nsize = 64\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
    );
    assert!(refused(&[&no_rate]).contains("topics.a.rate: missing"));
    let no_binding = file(
        d.path(),
        "no_binding.toml",
        "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
    );
    assert!(refused(&[&no_binding]).contains("--binding"));
    assert!(refused(&[&no_binding, "-b", "nope"]).contains("nope"));
    let big = file(
        d.path(),
        "big.toml",
        "[topics.a]\nsize = \"1MiB\"\nrate = 1\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
    );
    assert!(refused(&[&big, "-b", "udp"]).contains("topics.a.size"));
    let far = file(
        d.path(),
        "far.toml",
        "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"a\"]\nhost = \"lab2:7878\"\n\
         [nodes.r]\nsubscribe = [\"a\"]\nhost = \"lab2:7878\"\n",
    );
    assert!(refused(&[&far, "-b", "mock"]).contains("mock cannot reach another host"));
    assert!(refused(&[&far, "-b", "udp"]).contains("runs on that agent already"));
    let pinned = file(
        d.path(),
        "pinned.toml",
        "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\ncpu = 4095\n",
    );
    assert!(refused(&[&pinned, "-b", "udp"]).contains("nodes.s.cpu = 4095"));
    let fusion = concat!(env!("CARGO_MANIFEST_DIR"), "/../../topologies/fusion.toml");
    assert!(refused(&[fusion, "-b", "cyclonedds"]).contains("topics.world has 2 writers"));
    let mixed = file(
        d.path(),
        "mixed.toml",
        "[topics.a]\nsize = 64\nrate = 1\n[nodes.s]\npublish = [\"a\"]\n[nodes.r]\nsubscribe = [\"a\"]\nbinding = \"zenoh\"\n",
    );
    assert!(refused(&[&mixed, "-b", "cyclonedds"]).contains("only the DDS bindings"));
    let kept = file(
        d.path(),
        "kept.toml",
        "[topics.a]\nsize = 64\nrate = 1\nhistory = \"keep-all\"\n[nodes.s]\npublish = [\"a\"]\nsubscribe = [\"a\"]\n",
    );
    assert!(refused(&[&kept, "-b", "udp"]).contains("topics.a.history: udp has no such setting"));
    let missing = d.path().join("missing.toml");
    assert!(refused(&[missing.to_str().unwrap()]).contains("missing.toml"));
}

/// A topic's own DDS QoS reaches its endpoints (a binding instance per QoS
/// on a node) and the result.
#[test]
fn topics_take_their_own_dds_qos() {
    let d = tempfile::tempdir().unwrap();
    let f = file(
        d.path(),
        "qos.toml",
        r#"
duration = "500ms"
warmup = "100ms"
[topics.in]
size = 64
rate = 200
history = "keep-last:8"
durability = "transient-local"
[topics.out]
size = 64
reliability = "best-effort"
[nodes.a]
publish = ["in"]
[nodes.b]
relay = [{ from = "in", to = "out" }]
[nodes.c]
subscribe = ["out"]
"#,
    );
    let (g, _) = run(d.path(), &[&f, "-b", "cyclonedds", "--reliable"]);
    let t = |name: &str| find(&g["topics"], |t| t["name"] == name).clone();
    let (inn, out) = (t("in"), t("out"));
    assert_eq!(
        (&inn["reliability"], &inn["history"], &inn["durability"]),
        (
            &"reliable".into(),
            &"keep-last:8".into(),
            &"transient-local".into()
        )
    );
    assert_eq!(out["reliability"], "best-effort");
    assert!(out.get("history").is_none());
    assert_eq!(inn["sent"], 100);
    assert_eq!(inn["received"], 100);
}

/// Loss is exact with the mock: dropping every 10th send of 100 loses 10
/// on the hop and the topic, and the run ends at once (a dropped sample
/// holds the lockstep only briefly).
#[test]
fn the_mock_s_drops_are_counted_exactly_as_loss() {
    let d = tempfile::tempdir().unwrap();
    let f = file(
        d.path(),
        "drop.toml",
        "binding = \"mock\"\nduration = \"100ms\"\nwarmup = \"0s\"\n[topics.a]\nsize = 64\nrate = \"1k\"\n\
         [nodes.src]\npublish = [\"a\"]\n[nodes.sink]\nsubscribe = [\"a\"]\n",
    );
    let start = std::time::Instant::now();
    let (g, _) = run(d.path(), &[&f, "--best-effort", "--opt", "drop-every=10"]);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    let t = &g["topics"][0];
    assert_eq!(
        (
            t["sent"].as_u64(),
            t["received"].as_u64(),
            t["lost"].as_u64()
        ),
        (Some(100), Some(90), Some(10)),
        "{t}"
    );
    assert_eq!(t["lost_percent"], 10.0);
    assert_eq!(g["hops"][0]["lost"], 10);
}
