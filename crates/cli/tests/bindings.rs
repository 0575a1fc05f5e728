//! The binding table (crates/harness/src/registry.rs), `pubsubperf
//! bindings` and the sweep runner name the same bindings.

use pubsubperf_harness::registry;
use std::process::Command;

fn listed_by_the_binary() -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(["bindings", "--json"])
        .output()
        .expect("runs pubsubperf bindings --json");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let infos: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    infos
        .as_array()
        .expect("a list of bindings")
        .iter()
        .map(|i| i["name"].as_str().expect("a name").to_string())
        .collect()
}

/// This build has every feature on (the default), so the binary lists every
/// row of the table, in the table's order.
#[test]
fn pubsubperf_bindings_lists_every_row_of_the_table() {
    assert_eq!(listed_by_the_binary(), registry::ALL);
}

/// A sweep file may name any binding of the table; a name the table does
/// not have is refused by the runner's check with the known names.
#[test]
fn the_sweep_runner_knows_the_table() {
    let dir = tempfile::tempdir().unwrap();
    for name in registry::ALL {
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(
            &file,
            format!("[matrix]\nbindings = [\"{name}\"]\nsizes = [64]\n"),
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
            .args(["sweep", "--dry-run", "--no-save"])
            .arg(&file)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("unknown binding"), "sweep with {name}: {err}");
    }
    let file = dir.path().join("nosuch.toml");
    std::fs::write(&file, "[matrix]\nbindings = [\"nosuch\"]\nsizes = [64]\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args(["sweep", "--dry-run", "--no-save"])
        .arg(&file)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("unknown binding 'nosuch' (known: udp, tcp"),
        "{text}"
    );
}
