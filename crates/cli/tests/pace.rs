//! `--pace spin|sleep`: how a throughput test's `--rate` waits for each
//! sample's slot. Sleep pacing delivers every sample at the rate on
//! average and is recorded in the result; misuse is refused with one line
//! naming the flag, exit code 2. No test asserts a latency or throughput
//! figure (the bounds below come from the schedule, not from performance).

mod dds;

use dds::*;

/// 2000 samples at 4000/s sleeping between slots: every sample arrives, the
/// run cannot end before the schedule's last slot (0.5 s), and the result
/// records the pacing; the default (spin) is not recorded.
#[test]
fn sleep_pacing_keeps_the_schedule() {
    for b in ["tcp", "intra"] {
        let r = run_json(&[
            "throughput",
            "-b",
            b,
            "-n",
            "2000",
            "--rate",
            "4000",
            "--pace",
            "sleep",
        ]);
        assert_eq!(r["config"]["pace_sleep"], true, "{b}");
        assert_eq!(r["throughput"]["received"], 2000, "{b}");
        let d = r["duration_s"].as_f64().expect("duration_s");
        assert!(d >= 0.49, "{b}: 2000 slots at 4000/s took {d} s");
    }
    let r = run_json(&["throughput", "-b", "tcp", "-n", "100", "--rate", "4000"]);
    assert!(r["config"].get("pace_sleep").is_none(), "{}", r["config"]);
}

#[test]
fn pace_misuse_is_refused() {
    usage_error(
        &[
            "throughput",
            "-b",
            "tcp",
            "-n",
            "10",
            "--rate",
            "100",
            "--pace",
            "nap",
        ],
        "--pace nap: spin or sleep",
    );
    usage_error(
        &["throughput", "-b", "tcp", "-n", "10", "--pace", "sleep"],
        "--pace: sets how a throughput test's --rate waits",
    );
    usage_error(
        &[
            "latency", "-b", "tcp", "-n", "10", "--rate", "100", "--pace", "sleep",
        ],
        "--pace: sets how a throughput test's --rate waits",
    );
}
