//! Golden tests: each line of ours beside the same figures printed by C's
//! `snprintf` with the format Perftest 4.3's printer uses for that line in
//! each build (srcCppCommon/PerftestPrinter.cxx: the default build, and
//! the `RTI_PERFTEST_NANO_CLOCK` build), byte for byte.

use super::*;
use crate::c;
use std::ffi::{c_double, c_int, c_ulong, c_ulonglong};

fn ul(ns: u64) -> c_ulong {
    (ns / 1000) as c_ulong
}

fn d(ns: f64) -> c_double {
    ns / 1000.0
}

fn nd(ns: u64) -> c_double {
    ns as f64 / 1000.0
}

/// Figures with the cases printf gets wrong when imitated: halves that
/// round to even, values just under a rounding step, zeros, wide numbers.
fn latencies() -> Vec<LatencyLine> {
    vec![
        LatencyLine {
            latency_ns: 37_439,
            ave_ns: 34_512.0,
            std_ns: 8_663.0,
            min_ns: 21_002,
            max_ns: 3_027_098,
            cpu: 17.5,
        },
        LatencyLine {
            latency_ns: 999,
            ave_ns: 2_500.0,
            std_ns: 250.0,
            min_ns: 0,
            max_ns: 999_999,
            cpu: 0.125,
        },
        LatencyLine {
            latency_ns: 123_456_789_012,
            ave_ns: 1_499.999_9,
            std_ns: 0.0,
            min_ns: 5,
            max_ns: 123_456_789_012,
            cpu: 100.0,
        },
        LatencyLine {
            latency_ns: 3_500,
            ave_ns: 3_500.0,
            std_ns: 1_050.0,
            min_ns: 3_499,
            max_ns: 3_501,
            cpu: 2.675,
        },
    ]
}

fn summaries() -> Vec<LatencySummaryLine> {
    latencies()
        .into_iter()
        .enumerate()
        .map(|(i, l)| LatencySummaryLine {
            length: [32, 1024, 63_000, 1 << 20][i],
            ave_ns: l.ave_ns,
            std_ns: l.std_ns,
            min_ns: l.min_ns,
            max_ns: l.max_ns,
            percentiles_ns: [
                l.latency_ns,
                l.latency_ns + 1_500,
                l.max_ns / 2,
                l.max_ns - 1,
                l.max_ns,
            ],
            cpu: l.cpu,
        })
        .collect()
}

fn throughputs() -> Vec<ThroughputLine> {
    vec![
        ThroughputLine {
            length: 1024,
            total: 3_725_861,
            per_s: 372_586,
            per_s_ave: 372_586.5,
            bytes_per_s: 381_528_064,
            bytes_per_s_ave: 381_528_576.4,
            lost: 0,
            lost_percent: 0.0,
            cpu: 35.25,
        },
        ThroughputLine {
            length: 63_000,
            total: 0,
            per_s: 0,
            per_s_ave: 0.0,
            bytes_per_s: 0,
            bytes_per_s_ave: 0.0,
            lost: 13,
            lost_percent: 13.0 * 100.0 / 17.0_f32,
            cpu: 0.0,
        },
        ThroughputLine {
            length: 32,
            total: 18_446_744_073_709,
            per_s: 2_500_001,
            per_s_ave: 2.5,
            bytes_per_s: 80_000_032,
            bytes_per_s_ave: 1_250_000.0,
            lost: 99_999,
            lost_percent: 0.005,
            cpu: 99.995,
        },
    ]
}

fn throughput_summaries() -> Vec<ThroughputSummaryLine> {
    vec![
        ThroughputSummaryLine {
            length: 1024,
            packets: 3_725_861,
            time_us: 10_000_123,
            bytes: 3_725_861 * 1024,
            lost: 0,
            lost_percent: 0.0,
            cpu: 35.25,
        },
        ThroughputSummaryLine {
            length: 100,
            packets: 0,
            time_us: 2_000_000,
            bytes: 0,
            lost: 5,
            lost_percent: 100.0,
            cpu: 0.5,
        },
        ThroughputSummaryLine {
            length: 32,
            packets: 7,
            time_us: 3,
            bytes: 224,
            lost: 1,
            lost_percent: 12.5,
            cpu: 1.005,
        },
    ]
}

