//! Two runs on one host never count each other's samples: two throughput
//! runs and two topology runs over CycloneDDS (one domain, the same topic
//! names) at once, each counting no more than its own publisher sent. Each
//! run's samples carry its random key; another run's are `foreign`.

use std::path::Path;
use std::process::{Command, Output};

fn bin(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_pubsubperf"));
    c.current_dir(dir)
        .env("PUBSUBPERF_DB", dir.join("default.sqlite"));
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `args` twice at once, each with its own `--json`; both results.
fn twice_at_once(dir: &Path, args: &[&str]) -> [serde_json::Value; 2] {
    let spawn = |i: usize| {
        let json = dir.join(format!("out{i}.json"));
        let child = bin(dir)
            .args(args)
            .arg("--json")
            .arg(&json)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("runs");
        (child, json)
    };
    let (a, b) = (spawn(0), spawn(1));
    [a, b].map(|(child, json)| {
        let o: Output = child.wait_with_output().expect("ends");
        assert!(
            o.status.success(),
            "{args:?}: {}{}",
            text(&o.stdout),
            text(&o.stderr)
        );
        serde_json::from_str(&std::fs::read_to_string(json).expect("results")).unwrap()
    })
}

#[test]
fn two_throughput_runs_at_once_count_only_their_own_samples() {
    let d = tempfile::tempdir().unwrap();
    let results = twice_at_once(
        d.path(),
        &[
            "throughput",
            "--binding",
            "cyclonedds",
            "--size",
            "64",
            "--rate",
            "2000",
            "--duration",
            "1s",
            "--warmup",
            "0s",
            "--cpu",
            "none",
            "--no-save",
        ],
    );
    for r in &results {
        let run = &r["runs"][0];
        let t = &run["throughput"];
        let (sent, received, lost) = (
            t["sent"].as_u64().unwrap(),
            t["received"].as_u64().unwrap(),
            t["lost"].as_u64().unwrap(),
        );
        assert!(received + lost <= sent, "{t}");
        assert_eq!(run["complete"], true, "{run}");
    }
}

#[test]
fn two_topology_runs_at_once_count_only_their_own_samples() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("qos.toml");
    std::fs::write(
        &file,
        "name = \"twice\"\nduration = \"1s\"\nwarmup = \"100ms\"\n\
         [topics.in]\nsize = 64\nrate = 200\nhistory = \"keep-last:8\"\ndurability = \"transient-local\"\n\
         [topics.out]\nsize = 64\nreliability = \"best-effort\"\n\
         [nodes.a]\npublish = [\"in\"]\n\
         [nodes.b]\nrelay = [{ from = \"in\", to = \"out\" }]\n\
         [nodes.c]\nsubscribe = [\"out\"]\n",
    )
    .unwrap();
    let results = twice_at_once(
        d.path(),
        &[
            "topology",
            file.to_str().unwrap(),
            "-b",
            "cyclonedds",
            "--reliable",
            "--no-save",
        ],
    );
    for r in &results {
        for t in r["graphs"][0]["topics"].as_array().expect("topics") {
            let (sent, received) = (t["sent"].as_u64().unwrap(), t["received"].as_u64().unwrap());
            assert!(received <= sent, "topic {}: {t}", t["name"]);
        }
    }
}
