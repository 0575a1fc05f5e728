//! Perftest's output (`-outputFormat csv|json|legacy`) from our measured
//! results, in the order and shape Perftest's printer writes it: for each
//! size a header, the interval lines as they are measured, then the size's
//! summary. The publishing side prints latency lines, the subscribing side
//! throughput lines, as Perftest's sides do. The numbers of each line are
//! written by [`super::formats`] in the formats of the build the user
//! reads ([`Clock`]).
//!
//! Perftest prints a latency line per pong; our publisher measures in
//! report intervals (one a second), so a latency line is one interval: its
//! last round trip's latency (the pong Perftest would print at that
//! moment), then the size's running mean, standard deviation, minimum and
//! maximum over every round trip so far, as Perftest's running figures.
//! A throughput line is one interval, as Perftest's subscriber prints one
//! a second: its rate, the mean of the intervals' rates so far, the loss
//! so far. CPU is this process's CPU time over the wall time, divided by
//! the processors `/proc/cpuinfo` lists, as Perftest's CpuMonitor: over the
//! interval in interval lines, over the run in summaries.

use super::formats::{self, Clock, LatencyLine, ThroughputLine};
use super::options::Format;
use pubsubperf_core::result::{Interval, Run, Throughput};
use pubsubperf_core::stats::LatencySummary;
use std::io::Write;

/// Which of Perftest's tables a block of lines belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lines {
    /// The publisher's one-way latency.
    Latency,
    /// The subscriber's throughput.
    Throughput,
}

/// The running figures of a size's latency lines, from its intervals.
#[derive(Debug, Default)]
struct LatencyAcc {
    count: u64,
    sum_ns: f64,
    sum_sq_ns: f64,
    min_ns: Option<u64>,
    max_ns: u64,
}

impl LatencyAcc {
    /// Adds an interval; its line, or None for an interval without
    /// latency.
    fn push(&mut self, i: &Interval, cpu: f64) -> Option<LatencyLine> {
        let mean = i.latency_mean_ns?;
        let n = i.received as f64;
        let std = i.latency_std_ns.unwrap_or(0.0);
        self.count += i.received;
        self.sum_ns += mean * n;
        self.sum_sq_ns += n * (std * std + mean * mean);
        if let Some(m) = i.latency_min_ns {
            self.min_ns = Some(self.min_ns.map_or(m, |x| x.min(m)));
        }
        self.max_ns = self.max_ns.max(i.latency_max_ns.unwrap_or(0));
        let (ave_ns, std_ns) = self.mean_std();
        Some(LatencyLine {
            latency_ns: i.latency_last_ns.unwrap_or(mean as u64),
            ave_ns,
            std_ns,
            min_ns: self.min_ns.unwrap_or(0),
            max_ns: self.max_ns,
            cpu,
        })
    }

    fn mean_std(&self) -> (f64, f64) {
        if self.count == 0 {
            return (0.0, 0.0);
        }
        let n = self.count as f64;
        let mean = self.sum_ns / n;
        (mean, (self.sum_sq_ns / n - mean * mean).max(0.0).sqrt())
    }
}

/// The running figures of a size's throughput lines, from one
/// subscriber's intervals.
#[derive(Debug, Default)]
pub(crate) struct ThroughputAcc {
    pub(crate) received: u64,
    pub(crate) lost: u64,
    intervals: u64,
    per_s_ave: f64,
    bytes_per_s_ave: f64,
    /// Seconds from the start of the measurement to the last interval.
    pub(crate) t_s: f64,
}

impl ThroughputAcc {
    fn push(&mut self, size: usize, i: &Interval, cpu: f64) -> ThroughputLine {
        self.received += i.received;
        self.lost += i.lost;
        self.t_s = i.t_s;
        let per_s = i.samples_per_s.max(0.0) as u64;
        let bytes_per_s = (i.samples_per_s.max(0.0) * size as f64) as u64;
        // Perftest's running means of the intervals' rates.
        self.intervals += 1;
        let k = self.intervals as f64;
        self.per_s_ave += (per_s as f64 - self.per_s_ave) / k;
        self.bytes_per_s_ave += (bytes_per_s as f64 - self.bytes_per_s_ave) / k;
        ThroughputLine {
            length: size,
            total: self.received,
            per_s,
            per_s_ave: self.per_s_ave,
            bytes_per_s,
            bytes_per_s_ave: self.bytes_per_s_ave,
            lost: self.lost,
            lost_percent: lost_percent(self.received, self.lost),
            cpu,
        }
    }
}

