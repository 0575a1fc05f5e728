//! Perftest's output formats (`-outputFormat csv|json|legacy`) from our
//! measured results, so that parsers of Perftest's output read ours. Times
//! are microseconds with three decimals (Perftest's nanosecond-clock
//! build). What we do not measure is printed as `nan` (JSON `null`), never
//! made up: the latency intervals' minimum and standard deviation (our
//! intervals keep a mean and a maximum). docs/perftest.md says what each
//! column is here.

use super::options::Format;
use pubsubperf_core::result::{Interval, Run, TestKind, Throughput};
use pubsubperf_core::stats::LatencySummary;
use serde_json::{Map, Value, json};
use std::io::Write;

/// One interval line's figures, cumulative ones included.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Row {
    pub length: usize,
    // Throughput.
    pub total: u64,
    pub per_s: f64,
    pub per_s_ave: f64,
    pub mbps: f64,
    pub mbps_ave: f64,
    pub lost: u64,
    pub lost_percent: f64,
    // Latency (µs).
    pub latency: f64,
    pub latency_ave: f64,
    pub latency_max: f64,
    pub cpu: f64,
}

/// Running totals over one subscriber's intervals of a run (a Perftest
/// subscriber prints its own).
#[derive(Debug, Default)]
pub struct Acc {
    size: usize,
    subscriber: usize,
    t_s: f64,
    received: u64,
    lost: u64,
    pings: u64,
    latency_sum_ns: f64,
    latency_max_ns: u64,
}

impl Acc {
    /// Totals of `subscriber`'s intervals of a run of `size`-byte samples.
    pub fn new(size: usize, subscriber: usize) -> Acc {
        Acc {
            size,
            subscriber,
            ..Default::default()
        }
    }

    /// The row of the next interval; None for other subscribers'.
    pub fn push(&mut self, i: &Interval) -> Option<Row> {
        if i.subscriber != self.subscriber {
            return None;
        }
        self.t_s = i.t_s;
        self.received += i.received;
        self.lost += i.lost;
        let mut row = Row {
            length: self.size,
            total: self.received,
            per_s: i.samples_per_s,
            mbps: i.mbps,
            lost: self.lost,
            cpu: i.cpu_percent,
            ..Default::default()
        };
        if self.t_s > 0.0 {
            row.per_s_ave = self.received as f64 / self.t_s;
            row.mbps_ave = (self.received * self.size as u64) as f64 * 8.0 / self.t_s / 1e6;
        }
        let seen = self.received + self.lost;
        if seen > 0 {
            row.lost_percent = self.lost as f64 * 100.0 / seen as f64;
        }
        if let Some(mean) = i.latency_mean_ns {
            self.pings += i.received;
            self.latency_sum_ns += mean * i.received as f64;
            row.latency = mean / 1e3;
        }
        if let Some(max) = i.latency_max_ns {
            self.latency_max_ns = self.latency_max_ns.max(max);
        }
        if self.pings > 0 {
            row.latency_ave = self.latency_sum_ns / self.pings as f64 / 1e3;
        }
        row.latency_max = self.latency_max_ns as f64 / 1e3;
        Some(row)
    }
}

/// What a run's summary lines are printed from: a whole run (`-pub`), or
/// one subscriber's part of it (`-sub`).
pub struct Summary<'a> {
    pub test: TestKind,
    pub size: usize,
    /// Whose intervals are printed.
    pub subscriber: usize,
    pub intervals: &'a [Interval],
    pub throughput: Option<&'a Throughput>,
    pub latency: Option<&'a LatencySummary>,
    /// CPU % of the publisher (latency lines) and of the subscriber
    /// (throughput lines).
    pub publisher_cpu: f64,
    pub subscriber_cpu: f64,
}

impl<'a> From<&'a Run> for Summary<'a> {
    fn from(run: &'a Run) -> Summary<'a> {
        Summary {
            test: run.test,
            size: run.size,
            subscriber: 0,
            intervals: &run.intervals,
            throughput: run.throughput.as_ref(),
            latency: run.latency_ns.as_ref(),
            publisher_cpu: run.resources.publisher.cpu_percent,
            subscriber_cpu: run.resources.subscriber.cpu_percent,
        }
    }
}

