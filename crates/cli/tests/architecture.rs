//! The workspace's crates depend one way, by layer, as docs/architecture.md
//! says: a crate's dependencies are all in lower layers, and every crate
//! has its row in the document's table. (Cargo forbids a cycle between
//! crates; these catch an edge that would make one possible, such as the
//! results store depending on the harness.)

use std::collections::BTreeMap;
use std::process::Command;

/// The layers, lowest first. A crate may depend on crates of lower layers
/// only (dev-dependencies aside: tests may use anything below the binary).
const LAYERS: &[&[&str]] = &[
    // What needs no other crate of ours.
    &["doctor", "roudi", "builds"],
    // The binding interface and the sample's method.
    &["core"],
    // Over core alone (or RouDi): the bindings, the kernel's account, the
    // relay, topologies, the results store and reports, the test kit.
    &[
        "raw",
        "shm",
        "cyclonedds",
        "fastdds",
        "iceoryx",
        "iceoryx2",
        "zenoh",
        "connext",
        "mock",
        "explain",
        "relay",
        "topology",
        "report",
        "testkit",
    ],
    // One run, its sessions and the binding table.
    &["harness"],
    // Planning and executing runs.
    &["runner"],
    // What every front end shares.
    &["frontend"],
    // RTI's tools' front ends; the fuzz targets.
    &["rti", "fuzz"],
    // The binary.
    &["pubsubperf"],
];

/// Each crate of the workspace (without the `pubsubperf-` prefix) and its
/// normal dependencies among them.
fn workspace() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let short = |n: &str| n.strip_prefix("pubsubperf-").unwrap_or(n).to_string();
    let packages = m["packages"].as_array().unwrap();
    let ours: Vec<String> = packages
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|d| d["kind"].is_null())
                .map(|d| d["name"].as_str().unwrap())
                .filter(|n| ours.iter().any(|o| o == n))
                .map(short)
                .collect();
            (short(p["name"].as_str().unwrap()), deps)
        })
        .collect()
}

fn layer_of(name: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&name))
        .unwrap_or_else(|| {
            panic!("crate {name} has no layer in tests/architecture.rs (and docs/architecture.md)")
        })
}

#[test]
fn every_crate_depends_on_lower_layers_only() {
    let crates = workspace();
    let mut wrong = Vec::new();
    for (name, deps) in &crates {
        for d in deps {
            if layer_of(d) >= layer_of(name) {
                wrong.push(format!("{name} -> {d}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies against the layers: {wrong:?}"
    );
    assert_eq!(
        crates.len(),
        LAYERS.iter().map(|l| l.len()).sum::<usize>(),
        "a layer names a crate the workspace does not have"
    );
}

#[test]
fn every_crate_has_its_row_in_the_architecture() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/architecture.md"),
    )
    .unwrap();
    let missing: Vec<String> = workspace()
        .into_keys()
        .filter(|n| n != "pubsubperf")
        .filter(|n| !doc.contains(&format!("`crates/{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/architecture.md has no row for {missing:?}"
    );
}
