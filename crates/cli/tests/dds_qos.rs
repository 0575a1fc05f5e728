//! The DDS QoS flags through the real binary: refused (exit code 2, one
//! line naming the flag) where they do not apply, mapped by `cyclonedds` and
//! `fastdds`, and recorded in the results' config. No test asserts a
//! latency or throughput figure. The DDS tests need both DDS libraries
//! (`scripts/setup.sh` installs them); without one they fail naming it.

mod dds;

use dds::*;
use std::path::Path;

#[test]
fn qos_flags_are_refused_where_they_do_not_apply() {
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("q.xml");
    std::fs::write(&f, "<x/>").expect("write");
    let f = f.to_str().unwrap();
    for b in ["udp", "tcp", "shm"] {
        for (flag, args) in [
            ("--history", &["--history", "keep-all"][..]),
            ("--durability", &["--durability", "transient-local"]),
            ("--async", &["--async"]),
            ("--domain", &["--domain", "7"]),
            ("--qos-file", &["--qos-file", f]),
            ("--instances", &["--instances", "4"]),
        ] {
            let mut a = vec!["latency", "-b", b, "-n", "10"];
            a.extend_from_slice(args);
            usage_error(&a, flag);
        }
    }
    usage_error(&["latency", "--history", "keep-last:0"], "--history");
    usage_error(&["latency", "--history", "some"], "--history");
    usage_error(&["latency", "--durability", "forever"], "");
    usage_error(&["latency", "--instances", "0"], "--instances 0");
    usage_error(&["latency", "--qos-file", "/nonexistent.xml"], "--qos-file");
    usage_error(&["latency", "--domain", "x"], "");
}

#[test]
fn dds_refusals_name_the_flag() {
    require_dds("cyclonedds");
    require_dds("fastdds");
    usage_error(
        &["latency", "-b", "cyclonedds", "--domain", "231"],
        "--domain 231",
    );
    usage_error(
        &["latency", "-b", "cyclonedds", "--opt", "history=keep-all"],
        "--opt history: now a flag, use --history",
    );
    usage_error(
        &[
            "latency",
            "-b",
            "cyclonedds",
            "-t",
            "shm",
            "--history",
            "keep-all",
        ],
        "--history keep-all",
    );
    usage_error(
        &["latency", "-b", "fastdds", "--opt", "qos-file=/x.xml"],
        "--opt qos-file: now a flag, use --qos-file",
    );
    usage_error(
        &[
            "latency",
            "-b",
            "fastdds",
            "-t",
            "shm",
            "--zero-copy",
            "--data-type",
            "flat",
            "--instances",
            "2",
        ],
        "--instances",
    );
    let d = tempfile::tempdir().expect("tempdir");
    let f = d.path().join("q.xml");
    std::fs::write(&f, "<x/>").expect("write");
    usage_error(
        &[
            "latency",
            "-b",
            "cyclonedds",
            "--peer-binding",
            "fastdds",
            "--qos-file",
            f.to_str().unwrap(),
        ],
        "--qos-file",
    );
}

/// The vendor file of each binding used below: harmless settings.
fn qos_file(binding: &str, dir: &Path) -> String {
    let (name, text) = match binding {
        "cyclonedds" => (
            "cyclone.xml",
            "<CycloneDDS><Domain id=\"any\"><General><MaxMessageSize>14720B</MaxMessageSize>\
             </General></Domain></CycloneDDS>"
                .to_string(),
        ),
        _ => (
            "fastdds.xml",
            r#"<?xml version="1.0" encoding="UTF-8" ?>
<profiles xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <publisher profile_name="pp_pub" is_default_profile="true">
    <qos><partition><names><name>pp_test</name></names></partition></qos>
  </publisher>
  <subscriber profile_name="pp_sub" is_default_profile="true">
    <qos><partition><names><name>pp_test</name></names></partition></qos>
  </subscriber>
</profiles>
"#
            .to_string(),
        ),
    };
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write qos file");
    p.to_str().unwrap().to_string()
}