#[test]
fn csv_lines_are_perftests() {
    for l in latencies() {
        assert_eq!(
            csv_latency(Clock::Micro, 1024, &l),
            c!(
                "%14d,%13lu,%9.0lf,%9.1lf,%9lu,%9lu",
                1024 as c_int,
                ul(l.latency_ns),
                d(l.ave_ns),
                d(l.std_ns),
                ul(l.min_ns),
                ul(l.max_ns)
            )
        );
        assert_eq!(
            csv_latency(Clock::Nano, 1024, &l),
            c!(
                "%14d,%13.3f,%9.3f,%9.3f,%9.3f,%9.3f",
                1024 as c_int,
                nd(l.latency_ns),
                d(l.ave_ns),
                d(l.std_ns),
                nd(l.min_ns),
                nd(l.max_ns)
            )
        );
        assert_eq!(csv_cpu(Some(l.cpu)), c!(",%8.2f", l.cpu));
    }
    assert_eq!(csv_cpu(None), "");
    for s in summaries() {
        let p = s.percentiles_ns;
        assert_eq!(
            csv_latency_summary(Clock::Micro, &s),
            c!(
                "%19d,%9.0lf,%9.1lf,%9lu,%9lu,%9lu,%9lu,%9lu,%12lu,%14lu",
                s.length as c_int,
                d(s.ave_ns),
                d(s.std_ns),
                ul(s.min_ns),
                ul(s.max_ns),
                ul(p[0]),
                ul(p[1]),
                ul(p[2]),
                ul(p[3]),
                ul(p[4])
            )
        );
        assert_eq!(
            csv_latency_summary(Clock::Nano, &s),
            c!(
                "%19d,%9.3f,%9.3f,%9.3f,%9.3f,%9.3f,%9.3f,%9.3f,%12.3f,%14.3f",
                s.length as c_int,
                d(s.ave_ns),
                d(s.std_ns),
                nd(s.min_ns),
                nd(s.max_ns),
                nd(p[0]),
                nd(p[1]),
                nd(p[2]),
                nd(p[3]),
                nd(p[4])
            )
        );
    }
    for t in throughputs() {
        assert_eq!(
            csv_throughput(&t),
            c!(
                "%14d,%14llu,%11llu,%14.0lf,%9.1lf,%10.1lf, %12llu, %16.2lf",
                t.length as c_int,
                t.total as c_ulonglong,
                t.per_s as c_ulonglong,
                t.per_s_ave,
                t.bytes_per_s as f64 * 8.0 / 1000.0 / 1000.0,
                t.bytes_per_s_ave * 8.0 / 1000.0 / 1000.0,
                t.lost as c_ulonglong,
                f64::from(t.lost_percent)
            )
        );
    }
    for s in throughput_summaries() {
        assert_eq!(
            csv_throughput_summary(&s),
            c!(
                "%19d,%14llu,%14.0llu,%12.1lf, %12llu, %16.2lf",
                s.length as c_int,
                s.packets as c_ulonglong,
                (s.packets * 1_000_000 / s.time_us) as c_ulonglong,
                s.bytes as f64 * 1_000_000.0 / s.time_us as f64 * 8.0 / 1000.0 / 1000.0,
                s.lost as c_ulonglong,
                f64::from(s.lost_percent)
            )
        );
    }
}