/// Writes one format: interval lines as they come, a summary per run.
pub struct Printer {
    format: Format,
    headers: bool,
    intervals: bool,
    cpu: bool,
    out: Box<dyn Write>,
    /// The summary header of CSV without intervals is printed once.
    summary_header_done: bool,
    /// (test, size) of the run whose intervals are being printed.
    current: Option<(TestKind, usize)>,
    acc: Acc,
    /// Whose intervals are printed (0 unless [`Printer::follow`]).
    subscriber: usize,
    json_runs: Vec<Value>,
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

impl Printer {
    pub fn new(
        format: Format,
        headers: bool,
        intervals: bool,
        cpu: bool,
        out: Box<dyn Write>,
    ) -> Printer {
        Printer {
            format,
            headers,
            intervals,
            cpu,
            out,
            summary_header_done: false,
            current: None,
            acc: Acc::default(),
            subscriber: 0,
            json_runs: Vec::new(),
        }
    }

    /// Prints the intervals of `subscriber` from now on (a `-sub` prints
    /// its own, whatever its index in the run).
    pub fn follow(&mut self, subscriber: usize) {
        self.subscriber = subscriber;
    }

    fn cpu_csv(&self, v: f64) -> String {
        if self.cpu {
            format!(",{v:8.2}")
        } else {
            String::new()
        }
    }

    fn cpu_legacy(&self, v: f64) -> String {
        if self.cpu {
            format!(" CPU {v:.2} (%)")
        } else {
            String::new()
        }
    }

    fn cpu_header(&self) -> &'static str {
        if self.cpu { ", CPU (%)" } else { "" }
    }

    /// The header before a run's first interval (or its summary).
    fn begin(&mut self, test: TestKind, size: usize) -> std::io::Result<()> {
        if self.current == Some((test, size)) {
            return Ok(());
        }
        self.current = Some((test, size));
        self.acc = Acc::new(size, self.subscriber);
        if !(self.headers && self.intervals) {
            return Ok(());
        }
        match (self.format, test) {
            (Format::Csv, TestKind::Latency) => write!(
                self.out,
                "\nIntervals One-Way Latency for {size} Bytes:\nLength (Bytes), Latency (μs), Ave (μs), Std (μs), Min (μs), Max (μs){}\n",
                self.cpu_header()
            ),
            (Format::Csv, TestKind::Throughput) => write!(
                self.out,
                "\nInterval Throughput for {size} Bytes:\nLength (Bytes), Total Samples,  Samples/s, Avg Samples/s,     Mbps,  Avg Mbps, Lost Samples, Lost Samples (%){}\n",
                self.cpu_header()
            ),
            (Format::Legacy, _) => write!(self.out, "\n\n********** New data length is {size}\n"),
            (Format::Json, _) => Ok(()),
        }
    }

