//! Why running a plan stopped before its runs could (a run's own faults
//! are `pubsubperf_harness::Fault`s, returned beside the runs measured).

use crate::plan::UsageError;

/// What keeps the runner from running a plan, or from keeping its
/// results.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// A flag or a file the plan names is wrong (exit code 2).
    #[error(transparent)]
    Usage(#[from] UsageError),
    /// A results file could not be written.
    #[error("{what}: {source}")]
    Write {
        what: String,
        #[source]
        source: std::io::Error,
    },
    /// The results could not be serialized.
    #[error("writing the results as JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// This binary could not be found, to start the other sides.
    #[error("cannot find the pubsubperf binary to start {what}: {source}")]
    Exe {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    /// A plan without runs.
    #[error("no run")]
    NoRun,
}

/// The runner's results.
pub type Result<T> = std::result::Result<T, RunnerError>;