#[test]
fn legacy_lines_are_perftests() {
    for l in latencies() {
        assert_eq!(
            legacy_latency(Clock::Micro, &l),
            c!(
                "One-Way Latency: %6lu μs Ave %6.0lf μs Std %6.1lf μs Min %6lu μs Max %6lu μs",
                ul(l.latency_ns),
                d(l.ave_ns),
                d(l.std_ns),
                ul(l.min_ns),
                ul(l.max_ns)
            )
        );
        assert_eq!(
            legacy_latency(Clock::Nano, &l),
            c!(
                "One-Way Latency: %9.3f μs Ave %9.3f μs Std %9.3f μs Min %9.3f μs Max %9.3f μs",
                nd(l.latency_ns),
                d(l.ave_ns),
                d(l.std_ns),
                nd(l.min_ns),
                nd(l.max_ns)
            )
        );
        assert_eq!(legacy_cpu(Some(l.cpu)), c!(" CPU %1.2f (%%)", l.cpu));
    }
    for s in summaries() {
        let p = s.percentiles_ns;
        assert_eq!(
            legacy_latency_summary(Clock::Micro, &s),
            c!(
                "Length: %5d Latency: Ave %6.0lf μs Std %6.1lf μs Min %6lu μs Max %6lu μs 50%% %6lu μs 90%% %6lu μs 99%% %6lu μs 99.99%% %6lu μs 99.9999%% %6lu μs",
                s.length as c_int,
                d(s.ave_ns),
                d(s.std_ns),
                ul(s.min_ns),
                ul(s.max_ns),
                ul(p[0]),
                ul(p[1]),
                ul(p[2]),
                ul(p[3]),
                ul(p[4])
            )
        );
        assert_eq!(
            legacy_latency_summary(Clock::Nano, &s),
            c!(
                "Length: %5d Latency: Ave %9.3f μs Std %9.3f μs Min %9.3f μs Max %9.3f μs 50%% %9.3f μs 90%% %9.3f μs 99%% %9.3f μs 99.99%% %9.3f μs 99.9999%% %9.3f μs",
                s.length as c_int,
                d(s.ave_ns),
                d(s.std_ns),
                nd(s.min_ns),
                nd(s.max_ns),
                nd(p[0]),
                nd(p[1]),
                nd(p[2]),
                nd(p[3]),
                nd(p[4])
            )
        );
    }
    for t in throughputs() {
        assert_eq!(
            legacy_throughput(&t),
            c!(
                "Packets: %8llu  Packets/s: %7llu  Packets/s(ave): %7.0lf  Mbps: %7.1lf  Mbps(ave): %7.1lf  Lost: %5llu (%1.2f%%)",
                t.total as c_ulonglong,
                t.per_s as c_ulonglong,
                t.per_s_ave,
                t.bytes_per_s as f64 * 8.0 / 1000.0 / 1000.0,
                t.bytes_per_s_ave * 8.0 / 1000.0 / 1000.0,
                t.lost as c_ulonglong,
                f64::from(t.lost_percent)
            )
        );
    }
    for s in throughput_summaries() {
        assert_eq!(
            legacy_throughput_summary(&s),
            c!(
                "Length: %5d  Packets: %8llu  Packets/s(ave): %7llu  Mbps(ave): %7.1lf  Lost: %5llu (%1.2f%%)",
                s.length as c_int,
                s.packets as c_ulonglong,
                (s.packets * 1_000_000 / s.time_us) as c_ulonglong,
                s.bytes as f64 * 1_000_000.0 / s.time_us as f64 * 8.0 / 1000.0 / 1000.0,
                s.lost as c_ulonglong,
                f64::from(s.lost_percent)
            )
        );
    }
}

