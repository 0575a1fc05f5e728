//! Perftest's lines, one function a line: the figures as Perftest's
//! printer takes them (its types: whole counts, integer rates, a `float`
//! loss percentage), written with its number formats for the build the
//! user reads. RTI's default build (`build.sh` without
//! `--latency-high-resolution`) prints latencies in whole microseconds and
//! their standard deviation with one decimal; the high-resolution build
//! prints three decimals (`-latencyHighResolution` here). Our figures are
//! nanoseconds: a whole-microsecond column is the nanoseconds truncated, as
//! Perftest's microsecond clock truncates. The tests of this module print
//! the same figures with Perftest's own C formats (through `snprintf`) and
//! compare byte for byte.

/// Which Perftest build's number formats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Clock {
    /// The default build: whole microseconds.
    #[default]
    Micro,
    /// `--latency-high-resolution` (`RTI_PERFTEST_NANO_CLOCK`): three decimals.
    Nano,
}

/// One latency interval line: a pong's latency and the size's running
/// figures so far, nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencyLine {
    pub latency_ns: u64,
    pub ave_ns: f64,
    pub std_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// Percent of all processors, as Perftest's CpuMonitor.
    pub cpu: f64,
}

/// A size's latency summary, nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LatencySummaryLine {
    pub length: usize,
    pub ave_ns: f64,
    pub std_ns: f64,
    pub min_ns: u64,
    pub max_ns: u64,
    /// 50, 90, 99, 99.99 and 99.9999 %.
    pub percentiles_ns: [u64; 5],
    pub cpu: f64,
}

/// One throughput interval line, as Perftest's subscriber computes it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThroughputLine {
    pub length: usize,
    /// Samples received so far in this size.
    pub total: u64,
    /// This interval's samples per second (an integer, as Perftest's).
    pub per_s: u64,
    /// The mean of the intervals' `per_s` so far.
    pub per_s_ave: f64,
    /// This interval's bytes per second.
    pub bytes_per_s: u64,
    /// The mean of the intervals' `bytes_per_s` so far.
    pub bytes_per_s_ave: f64,
    pub lost: u64,
    pub lost_percent: f32,
    pub cpu: f64,
}

/// A size's throughput summary, as Perftest's subscriber computes it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThroughputSummaryLine {
    pub length: usize,
    pub packets: u64,
    /// The size's measured time, microseconds.
    pub time_us: u64,
    pub bytes: u64,
    pub lost: u64,
    pub lost_percent: f32,
    pub cpu: f64,
}

impl ThroughputSummaryLine {
    /// Samples per second, Perftest's integer division.
    pub fn per_s(&self) -> u64 {
        (self.packets * 1_000_000)
            .checked_div(self.time_us)
            .unwrap_or(0)
    }

    /// Megabits per second.
    pub fn mbps(&self) -> f64 {
        if self.time_us == 0 {
            return 0.0;
        }
        self.bytes as f64 * 1_000_000.0 / self.time_us as f64 * 8.0 / 1000.0 / 1000.0
    }
}

/// Percent of all processors from percent of one core: Perftest's
/// CpuMonitor divides the process's CPU time by the wall time and by the
/// number of processors `/proc/cpuinfo` lists.
pub fn of_all_processors(percent_of_one_core: f64) -> f64 {
    percent_of_one_core / processors() as f64
}

/// The processors `/proc/cpuinfo` lists (at least 1).
fn processors() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::fs::read_to_string("/proc/cpuinfo")
            .map(|t| t.lines().filter(|l| l.starts_with("processor")).count())
            .unwrap_or(0)
            .max(1)
    })
}

fn mbps(bytes_per_s: f64) -> f64 {
    bytes_per_s * 8.0 / 1000.0 / 1000.0
}

impl Clock {
    /// A latency Perftest keeps as a whole number (`%W lu`): whole
    /// microseconds (nanoseconds truncated, as Perftest's microsecond clock
    /// truncates), or microseconds with three decimals.
    fn whole(self, ns: u64, width: usize) -> String {
        match self {
            Clock::Micro => format!("{:width$}", ns / 1000),
            Clock::Nano => format!("{:width$.3}", ns as f64 / 1000.0),
        }
    }

    /// A latency Perftest keeps as a `double` (`%W.Dlf`): with `decimals`
    /// in the default build, three in the high-resolution one.
    fn real(self, ns: f64, width: usize, decimals: usize) -> String {
        let decimals = match self {
            Clock::Micro => decimals,
            Clock::Nano => 3,
        };
        format!("{:width$.decimals$}", ns / 1000.0)
    }

    /// The width of a legacy line's latency figures.
    fn legacy_width(self) -> usize {
        match self {
            Clock::Micro => 6,
            Clock::Nano => 9,
        }
    }
}

