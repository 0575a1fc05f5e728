//! Prints this machine's calibration as JSON (see `pubsubperf_core::calibrate`).
//!
//! `cargo run --release -p pubsubperf-shm --example calibrate [cache-line]`:
//! everything, or only the cross-core cache-line measurement (about 0.1 s;
//! `bench/shm.sh` takes it right before and after a latency run, because a
//! virtual machine's cores may move between physical cores in between).

fn main() {
    let json = if std::env::args().nth(1).as_deref() == Some("cache-line") {
        match pubsubperf_core::calibrate::cache_line([0, 1]) {
            Ok(c) => serde_json::to_string_pretty(&c),
            Err(e) => {
                eprintln!("cache line: {e}");
                std::process::exit(1);
            }
        }
    } else {
        serde_json::to_string_pretty(&pubsubperf_core::calibrate::measure())
    };
    println!("{}", json.expect("calibration serializes"));
}
