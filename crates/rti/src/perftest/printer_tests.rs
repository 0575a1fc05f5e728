//! Golden tests of whole outputs: for each format × side × flags
//! (`-noPrint`, `-noOutputHeaders`, `-cpu`) × build, the [`Printer`] fed
//! a run's intervals and summaries beside a reference that does what
//! Perftest 4.3's printer (srcCppCommon/PerftestPrinter.cxx) does with the
//! same figures: the same calls in the same order, each line printed with
//! Perftest's own C format through `snprintf`. The figures the reference
//! prints are worked out here from the intervals, independently of the
//! printer's running totals. `-outputFile` appends, as Perftest's `fopen(..,
//! "a")`.

use super::*;
use crate::c;
use crate::perftest::formats::of_all_processors;
use pubsubperf_core::result::Interval;
use std::cell::RefCell;
use std::ffi::{c_double, c_int, c_ulong, c_ulonglong};
use std::rc::Rc;

/// A writer the test reads back.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Perftest's printer, as its C++ does it, with its C formats.
struct Reference {
    format: Format,
    nano: bool,
    headers: bool,
    intervals: bool,
    cpu: bool,
    out: String,
    summary_headers: bool,
    json_initialized: bool,
    json_first_interval: bool,
    length: usize,
}

fn us_whole(ns: u64) -> c_ulong {
    (ns / 1000) as c_ulong
}

impl Reference {
    fn new(style: Style) -> Reference {
        Reference {
            format: style.format,
            nano: style.clock == Clock::Nano,
            headers: style.headers,
            intervals: style.intervals,
            cpu: style.cpu,
            out: String::new(),
            summary_headers: true,
            json_initialized: false,
            json_first_interval: false,
            length: 0,
        }
    }

    fn initial(&mut self) {
        if self.format == Format::Json {
            self.out += "{\"perftest\":\n\t[\n\t\t{\n";
        }
    }

    fn last(&mut self) {
        if self.format == Format::Json {
            self.out += "\n\t]\n}\n";
        }
    }

    fn cpu_csv(&mut self, cpu: f64) {
        if self.cpu {
            self.out += &c!(",%8.2f", cpu);
        }
    }

    fn cpu_legacy(&mut self, cpu: f64) {
        if self.cpu {
            self.out += &c!(" CPU %1.2f (%%)", cpu);
        }
    }

    fn cpu_json(&mut self, cpu: f64, interval: bool) {
        if self.cpu {
            self.out += &if interval {
                c!(",\n\t\t\t\t\t\"CPU\": %1.2f", cpu)
            } else {
                c!(",\n\t\t\t\t\"CPU\": %1.2f", cpu)
            };
        }
    }

    fn header(&mut self, latency: bool) {
        let n = self.length as c_int;
        match self.format {
            Format::Csv => {
                if self.headers && self.intervals {
                    if latency {
                        self.out += &c!("\nIntervals One-Way Latency for %d Bytes:\n", n);
                        self.out +=
                            "Length (Bytes), Latency (μs), Ave (μs), Std (μs), Min (μs), Max (μs)";
                    } else {
                        self.out += &c!("\nInterval Throughput for %d Bytes:\n", n);
                        self.out += "Length (Bytes), Total Samples,  Samples/s, Avg Samples/s,     Mbps,  Avg Mbps, Lost Samples, Lost Samples (%)";
                    }
                    if self.cpu {
                        self.out += ", CPU (%)";
                    }
                    self.out += "\n";
                }
            }
            Format::Legacy => {
                if self.headers && self.intervals {
                    self.out += &c!("\n\n********** New data length is %d\n", n);
                }
            }
            Format::Json => {
                if self.json_initialized {
                    self.out += ",\n\t\t{\n";
                } else {
                    self.json_initialized = true;
                }
                self.out += &c!("\t\t\t\"length\":%d,\n", n);
                if self.intervals {
                    self.out += "\t\t\t\"intervals\":[\n";
                    self.json_first_interval = true;
                }
            }
        }
    }

