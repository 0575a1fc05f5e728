//! CSV export: one row per run, the same columns as the CSV that
//! `pubsubperf latency|throughput --csv FILE` writes (a test in the CLI
//! crate checks that both stay identical).
//!
//! Text fields come from results files, which may be imported from
//! anywhere: each is written with its control characters escaped, quoted
//! as RFC 4180 when it holds a comma or a quote, and kept from being read
//! as a formula by a spreadsheet (a `'` before a leading `=`, `+`, `-` or
//! `@` of anything but a number).

use pubsubperf_core::escape::printable_all;
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
        out.push_str(&record(&row));
    }
    out
}

/// One field as it is safe to write: control characters escaped, and a
/// leading `=`, `+`, `-` or `@` of a field that is not a number behind a
/// `'`, so that a spreadsheet shows it as text instead of running it.
fn field(s: &str) -> String {
    let s = printable_all(s);
    let formula = s.starts_with(['=', '+', '-', '@']);
    if formula && !s.parse::<f64>().is_ok_and(f64::is_finite) {
        format!("'{s}")
    } else {
        s
    }
}

/// One CSV line: the fields made safe, quoted where RFC 4180 needs it.
fn record(row: &[String]) -> String {
    let mut w = ::csv::WriterBuilder::new()
        .terminator(::csv::Terminator::Any(b'\n'))
        .from_writer(Vec::new());
    // Writing to memory fails only on a full memory; fields are UTF-8 in,
    // UTF-8 out.
    w.write_record(row.iter().map(|f| field(f)))
        .expect("CSV to memory");
    String::from_utf8(w.into_inner().expect("CSV to memory")).expect("CSV of UTF-8 fields")
}

#[cfg(test)]
mod tests {
    use super::{field, record};

    #[test]
    fn fields_are_quoted_and_kept_from_formulas() {
        let row = [
            "=HYPERLINK(\"http://x\",\"y\")",
            "a,b",
            "-1.5",
            "+3",
            "@SUM(A1)",
            "-x",
            "say \"hi\"",
            "line\nforged,row",
            "\u{1b}[31mred\u{7}",
            "",
            "udp",
        ]
        .map(String::from);
        assert_eq!(
            record(&row),
            "\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",\"a,b\",-1.5,+3,'@SUM(A1),'-x,\
             \"say \"\"hi\"\"\",\"line\\nforged,row\",\\u{1b}[31mred\\u{7},,udp\n"
        );
        assert_eq!(field("-inf"), "'-inf");
        assert_eq!(field("-1e3"), "-1e3");
    }
}
