//! The analysis side of pubsubperf: everything that happens after runs
//! were measured.
//!
//! - [`db`]: the results database (SQLite): every run with its environment
//!   and configuration, queried with filters, exported as CSV or JSON.
//! - [`sweep`]: sweep files (TOML) expanded into a matrix of cells, each an
//!   argument vector for the CLI and a stable cell key.
//! - [`merge`]: exact merging of repetitions (HDR histograms added, never
//!   percentiles averaged; throughput counters summed).
//! - [`compare`]: BASE versus NEW: matched cells, deltas, Welch's t-test over
//!   repetitions, `--fail-if` conditions ([`failif`]).
//! - [`html`]: one self-contained HTML report with inline SVG plots
//!   ([`svg`], [`bars`] for a figure of one sample size), working offline;
//!   series named by [`label`] and drawn in their binding's color
//!   ([`colors`]), a throughput search's trials by [`search`].
//! - [`csv`], [`text`]: CSV export and the text tables of the CLI; [`axes`]:
//!   the rate, subscribers and publishers a table's runs differ in, and
//!   [`axis_plots`] the curves along them.
//! - Topology runs (`graphs` of a results file): stored in the database's
//!   `graphs` table, matched by [`graph_compare`], listed and compared in
//!   text by [`graph_text`], drawn by [`graph_svg`] in the report's
//!   Topologies section ([`graph_html`]).
//!
//! This crate knows nothing about command lines: the CLI turns flags into
//! the plain types here ([`db::Filter`], [`failif::Condition`], ...).

pub mod axes;
pub mod axis_plots;
pub mod bars;
mod cell_text;
pub mod colors;
pub mod compare;
mod css;
pub mod csv;
pub mod db;
pub mod error;
pub mod failif;
pub mod graph_compare;
pub mod graph_html;
pub mod graph_svg;
pub mod graph_text;
pub mod html;
pub mod key;
pub mod label;
pub mod merge;
pub mod profile;
pub mod search;
pub mod stat;
pub mod svg;
pub mod sweep;
pub mod text;
pub mod time;

pub use error::{ReportError, Result};

use pubsubperf_core::result::ResultsFile;
use std::path::Path;

/// Reads a results JSON file.
pub fn read_results(path: &Path) -> Result<ResultsFile> {
    let s = std::fs::read_to_string(path).map_err(|e| ReportError::Io {
        path: path.to_path_buf(),
        source: e,
    })?;
    serde_json::from_str(&s).map_err(|e| ReportError::ResultsJson {
        path: path.to_path_buf(),
        source: e,
    })
}

/// Writes a file atomically (a temporary file next to it, then rename).
pub fn write_file(path: &Path, data: &[u8]) -> Result<()> {
    let io = |e| ReportError::Io {
        path: path.to_path_buf(),
        source: e,
    };
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp{}", std::process::id()));
    std::fs::write(&tmp, data).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}