    fn latency_interval(&mut self, l: &formats::LatencyLine) {
        let n = self.length as c_int;
        let (lat, min, max) = (l.latency_ns, l.min_ns, l.max_ns);
        let (ave, std) = (l.ave_ns / 1000.0, l.std_ns / 1000.0);
        let f = |ns: u64| ns as c_double / 1000.0;
        match self.format {
            Format::Csv => {
                self.out += &if self.nano {
                    c!(
                        "%14d,%13.3f,%9.3f,%9.3f,%9.3f,%9.3f",
                        n,
                        f(lat),
                        ave,
                        std,
                        f(min),
                        f(max)
                    )
                } else {
                    c!(
                        "%14d,%13lu,%9.0lf,%9.1lf,%9lu,%9lu",
                        n,
                        us_whole(lat),
                        ave,
                        std,
                        us_whole(min),
                        us_whole(max)
                    )
                };
                self.cpu_csv(l.cpu);
                self.out += "\n";
            }
            Format::Legacy => {
                self.out += &if self.nano {
                    c!(
                        "One-Way Latency: %9.3f μs Ave %9.3f μs Std %9.3f μs Min %9.3f μs Max %9.3f μs",
                        f(lat),
                        ave,
                        std,
                        f(min),
                        f(max)
                    )
                } else {
                    c!(
                        "One-Way Latency: %6lu μs Ave %6.0lf μs Std %6.1lf μs Min %6lu μs Max %6lu μs",
                        us_whole(lat),
                        ave,
                        std,
                        us_whole(min),
                        us_whole(max)
                    )
                };
                self.cpu_legacy(l.cpu);
                self.out += "\n";
            }
            Format::Json => {
                if self.json_first_interval {
                    self.json_first_interval = false;
                } else {
                    self.out += ",";
                }
                self.out += &if self.nano {
                    c!(
                        "\n\t\t\t\t{\n\t\t\t\t\t\"latency\": %.3f,\n\t\t\t\t\t\"latency_ave\": %.3f,\n\t\t\t\t\t\"latency_std\": %.3f,\n\t\t\t\t\t\"latency_min\": %.3f,\n\t\t\t\t\t\"latency_max\": %.3f",
                        f(lat),
                        ave,
                        std,
                        f(min),
                        f(max)
                    )
                } else {
                    c!(
                        "\n\t\t\t\t{\n\t\t\t\t\t\"latency\": %lu,\n\t\t\t\t\t\"latency_ave\": %1.2lf,\n\t\t\t\t\t\"latency_std\": %1.2lf,\n\t\t\t\t\t\"latency_min\": %lu,\n\t\t\t\t\t\"latency_max\": %lu",
                        us_whole(lat),
                        ave,
                        std,
                        us_whole(min),
                        us_whole(max)
                    )
                };
                self.cpu_json(l.cpu, true);
                self.out += "\n\t\t\t\t}";
            }
        }
    }

    fn summary_header(&mut self, columns: &str) {
        if self.summary_headers && self.headers {
            if !self.intervals {
                self.summary_headers = false;
            }
            self.out += columns;
            if self.cpu {
                self.out += ", CPU (%)";
            }
            self.out += "\n";
        }
    }