    /// One interval, as it is measured.
    pub fn interval(&mut self, test: TestKind, size: usize, i: &Interval) -> std::io::Result<()> {
        if !self.intervals || self.format == Format::Json {
            return Ok(());
        }
        self.begin(test, size)?;
        let Some(r) = self.acc.push(i) else {
            return Ok(());
        };
        let line = match (self.format, test) {
            (Format::Csv, TestKind::Latency) => format!(
                "{:14},{:13.3},{:9.3},{:>9},{:>9},{:9.3}{}",
                r.length,
                r.latency,
                r.latency_ave,
                "nan",
                "nan",
                r.latency_max,
                self.cpu_csv(r.cpu)
            ),
            (Format::Csv, TestKind::Throughput) => format!(
                "{:14},{:14},{:11.0},{:14.0},{:9.1},{:10.1}, {:12}, {:16.2}{}",
                r.length,
                r.total,
                r.per_s,
                r.per_s_ave,
                r.mbps,
                r.mbps_ave,
                r.lost,
                r.lost_percent,
                self.cpu_csv(r.cpu)
            ),
            (Format::Legacy, TestKind::Latency) => format!(
                "One-Way Latency: {:9.3} μs Ave {:9.3} μs Std {:>9} μs Min {:>9} μs Max {:9.3} μs{}",
                r.latency,
                r.latency_ave,
                "nan",
                "nan",
                r.latency_max,
                self.cpu_legacy(r.cpu)
            ),
            (Format::Legacy, TestKind::Throughput) => format!(
                "Packets: {:8}  Packets/s: {:7.0}  Packets/s(ave): {:7.0}  Mbps: {:7.1}  Mbps(ave): {:7.1}  Lost: {:5} ({:.2}%){}",
                r.total,
                r.per_s,
                r.per_s_ave,
                r.mbps,
                r.mbps_ave,
                r.lost,
                r.lost_percent,
                self.cpu_legacy(r.cpu)
            ),
            (Format::Json, _) => return Ok(()),
        };
        writeln!(self.out, "{line}")
    }

    /// A finished run's summary lines (throughput, then latency when
    /// measured).
    pub fn run(&mut self, run: &Run) -> std::io::Result<()> {
        self.summary(&Summary::from(run))
    }

    /// The summary lines of `run` (throughput, then latency when measured).
    pub fn summary(&mut self, run: &Summary) -> std::io::Result<()> {
        if self.format == Format::Json {
            self.json_runs.push(json_run(run, self.intervals, self.cpu));
            return Ok(());
        }
        self.begin(run.test, run.size)?;
        if let Some(t) = run.throughput {
            let cpu = run.subscriber_cpu;
            if self.format == Format::Csv {
                self.summary_header("\nThroughput Summary:\n", "Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, Lost Samples, Lost Samples (%)")?;
                writeln!(
                    self.out,
                    "{:19},{:14},{:14.0},{:12.1}, {:12}, {:16.2}{}",
                    run.size,
                    t.received,
                    t.samples_per_s,
                    t.mbps,
                    t.lost,
                    t.lost_percent,
                    self.cpu_csv(cpu)
                )?;
            } else {
                writeln!(
                    self.out,
                    "Length: {:5}  Packets: {:8}  Packets/s(ave): {:7.0}  Mbps(ave): {:7.1}  Lost: {:5} ({:.2}%){}",
                    run.size,
                    t.received,
                    t.samples_per_s,
                    t.mbps,
                    t.lost,
                    t.lost_percent,
                    self.cpu_legacy(cpu)
                )?;
            }
        }
        if let Some(l) = run.latency {
            let cpu = run.publisher_cpu;
            if self.format == Format::Csv {
                self.summary_header("\nOne-way Latency Summary:\n", "Sample Size (Bytes), Ave (μs), Std (μs), Min (μs), Max (μs), 50% (μs), 90% (μs), 99% (μs), 99.99% (μs), 99.9999% (μs)")?;
                writeln!(
                    self.out,
                    "{:19},{:9.3},{:9.3},{:9.3},{:9.3},{:9.3},{:9.3},{:9.3},{:12.3},{:14.3}{}",
                    run.size,
                    l.mean / 1e3,
                    l.std / 1e3,
                    us(l.min),
                    us(l.max),
                    us(l.p50),
                    us(l.p90),
                    us(l.p99),
                    us(l.p99_99),
                    us(l.p99_9999),
                    self.cpu_csv(cpu)
                )?;
            } else {
                writeln!(
                    self.out,
                    "Length: {:5} Latency: Ave {:9.3} μs Std {:9.3} μs Min {:9.3} μs Max {:9.3} μs 50% {:9.3} μs 90% {:9.3} μs 99% {:9.3} μs 99.99% {:9.3} μs 99.9999% {:9.3} μs{}",
                    run.size,
                    l.mean / 1e3,
                    l.std / 1e3,
                    us(l.min),
                    us(l.max),
                    us(l.p50),
                    us(l.p90),
                    us(l.p99),
                    us(l.p99_99),
                    us(l.p99_9999),
                    self.cpu_legacy(cpu)
                )?;
            }
        }
        self.current = None;
        self.out.flush()
    }

