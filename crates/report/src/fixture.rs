//! A bare run for the tests of what prints a run (here and in the CLI):
//! no figures but those a test gives.

use pubsubperf_core::result::{Run, TestKind};

/// A run of `test` over `transport` at `size`, its fields overridden by
/// those of the JSON object `json`.
pub fn run(test: TestKind, transport: &str, size: usize, json: serde_json::Value) -> Run {
    let mut v = serde_json::json!({
        "binding": "x", "transport": transport, "test": test.to_string(), "size": size,
        "zero_copy": false, "data_type": "bytes", "reliable": true, "config": {},
        "resources": {
            "publisher": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0},
            "subscriber": {"cpu_percent": 0.0, "max_rss_kib": 0, "voluntary_cs": 0, "involuntary_cs": 0}
        },
        "intervals": [], "complete": true
    });
    for (k, x) in json.as_object().expect("a JSON object") {
        v[k] = x.clone();
    }
    serde_json::from_value(v).expect("a valid run")
}
