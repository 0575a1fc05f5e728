//! The ARM builds run: the binaries that `scripts/cross.sh aarch64` and
//! `scripts/cross.sh armhf` cross-compile (scripts/test.sh builds them
//! before these tests) are run under qemu-user, through binfmt_misc so that
//! the subscriber process they start is emulated too. aarch64: `bindings`,
//! `calibrate`, and a latency and a throughput run over udp, shm, intra and
//! cyclonedds, and a connext latency run; armhf: `bindings`, the runs over
//! udp, shm and cyclonedds, and a connext latency run.
//! Each results file must say that it was measured on that architecture
//! under emulation. Figures are only checked to exist: under emulation
//! they are qemu's, not ARM's.

use pubsubperf_builds::target_dir;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A cross build and how this machine runs it.
struct Board {
    /// Rust's target triple: the binary is target/TRIPLE/release/pubsubperf.
    triple: &'static str,
    /// What `scripts/cross.sh` calls it.
    cross: &'static str,
    /// binfmt_misc's handler for its ELF files.
    qemu: &'static str,
    /// `environment.arch` in its results (Rust's name of the architecture).
    arch: &'static str,
    /// Its libraries are unpacked in target/sysroot/DIR rather than
    /// installed as multiarch packages; qemu takes them from there.
    sysroot: Option<&'static str>,
}

const AARCH64: Board = Board {
    triple: "aarch64-unknown-linux-gnu",
    cross: "aarch64",
    qemu: "qemu-aarch64",
    arch: "aarch64",
    sysroot: None,
};

const ARMHF: Board = Board {
    triple: "armv7-unknown-linux-gnueabihf",
    cross: "armhf",
    qemu: "qemu-arm",
    arch: "arm",
    sysroot: Some("armhf"),
};

/// The cross-built binary, and the kernel's qemu handler that runs it; the
/// test fails naming whichever is missing.
fn binary(board: &Board) -> PathBuf {
    let bin = target_dir().join(board.triple).join("release/pubsubperf");
    assert!(
        bin.is_file(),
        "the {} build is missing at {}: build it with scripts/cross.sh {} (scripts/test.sh does)",
        board.cross,
        bin.display(),
        board.cross
    );
    let handler = Path::new("/proc/sys/fs/binfmt_misc").join(board.qemu);
    let enabled =
        std::fs::read_to_string(&handler).is_ok_and(|s| s.lines().next() == Some("enabled"));
    assert!(
        enabled,
        "no enabled {} handler in {}: install qemu-user-static and binfmt-support \
         (scripts/cross.sh --emulation {} does) with binfmt_misc mounted",
        board.qemu,
        handler.display(),
        board.cross
    );
    bin
}

/// Runs the board's binary with `args`; its stdout on success.
fn run(board: &Board, dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new(binary(board));
    cmd.args(args)
        .env("PUBSUBPERF_DB", dir.join("results.sqlite"))
        .env("XDG_CONFIG_HOME", dir)
        .env("XDG_DATA_HOME", dir);
    if let Some(sysroot) = board.sysroot {
        let root = target_dir().join("sysroot").join(sysroot);
        assert!(
            root.join(".complete").is_file(),
            "the {} sysroot is missing at {}: scripts/cross.sh --emulation {} unpacks it",
            board.cross,
            root.display(),
            board.cross
        );
        cmd.env("QEMU_LD_PREFIX", root);
    }
    let out = cmd.output().expect("runs the cross-built binary");
    assert!(
        out.status.success(),
        "pubsubperf {args:?} under {}: {}\n{}",
        board.qemu,
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn emulated_bindings_lists_the_portable_ones_as_available() {
    let dir = tempfile::tempdir().unwrap();
    pubsubperf_testkit::listing::assert_available(
        &run(&AARCH64, dir.path(), &["bindings", "--json"]),
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
        &AARCH64,
        dir.path(),
        &["calibrate", "--no-save", "--json", file.to_str().unwrap()],
    );
    let cal: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        cal.is_object() && !cal.as_object().unwrap().is_empty(),
        "{cal}"
    );
}

/// One latency and one throughput run of `binding` (see [`runs_with`]).
fn latency_and_throughput(board: &Board, binding: &str) {
    runs_with(
        board,
        binding,
        &[("latency", "64"), ("throughput", "1KiB")],
        &[],
    );
}

/// Runs of `binding` with the flags `extra`, each a test and its size:
/// complete, with figures, recorded as the board's architecture under
/// emulation, and saying so under the table.
fn runs_with(board: &Board, binding: &str, tests: &[(&str, &str)], extra: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    for &(test, size) in tests {
        let file = dir.path().join(format!("{test}.json"));
        let mut args = vec![
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
        ];
        args.extend_from_slice(extra);
        let printed = run(board, dir.path(), &args);
        assert!(printed.contains("emulated:"), "{printed}");
        let results: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        let env = &results["environment"];
        assert_eq!(env["arch"], board.arch, "{env}");
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
    latency_and_throughput(&AARCH64, "udp");
}

#[test]
fn emulated_shm_runs() {
    latency_and_throughput(&AARCH64, "shm");
}

#[test]
fn emulated_intra_runs() {
    latency_and_throughput(&AARCH64, "intra");
}

#[test]
fn emulated_cyclonedds_runs() {
    latency_and_throughput(&AARCH64, "cyclonedds");
}

/// RTI Connext's linux-arm64 libraries from RTI Connector's wheel
/// (scripts/setup.sh --with-connext installs every platform's), opened by
/// the aarch64 build under qemu: a latency run over Connext's default
/// UDPv4 transport, and one over its shared memory. (UDPv4 once failed
/// here: Connext's netlink socket took the number of a descriptor a helper
/// thread held in a table of its own, and qemu, whose descriptor
/// translators are per process, read the helper's control connection as
/// netlink; helpers now share the table when emulated,
/// pubsubperf_core::helper.)
#[test]
fn emulated_connext_latency_runs() {
    runs_with(&AARCH64, "connext", &[("latency", "64")], &[]);
    runs_with(
        &AARCH64,
        "connext",
        &[("latency", "64")],
        &["--transport", "shm"],
    );
}

/// The armhf build (ARMv7, 32-bit: another word size, another atomics
/// path), its libraries from the sysroot: every binding is there.
#[test]
fn emulated_armhf_bindings_are_all_available() {
    let dir = tempfile::tempdir().unwrap();
    pubsubperf_testkit::listing::assert_available(
        &run(&ARMHF, dir.path(), &["bindings", "--json"]),
        &[
            "udp",
            "tcp",
            "uds",
            "intra",
            "shm",
            "cyclonedds",
            "fastdds",
            "iceoryx",
            "iceoryx2",
            "zenoh",
        ],
        "armhf under qemu",
    );
}

#[test]
fn emulated_armhf_udp_runs() {
    latency_and_throughput(&ARMHF, "udp");
}

#[test]
fn emulated_armhf_shm_runs() {
    latency_and_throughput(&ARMHF, "shm");
}

#[test]
fn emulated_armhf_cyclonedds_runs() {
    latency_and_throughput(&ARMHF, "cyclonedds");
}

/// The wheel's linux-arm libraries, opened by the armhf build under qemu:
/// a latency run over UDPv4 (see `emulated_connext_latency_runs`).
#[test]
fn emulated_armhf_connext_latency_runs() {
    runs_with(&ARMHF, "connext", &[("latency", "64")], &[]);
}