#[test]
fn json_members_are_perftests() {
    for l in latencies() {
        assert_eq!(
            json_latency(Clock::Micro, &l),
            c!(
                "\n\t\t\t\t{\n\t\t\t\t\t\"latency\": %lu,\n\t\t\t\t\t\"latency_ave\": %1.2lf,\n\t\t\t\t\t\"latency_std\": %1.2lf,\n\t\t\t\t\t\"latency_min\": %lu,\n\t\t\t\t\t\"latency_max\": %lu",
                ul(l.latency_ns),
                d(l.ave_ns),
                d(l.std_ns),
                ul(l.min_ns),
                ul(l.max_ns)
            )
        );
        assert_eq!(
            json_latency(Clock::Nano, &l),
            c!(
                "\n\t\t\t\t{\n\t\t\t\t\t\"latency\": %.3f,\n\t\t\t\t\t\"latency_ave\": %.3f,\n\t\t\t\t\t\"latency_std\": %.3f,\n\t\t\t\t\t\"latency_min\": %.3f,\n\t\t\t\t\t\"latency_max\": %.3f",
                nd(l.latency_ns),
                d(l.ave_ns),
                d(l.std_ns),
                nd(l.min_ns),
                nd(l.max_ns)
            )
        );
        assert_eq!(
            json_cpu(Some(l.cpu), 5),
            c!(",\n\t\t\t\t\t\"CPU\": %1.2f", l.cpu)
        );
        assert_eq!(
            json_cpu(Some(l.cpu), 4),
            c!(",\n\t\t\t\t\"CPU\": %1.2f", l.cpu)
        );
    }
    for s in summaries() {
        let p = s.percentiles_ns;
        assert_eq!(
            json_latency_summary(Clock::Micro, &s),
            c!(
                "\t\t\t\"summary\":{\n\t\t\t\t\"latency_ave\": %1.2lf,\n\t\t\t\t\"latency_std\": %1.2lf,\n\t\t\t\t\"latency_min\": %lu,\n\t\t\t\t\"latency_max\": %lu,\n\t\t\t\t\"latency_50\": %lu,\n\t\t\t\t\"latency_90\": %lu,\n\t\t\t\t\"latency_99\": %lu,\n\t\t\t\t\"latency_99.99\": %lu,\n\t\t\t\t\"latency_99.9999\": %lu",
                d(s.ave_ns),
                d(s.std_ns),
                ul(s.min_ns),
                ul(s.max_ns),
                ul(p[0]),
                ul(p[1]),
                ul(p[2]),
                ul(p[3]),
                ul(p[4])
            )
        );
        assert_eq!(
            json_latency_summary(Clock::Nano, &s),
            c!(
                "\t\t\t\"summary\":{\n\t\t\t\t\"latency_ave\": %.3f,\n\t\t\t\t\"latency_std\": %.3f,\n\t\t\t\t\"latency_min\": %.3f,\n\t\t\t\t\"latency_max\": %.3f,\n\t\t\t\t\"latency_50\": %.3f,\n\t\t\t\t\"latency_90\": %.3f,\n\t\t\t\t\"latency_99\": %.3f,\n\t\t\t\t\"latency_99.99\": %.3f,\n\t\t\t\t\"latency_99.9999\": %.3f",
                d(s.ave_ns),
                d(s.std_ns),
                nd(s.min_ns),
                nd(s.max_ns),
                nd(p[0]),
                nd(p[1]),
                nd(p[2]),
                nd(p[3]),
                nd(p[4])
            )
        );
    }
    for t in throughputs() {
        assert_eq!(
            json_throughput(&t),
            c!(
                "\n\t\t\t\t{\n\t\t\t\t\t\"length\": %d,\n\t\t\t\t\t\"packets\": %llu,\n\t\t\t\t\t\"packets/s\": %llu,\n\t\t\t\t\t\"packets/s_ave\": %1.2lf,\n\t\t\t\t\t\"mbps\": %1.1lf,\n\t\t\t\t\t\"mbps_ave\": %1.1lf,\n\t\t\t\t\t\"lost\": %llu,\n\t\t\t\t\t\"lost_percent\": %1.2lf",
                t.length as c_int,
                t.total as c_ulonglong,
                t.per_s as c_ulonglong,
                t.per_s_ave,
                t.bytes_per_s as f64 * 8.0 / 1000.0 / 1000.0,
                t.bytes_per_s_ave * 8.0 / 1000.0 / 1000.0,
                t.lost as c_ulonglong,
                f64::from(t.lost_percent)
            )
        );
    }
    for s in throughput_summaries() {
        assert_eq!(
            json_throughput_summary(&s),
            c!(
                "\t\t\t\"summary\":{\n\t\t\t\t\"packets\": %llu,\n\t\t\t\t\"packets/sAve\": %llu,\n\t\t\t\t\"mbpsAve\": %1.1lf,\n\t\t\t\t\"lost\": %llu,\n\t\t\t\t\"lostPercent\": %1.2lf",
                s.packets as c_ulonglong,
                (s.packets * 1_000_000 / s.time_us) as c_ulonglong,
                s.bytes as f64 * 1_000_000.0 / s.time_us as f64 * 8.0 / 1000.0 / 1000.0,
                s.lost as c_ulonglong,
                f64::from(s.lost_percent)
            )
        );
    }
}

#[test]
fn a_default_build_parser_reads_whole_microseconds() {
    // The example: int() on the default build's latency columns.
    let l = latencies()[0];
    let line = csv_latency_summary(
        Clock::Micro,
        &LatencySummaryLine {
            length: 1024,
            ave_ns: l.ave_ns,
            std_ns: l.std_ns,
            min_ns: l.min_ns,
            max_ns: l.max_ns,
            percentiles_ns: [l.latency_ns; 5],
            cpu: 0.0,
        },
    );
    let cols: Vec<&str> = line.split(',').map(str::trim).collect();
    for (i, c) in cols.iter().enumerate() {
        if i == 2 {
            assert!(c.parse::<f64>().is_ok(), "Std: {c}");
        } else {
            assert!(c.parse::<u64>().is_ok(), "column {i}: {c} in {line}");
        }
    }
}