/// Perftest's loss percentage: lost over received and lost, a `float`.
pub(crate) fn lost_percent(received: u64, lost: u64) -> f32 {
    if received + lost == 0 {
        return 0.0;
    }
    ((lost as f64 * 100.0) / f64::from((received + lost) as f32)) as f32
}

/// The size whose lines are being printed, and its running figures.
#[derive(Debug)]
struct Block {
    lines: Lines,
    size: usize,
    latency: LatencyAcc,
    throughput: ThroughputAcc,
}

/// What the JSON document has written so far.
#[derive(Debug, Default)]
struct JsonState {
    /// `{"perftest":` and the first element's brace are out.
    started: bool,
    /// A size's element was opened (the next one needs its comma).
    elements: usize,
    /// The open element's intervals array has no member yet.
    first_interval: bool,
}

/// Writes one format, a size's lines as they come.
pub struct Printer {
    format: Format,
    clock: Clock,
    headers: bool,
    intervals: bool,
    cpu: bool,
    out: Box<dyn Write>,
    /// Without intervals, a CSV summary's columns are printed once per
    /// table (Perftest prints them once).
    summary_header_done: [bool; 2],
    block: Option<Block>,
    /// Whose throughput intervals are printed (0 unless
    /// [`Printer::follow`]).
    subscriber: usize,
    json: JsonState,
}

/// The output options of a Perftest side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Style {
    pub format: Format,
    pub clock: Clock,
    pub headers: bool,
    pub intervals: bool,
    pub cpu: bool,
}

impl Printer {
    pub fn new(style: Style, out: Box<dyn Write>) -> Printer {
        Printer {
            format: style.format,
            clock: style.clock,
            headers: style.headers,
            intervals: style.intervals,
            cpu: style.cpu,
            out,
            summary_header_done: [false; 2],
            block: None,
            subscriber: 0,
            json: JsonState::default(),
        }
    }

    /// Prints the throughput intervals of `subscriber` from now on (a
    /// `-sub` prints its own, whatever its index in the run).
    pub fn follow(&mut self, subscriber: usize) {
        self.subscriber = subscriber;
    }

    fn cpu_of(&self, percent_of_one_core: f64) -> Option<f64> {
        self.cpu
            .then(|| formats::of_all_processors(percent_of_one_core))
    }

