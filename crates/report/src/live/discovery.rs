//! The `discovery:` line under a table: how long each run's endpoints took
//! to find each other (`Run::discovery`, measured by the harness's set-up).

use pubsubperf_core::result::{Run, SubscriberDiscovery};
use std::fmt::Write;

/// One line per run that recorded its discovery.
pub fn lines(runs: &[&Run]) -> String {
    let mut s = String::new();
    let ms = |ns: u64| format!("{:.2} ms", ns as f64 / 1e6);
    for r in runs {
        let Some(d) = &r.discovery else { continue };
        let size = pubsubperf_core::size::format_size_with_unit(r.size);
        let mut line = format!(
            "discovery: {size}: writer matched {}",
            ms(d.writer_first_match_ns)
        );
        if d.subscribers.len() > 1 {
            let _ = write!(line, " (every subscriber {})", ms(d.writer_matched_ns));
        }
        if let Some(e) = d.echo_readers_matched_ns {
            let _ = write!(line, ", echo readers {}", ms(e));
        }
        // One subscriber as it is; several by the slowest of each.
        let slowest =
            |f: fn(&SubscriberDiscovery) -> Option<u64>| d.subscribers.iter().filter_map(f).max();
        let who = match d.subscribers.len() {
            0 => String::new(),
            1 => "subscriber 0".to_string(),
            n => format!("slowest of {n} subscribers"),
        };
        if let Some(r) = slowest(|s| Some(s.reader_matched_ns)) {
            let _ = write!(line, "; {who}: reader {}", ms(r));
        }
        if let Some(e) = slowest(|s| s.echo_writer_matched_ns) {
            let _ = write!(line, ", echo writer {}", ms(e));
        }
        if let Some(f) = slowest(|s| s.first_sample_ns) {
            let _ = write!(line, ", first sample {}", ms(f));
        }
        let _ = writeln!(s, "{line}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_core::result::Discovery;

    #[test]
    fn each_side_from_the_creation_of_its_endpoints() {
        let mut r = crate::fixture::run(
            pubsubperf_core::result::TestKind::Latency,
            "udp",
            64,
            serde_json::json!({}),
        );
        assert_eq!(lines(&[&r]), "");
        r.discovery = Some(Discovery {
            writer_first_match_ns: 2_206_479,
            writer_matched_ns: 2_207_311,
            echo_readers_matched_ns: Some(2_639_961),
            subscribers: vec![SubscriberDiscovery {
                reader_matched_ns: 3_106_352,
                echo_writer_matched_ns: Some(2_290_824),
                first_sample_ns: Some(4_066_094),
            }],
        });
        assert_eq!(
            lines(&[&r]),
            "discovery: 64 B: writer matched 2.21 ms, echo readers 2.64 ms; \
             subscriber 0: reader 3.11 ms, echo writer 2.29 ms, first sample 4.07 ms\n"
        );
    }
}