    fn latency_summary(&mut self, s: &formats::LatencySummaryLine) {
        let n = s.length as c_int;
        let (ave, std) = (s.ave_ns / 1000.0, s.std_ns / 1000.0);
        let f = |ns: u64| ns as c_double / 1000.0;
        let w = |ns: u64| us_whole(ns);
        let p = s.percentiles_ns;
        match self.format {
            Format::Csv => {
                let title = if self.intervals && self.headers && self.summary_headers {
                    "\nOne-way Latency Summary:\n"
                } else {
                    ""
                };
                self.out += title;
                self.summary_header("Sample Size (Bytes), Ave (μs), Std (μs), Min (μs), Max (μs), 50% (μs), 90% (μs), 99% (μs), 99.99% (μs), 99.9999% (μs)");
                self.out += &if self.nano {
                    c!(
                        "%19d,%9.3f,%9.3f,%9.3f,%9.3f,%9.3f,%9.3f,%9.3f,%12.3f,%14.3f",
                        n,
                        ave,
                        std,
                        f(s.min_ns),
                        f(s.max_ns),
                        f(p[0]),
                        f(p[1]),
                        f(p[2]),
                        f(p[3]),
                        f(p[4])
                    )
                } else {
                    c!(
                        "%19d,%9.0lf,%9.1lf,%9lu,%9lu,%9lu,%9lu,%9lu,%12lu,%14lu",
                        n,
                        ave,
                        std,
                        w(s.min_ns),
                        w(s.max_ns),
                        w(p[0]),
                        w(p[1]),
                        w(p[2]),
                        w(p[3]),
                        w(p[4])
                    )
                };
                self.cpu_csv(s.cpu);
                self.out += "\n";
            }
            Format::Legacy => {
                self.out += &if self.nano {
                    c!(
                        "Length: %5d Latency: Ave %9.3f μs Std %9.3f μs Min %9.3f μs Max %9.3f μs 50%% %9.3f μs 90%% %9.3f μs 99%% %9.3f μs 99.99%% %9.3f μs 99.9999%% %9.3f μs",
                        n,
                        ave,
                        std,
                        f(s.min_ns),
                        f(s.max_ns),
                        f(p[0]),
                        f(p[1]),
                        f(p[2]),
                        f(p[3]),
                        f(p[4])
                    )
                } else {
                    c!(
                        "Length: %5d Latency: Ave %6.0lf μs Std %6.1lf μs Min %6lu μs Max %6lu μs 50%% %6lu μs 90%% %6lu μs 99%% %6lu μs 99.99%% %6lu μs 99.9999%% %6lu μs",
                        n,
                        ave,
                        std,
                        w(s.min_ns),
                        w(s.max_ns),
                        w(p[0]),
                        w(p[1]),
                        w(p[2]),
                        w(p[3]),
                        w(p[4])
                    )
                };
                self.cpu_legacy(s.cpu);
                self.out += "\n";
            }
            Format::Json => {
                if self.intervals {
                    self.out += "\n\t\t\t],\n";
                }
                self.out += &if self.nano {
                    c!(
                        "\t\t\t\"summary\":{\n\t\t\t\t\"latency_ave\": %.3f,\n\t\t\t\t\"latency_std\": %.3f,\n\t\t\t\t\"latency_min\": %.3f,\n\t\t\t\t\"latency_max\": %.3f,\n\t\t\t\t\"latency_50\": %.3f,\n\t\t\t\t\"latency_90\": %.3f,\n\t\t\t\t\"latency_99\": %.3f,\n\t\t\t\t\"latency_99.99\": %.3f,\n\t\t\t\t\"latency_99.9999\": %.3f",
                        ave,
                        std,
                        f(s.min_ns),
                        f(s.max_ns),
                        f(p[0]),
                        f(p[1]),
                        f(p[2]),
                        f(p[3]),
                        f(p[4])
                    )
                } else {
                    c!(
                        "\t\t\t\"summary\":{\n\t\t\t\t\"latency_ave\": %1.2lf,\n\t\t\t\t\"latency_std\": %1.2lf,\n\t\t\t\t\"latency_min\": %lu,\n\t\t\t\t\"latency_max\": %lu,\n\t\t\t\t\"latency_50\": %lu,\n\t\t\t\t\"latency_90\": %lu,\n\t\t\t\t\"latency_99\": %lu,\n\t\t\t\t\"latency_99.99\": %lu,\n\t\t\t\t\"latency_99.9999\": %lu",
                        ave,
                        std,
                        w(s.min_ns),
                        w(s.max_ns),
                        w(p[0]),
                        w(p[1]),
                        w(p[2]),
                        w(p[3]),
                        w(p[4])
                    )
                };
                self.cpu_json(s.cpu, false);
                self.out += "\n\t\t\t}\n\t\t}";
            }
        }
    }

