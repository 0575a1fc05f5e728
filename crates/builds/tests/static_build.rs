//! The static builds (`scripts/static.sh` and `scripts/static.sh aarch64`,
//! which scripts/test.sh runs before these tests): one file with no dynamic
//! loader and no shared library, with the bindings written in Rust and
//! SQLite compiled in. The aarch64 one runs under qemu-user (binfmt_misc,
//! `scripts/cross.sh --emulation aarch64`).

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGETS: [(&str, &str); 2] = [
    ("x86_64-unknown-linux-musl", "x86_64"),
    ("aarch64-unknown-linux-musl", "aarch64"),
];

fn static_binary(triple: &str, arg: &str) -> PathBuf {
    let bin = pubsubperf_builds::target_dir()
        .join(triple)
        .join("release/pubsubperf");
    assert!(
        bin.is_file(),
        "the static build is missing at {}: build it with scripts/static.sh {arg} (scripts/test.sh does)",
        bin.display()
    );
    bin
}

fn run(bin: &Path, args: &[&str]) -> String {
    let out = Command::new(bin).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "static pubsubperf {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn static_builds_have_no_loader_and_no_shared_library() {
    for (triple, arg) in TARGETS {
        no_loader_and_no_shared_library(&static_binary(triple, arg));
    }
}

fn no_loader_and_no_shared_library(bin: &Path) {
    let headers = Command::new("readelf")
        .arg("-lW")
        .arg(bin)
        .output()
        .unwrap();
    let headers = String::from_utf8_lossy(&headers.stdout);
    assert!(headers.contains("LOAD"), "readelf read it: {headers}");
    assert!(
        !headers.contains("INTERP"),
        "it asks for a dynamic loader:\n{headers}"
    );
    let dynamic = Command::new("readelf")
        .arg("-dW")
        .arg(bin)
        .output()
        .unwrap();
    let dynamic = String::from_utf8_lossy(&dynamic.stdout);
    assert!(
        !dynamic.contains("(NEEDED)"),
        "it needs shared libraries:\n{dynamic}"
    );
}

#[test]
fn static_x86_64_build_has_the_rust_bindings_and_measures_into_its_own_database() {
    let (triple, arg) = TARGETS[0];
    measures_into_its_own_database(&static_binary(triple, arg));
}

#[test]
fn static_aarch64_build_runs_under_emulation_and_measures_into_its_own_database() {
    let (triple, arg) = TARGETS[1];
    measures_into_its_own_database(&static_binary(triple, arg));
}

fn measures_into_its_own_database(bin: &Path) {
    let infos: serde_json::Value =
        serde_json::from_str(&run(bin, &["bindings", "--json"])).unwrap();
    let names: Vec<&str> = infos
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "udp", "tcp", "uds", "intra", "shm", "iceoryx2", "zenoh", "mock"
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    for binding in ["udp", "shm"] {
        let json = dir.path().join(format!("{binding}.json"));
        run(
            bin,
            &[
                "latency",
                "--binding",
                binding,
                "--size",
                "64",
                "--duration",
                "1s",
                "--db",
                db.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ],
        );
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        assert_eq!(results["runs"][0]["complete"], true, "{results}");
    }
    let history = run(bin, &["history", "--db", db.to_str().unwrap()]);
    assert!(
        history.contains("udp") && history.contains("shm"),
        "{history}"
    );
}