    /// A CSV summary's header: with intervals, a title and the columns
    /// before each summary; without, the columns once.
    fn summary_header(&mut self, title: &str, columns: &str) -> std::io::Result<()> {
        if !self.headers || (!self.intervals && self.summary_header_done) {
            return Ok(());
        }
        self.summary_header_done = true;
        if self.intervals {
            write!(self.out, "{title}")?;
        }
        writeln!(self.out, "{columns}{}", self.cpu_header())
    }

    /// The end of the output (JSON is written whole here).
    pub fn finish(&mut self) -> std::io::Result<()> {
        if self.format == Format::Json {
            let doc = json!({ "perftest": self.json_runs });
            writeln!(
                self.out,
                "{}",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            )?;
        }
        self.out.flush()
    }
}

/// A number for JSON (NaN is not JSON: null).
fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn json_run(run: &Summary, intervals: bool, cpu: bool) -> Value {
    let mut o = Map::new();
    o.insert("length".into(), json!(run.size));
    if intervals {
        let mut acc = Acc::new(run.size, run.subscriber);
        let rows: Vec<Value> = run
            .intervals
            .iter()
            .filter_map(|i| acc.push(i))
            .map(|r| json_interval(run.test, &r, cpu))
            .collect();
        o.insert("intervals".into(), Value::Array(rows));
    }
    let mut s = Map::new();
    if let Some(t) = run.throughput {
        s.insert("packets".into(), json!(t.received));
        s.insert("packets/sAve".into(), num(t.samples_per_s));
        s.insert("mbpsAve".into(), num(t.mbps));
        s.insert("lost".into(), json!(t.lost));
        s.insert("lostPercent".into(), num(t.lost_percent));
    }
    if let Some(l) = run.latency {
        s.insert("latency_ave".into(), num(l.mean / 1e3));
        s.insert("latency_std".into(), num(l.std / 1e3));
        s.insert("latency_min".into(), num(us(l.min)));
        s.insert("latency_max".into(), num(us(l.max)));
        s.insert("latency_50".into(), num(us(l.p50)));
        s.insert("latency_90".into(), num(us(l.p90)));
        s.insert("latency_99".into(), num(us(l.p99)));
        s.insert("latency_99.99".into(), num(us(l.p99_99)));
        s.insert("latency_99.9999".into(), num(us(l.p99_9999)));
    }
    if cpu {
        let c = match run.test {
            TestKind::Latency => run.publisher_cpu,
            TestKind::Throughput => run.subscriber_cpu,
        };
        s.insert("CPU".into(), num(c));
    }
    o.insert("summary".into(), Value::Object(s));
    Value::Object(o)
}

fn json_interval(test: TestKind, r: &Row, cpu: bool) -> Value {
    let mut o = Map::new();
    match test {
        TestKind::Latency => {
            o.insert("latency".into(), num(r.latency));
            o.insert("latency_ave".into(), num(r.latency_ave));
            o.insert("latency_std".into(), Value::Null);
            o.insert("latency_min".into(), Value::Null);
            o.insert("latency_max".into(), num(r.latency_max));
        }
        TestKind::Throughput => {
            o.insert("length".into(), json!(r.length));
            o.insert("packets".into(), json!(r.total));
            o.insert("packets/s".into(), num(r.per_s));
            o.insert("packets/s_ave".into(), num(r.per_s_ave));
            o.insert("mbps".into(), num(r.mbps));
            o.insert("mbps_ave".into(), num(r.mbps_ave));
            o.insert("lost".into(), json!(r.lost));
            o.insert("lost_percent".into(), num(r.lost_percent));
        }
    }
    if cpu {
        o.insert("CPU".into(), num(r.cpu));
    }
    Value::Object(o)
}