    fn throughput_interval(&mut self, t: &formats::ThroughputLine) {
        let n = self.length as c_int;
        let mbps = |b: f64| b * 8.0 / 1000.0 / 1000.0;
        let args = (
            t.total as c_ulonglong,
            t.per_s as c_ulonglong,
            t.per_s_ave,
            mbps(t.bytes_per_s as f64),
            mbps(t.bytes_per_s_ave),
            t.lost as c_ulonglong,
            f64::from(t.lost_percent),
        );
        match self.format {
            Format::Csv => {
                self.out += &c!(
                    "%14d,%14llu,%11llu,%14.0lf,%9.1lf,%10.1lf, %12llu, %16.2lf",
                    n,
                    args.0,
                    args.1,
                    args.2,
                    args.3,
                    args.4,
                    args.5,
                    args.6
                );
                self.cpu_csv(t.cpu);
                self.out += "\n";
            }
            Format::Legacy => {
                self.out += &c!(
                    "Packets: %8llu  Packets/s: %7llu  Packets/s(ave): %7.0lf  Mbps: %7.1lf  Mbps(ave): %7.1lf  Lost: %5llu (%1.2f%%)",
                    args.0,
                    args.1,
                    args.2,
                    args.3,
                    args.4,
                    args.5,
                    args.6
                );
                self.cpu_legacy(t.cpu);
                self.out += "\n";
            }
            Format::Json => {
                if self.json_first_interval {
                    self.json_first_interval = false;
                } else {
                    self.out += ",";
                }
                self.out += &c!(
                    "\n\t\t\t\t{\n\t\t\t\t\t\"length\": %d,\n\t\t\t\t\t\"packets\": %llu,\n\t\t\t\t\t\"packets/s\": %llu,\n\t\t\t\t\t\"packets/s_ave\": %1.2lf,\n\t\t\t\t\t\"mbps\": %1.1lf,\n\t\t\t\t\t\"mbps_ave\": %1.1lf,\n\t\t\t\t\t\"lost\": %llu,\n\t\t\t\t\t\"lost_percent\": %1.2lf",
                    n,
                    args.0,
                    args.1,
                    args.2,
                    args.3,
                    args.4,
                    args.5,
                    args.6
                );
                self.cpu_json(t.cpu, true);
                self.out += "\n\t\t\t\t}";
            }
        }
    }

    fn throughput_summary(&mut self, s: &formats::ThroughputSummaryLine) {
        let n = s.length as c_int;
        let per_s = (s.packets * 1_000_000 / s.time_us) as c_ulonglong;
        let mbps = s.bytes as f64 * 1_000_000.0 / s.time_us as f64 * 8.0 / 1000.0 / 1000.0;
        let (packets, lost, pct) = (
            s.packets as c_ulonglong,
            s.lost as c_ulonglong,
            f64::from(s.lost_percent),
        );
        match self.format {
            Format::Csv => {
                if self.intervals && self.headers && self.summary_headers {
                    self.out += "\nThroughput Summary:\n";
                }
                self.summary_header("Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, Lost Samples, Lost Samples (%)");
                self.out += &c!(
                    "%19d,%14llu,%14.0llu,%12.1lf, %12llu, %16.2lf",
                    n,
                    packets,
                    per_s,
                    mbps,
                    lost,
                    pct
                );
                self.cpu_csv(s.cpu);
                self.out += "\n";
            }
            Format::Legacy => {
                self.out += &c!(
                    "Length: %5d  Packets: %8llu  Packets/s(ave): %7llu  Mbps(ave): %7.1lf  Lost: %5llu (%1.2f%%)",
                    n,
                    packets,
                    per_s,
                    mbps,
                    lost,
                    pct
                );
                self.cpu_legacy(s.cpu);
                self.out += "\n";
            }
            Format::Json => {
                if self.intervals {
                    self.out += "\t\t\t],\n";
                }
                self.out += &c!(
                    "\t\t\t\"summary\":{\n\t\t\t\t\"packets\": %llu,\n\t\t\t\t\"packets/sAve\": %llu,\n\t\t\t\t\"mbpsAve\": %1.1lf,\n\t\t\t\t\"lost\": %llu,\n\t\t\t\t\"lostPercent\": %1.2lf",
                    packets,
                    per_s,
                    mbps,
                    lost,
                    pct
                );
                self.cpu_json(s.cpu, false);
                self.out += "\n\t\t\t}\n\t\t}";
            }
        }
    }
}

/// A publisher's latency interval.
fn ping_interval(received: u64, mean: f64, std: f64, min: u64, max: u64, last: u64) -> Interval {
    Interval {
        received,
        latency_mean_ns: Some(mean),
        latency_std_ns: Some(std),
        latency_min_ns: Some(min),
        latency_max_ns: Some(max),
        latency_last_ns: Some(last),
        cpu_percent: 37.5,
        ..Interval::default()
    }
}

