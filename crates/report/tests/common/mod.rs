//! Deterministic results for the tests: made from fixed value sequences,
//! never from a measurement, so outputs do not depend on machine speed.
#![allow(dead_code)]

use pubsubperf_core::result::{ResultsFile, Run};
use pubsubperf_core::stats::LatencyRecorder;
use serde_json::json;

/// Deterministic latency values: a base plus a sawtooth and a sparse tail.
pub fn values(base: u64, n: u64, seed: u64) -> Vec<u64> {
    (0..n)
        .map(|i| {
            let x = (i * 7919 + seed * 104_729) % 1000;
            let tail = if (i + seed).is_multiple_of(97) {
                base * 3
            } else {
                0
            };
            base + x * base / 4000 + tail
        })
        .collect()
}

pub fn recorder(vals: &[u64]) -> LatencyRecorder {
    let mut r = LatencyRecorder::new();
    for &v in vals {
        r.record(v);
    }
    r
}

fn config(
    binding: &str,
    transport: &str,
    test: &str,
    size: usize,
    reliable: bool,
) -> serde_json::Value {
    json!({
        "binding": binding, "peer_binding": binding, "test": test, "size": size,
        "duration_ns": 1_000_000_000u64, "warmup_ns": 1_000_000_000u64, "count": 0,
        "rate": 0.0, "latency_every": 0, "check": false, "pub_cpu": 0, "sub_cpu": 1,
        "rt_priority": null, "mlock": false, "subscribers": 1, "echo_timeout_ms": 1000,
        "interval_ms": 1000, "one_way": false,
        "endpoint": {"run_id": format!("fixture-{binding}-{size}"), "transport": transport,
            "reliability": if reliable { "reliable" } else { "best_effort" },
            "wait": "block", "data_type": "bytes", "zero_copy": false,
            "max_sample_size": size, "subscribers": 1, "batch_bytes": 0, "multicast": false,
            "ipv6": false, "socket_buffer": 0, "send_queue": 0, "receive_queue": 0,
            "reliable_block_timeout_ms": 10000, "options": {}}
    })
}

/// A latency run from the given values.
pub fn latency_run(binding: &str, size: usize, vals: &[u64], started: &str) -> Run {
    let reliable = binding != "udp";
    let s = recorder(vals).summary();
    let n = vals.len() as u64;
    serde_json::from_value(json!({
        "binding": binding, "transport": binding, "test": "latency", "size": size,
        "zero_copy": false, "data_type": "bytes", "reliable": reliable,
        "config": config(binding, binding, "latency", size, reliable),
        "latency_ns": s, "latency_method": "one-way = round trip / 2",
        "intervals": [
            {"t_s": 1.0, "subscriber": 0, "received": n / 2, "lost": 0, "samples_per_s": (n / 2) as f64,
             "mbps": 0.0, "latency_mean_ns": vals[0] as f64, "latency_max_ns": vals[0]},
            {"t_s": 2.0, "subscriber": 0, "received": n - n / 2, "lost": 0, "samples_per_s": (n - n / 2) as f64,
             "mbps": 0.0, "latency_mean_ns": vals[1] as f64, "latency_max_ns": vals[1]}
        ],
        "resources": {
            "publisher": {"cpu_percent": 30.0 + size as f64 / 1024.0, "max_rss_kib": 4000, "voluntary_cs": 10, "involuntary_cs": 1},
            "subscriber": {"cpu_percent": 25.0, "max_rss_kib": 4100, "voluntary_cs": 12, "involuntary_cs": 2}},
        "started_at": started, "duration_s": 2.0
    }))
    .expect("valid run")
}

/// A throughput run with the given counters.
pub fn throughput_run(binding: &str, size: usize, sent: u64, received: u64, started: &str) -> Run {
    let reliable = binding != "udp";
    let secs = 2.0;
    let lost = sent - received;
    serde_json::from_value(json!({
        "binding": binding, "transport": binding, "test": "throughput", "size": size,
        "zero_copy": false, "data_type": "bytes", "reliable": reliable,
        "config": config(binding, binding, "throughput", size, reliable),
        "throughput": {"sent": sent, "received": received, "bytes": received * size as u64,
            "samples_per_s": received as f64 / secs, "mbps": (received * size as u64) as f64 * 8.0 / secs / 1e6,
            "lost": lost, "lost_percent": lost as f64 * 100.0 / sent as f64,
            "duplicates": 0, "out_of_order": 0, "sent_per_s": sent as f64 / secs},
        "intervals": [
            {"t_s": 1.0, "subscriber": 0, "received": received / 2, "lost": lost / 2,
             "samples_per_s": (received / 2) as f64, "mbps": ((received / 2) * size as u64) as f64 * 8.0 / 1e6, "cpu_percent": 40.0},
            {"t_s": 2.0, "subscriber": 0, "received": received - received / 2, "lost": lost - lost / 2,
             "samples_per_s": (received - received / 2) as f64, "mbps": ((received - received / 2) * size as u64) as f64 * 8.0 / 1e6, "cpu_percent": 42.0}
        ],
        "resources": {
            "publisher": {"cpu_percent": 80.0, "max_rss_kib": 4000, "voluntary_cs": 1, "involuntary_cs": 100},
            "subscriber": {"cpu_percent": 45.0, "max_rss_kib": 4100, "voluntary_cs": 5000, "involuntary_cs": 20}},
        "started_at": started, "duration_s": secs
    }))
    .expect("valid run")
}

