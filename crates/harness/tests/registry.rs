//! The binding table, the cargo features and the lists built from them agree.

use pubsubperf_harness::registry;
use std::collections::BTreeSet;

fn features() -> toml::Table {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("read the harness's Cargo.toml");
    let manifest: toml::Table = text.parse().expect("Cargo.toml parses");
    manifest["features"]
        .as_table()
        .expect("a [features] table")
        .clone()
}

/// The features that are not bindings: `default`, and `explain` (the
/// kernel's probes, which the binary turns on).
const NOT_BINDINGS: [&str; 2] = ["default", "explain"];

/// Every row of the table has a feature of its name, every feature (but
/// those of [`NOT_BINDINGS`]) is a row, and `default` turns every row on.
#[test]
fn the_table_agrees_with_the_features() {
    let features = features();
    let rows: BTreeSet<&str> = registry::ALL.iter().copied().collect();
    assert_eq!(rows.len(), registry::ALL.len(), "a row appears twice");
    let named: BTreeSet<&str> = features
        .keys()
        .map(String::as_str)
        .filter(|k| !NOT_BINDINGS.contains(k))
        .collect();
    assert_eq!(
        named, rows,
        "features other than {NOT_BINDINGS:?} vs the table's rows"
    );
    let default: BTreeSet<&str> = features["default"]
        .as_array()
        .expect("default is a list")
        .iter()
        .map(|v| v.as_str().expect("a feature name"))
        .collect();
    assert_eq!(default, rows, "default features vs the table's rows");
}

/// With the default features (as this test is built) every row is compiled
/// in, listed in the table's order, and dispatches to a binding of its name.
#[test]
fn every_row_is_compiled_in_and_named_by_its_binding() {
    let infos = registry::infos();
    let listed: Vec<&str> = infos.iter().map(|i| i.name).collect();
    assert_eq!(listed, registry::ALL);
    assert_eq!(registry::names(), registry::ALL);
    for name in registry::ALL {
        assert_eq!(registry::info(name).map(|i| i.name), Some(*name));
    }
}

#[test]
fn an_unknown_name_lists_the_known_ones() {
    let e = registry::unknown_binding("--binding", "nosuch");
    assert!(
        e.starts_with("--binding: unknown binding 'nosuch' (known: udp, tcp"),
        "{e}"
    );
}

/// Who maps the middleware knobs: every other binding refuses them before
/// anything runs (`registry::validate`).
#[test]
fn knobs_are_mapped_only_where_applied() {
    let with = |flag: &str| -> Vec<&str> {
        registry::ALL
            .iter()
            .copied()
            .filter(|n| registry::qos_flags(n).contains(&flag))
            .collect()
    };
    assert_eq!(with("--no-positive-acks"), ["fastdds", "connext"]);
    assert_eq!(with("--bandwidth-limit"), ["fastdds", "connext"]);
    assert_eq!(with("--no-push-on-write"), ["connext"]);
    assert_eq!(
        with("--multicast-ttl"),
        ["udp", "cyclonedds", "fastdds", "connext"]
    );
    assert_eq!(with("--history"), ["cyclonedds", "fastdds", "connext"]);
    assert_eq!(with("--qos-file"), ["cyclonedds", "fastdds"]);
}

/// The transport of a run without `--transport`: the vendor's own default
/// for one binding, `udp` between two vendors' DDS (their shared-memory
/// transports do not meet).
#[test]
fn the_default_transport_is_the_vendors_alone_and_udp_between_vendors() {
    let t = registry::default_transport;
    assert_eq!(t("fastdds", "fastdds", false), "udp+shm");
    assert_eq!(t("fastdds", "fastdds", true), "udp");
    assert_eq!(t("connext", "connext", false), "udp+shm");
    assert_eq!(t("cyclonedds", "cyclonedds", false), "udp");
    assert_eq!(t("zenoh", "zenoh", false), "tcp");
    for (a, b) in [
        ("fastdds", "cyclonedds"),
        ("cyclonedds", "fastdds"),
        ("connext", "cyclonedds"),
        ("connext", "fastdds"),
        ("fastdds", "connext"),
    ] {
        assert_eq!(t(a, b, false), "udp", "{a} to {b}");
    }
}

/// Which bindings meet on the wire: the DDS bindings, on RTPS, each with
/// the others; no other binding with any but itself.
#[test]
fn the_dds_bindings_meet_on_rtps_and_no_others() {
    use pubsubperf_core::WireProtocol;
    let dds = registry::speaking(WireProtocol::Rtps);
    assert_eq!(dds, ["cyclonedds", "fastdds", "connext"]);
    for a in registry::ALL {
        for b in registry::ALL {
            let meet = dds.contains(a) && dds.contains(b);
            assert_eq!(registry::meet_on_the_wire(a, b), meet, "{a} with {b}");
        }
    }
    assert!(!registry::meet_on_the_wire("cyclonedds", "nosuch"));
}

/// Who runs on the host's own address on one host: CycloneDDS over udp
/// (its unconnected sends to `lo` cost more), nothing else.
#[test]
fn only_cyclonedds_over_udp_prefers_the_hosts_address() {
    for name in registry::ALL {
        let transports = registry::info(name).map_or(&[][..], |i| i.capabilities.transports);
        for t in transports {
            let want = *name == "cyclonedds" && *t == "udp";
            assert_eq!(
                registry::prefers_host_address(name, t),
                want,
                "{name} over {t}"
            );
        }
    }
}