/// Two sizes' latency intervals (figures with halves that round to even
/// and whole-microsecond edges).
fn latency_runs() -> Vec<(usize, Vec<Interval>, LatencySummary)> {
    let summary = |mean: f64, std: f64, min: u64, max: u64| LatencySummary {
        count: 3000,
        mean,
        std,
        min,
        max,
        p50: 34_500,
        p90: 39_999,
        p99: 120_000,
        p99_9: 2_000_000,
        p99_99: 2_500_500,
        p99_9999: max,
        histogram: String::new(),
        sum: String::new(),
        sum_sq: String::new(),
    };
    vec![
        (
            64,
            vec![
                ping_interval(1000, 35_500.0, 8_250.0, 21_002, 2_500_500, 33_999),
                ping_interval(2000, 34_250.0, 6_000.0, 20_999, 1_000_000, 40_001),
            ],
            summary(34_666.7, 6_912.3, 20_999, 2_500_500),
        ),
        (
            1024,
            vec![ping_interval(1, 2_500.0, 0.0, 2_500, 2_500, 2_500)],
            summary(2_500.0, 0.0, 2_500, 2_500),
        ),
    ]
}

/// A subscriber's throughput interval.
fn rx_interval(t_s: f64, received: u64, lost: u64, per_s: f64) -> Interval {
    Interval {
        t_s,
        received,
        lost,
        samples_per_s: per_s,
        cpu_percent: 12.25,
        ..Interval::default()
    }
}

fn throughput_runs() -> Vec<(usize, Vec<Interval>, Throughput)> {
    vec![
        (
            1024,
            vec![
                rx_interval(1.0, 372_586, 0, 372_586.7),
                rx_interval(2.0, 380_001, 13, 380_001.2),
                rx_interval(3.0, 1, 4, 1.0),
            ],
            Throughput {
                received: 752_588,
                lost: 17,
                samples_per_s: 250_862.6,
                ..Throughput::default()
            },
        ),
        (
            63_000,
            vec![rx_interval(1.0, 0, 0, 0.0), rx_interval(2.0, 5, 1, 5.0)],
            Throughput {
                received: 5,
                lost: 1,
                samples_per_s: 2.5,
                ..Throughput::default()
            },
        ),
    ]
}

/// What Perftest's publisher prints of `latency_runs`, worked out here.
fn reference_latency(style: Style) -> String {
    let mut r = Reference::new(style);
    let cpu = of_all_processors(37.5);
    r.initial();
    for (size, intervals, summary) in latency_runs() {
        r.length = size;
        r.header(true);
        let (mut n, mut sum, mut sum_sq, mut min, mut max) = (0f64, 0f64, 0f64, u64::MAX, 0);
        for i in &intervals {
            let (k, m, s) = (
                i.received as f64,
                i.latency_mean_ns.unwrap(),
                i.latency_std_ns.unwrap(),
            );
            n += k;
            sum += m * k;
            sum_sq += k * (s * s + m * m);
            min = min.min(i.latency_min_ns.unwrap());
            max = max.max(i.latency_max_ns.unwrap());
            let ave = sum / n;
            if r.intervals {
                r.latency_interval(&formats::LatencyLine {
                    latency_ns: i.latency_last_ns.unwrap(),
                    ave_ns: ave,
                    std_ns: (sum_sq / n - ave * ave).max(0.0).sqrt(),
                    min_ns: min,
                    max_ns: max,
                    cpu,
                });
            }
        }
        r.latency_summary(&formats::LatencySummaryLine {
            length: size,
            ave_ns: summary.mean,
            std_ns: summary.std,
            min_ns: summary.min,
            max_ns: summary.max,
            percentiles_ns: [
                summary.p50,
                summary.p90,
                summary.p99,
                summary.p99_99,
                summary.p99_9999,
            ],
            cpu,
        });
    }
    r.last();
    r.out
}

