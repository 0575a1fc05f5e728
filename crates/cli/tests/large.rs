//! Large samples (4 MiB to 64 MiB) through the bindings that take them end
//! to end, reliable, pinned as users run them: every run ends on time and
//! delivers without loss. No test asserts a figure.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs `pubsubperf throughput ARGS` for 2 s per size and returns its
/// results file's runs; fails if it takes longer than `limit`.
fn throughput(args: &[&str], limit: Duration) -> Vec<serde_json::Value> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
        .args([
            "throughput",
            "--reliable",
            "--duration",
            "2s",
            "--warmup",
            "200ms",
        ])
        .args(["--cpu", "0,1", "-q", "--no-save", "--json"])
        .arg(&out)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs pubsubperf");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still running after {limit:?} (a stalled writer?)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{args:?}: {err}");
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    r["runs"].as_array().unwrap().clone()
}

/// One run at a time: each is pinned to cores 0 and 1.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs the two sizes of `args` and checks that each delivered without
/// loss; returns the runs.
fn delivered_everything(args: &[&str]) -> Vec<serde_json::Value> {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let runs = throughput(args, Duration::from_secs(90));
    assert_eq!(runs.len(), 2, "{args:?}: one run per size");
    for run in &runs {
        let t = &run["throughput"];
        assert!(t["received"].as_u64().unwrap() > 0, "{args:?}: {run}");
        assert_eq!(t["lost"], 0, "{args:?}: {run}");
        assert_eq!(run["complete"], true, "{args:?}: {run}");
    }
    runs
}

/// A zenoh shm writer whose pool was empty retried its allocation in a
/// spin; at 4 MiB and up the run stalled (nothing sent for the whole run,
/// then the block timeout).
#[test]
fn zenoh_shm_zero_copy_moves_large_samples() {
    delivered_everything(&[
        "-b",
        "zenoh",
        "--transport",
        "shm",
        "--zero-copy",
        "-s",
        "4MiB,64MiB",
    ]);
}

#[test]
fn zenoh_shm_copies_large_samples() {
    delivered_everything(&["-b", "zenoh", "--transport", "shm", "-s", "4MiB,64MiB"]);
}

#[test]
fn iceoryx2_zero_copy_moves_large_samples() {
    delivered_everything(&["-b", "iceoryx2", "--zero-copy", "-s", "4MiB,64MiB"]);
}

#[test]
fn shm_zero_copy_moves_large_samples() {
    delivered_everything(&["-b", "shm", "--zero-copy", "-s", "4MiB,64MiB"]);
}

/// CycloneDDS fragments each sample over udp (64 MiB: about 50 000
/// fragments, reliable). The writer checked the run's end only every 64
/// samples, so a 2 s run of 16 MiB took about 45 s here (`duration_s`
/// 47.4). A run's window ends when the write under way at its end returns:
/// CycloneDDS moves 0.25-2 such samples a second on loopback.
#[test]
fn cyclonedds_udp_fragments_large_samples_and_ends_on_time() {
    for run in delivered_everything(&["-b", "cyclonedds", "-s", "16MiB,64MiB"]) {
        let d = run["duration_s"].as_f64().unwrap();
        assert!(d < 15.0, "a 2 s run measured for {d} s: {run}");
    }
}
