//! Arguments of the analysis commands (`report`, `merge`, `compare`,
//! `history`, `export`, `import`) and of the results database.

use clap::Args;
use std::path::PathBuf;

/// `--db` and `--no-save` for commands that measure (latency, throughput,
/// sweep, topology): flatten into their arguments with `#[command(flatten)]`.
#[derive(Debug, Clone, Default, Args)]
pub struct SaveArgs {
    /// Results store to save runs in: a SQLite file or
    /// postgres://USER@HOST[:PORT]/DB (password from PGPASSWORD or
    /// ~/.pgpass) (default: $PUBSUBPERF_DB, else
    /// $XDG_DATA_HOME/pubsubperf/results.sqlite, else
    /// ~/.local/share/pubsubperf/results.sqlite).
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Do not save the results in the database.
    #[arg(long, conflicts_with = "db")]
    pub no_save: bool,
    /// A label of the saved runs, KEY=VALUE (repeatable; also
    /// $PUBSUBPERF_LABELS, comma-separated); commit=SHA names the commit
    /// under test.
    #[arg(long = "label", value_name = "KEY=VALUE", conflicts_with = "no_save")]
    pub labels: Vec<String>,
}

/// Filters of a database selection.
#[derive(Debug, Clone, Default, Args)]
pub struct FilterArgs {
    /// Only runs of this binding.
    #[arg(short, long, value_name = "NAME")]
    pub binding: Option<String>,
    /// Only runs over this transport.
    #[arg(short, long, value_name = "NAME")]
    pub transport: Option<String>,
    /// Only runs of this test: latency, throughput or topology (topology
    /// runs only).
    #[arg(long, value_name = "TEST")]
    pub test: Option<String>,
    /// Only runs of this sample size (64, 1KiB, ...).
    #[arg(short, long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Only runs started since a date (2026-11-21), a UTC time
    /// (2026-11-21T10:00:00Z) or an age (12h, 7d).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs of this sweep.
    #[arg(long, value_name = "NAME")]
    pub sweep: Option<String>,
    /// Only runs of this run group (id or prefix, as 'history' shows it).
    #[arg(long, value_name = "ID")]
    pub group: Option<String>,
    /// Only topology runs of this topology (its name).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Only the most recent N runs (and the most recent N topology runs).
    #[arg(short = 'n', long, value_name = "N")]
    pub limit: Option<usize>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results JSON files to report on (default: runs from the database,
    /// selected with the filters).
    #[arg(value_name = "RESULTS")]
    pub results: Vec<PathBuf>,
    /// Results store, a file or postgres:// URL (default: see 'pubsubperf latency --help').
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// The HTML file to write.
    #[arg(short, long, default_value = "report.html", value_name = "FILE")]
    pub out: PathBuf,
    /// Also write every plot as an SVG file into this directory.
    #[arg(long, value_name = "DIR")]
    pub svg_dir: Option<PathBuf>,
    /// Page title.
    #[arg(long, default_value = "pubsubperf report", value_name = "TEXT")]
    pub title: String,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Results JSON files to merge (runs of the same cell become one run:
    /// histograms merged exactly, counters summed).
    #[arg(value_name = "RESULTS", required = true)]
    pub results: Vec<PathBuf>,
    /// The merged results JSON file to write.
    #[arg(short, long, value_name = "FILE")]
    pub out: PathBuf,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a results JSON file, or a database selection
    /// 'db:KEY=VALUE,...' (keys: group, sweep, binding, transport, test,
    /// size, name, since, limit; 'db:ID' is short for 'db:group=ID').
    #[arg(value_name = "BASE")]
    pub base: String,
    /// The new results, in the same forms as BASE.
    #[arg(value_name = "NEW")]
    pub new: String,
    /// Exit with code 3 when a condition holds for a matched cell (a
    /// regression; 1 stays a failure to compare, 2 bad input), e.g.
    /// 'p99>+10%', 'samples_per_s<-5%', 'p50>+2us', 'lost_percent>1'
    /// (repeatable; see the README, section "Analysis").
    #[arg(long = "fail-if", value_name = "EXPR")]
    pub fail_if: Vec<String>,
    /// Results database for 'db:' selections.
    #[arg(long, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Compare runs whose sides did not run where they were planned
    /// (their `conditions`, e.g. two sides held on one core); refused
    /// without it.
    #[arg(long)]
    pub allow_not_as_planned: bool,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// Results store, a file or postgres:// URL (default: see 'pubsubperf latency --help').
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Each series (binding, transport, test, size, QoS, machine) across
    /// its revisions (the commit label, else the middleware's version),
    /// with the change points a Mann-Whitney step test finds (false-alarm
    /// rate 1 % per series).
    #[arg(long)]
    pub trend: bool,
    /// With --trend: exit 3 when a series got worse at a change point
    /// ('change'), or worse by more than N % ('change>N%').
    #[arg(long, value_name = "COND", requires = "trend")]
    pub fail_if: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Results store, a file or postgres:// URL (default: see 'pubsubperf latency --help').
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    #[command(flatten)]
    pub filter: FilterArgs,
    /// Write the selection as CSV ('-' for standard output).
    #[arg(long, value_name = "FILE", required_unless_present = "json")]
    pub csv: Option<PathBuf>,
    /// Write the selection as a results JSON file ('-' for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Results JSON files (one run group each) and SQLite stores (each of
    /// their groups) to store in the database; a run it already has is
    /// not stored again.
    #[arg(value_name = "RESULTS", required = true)]
    pub results: Vec<PathBuf>,
    /// Results store, a file or postgres:// URL (default: see 'pubsubperf latency --help').
    #[arg(long, value_name = "PATH|URL")]
    pub db: Option<PathBuf>,
    /// Record the runs as part of this sweep.
    #[arg(long, value_name = "NAME")]
    pub sweep: Option<String>,
    /// A label of the stored runs, KEY=VALUE (repeatable; also
    /// $PUBSUBPERF_LABELS); commit=SHA names the commit under test.
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
}
