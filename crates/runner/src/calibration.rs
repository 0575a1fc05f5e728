//! This machine's saved calibration (`pubsubperf calibrate`): where it is
//! kept, read back into every result's environment, and the cache-line
//! floor a latency is read against.

use std::path::PathBuf;

/// Where the last calibration is kept.
pub fn saved_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(base.join("pubsubperf").join("calibration.json"))
}

/// The last saved calibration, if any.
pub fn load() -> Option<serde_json::Value> {
    let p = saved_path()?;
    let s = std::fs::read_to_string(p).ok()?;
    serde_json::from_str(&s).ok()
}

/// One-way cache-line floor in ns from a stored calibration.
pub fn floor_ns(cal: &serde_json::Value) -> Option<f64> {
    cal["cache_line"]["one_way_p50_ns"].as_f64()
}