#[test]
fn dds_bindings_map_every_flag_and_record_it() {
    for b in ["cyclonedds", "fastdds"] {
        require_dds(b);
        let d = tempfile::tempdir().expect("tempdir");
        let q = qos_file(b, d.path());
        let r = exact_run(
            b,
            b,
            4000,
            &[
                "--history",
                "keep-all",
                "--durability",
                "transient-local",
                "--async",
                "--domain",
                "7",
                "--instances",
                "4",
                "--qos-file",
                &q,
            ],
        );
        let ep = &r["config"]["endpoint"];
        assert_eq!(ep["history"], "keep-all", "{b}");
        assert_eq!(ep["durability"], "transient-local", "{b}");
        assert_eq!(ep["async_publish"], true, "{b}");
        assert_eq!(ep["domain"], 7, "{b}");
        assert_eq!(ep["instances"], 4, "{b}");
        assert_eq!(ep["qos_file"], q.as_str(), "{b}");
        // Each flag alone, and keep-last.
        for extra in [
            &["--history", "keep-last:64", "--best-effort"][..],
            &["--instances", "3", "--data-type", "flat", "--reliable"],
        ] {
            let reliable = extra.contains(&"--reliable");
            let d = tempfile::tempdir().expect("tempdir");
            let j = d.path().join("r.json");
            let mut a = vec![
                "latency",
                "-b",
                b,
                "-n",
                "300",
                "--warmup",
                "100ms",
                "-q",
                "--json",
                j.to_str().unwrap(),
            ];
            a.extend_from_slice(extra);
            let o = run(&a);
            assert!(o.status.success(), "{a:?}: {}", stderr(&o));
            let r = &json(&j)["runs"][0];
            assert_eq!(r["latency_ns"]["count"], 300, "{a:?}");
            assert_eq!(
                r["config"]["endpoint"]["reliability"] == "reliable",
                reliable
            );
        }
        // Without the flags, the config says so (defaults recorded too).
        let d = tempfile::tempdir().expect("tempdir");
        let j = d.path().join("r.json");
        let o = run(&[
            "latency",
            "-b",
            b,
            "-n",
            "50",
            "--warmup",
            "100ms",
            "-q",
            "--json",
            j.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{b}: {}", stderr(&o));
        let ep = &json(&j)["runs"][0]["config"]["endpoint"];
        assert!(ep["history"].is_null() && ep["durability"].is_null() && ep["domain"].is_null());
        // The vendor tool's reliability and transport: ddsperf's reliable
        // UDP; Fast DDS LatencyTest's best effort over its built-in pair.
        let vendor = match b {
            "cyclonedds" => ("reliable", "udp"),
            _ => ("best-effort", "udp+shm"),
        };
        assert_eq!(
            (ep["reliability"].as_str(), ep["transport"].as_str()),
            (Some(vendor.0), Some(vendor.1)),
            "{b}"
        );
        assert_eq!(
            (ep["async_publish"].clone(), ep["instances"].clone()),
            (false.into(), 0.into())
        );
    }
}

#[test]
fn keyed_runs_across_vendors_count_exactly() {
    require_dds("cyclonedds");
    require_dds("fastdds");
    for (b, p) in [("cyclonedds", "fastdds"), ("fastdds", "cyclonedds")] {
        let r = exact_run(
            b,
            p,
            3000,
            &["--instances", "4", "--async", "--domain", "9"],
        );
        assert_eq!(r["config"]["endpoint"]["instances"], 4);
    }
}

#[test]
fn receive_modes_are_refused_where_they_cannot_work() {
    usage_error(
        &["latency", "-b", "udp", "--receive", "listener"],
        "--receive listener: udp's subscriber receives on its own thread only",
    );
}

/// cyclonedds's subscriber receives in a listener unless told otherwise,
/// and the results and the table header say so. 1 KiB latency is the case
/// where a reliable KEEP_ALL echo writer, written on the receive thread,
/// waited for its own acknowledgements: every ping must come back. With
/// `--wait busy` the default is our thread; `--receive listener --wait
/// busy` keeps the subscriber in the listener while the publisher polls
/// for its echo.
#[test]
fn cyclonedds_receives_in_a_listener_by_default_and_says_so() {
    require_dds("cyclonedds");
    let d = tempfile::tempdir().expect("tempdir");
    for (mode, named) in [
        (&[][..], Some("listener")),
        (&["--receive", "thread"][..], None),
        (&["--wait", "busy"][..], None),
        (
            &["--receive", "listener", "--wait", "busy"][..],
            Some("listener"),
        ),
    ] {
        let j = d.path().join("r.json");
        let mut a = vec![
            "latency",
            "-b",
            "cyclonedds",
            "-s",
            "1KiB",
            "-n",
            "2000",
            "--warmup",
            "100ms",
            "--json",
            j.to_str().unwrap(),
        ];
        a.extend(mode);
        let o = run(&a);
        assert!(o.status.success(), "{a:?}: {}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(out.contains("receive listener"), named.is_some(), "{out}");
        let r = &json(&j)["runs"][0];
        assert_eq!(r["config"]["endpoint"]["receive"].as_str(), named, "{a:?}");
        assert_eq!(r["latency_ns"]["count"], 2000, "{a:?}: every ping echoed");
    }
}
