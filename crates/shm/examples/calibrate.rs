//! Prints this machine's calibration as JSON (see `pubsubperf_shm::calibrate`).
//!
//! `cargo run --release -p pubsubperf-shm --example calibrate`

fn main() {
    let c = pubsubperf_shm::calibrate::measure();
    println!(
        "{}",
        serde_json::to_string_pretty(&c).expect("calibration serializes")
    );
}