/// What Perftest's subscriber prints of `throughput_runs`, worked out here.
fn reference_throughput(style: Style) -> String {
    let mut r = Reference::new(style);
    let cpu = of_all_processors(12.25);
    r.initial();
    for (size, intervals, t) in throughput_runs() {
        r.length = size;
        r.header(false);
        let (mut total, mut lost) = (0u64, 0u64);
        let (mut rates, mut byte_rates) = (Vec::new(), Vec::new());
        for i in &intervals {
            total += i.received;
            lost += i.lost;
            let per_s = i.samples_per_s as u64;
            let bytes_per_s = (i.samples_per_s * size as f64) as u64;
            rates.push(per_s as f64);
            byte_rates.push(bytes_per_s as f64);
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            // Perftest prints no line while nothing came.
            if r.intervals && total > 0 {
                r.throughput_interval(&formats::ThroughputLine {
                    length: size,
                    total,
                    per_s,
                    per_s_ave: mean(&rates),
                    bytes_per_s,
                    bytes_per_s_ave: mean(&byte_rates),
                    lost,
                    lost_percent: lost_percent(total, lost),
                    cpu,
                });
            }
        }
        let time_us = (t.received as f64 / t.samples_per_s * 1e6).round() as u64;
        r.throughput_summary(&formats::ThroughputSummaryLine {
            length: size,
            packets: t.received,
            time_us,
            bytes: t.received * size as u64,
            lost: t.lost,
            lost_percent: lost_percent(t.received, t.lost),
            cpu,
        });
    }
    r.last();
    r.out
}

/// Every style: format × build × `-noPrint` × `-noOutputHeaders` × `-cpu`.
fn styles() -> Vec<Style> {
    let mut v = Vec::new();
    for format in [Format::Csv, Format::Json, Format::Legacy] {
        for clock in [Clock::Micro, Clock::Nano] {
            for bits in 0..8 {
                v.push(Style {
                    format,
                    clock,
                    intervals: bits & 1 == 0,
                    headers: bits & 2 == 0,
                    cpu: bits & 4 != 0,
                });
            }
        }
    }
    v
}

fn ours_latency(style: Style, out: Box<dyn Write>) {
    let mut p = Printer::new(style, out);
    for (size, intervals, summary) in latency_runs() {
        for i in &intervals {
            p.latency_interval(size, i).unwrap();
        }
        p.latency_summary(size, &summary, 37.5).unwrap();
    }
    p.finish().unwrap();
}

fn ours_throughput(style: Style, out: Box<dyn Write>) {
    let mut p = Printer::new(style, out);
    for (size, intervals, t) in throughput_runs() {
        for i in &intervals {
            p.throughput_interval(size, i).unwrap();
        }
        p.throughput_result(size, &t, 12.25).unwrap();
    }
    p.finish().unwrap();
}

#[test]
fn the_publishers_latency_lines_are_perftests_in_every_style() {
    for style in styles() {
        let out = Shared::default();
        ours_latency(style, Box::new(out.clone()));
        let ours = String::from_utf8(out.0.take()).unwrap();
        assert_eq!(ours, reference_latency(style), "{style:?}");
    }
}

#[test]
fn the_subscribers_throughput_lines_are_perftests_in_every_style() {
    for style in styles() {
        let out = Shared::default();
        ours_throughput(style, Box::new(out.clone()));
        let ours = String::from_utf8(out.0.take()).unwrap();
        assert_eq!(ours, reference_throughput(style), "{style:?}");
    }
}

/// `-outputFile`: appended to, as Perftest opens it (`"a"`); two runs'
/// outputs follow each other whole.
#[test]
fn output_file_is_appended_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.csv");
    let style = styles()[0];
    for _ in 0..2 {
        ours_latency(style, super::super::output(Some(&path)).unwrap());
    }
    let once = reference_latency(style);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), once.repeat(2));
}

/// `-outputFile` at a symbolic link (one a stranger planted at a
/// predictable name): refused, naming the option; its target untouched.
#[test]
fn an_output_file_that_is_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let link = dir.path().join("out.csv");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let e = super::super::output(Some(&link)).err().expect("refused");
    assert!(
        e.0.starts_with(&format!("-outputFile {}: a symbolic link", link.display())),
        "{}",
        e.0
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}