/// C's `%W.0llu`: a zero prints no digit.
fn no_digit_for_zero(v: u64, width: usize) -> String {
    if v == 0 {
        " ".repeat(width)
    } else {
        format!("{v:width$}")
    }
}

// CSV.

pub const CSV_LATENCY_COLUMNS: &str =
    "Length (Bytes), Latency (μs), Ave (μs), Std (μs), Min (μs), Max (μs)";
pub const CSV_THROUGHPUT_COLUMNS: &str = "Length (Bytes), Total Samples,  Samples/s, Avg Samples/s,     Mbps,  Avg Mbps, Lost Samples, Lost Samples (%)";
pub const CSV_LATENCY_SUMMARY_COLUMNS: &str = "Sample Size (Bytes), Ave (μs), Std (μs), Min (μs), Max (μs), 50% (μs), 90% (μs), 99% (μs), 99.99% (μs), 99.9999% (μs)";
pub const CSV_THROUGHPUT_SUMMARY_COLUMNS: &str = "Sample Size (Bytes), Total Samples, Avg Samples/s,    Avg Mbps, Lost Samples, Lost Samples (%)";

/// The CPU column of a CSV line (empty without `-cpu`).
pub fn csv_cpu(cpu: Option<f64>) -> String {
    cpu.map_or(String::new(), |c| format!(",{c:8.2}"))
}

pub fn csv_latency(clock: Clock, length: usize, l: &LatencyLine) -> String {
    format!(
        "{length:14},{},{},{},{},{}",
        clock.whole(l.latency_ns, 13),
        clock.real(l.ave_ns, 9, 0),
        clock.real(l.std_ns, 9, 1),
        clock.whole(l.min_ns, 9),
        clock.whole(l.max_ns, 9)
    )
}

pub fn csv_latency_summary(clock: Clock, s: &LatencySummaryLine) -> String {
    let [p50, p90, p99, p9999, p999999] = s.percentiles_ns;
    format!(
        "{:19},{},{},{},{},{},{},{},{},{}",
        s.length,
        clock.real(s.ave_ns, 9, 0),
        clock.real(s.std_ns, 9, 1),
        clock.whole(s.min_ns, 9),
        clock.whole(s.max_ns, 9),
        clock.whole(p50, 9),
        clock.whole(p90, 9),
        clock.whole(p99, 9),
        clock.whole(p9999, 12),
        clock.whole(p999999, 14)
    )
}

pub fn csv_throughput(t: &ThroughputLine) -> String {
    format!(
        "{:14},{:14},{:11},{:14.0},{:9.1},{:10.1}, {:12}, {:16.2}",
        t.length,
        t.total,
        t.per_s,
        t.per_s_ave,
        mbps(t.bytes_per_s as f64),
        mbps(t.bytes_per_s_ave),
        t.lost,
        f64::from(t.lost_percent)
    )
}

pub fn csv_throughput_summary(s: &ThroughputSummaryLine) -> String {
    format!(
        "{:19},{:14},{},{:12.1}, {:12}, {:16.2}",
        s.length,
        s.packets,
        no_digit_for_zero(s.per_s(), 14),
        s.mbps(),
        s.lost,
        f64::from(s.lost_percent)
    )
}

// Legacy.

/// The CPU part of a legacy line (empty without `-cpu`).
pub fn legacy_cpu(cpu: Option<f64>) -> String {
    cpu.map_or(String::new(), |c| format!(" CPU {c:.2} (%)"))
}

pub fn legacy_latency(clock: Clock, l: &LatencyLine) -> String {
    let w = clock.legacy_width();
    format!(
        "One-Way Latency: {} μs Ave {} μs Std {} μs Min {} μs Max {} μs",
        clock.whole(l.latency_ns, w),
        clock.real(l.ave_ns, w, 0),
        clock.real(l.std_ns, w, 1),
        clock.whole(l.min_ns, w),
        clock.whole(l.max_ns, w)
    )
}

pub fn legacy_latency_summary(clock: Clock, s: &LatencySummaryLine) -> String {
    let [p50, p90, p99, p9999, p999999] = s.percentiles_ns;
    let w = clock.legacy_width();
    format!(
        "Length: {:5} Latency: Ave {} μs Std {} μs Min {} μs Max {} μs 50% {} μs 90% {} μs 99% {} μs 99.99% {} μs 99.9999% {} μs",
        s.length,
        clock.real(s.ave_ns, w, 0),
        clock.real(s.std_ns, w, 1),
        clock.whole(s.min_ns, w),
        clock.whole(s.max_ns, w),
        clock.whole(p50, w),
        clock.whole(p90, w),
        clock.whole(p99, w),
        clock.whole(p9999, w),
        clock.whole(p999999, w)
    )
}

