//! The physical limit beside each result (`Run::limit`): a figure is read
//! against what the machine can do at best. Across hosts, throughput
//! against the line rate of the NIC that carries the data address (the
//! kernel's `/sys/class/net/NAME/speed`, in the environment). On one host,
//! throughput through shared memory against `pubsubperf calibrate`'s
//! memcpy bandwidth at the smallest calibrated size at least the sample's
//! (each sample is written once and read once: a copy is the floor), and
//! latency against its cache-line one-way time (two cores handing one line
//! back and forth: nothing between two cores is faster). Latency across
//! hosts against a raw UDP ping-pong between the same two hosts, over the
//! same session and data addresses, at the same size and wait mode
//! ([`Floors`]: one short run of our `udp` binding per size, measured
//! before the first run of that size). Without a calibration, a known speed
//! or that ping-pong there is no limit; no figure is guessed.

use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{Limit, Run, TestKind};
use pubsubperf_harness::session::Session;
use pubsubperf_harness::spec::RunSpec;
use std::collections::BTreeMap;

/// The limit of `run`, measured on the host `env` describes; `udp_floor`
/// is the UDP ping-pong's p50 between the two hosts of a run across hosts.
pub fn of(run: &Run, env: &Environment, udp_floor: Option<f64>) -> Option<Limit> {
    match run.test {
        TestKind::Throughput if env.subscriber_host.is_some() => line_rate(run, env),
        TestKind::Throughput if matches!(run.transport.as_str(), "shm" | "intra") => {
            memcpy(run, env)
        }
        TestKind::Latency if env.subscriber_host.is_none() => cache_line(run, env),
        TestKind::Latency => link_floor(run, udp_floor?),
        _ => None,
    }
}

/// Pings of a floor's UDP ping-pong.
const FLOOR_PINGS: u64 = 2000;

/// The binding of a floor's ping-pong: raw UDP. A run on it on both sides
/// is that floor itself.
pub const FLOOR_BINDING: &str = "udp";

/// The UDP ping-pong floors of one session across hosts, by sample size.
#[derive(Default)]
pub struct Floors {
    p50_ns: BTreeMap<usize, Option<f64>>,
}

impl Floors {
    /// The p50 of a raw UDP ping-pong of `spec`'s size between this
    /// session's two hosts ([`FLOOR_PINGS`] pings after 100 ms of warm-up,
    /// the run's data address, cores and wait mode), measured once per
    /// size; None on one host, with several subscribers, above a UDP
    /// datagram's size, or when it failed (no figure rather than a guess).
    pub fn udp(&mut self, session: &mut Session, spec: &RunSpec) -> Option<f64> {
        if spec.test != TestKind::Latency
            || !session.across_hosts()
            || spec.subscribers != 1
            || spec.size > 65_507
        {
            return None;
        }
        *self.p50_ns.entry(spec.size).or_insert_with(|| {
            let floor = floor_spec(spec);
            let outcome = pubsubperf_harness::run::run(session, &floor, &mut |_| {});
            if let Some(f) = &outcome.fault {
                eprintln!("pubsubperf: no udp ping-pong floor at {} B: {f}", spec.size);
            }
            outcome
                .run
                .filter(|r| r.complete)
                .and_then(|r| r.latency_ns)
                .map(|l| l.p50 as f64)
        })
    }
}

/// A raw UDP ping-pong with `spec`'s size, addresses, cores and wait.
fn floor_spec(spec: &RunSpec) -> RunSpec {
    // Run ids are letters and digits (the agent checks them).
    let mut f = RunSpec::for_test(&format!("{}udp", spec.endpoint.run_id), TestKind::Latency);
    (f.binding, f.peer_binding) = (FLOOR_BINDING.into(), FLOOR_BINDING.into());
    f.size = spec.size;
    f.endpoint.max_sample_size = spec.size;
    f.endpoint.bind_ip = spec.endpoint.bind_ip.clone();
    f.endpoint.ipv6 = spec.endpoint.ipv6;
    f.endpoint.wait = spec.endpoint.wait;
    f.endpoint.reliability = pubsubperf_core::Reliability::BestEffort;
    f.data_address = spec.data_address.clone();
    f.pub_cpu = spec.pub_cpu;
    f.sub_cpu = spec.sub_cpu;
    f.rt_priority = spec.rt_priority;
    f.warmup_ns = 100_000_000;
    f.duration_ns = 0;
    f.count = FLOOR_PINGS;
    f
}

fn link_floor(run: &Run, floor: f64) -> Option<Limit> {
    let l = run.latency_ns.as_ref()?;
    (floor > 0.0).then(|| Limit {
        what: "udp ping-pong between the hosts".into(),
        value: floor,
        unit: "ns".into(),
        percent: None,
        multiple: Some(l.p50 as f64 / floor),
    })
}

fn line_rate(run: &Run, env: &Environment) -> Option<Limit> {
    let addr = env.data_address.as_deref()?;
    let nic = env
        .interfaces
        .iter()
        .find(|i| i.addresses.iter().any(|a| a == addr))?;
    let speed = nic.speed_mbps.filter(|s| *s > 0)? as f64;
    let t = run.throughput.as_ref()?;
    Some(Limit {
        what: format!("line rate of {}", nic.name),
        value: speed,
        unit: "Mbit/s".into(),
        percent: Some(t.mbps * 100.0 / speed),
        multiple: None,
    })
}

