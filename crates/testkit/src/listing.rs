//! Reading what `pubsubperf bindings --json` printed.

/// Asserts that each of `names` is listed in `listed` (the JSON of
/// `pubsubperf bindings --json`) as available, naming `place` (where that
/// binary ran) and the binding's reason when one is not.
pub fn assert_available(listed: &str, names: &[&str], place: &str) {
    let infos: serde_json::Value = serde_json::from_str(listed)
        .unwrap_or_else(|e| panic!("{place}: bindings --json is not JSON ({e}): {listed}"));
    for name in names {
        let info = infos
            .as_array()
            .and_then(|a| a.iter().find(|i| i["name"] == *name))
            .unwrap_or_else(|| panic!("{place}: {name} not listed: {listed}"));
        assert!(
            info["available"].get("Ok").is_some(),
            "{place}: {name} not available: {}",
            info["available"]
        );
    }
}
