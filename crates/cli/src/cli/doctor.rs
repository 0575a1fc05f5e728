//! Arguments of `pubsubperf doctor`.

use clap::Args;
use std::path::PathBuf;

/// Arguments of `pubsubperf doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The cores the runs pin to (publisher, subscriber), as `--cpu` of a
    /// test: their siblings, isolation, interrupts and cpuset are checked
    /// (default: those a test pins to, this process's first two cores;
    /// 0,1 with --root).
    #[arg(long, value_name = "A,B")]
    pub cpu: Option<String>,
    /// A run across hosts over this interface (or the interface of this
    /// address): its link and the clock's synchronisation are checked.
    #[arg(long, value_name = "NAME|ADDRESS")]
    pub interface: Option<String>,
    /// Exit with code 1 when a check fails.
    #[arg(long)]
    pub strict: bool,
    /// Print the findings as JSON.
    #[arg(long)]
    pub json: bool,
    /// Do not measure the core-to-core link (two readings of a tenth of a
    /// second each).
    #[arg(long)]
    pub no_link: bool,
    /// Read /proc and /sys under this directory instead of / (a copy of
    /// another machine's, or a test's tree); nothing is measured then.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Watch the cores this long (seconds) with the kernel's probes and
    /// name what runs there while nothing is measured: tasks, interrupts,
    /// softirqs, timer ticks (root; eBPF).
    #[arg(long, value_name = "SECONDS")]
    pub trace: Option<f64>,
}