fn memcpy(run: &Run, env: &Environment) -> Option<Limit> {
    let cal = env.calibration.as_ref()?;
    let (size, gb_per_s) = cal["memcpy"]
        .as_array()?
        .iter()
        .filter_map(|m| Some((m["size"].as_u64()? as usize, m["gb_per_s"].as_f64()?)))
        .filter(|(s, _)| *s >= run.size)
        .min_by_key(|(s, _)| *s)?;
    let mbps = gb_per_s * 8000.0;
    let t = run.throughput.as_ref()?;
    Some(Limit {
        what: format!("memcpy of {}", pubsubperf_core::size::format_size(size)),
        value: mbps,
        unit: "Mbit/s".into(),
        percent: Some(t.mbps * 100.0 / mbps),
        multiple: None,
    })
}

fn cache_line(run: &Run, env: &Environment) -> Option<Limit> {
    let floor = crate::calibration::floor_ns(env.calibration.as_ref()?).filter(|f| *f > 0.0)?;
    let l = run.latency_ns.as_ref()?;
    Some(Limit {
        what: "cache-line one-way".into(),
        value: floor,
        unit: "ns".into(),
        percent: None,
        multiple: Some(l.p50 as f64 / floor),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::environment::Interface;
    use pubsubperf_report::fixture::run;

    fn throughput(mbps: f64) -> serde_json::Value {
        serde_json::json!({"throughput": {"sent": 1, "received": 1, "bytes": 1, "samples_per_s": 1.0,
            "mbps": mbps, "lost": 0, "lost_percent": 0.0, "duplicates": 0, "out_of_order": 0}})
    }

    #[test]
    fn each_run_is_read_against_its_limit() {
        let cal = serde_json::json!({
            "clock_ns": 20.0,
            "cache_line": {"cores": [0, 1], "rtt_p50_ns": 130.0, "rtt_min_ns": 120.0, "one_way_p50_ns": 65.0, "round_trips": 1},
            "memcpy": [{"size": 65536, "gb_per_s": 20.0}, {"size": 1048576, "gb_per_s": 10.0}]
        });
        let mut env = Environment {
            calibration: Some(cal),
            ..Environment::default()
        };
        // Shared memory at 1 KiB against memcpy of 64 KiB: 16 Gbit/s of 160.
        let l = of(
            &run(TestKind::Throughput, "shm", 1024, throughput(16_000.0)),
            &env,
            None,
        )
        .unwrap();
        assert_eq!(
            (l.what.as_str(), l.value, l.percent),
            ("memcpy of 64KiB", 160_000.0, Some(10.0))
        );
        // A larger sample: the next calibrated size.
        let l = of(
            &run(TestKind::Throughput, "shm", 100_000, throughput(8_000.0)),
            &env,
            None,
        )
        .unwrap();
        assert_eq!((l.value, l.percent), (80_000.0, Some(10.0)));
        // Beyond every calibrated size, or over udp on one host: none.
        assert!(
            of(
                &run(TestKind::Throughput, "shm", 2 << 20, throughput(1.0)),
                &env,
                None
            )
            .is_none()
        );
        assert!(
            of(
                &run(TestKind::Throughput, "udp", 64, throughput(1.0)),
                &env,
                None
            )
            .is_none()
        );
        // Latency: p50 as a multiple of the cache-line one-way time.
        let lat = serde_json::json!({"latency_ns": {"count": 1, "mean": 650.0, "std": 0.0, "min": 650, "max": 650,
            "p50": 650, "p90": 650, "p99": 650, "p99_9": 650, "p99_99": 650, "p99_9999": 650, "histogram": ""}});
        let l = of(&run(TestKind::Latency, "udp", 64, lat.clone()), &env, None).unwrap();
        assert_eq!((l.value, l.multiple), (65.0, Some(10.0)));
        // Across hosts: the line rate of the data address's NIC.
        env.subscriber_host = Some(Box::new(Environment::default()));
        env.data_address = Some("192.0.2.1".into());
        env.interfaces = vec![Interface {
            name: "eth1".into(),
            addresses: vec!["192.0.2.1".into()],
            speed_mbps: Some(1000),
            driver: String::new(),
        }];
        let r = run(TestKind::Throughput, "udp", 1024, throughput(960.0));
        let l = of(&r, &env, None).unwrap();
        assert_eq!(
            (l.what.as_str(), l.value, l.percent),
            ("line rate of eth1", 1000.0, Some(96.0))
        );
        // No speed known, or a latency across hosts without a UDP
        // ping-pong measured: none.
        env.interfaces[0].speed_mbps = None;
        assert!(of(&r, &env, None).is_none());
        assert!(of(&run(TestKind::Latency, "udp", 64, lat.clone()), &env, None).is_none());
        // A latency across hosts beside the UDP ping-pong between them.
        let r = run(TestKind::Latency, "cyclonedds", 64, lat);
        let l = of(&r, &env, Some(260.0)).unwrap();
        assert_eq!(
            (l.what.as_str(), l.value, l.multiple),
            ("udp ping-pong between the hosts", 260.0, Some(2.5))
        );
        assert_eq!(
            pubsubperf_report::live::limit::lines(&[&Run {
                limit: Some(l),
                ..r
            }]),
            "limit: 64 B: p50 2.50x the udp ping-pong between the hosts (0.3 us p50, measured before the run)\n"
        );
    }
}
