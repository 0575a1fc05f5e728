//! Typed errors of the analysis crate. Each variant says what went wrong
//! and where; the CLI turns the "bad input" ones into exit code 2.

use std::path::PathBuf;

/// Errors of the results database, file reading, sweep files, merging,
/// comparisons and reports.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A results file is not valid results JSON.
    #[error("{}: not a pubsubperf results file: {source}", path.display())]
    ResultsJson {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// The SQLite store failed.
    #[error("results database {store}: {source}")]
    Db {
        /// The store's file.
        store: String,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The PostgreSQL store failed (cannot connect, a statement failed).
    #[error("results store {store}: {message}")]
    Store {
        /// The store's URL.
        store: String,
        /// What failed, on one line.
        message: String,
    },
    /// The PostgreSQL server refused what was given (the password, the
    /// user, the database, TLS it does not offer).
    #[error("results store {store}: {message}")]
    StoreRefused {
        /// The store's URL.
        store: String,
        /// What was refused and how to fix it.
        message: String,
    },
    /// A store's URL is malformed or holds a password.
    #[error("{url}: {message}")]
    StoreUrl {
        /// The URL as given, any password in it masked.
        url: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// The database's path is a symbolic link: opened in place, the link
    /// could send the results anywhere.
    #[error(
        "{} is a symbolic link, and the results database is never opened through one; give the file it points to, or another path",
        .0.display()
    )]
    DbSymlink(PathBuf),
    /// A stored run could not be decoded (corrupt or foreign database).
    #[error("results database {store}: run {id} is not valid run JSON: {message}")]
    DbRun {
        /// The store's file or URL.
        store: String,
        /// Row id of the run.
        id: i64,
        /// What is wrong.
        message: String,
    },
    /// The default database location cannot be found (no home directory).
    #[error(
        "cannot find a place for the results database: neither XDG_DATA_HOME nor HOME is set (use --db PATH)"
    )]
    NoDataDir,
    /// A sweep file is malformed; the message names the key.
    #[error("sweep file {}: {message}", path.display())]
    Sweep {
        /// The sweep file.
        path: PathBuf,
        /// What is wrong, naming the key.
        message: String,
    },
    /// A latency histogram in a result cannot be decoded.
    #[error("{context}: {message}")]
    Histogram {
        /// Which run.
        context: String,
        /// What is wrong.
        message: String,
    },
    /// A run's record of the throughput search (`config.find_max`) is
    /// not the search's JSON.
    #[error("{context}: config.find_max is not a throughput search's record: {source}")]
    SearchRecord {
        /// Which run.
        context: String,
        /// The cause.
        #[source]
        source: serde_json::Error,
    },
    /// Runs that cannot be merged (different cells).
    #[error("cannot merge: {0}")]
    Merge(String),
    /// A `--fail-if` expression is malformed.
    #[error("--fail-if '{expr}': {message}")]
    FailIf {
        /// The expression as given.
        expr: String,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// A filter value is malformed (e.g. `--since`).
    #[error("{flag} '{value}': {message}")]
    Filter {
        /// The flag.
        flag: &'static str,
        /// The value as given.
        value: String,
        /// What is accepted.
        message: String,
    },
    /// Nothing to work on (empty selection, empty files).
    #[error("{0}")]
    Empty(String),
}

impl ReportError {
    /// True for errors caused by the user's input (bad files, flags,
    /// expressions), as opposed to failures of the machine.
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            ReportError::Db { .. } | ReportError::DbRun { .. } | ReportError::Store { .. }
        ) && !matches!(self, ReportError::Io { source, .. }
                if source.kind() != std::io::ErrorKind::NotFound)
    }
}

/// Result alias of this crate.
pub type Result<T> = std::result::Result<T, ReportError>;
