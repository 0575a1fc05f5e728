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
pub mod explanation;
pub mod failif;
pub mod fixture;
pub mod graph_compare;
pub mod graph_html;
pub mod graph_svg;
pub mod graph_text;
pub mod html;
pub mod key;
pub mod label;
pub mod live;
pub mod mann_whitney;
pub mod merge;
pub mod profile;
pub mod search;
pub mod stat;
pub mod svg;
pub mod sweep;
pub mod text;
pub mod time;
pub mod trend;
pub mod trend_html;

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
    write_atomic(path, data).map_err(|e| ReportError::Io {
        path: path.to_path_buf(),
        source: e,
    })
}

/// Writes `data` to `path` through a temporary file in the same directory,
/// then renames it over `path`. The temporary file has a random name and is
/// created exclusively (`O_EXCL`, not following a symlink), so a symlink
/// planted at a predictable name cannot redirect the write; the rename
/// replaces `path` itself, even when it is a symlink, never its target.
/// The file is readable by all (0644), as a plain create would leave it.
/// A `path` that is no regular file (`/dev/stdout`, a FIFO) is written to
/// as it is, unless it is a symbolic link other than the process's own
/// streams (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`):
/// a link planted to a device is replaced, never written through.
pub fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let own_stream = ["/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/fd/"]
        .iter()
        .any(|s| path.to_string_lossy().starts_with(s));
    let linked = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) && (own_stream || !linked) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)?
            .write_all(data);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map_or("out".into(), |n| n.to_string_lossy().into_owned());
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(data)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}

#[cfg(test)]
mod write_tests {
    use super::write_atomic;

    /// A symlink planted where the temporary file used to go (a
    /// predictable name) or at the output itself never redirects the
    /// write to its target.
    #[test]
    fn planted_symlinks_redirect_nothing() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = d.path().join("r.html");
        for name in [
            format!(".r.html.tmp{}", std::process::id()),
            format!("r.html.tmp{}", std::process::id()),
        ] {
            std::os::unix::fs::symlink(&victim, d.path().join(name)).unwrap();
        }
        write_atomic(&out, b"report").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "report");
        // The output a symlink: the link is replaced, its target kept.
        std::fs::remove_file(&out).unwrap();
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_atomic(&out, b"again").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(&out).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "again");
        // A link to a device is replaced, not written through.
        let dev = d.path().join("dev.html");
        std::os::unix::fs::symlink("/dev/null", &dev).unwrap();
        write_atomic(&dev, b"report").unwrap();
        assert_eq!(std::fs::read_to_string(&dev).unwrap(), "report");
        std::fs::remove_file(&dev).unwrap();
        // Nothing else is left beside it.
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.contains("tmp"))
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