pub fn legacy_throughput(t: &ThroughputLine) -> String {
    format!(
        "Packets: {:8}  Packets/s: {:7}  Packets/s(ave): {:7.0}  Mbps: {:7.1}  Mbps(ave): {:7.1}  Lost: {:5} ({:.2}%)",
        t.total,
        t.per_s,
        t.per_s_ave,
        mbps(t.bytes_per_s as f64),
        mbps(t.bytes_per_s_ave),
        t.lost,
        f64::from(t.lost_percent)
    )
}

pub fn legacy_throughput_summary(s: &ThroughputSummaryLine) -> String {
    format!(
        "Length: {:5}  Packets: {:8}  Packets/s(ave): {:7}  Mbps(ave): {:7.1}  Lost: {:5} ({:.2}%)",
        s.length,
        s.packets,
        s.per_s(),
        s.mbps(),
        s.lost,
        f64::from(s.lost_percent)
    )
}

// JSON: Perftest writes its document as it goes, with tabs, its own key
// order and its own number formats (whole numbers unquoted, no exponent).

/// The CPU member of a JSON interval (`tabs` deep) or summary.
pub fn json_cpu(cpu: Option<f64>, tabs: usize) -> String {
    cpu.map_or(String::new(), |c| {
        format!(",\n{}\"CPU\": {c:.2}", "\t".repeat(tabs))
    })
}

pub fn json_latency(clock: Clock, l: &LatencyLine) -> String {
    format!(
        "\n\t\t\t\t{{\n\t\t\t\t\t\"latency\": {},\n\t\t\t\t\t\"latency_ave\": {},\n\t\t\t\t\t\"latency_std\": {},\n\t\t\t\t\t\"latency_min\": {},\n\t\t\t\t\t\"latency_max\": {}",
        clock.whole(l.latency_ns, 0),
        clock.real(l.ave_ns, 0, 2),
        clock.real(l.std_ns, 0, 2),
        clock.whole(l.min_ns, 0),
        clock.whole(l.max_ns, 0)
    )
}

pub fn json_latency_summary(clock: Clock, s: &LatencySummaryLine) -> String {
    let [p50, p90, p99, p9999, p999999] = s.percentiles_ns;
    format!(
        "\t\t\t\"summary\":{{\n\t\t\t\t\"latency_ave\": {},\n\t\t\t\t\"latency_std\": {},\n\t\t\t\t\"latency_min\": {},\n\t\t\t\t\"latency_max\": {},\n\t\t\t\t\"latency_50\": {},\n\t\t\t\t\"latency_90\": {},\n\t\t\t\t\"latency_99\": {},\n\t\t\t\t\"latency_99.99\": {},\n\t\t\t\t\"latency_99.9999\": {}",
        clock.real(s.ave_ns, 0, 2),
        clock.real(s.std_ns, 0, 2),
        clock.whole(s.min_ns, 0),
        clock.whole(s.max_ns, 0),
        clock.whole(p50, 0),
        clock.whole(p90, 0),
        clock.whole(p99, 0),
        clock.whole(p9999, 0),
        clock.whole(p999999, 0)
    )
}

pub fn json_throughput(t: &ThroughputLine) -> String {
    format!(
        "\n\t\t\t\t{{\n\t\t\t\t\t\"length\": {},\n\t\t\t\t\t\"packets\": {},\n\t\t\t\t\t\"packets/s\": {},\n\t\t\t\t\t\"packets/s_ave\": {:.2},\n\t\t\t\t\t\"mbps\": {:.1},\n\t\t\t\t\t\"mbps_ave\": {:.1},\n\t\t\t\t\t\"lost\": {},\n\t\t\t\t\t\"lost_percent\": {:.2}",
        t.length,
        t.total,
        t.per_s,
        t.per_s_ave,
        mbps(t.bytes_per_s as f64),
        mbps(t.bytes_per_s_ave),
        t.lost,
        f64::from(t.lost_percent)
    )
}

pub fn json_throughput_summary(s: &ThroughputSummaryLine) -> String {
    format!(
        "\t\t\t\"summary\":{{\n\t\t\t\t\"packets\": {},\n\t\t\t\t\"packets/sAve\": {},\n\t\t\t\t\"mbpsAve\": {:.1},\n\t\t\t\t\"lost\": {},\n\t\t\t\t\"lostPercent\": {:.2}",
        s.packets,
        s.per_s(),
        s.mbps(),
        s.lost,
        f64::from(s.lost_percent)
    )
}

#[cfg(test)]
#[path = "formats_tests.rs"]
mod tests;
