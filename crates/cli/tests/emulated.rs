//! The aarch64 build runs: the binary that `scripts/cross.sh aarch64`
//! cross-compiles (scripts/test.sh builds it before the tests) is run under
//! qemu-user, through binfmt_misc so that the subscriber process it starts
//! is emulated too, for `bindings`, `calibrate`, and a latency and a
//! throughput run over udp, shm, intra and cyclonedds. Each results file
//! must say that it was measured on aarch64 under emulation. Figures are
//! only checked to exist: under emulation they are qemu's, not ARM's.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const TRIPLE: &str = "aarch64-unknown-linux-gnu";

/// The cross-built binary, and the kernel's qemu-aarch64 handler that runs
/// it; the test fails naming whichever is missing.
fn aarch64_binary() -> PathBuf {
    let bin = std::env::var_os("PUBSUBPERF_AARCH64_BINARY")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target")
                .join(TRIPLE)
                .join("release/pubsubperf")
        });
    assert!(
        bin.is_file(),
        "the aarch64 build is missing at {}: build it with scripts/cross.sh aarch64 \
         (scripts/test.sh does), or set PUBSUBPERF_AARCH64_BINARY",
        bin.display()
    );
    let handler = Path::new("/proc/sys/fs/binfmt_misc/qemu-aarch64");
    let enabled =
        std::fs::read_to_string(handler).is_ok_and(|s| s.lines().next() == Some("enabled"));
    assert!(
        enabled,
        "no enabled qemu-aarch64 handler in {}: install qemu-user-static and binfmt-support \
         (scripts/cross.sh --emulation does) with binfmt_misc mounted",
        handler.display()
    );
    bin
}

/// Runs the aarch64 binary with `args`; its stdout on success.
fn run(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(aarch64_binary())
        .args(args)
        .env("PUBSUBPERF_DB", dir.join("results.sqlite"))
        .env("XDG_CONFIG_HOME", dir)
        .env("XDG_DATA_HOME", dir)
        .output()
        .expect("runs the aarch64 binary");
    assert!(
        out.status.success(),
        "pubsubperf {args:?} under qemu: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn emulated_bindings_lists_the_portable_ones_as_available() {
    let dir = tempfile::tempdir().unwrap();
    pubsubperf_testkit::listing::assert_available(
        &run(dir.path(), &["bindings", "--json"]),
        &[
            "udp",
            "tcp",
            "uds",
            "intra",
            "shm",
            "cyclonedds",
            "iceoryx2",
            "zenoh",
        ],
        "aarch64 under qemu",
    );
}

#[test]
fn emulated_calibrate_measures_the_floors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("calibration.json");
    run(
        dir.path(),
        &["calibrate", "--no-save", "--json", file.to_str().unwrap()],
    );
    let cal: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        cal.is_object() && !cal.as_object().unwrap().is_empty(),
        "{cal}"
    );
}

/// One latency and one throughput run of `binding`: complete, with figures,
/// recorded as aarch64 under emulation, and saying so under the table.
fn latency_and_throughput(binding: &str) {
    let dir = tempfile::tempdir().unwrap();
    for (test, size) in [("latency", "64"), ("throughput", "1KiB")] {
        let file = dir.path().join(format!("{test}.json"));
        let printed = run(
            dir.path(),
            &[
                test,
                "--binding",
                binding,
                "--size",
                size,
                "--duration",
                "1s",
                "--no-save",
                "--json",
                file.to_str().unwrap(),
            ],
        );
        assert!(printed.contains("emulated:"), "{printed}");
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let env = &results["environment"];
        assert_eq!(env["arch"], "aarch64", "{env}");
        assert!(
            env["emulated"].as_str().is_some_and(|s| !s.is_empty()),
            "{env}"
        );
        let run = &results["runs"][0];
        assert_eq!(run["binding"], binding);
        assert_eq!(run["complete"], true, "{run}");
        match test {
            "latency" => assert!(run["latency_ns"]["count"].as_u64() > Some(0), "{run}"),
            _ => assert!(run["throughput"]["received"].as_u64() > Some(0), "{run}"),
        }
    }
}

#[test]
fn emulated_udp_runs() {
    latency_and_throughput("udp");
}

#[test]
fn emulated_shm_runs() {
    latency_and_throughput("shm");
}

#[test]
fn emulated_intra_runs() {
    latency_and_throughput("intra");
}

#[test]
fn emulated_cyclonedds_runs() {
    latency_and_throughput("cyclonedds");
}