    fn cpu_header(&self) -> &'static str {
        if self.cpu { ", CPU (%)" } else { "" }
    }

    /// JSON's opening, once: `{"perftest":` with the first element's brace.
    fn json_start(&mut self) -> std::io::Result<()> {
        if !self.json.started {
            self.json.started = true;
            write!(self.out, "{{\"perftest\":\n\t[\n\t\t{{\n")?;
        }
        Ok(())
    }

    /// The header of a size's `lines`, when they are not the ones being
    /// printed.
    fn begin(&mut self, lines: Lines, size: usize) -> std::io::Result<()> {
        if self
            .block
            .as_ref()
            .is_some_and(|b| b.lines == lines && b.size == size)
        {
            return Ok(());
        }
        self.block = Some(Block {
            lines,
            size,
            latency: LatencyAcc::default(),
            throughput: ThroughputAcc::default(),
        });
        match self.format {
            Format::Json => {
                self.json_start()?;
                if self.json.elements > 0 {
                    write!(self.out, ",\n\t\t{{\n")?;
                }
                self.json.elements += 1;
                writeln!(self.out, "\t\t\t\"length\":{size},")?;
                if self.intervals {
                    writeln!(self.out, "\t\t\t\"intervals\":[")?;
                    self.json.first_interval = true;
                }
                Ok(())
            }
            _ if !(self.headers && self.intervals) => Ok(()),
            Format::Csv => match lines {
                Lines::Latency => write!(
                    self.out,
                    "\nIntervals One-Way Latency for {size} Bytes:\n{}{}\n",
                    formats::CSV_LATENCY_COLUMNS,
                    self.cpu_header()
                ),
                Lines::Throughput => write!(
                    self.out,
                    "\nInterval Throughput for {size} Bytes:\n{}{}\n",
                    formats::CSV_THROUGHPUT_COLUMNS,
                    self.cpu_header()
                ),
            },
            Format::Legacy => write!(self.out, "\n\n********** New data length is {size}\n"),
        }
    }

    /// An interval line's end: its CPU, and JSON's closing brace.
    fn end_interval(&mut self, line: String, cpu: Option<f64>) -> std::io::Result<()> {
        match self.format {
            Format::Csv => writeln!(self.out, "{line}{}", formats::csv_cpu(cpu)),
            Format::Legacy => writeln!(self.out, "{line}{}", formats::legacy_cpu(cpu)),
            Format::Json => {
                if !std::mem::take(&mut self.json.first_interval) {
                    write!(self.out, ",")?;
                }
                write!(self.out, "{line}{}\n\t\t\t\t}}", formats::json_cpu(cpu, 5))
            }
        }
    }

    /// One of the publisher's latency intervals, as it is measured.
    pub fn latency_interval(&mut self, size: usize, i: &Interval) -> std::io::Result<()> {
        self.begin(Lines::Latency, size)?;
        let cpu = self.cpu_of(i.cpu_percent);
        let Some(block) = self.block.as_mut() else {
            return Ok(());
        };
        let Some(l) = block.latency.push(i, cpu.unwrap_or(0.0)) else {
            return Ok(());
        };
        if !self.intervals {
            return Ok(());
        }
        let line = match self.format {
            Format::Csv => formats::csv_latency(self.clock, size, &l),
            Format::Legacy => formats::legacy_latency(self.clock, &l),
            Format::Json => formats::json_latency(self.clock, &l),
        };
        self.end_interval(line, cpu)?;
        self.out.flush()
    }

    /// One of a subscriber's throughput intervals, as it is measured;
    /// other subscribers' than the followed one are left out.
    pub fn throughput_interval(&mut self, size: usize, i: &Interval) -> std::io::Result<()> {
        if i.subscriber != self.subscriber {
            return Ok(());
        }
        self.begin(Lines::Throughput, size)?;
        let cpu = self.cpu_of(i.cpu_percent);
        let Some(block) = self.block.as_mut() else {
            return Ok(());
        };
        let t = block.throughput.push(size, i, cpu.unwrap_or(0.0));
        // Perftest's subscriber prints no line while nothing came.
        if !self.intervals || t.total == 0 {
            return Ok(());
        }
        let line = match self.format {
            Format::Csv => formats::csv_throughput(&t),
            Format::Legacy => formats::legacy_throughput(&t),
            Format::Json => formats::json_throughput(&t),
        };
        self.end_interval(line, cpu)?;
        self.out.flush()
    }

    /// A CSV summary's header: with intervals, a title and the columns
    /// before each summary; without, the columns once per table.
    fn summary_header(&mut self, lines: Lines) -> std::io::Result<()> {
        let done = &mut self.summary_header_done[lines as usize];
        if !self.headers || (!self.intervals && *done) {
            return Ok(());
        }
        *done = true;
        let (title, columns) = match lines {
            Lines::Latency => (
                "\nOne-way Latency Summary:\n",
                formats::CSV_LATENCY_SUMMARY_COLUMNS,
            ),
            Lines::Throughput => (
                "\nThroughput Summary:\n",
                formats::CSV_THROUGHPUT_SUMMARY_COLUMNS,
            ),
        };
        if self.intervals {
            write!(self.out, "{title}")?;
        }
        writeln!(self.out, "{columns}{}", self.cpu_header())
    }

    /// A size's one-way latency summary (the publisher's); `cpu` is this
    /// process's CPU over the run, percent of one core.
    pub fn latency_summary(
        &mut self,
        size: usize,
        l: &LatencySummary,
        cpu: f64,
    ) -> std::io::Result<()> {
        self.begin(Lines::Latency, size)?;
        let cpu = self.cpu_of(cpu);
        let s = formats::LatencySummaryLine {
            length: size,
            ave_ns: l.mean,
            std_ns: l.std,
            min_ns: l.min,
            max_ns: l.max,
            percentiles_ns: [l.p50, l.p90, l.p99, l.p99_99, l.p99_9999],
            cpu: cpu.unwrap_or(0.0),
        };
        let clock = self.clock;
        self.end_summary(Lines::Latency, cpu, |f| match f {
            Format::Csv => formats::csv_latency_summary(clock, &s),
            Format::Legacy => formats::legacy_latency_summary(clock, &s),
            Format::Json => formats::json_latency_summary(clock, &s),
        })
    }

    /// A size's throughput summary (a subscriber's): `packets` received
    /// and `lost` over `time_us`; `cpu` is this process's CPU over the run,
    /// percent of one core.
    pub fn throughput_summary(
        &mut self,
        size: usize,
        packets: u64,
        lost: u64,
        time_us: u64,
        cpu: f64,
    ) -> std::io::Result<()> {
        self.begin(Lines::Throughput, size)?;
        let cpu = self.cpu_of(cpu);
        let s = formats::ThroughputSummaryLine {
            length: size,
            packets,
            time_us,
            bytes: packets * size as u64,
            lost,
            lost_percent: lost_percent(packets, lost),
            cpu: cpu.unwrap_or(0.0),
        };
        self.end_summary(Lines::Throughput, cpu, |f| match f {
            Format::Csv => formats::csv_throughput_summary(&s),
            Format::Legacy => formats::legacy_throughput_summary(&s),
            Format::Json => formats::json_throughput_summary(&s),
        })
    }

    /// A summary line of `lines` in this format (`line` writes its figures),
    /// with its header (CSV), its CPU, and the JSON element's closing; the
    /// size's block ends.
    fn end_summary(
        &mut self,
        lines: Lines,
        cpu: Option<f64>,
        line: impl Fn(Format) -> String,
    ) -> std::io::Result<()> {
        let text = line(self.format);
        match self.format {
            Format::Csv => {
                self.summary_header(lines)?;
                writeln!(self.out, "{text}{}", formats::csv_cpu(cpu))?;
            }
            Format::Legacy => writeln!(self.out, "{text}{}", formats::legacy_cpu(cpu))?,
            Format::Json => {
                if self.intervals {
                    // Perftest closes a throughput element's intervals
                    // without a new line first.
                    match lines {
                        Lines::Latency => write!(self.out, "\n\t\t\t],\n")?,
                        Lines::Throughput => writeln!(self.out, "\t\t\t],")?,
                    }
                }
                write!(
                    self.out,
                    "{text}{}\n\t\t\t}}\n\t\t}}",
                    formats::json_cpu(cpu, 4)
                )?;
            }
        }
        self.block = None;
        self.out.flush()
    }

    /// The summary of a subscriber's `Throughput` (its run's measured
    /// window).
    pub fn throughput_result(
        &mut self,
        size: usize,
        t: &Throughput,
        cpu: f64,
    ) -> std::io::Result<()> {
        self.throughput_summary(size, t.received, t.lost, window_us(t), cpu)
    }

    /// The summary of the followed subscriber's throughput from the
    /// intervals printed so far (a latency test's subscriber counts the
    /// pings it echoed).
    pub fn throughput_from_intervals(&mut self, size: usize, cpu: f64) -> std::io::Result<()> {
        let (received, lost, t_s) = self
            .block
            .as_ref()
            .filter(|b| b.lines == Lines::Throughput && b.size == size)
            .map_or((0, 0, 0.0), |b| {
                (b.throughput.received, b.throughput.lost, b.throughput.t_s)
            });
        self.throughput_summary(size, received, lost, (t_s * 1e6) as u64, cpu)
    }

    /// A finished run's lines as its publisher prints them: the latency
    /// summary where latency was measured.
    pub fn run(&mut self, run: &Run) -> std::io::Result<()> {
        if let Some(l) = &run.latency_ns {
            self.latency_summary(run.size, l, run.resources.publisher.cpu_percent)?;
        }
        Ok(())
    }

    /// The end of the output (JSON's closing brackets).
    pub fn finish(&mut self) -> std::io::Result<()> {
        if self.format == Format::Json {
            self.json_start()?;
            write!(self.out, "\n\t]\n}}\n")?;
        }
        self.out.flush()
    }
}

/// A throughput's measured window, microseconds: received over the rate.
fn window_us(t: &Throughput) -> u64 {
    if t.samples_per_s > 0.0 {
        (t.received as f64 / t.samples_per_s * 1e6).round() as u64
    } else {
        0
    }
}

#[cfg(test)]
#[path = "printer_tests.rs"]
mod tests;