pub fn file(runs: Vec<Run>) -> ResultsFile {
    serde_json::from_value(json!({
        "tool": {"name": "pubsubperf", "version": "0.1.0", "schema": 1},
        "environment": {"cpu_model": "Fixture CPU", "cores": 2, "kernel": "Linux 6.1.0-fixture",
            "hostname": "fixture", "os": "Debian GNU/Linux 12 (bookworm)",
            "bindings": {"udp": "Linux 6.1.0", "tcp": "Linux 6.1.0"}},
        "runs": runs
    }))
    .expect("valid file")
}

/// BASE: udp and tcp, latency at three sizes and throughput at two, with
/// `reps` repetitions each; `slow` scales NEW-like latencies.
pub fn sample(reps: u64, latency_scale: f64, throughput_scale: f64) -> ResultsFile {
    let mut runs = Vec::new();
    for rep in 0..reps {
        for (bi, b) in ["udp", "tcp"].into_iter().enumerate() {
            for (si, size) in [64usize, 1024, 16384].into_iter().enumerate() {
                let base =
                    ((8_000 + 2_000 * bi as u64 + 1_500 * si as u64) as f64 * latency_scale) as u64;
                let vals = values(base, 5_000, rep * 10 + si as u64);
                runs.push(latency_run(
                    b,
                    size,
                    &vals,
                    &format!("2026-11-2{}T10:0{}:00Z", rep + 1, si),
                ));
            }
            for (si, size) in [64usize, 1024].into_iter().enumerate() {
                let sent = 400_000 - 100_000 * si as u64;
                let received =
                    ((sent - (rep * 13 + bi as u64 * 7) * 100) as f64 * throughput_scale) as u64;
                runs.push(throughput_run(
                    b,
                    size,
                    sent,
                    received.min(sent),
                    &format!("2026-11-2{}T11:0{}:00Z", rep + 1, si),
                ));
            }
        }
    }
    file(runs)
}

/// `run` with its config changed by `f`; the transport and zero copy are
/// read back from the config (as a measured run records them).
pub fn with_config(mut run: Run, f: impl FnOnce(&mut serde_json::Value)) -> Run {
    f(&mut run.config);
    if let Some(t) = run.config["endpoint"]["transport"].as_str() {
        run.transport = t.to_string();
    }
    run
}

/// A throughput search's record as the quick comparison writes it: the
/// settled rate and every trial (the first as fast as accepted).
pub fn searched(run: Run, rate: f64) -> Run {
    with_config(run, |c| {
        c["rate"] = json!(rate);
        c["find_max"] = json!({"max_loss_percent": 0.1, "max_trials": 6, "found": true,
            "trials": [
                {"target_rate": 0.0, "sent_per_s": 2.0 * rate, "received_per_s": 1.1 * rate, "lost_percent": 45.08, "ok": false},
                {"target_rate": 1.1 * rate, "sent_per_s": 1.1 * rate, "received_per_s": 1.05 * rate, "lost_percent": 4.5, "ok": false},
                {"target_rate": rate, "sent_per_s": rate, "received_per_s": rate, "lost_percent": 0.0, "ok": true}]});
    })
}

/// The quick comparison's results: latency at 64 B and 4 KiB, throughput
/// at 1 KiB, of udp (best effort: the throughput searched), tcp and
/// cyclonedds (over udp, in the middleware's listener, its throughput
/// batched in 14720 B packets).
pub fn quick() -> ResultsFile {
    let mut runs = Vec::new();
    for (bi, b) in ["udp", "tcp", "cyclonedds"].into_iter().enumerate() {
        let dds = |r: Run, batch: u64| {
            if b != "cyclonedds" {
                return r;
            }
            with_config(r, |c| {
                c["endpoint"]["transport"] = json!("udp");
                c["endpoint"]["receive"] = json!("listener");
                c["endpoint"]["batch_bytes"] = json!(batch);
            })
        };
        for (si, size) in [64usize, 4096].into_iter().enumerate() {
            let vals = values(8_000 + 2_000 * bi as u64, 2_000, si as u64);
            let at = format!("2026-11-21T10:0{bi}:0{si}Z");
            runs.push(dds(latency_run(b, size, &vals, &at), 0));
        }
        let at = format!("2026-11-21T10:0{bi}:09Z");
        let sent = 200_000 + 100_000 * bi as u64;
        let tp = throughput_run(b, 1024, sent, sent, &at);
        runs.push(match b {
            "udp" => searched(tp, sent as f64 / 2.0),
            _ => dds(tp, 14720),
        });
    }
    file(runs)
}

/// The standalone SVG of the report's plot `name`.
pub fn plot<'a>(r: &'a pubsubperf_report::html::Report, name: &str) -> &'a str {
    &r.plots.iter().find(|(n, _)| n == name).unwrap().1
}

/// The texts of a figure's legend.
pub fn legend(svg: &str) -> Vec<String> {
    let g = &svg[svg.find("<g class=\"legend\">").expect("a legend")..];
    let g = &g[..g.find("</g>").unwrap()];
    g.split("<text")
        .skip(1)
        .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
        .collect()
}
