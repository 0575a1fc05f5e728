//! `pubsubperf doctor`: the machine under the figures. When users of the
//! peers' tools get figures far worse than published, the cause is
//! usually the machine (a slow clock source, frequency scaling, a busy
//! sibling hyperthread, interrupts on the measuring core, a container's
//! quota), found by hand after days. Each check here reads what the
//! kernel shows under a root directory ([`Host`]: `/`, or a fake tree in
//! the tests), gives a verdict with the value it read, why it matters and
//! the command that fixes it.
//!
//! What the kernel cannot show through files (a measurement of the
//! core-to-core link, the clock's synchronisation state) comes in
//! [`Options`], measured by the caller.

mod checks;
mod cores;
mod host;
pub mod probe;

pub use cores::{CoresNotOnline, check_cores};
pub use host::{Host, cpu_list, cpu_list_text};
use serde::{Deserialize, Serialize};

/// A check's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Warn,
    Fail,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        })
    }
}

/// One check's finding.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// The check's name (`clocksource`, `governor`, ...).
    pub check: String,
    pub verdict: Verdict,
    /// What was read.
    pub value: String,
    /// Why it matters (empty when ok).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
    /// The command that fixes it (empty when ok).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub fix: String,
}

impl Finding {
    fn ok(check: &str, value: impl Into<String>) -> Finding {
        Finding {
            check: check.into(),
            verdict: Verdict::Ok,
            value: value.into(),
            why: String::new(),
            fix: String::new(),
        }
    }

    fn bad(
        check: &str,
        verdict: Verdict,
        value: impl Into<String>,
        why: impl Into<String>,
        fix: impl Into<String>,
    ) -> Finding {
        Finding {
            check: check.into(),
            verdict,
            value: value.into(),
            why: why.into(),
            fix: fix.into(),
        }
    }
}

/// Two readings of the core-to-core cache-line round trip, ns
/// (`calibrate`'s figure), taken a moment apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkReadings {
    pub first_ns: f64,
    pub second_ns: f64,
}

/// The kernel's clock discipline (`adjtimex`): whether the clock is
/// synchronised and its estimated error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockState {
    pub synchronised: bool,
    pub est_error_us: i64,
}

/// What `ethtool -k NAME` and `ethtool -c NAME` printed for the run's
/// interface (None: ethtool could not be run; the text of an error when it
/// failed, e.g. "Operation not supported" on a virtual NIC).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Ethtool {
    pub features: Option<String>,
    pub coalesce: Option<String>,
}

/// What the checks look at.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The cores the run pins to (publisher, subscriber): their siblings,
    /// isolation, interrupts, governors and cpuset are checked.
    pub cores: Vec<usize>,
    /// The core-to-core link, measured twice.
    pub link: Option<LinkReadings>,
    /// A run across hosts over this interface: its link speed and the
    /// clock's synchronisation are checked.
    pub interface: Option<String>,
    /// The clock's state (a run across hosts).
    pub clock: Option<ClockState>,
    /// The interface's offloads and interrupt coalescing (a run across
    /// hosts).
    pub ethtool: Option<Ethtool>,
}

/// Every check of `host`, in a fixed order.
pub fn examine(host: &Host, opts: &Options) -> Vec<Finding> {
    let mut v = Vec::new();
    checks::clock::check(host, &mut v);
    checks::cpu::check(host, opts, &mut v);
    checks::kernel::check(host, opts, &mut v);
    checks::process::check(host, opts, &mut v);
    checks::virt::check(host, &mut v);
    checks::link::check(host, opts, &mut v);
    v
}

/// The checks of this machine without measuring the core-to-core link:
/// what runs quietly before a measurement. With `interface` (a run across
/// hosts), its NIC and the clock's synchronisation too.
pub fn examine_here(cores: &[usize], interface: Option<&str>) -> Vec<Finding> {
    examine(
        &Host::this(),
        &Options {
            cores: cores.to_vec(),
            link: None,
            interface: interface.map(String::from),
            clock: interface.map(|_| probe::clock_state()),
            ethtool: interface.map(probe::ethtool),
        },
    )
}

/// The worst verdict of `findings` (ok when there are none).
pub fn worst(findings: &[Finding]) -> Verdict {
    findings
        .iter()
        .map(|f| f.verdict)
        .max()
        .unwrap_or(Verdict::Ok)
}

/// The findings as lines: each check's verdict, value, and for a warning
/// or failure why it matters and the fix.
pub fn text(findings: &[Finding]) -> String {
    let mut s = String::new();
    for f in findings {
        s += &format!("{:<4}  {:<16} {}\n", f.verdict, f.check, f.value);
        if f.verdict != Verdict::Ok {
            s += &format!("      {:<16} why: {}\n", "", f.why);
            s += &format!("      {:<16} fix: {}\n", "", f.fix);
        }
    }
    s
}

/// How many checks failed and warned (`1 fail, 6 warn`); empty when every
/// check passed.
pub fn tally(findings: &[Finding]) -> String {
    let n = |v: Verdict| findings.iter().filter(|f| f.verdict == v).count();
    match (n(Verdict::Fail), n(Verdict::Warn)) {
        (0, 0) => String::new(),
        (0, w) => format!("{w} warn"),
        (f, 0) => format!("{f} fail"),
        (f, w) => format!("{f} fail, {w} warn"),
    }
}
