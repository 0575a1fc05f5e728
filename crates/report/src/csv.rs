//! CSV export: one row per run, the same columns as the CSV that
//! `pubsubperf latency|throughput --csv FILE` writes (a test in the CLI
//! crate checks that both stay identical).

use pubsubperf_core::result::Run;

/// The header row.
pub const CSV_HEADER: &str = "binding,transport,test,size,reliable,zero_copy,data_type,complete,\
latency_count,latency_mean_ns,latency_std_ns,latency_min_ns,latency_max_ns,\
latency_p50_ns,latency_p90_ns,latency_p99_ns,latency_p99_9_ns,latency_p99_99_ns,latency_p99_9999_ns,\
sent,received,bytes,samples_per_s,mbps,lost,lost_percent,rejected,duplicates,out_of_order,\
pub_cpu_percent,sub_cpu_percent,pub_max_rss_kib,sub_max_rss_kib,\
pub_voluntary_cs,pub_involuntary_cs,sub_voluntary_cs,sub_involuntary_cs,bad_samples,duration_s,\
sent_per_s,demand,foreign_samples,publisher_host,subscriber_host";

/// One CSV row per run, header first.
pub fn csv(runs: &[Run]) -> String {
    let mut out = String::from(CSV_HEADER);
    out.push('\n');
    for r in runs {
        let mut row = vec![
            r.binding.clone(),
            r.transport.clone(),
            r.test.to_string(),
            r.size.to_string(),
            r.reliable.to_string(),
            r.zero_copy.to_string(),
            r.data_type.clone(),
            r.complete.to_string(),
        ];
        match &r.latency_ns {
            Some(l) => row.extend([
                l.count.to_string(),
                format!("{:.3}", l.mean),
                format!("{:.3}", l.std),
                l.min.to_string(),
                l.max.to_string(),
                l.p50.to_string(),
                l.p90.to_string(),
                l.p99.to_string(),
                l.p99_9.to_string(),
                l.p99_99.to_string(),
                l.p99_9999.to_string(),
            ]),
            None => row.extend(std::iter::repeat_n(String::new(), 11)),
        }
        match &r.throughput {
            Some(t) => row.extend([
                t.sent.to_string(),
                t.received.to_string(),
                t.bytes.to_string(),
                format!("{:.3}", t.samples_per_s),
                format!("{:.3}", t.mbps),
                t.lost.to_string(),
                format!("{:.6}", t.lost_percent),
                t.rejected.to_string(),
                t.duplicates.to_string(),
                t.out_of_order.to_string(),
            ]),
            None => row.extend(std::iter::repeat_n(String::new(), 10)),
        }
        let (p, s) = (&r.resources.publisher, &r.resources.subscriber);
        row.extend([
            format!("{:.1}", p.cpu_percent),
            format!("{:.1}", s.cpu_percent),
            p.max_rss_kib.to_string(),
            s.max_rss_kib.to_string(),
            p.voluntary_cs.to_string(),
            p.involuntary_cs.to_string(),
            s.voluntary_cs.to_string(),
            s.involuntary_cs.to_string(),
            r.bad_samples.to_string(),
            format!("{:.3}", r.duration_s),
            // Appended later: the publisher's rate, and the demand of a
            // `--demand` ramp's run (empty otherwise).
            r.throughput
                .as_ref()
                .map_or(String::new(), |t| format!("{:.3}", t.sent_per_s)),
            r.config
                .get("demand")
                .and_then(|d| d.as_u64())
                .map_or(String::new(), |d| d.to_string()),
            // Appended later: the samples without the run's key, and a
            // fleet sweep's hosts (empty outside one).
            r.foreign_samples.to_string(),
            r.hosts
                .as_ref()
                .map_or(String::new(), |h| h.publisher.clone()),
            r.hosts
                .as_ref()
                .map_or(String::new(), |h| h.subscriber.clone()),
        ]);
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}
