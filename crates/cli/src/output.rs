//! The results files (JSON, CSV), rewritten after every run, so a crash, a
//! dead peer or Ctrl-C keeps everything measured so far. The tables printed
//! under a run are `pubsubperf_report::live`'s.

use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{ResultsFile, Run, SCHEMA_VERSION, ToolInfo};
use std::path::Path;

/// Collects runs and rewrites the output files after each one.
pub struct Sink {
    /// Everything measured so far.
    pub file: ResultsFile,
    json: Option<std::path::PathBuf>,
    csv: Option<std::path::PathBuf>,
    /// Told of each run as it is added (a front end printing a run's
    /// summary as soon as it ends).
    on_push: Option<OnPush>,
}

/// What a [`Sink`] tells of each run it adds.
pub type OnPush = Box<dyn FnMut(&Run)>;

impl Sink {
    /// A sink writing to the given files (either may be absent).
    pub fn new(env: Environment, json: Option<&Path>, csv: Option<&Path>) -> Sink {
        Sink {
            file: ResultsFile {
                tool: ToolInfo {
                    name: "pubsubperf".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    schema: SCHEMA_VERSION,
                },
                environment: env,
                runs: Vec::new(),
                graphs: Vec::new(),
            },
            json: json.map(Path::to_path_buf),
            csv: csv.map(Path::to_path_buf),
            on_push: None,
        }
    }

    /// Calls `f` with each run as it is added, after it is written.
    pub fn on_push(&mut self, f: OnPush) {
        self.on_push = Some(f);
    }

    /// Adds a run and rewrites the files.
    pub fn push(&mut self, run: Run) -> anyhow::Result<()> {
        self.file.runs.push(run);
        let written = self.write();
        if let (Some(f), Some(run)) = (self.on_push.as_mut(), self.file.runs.last()) {
            f(run);
        }
        written
    }

    /// Writes the files (atomically: a temporary file, then rename).
    pub fn write(&self) -> anyhow::Result<()> {
        use anyhow::Context;
        if let Some(p) = &self.json {
            let s = serde_json::to_string_pretty(&self.file)?;
            write_atomic(p, s.as_bytes()).with_context(|| format!("--json {}", p.display()))?;
        }
        if let Some(p) = &self.csv {
            write_atomic(p, csv(&self.file.runs).as_bytes())
                .with_context(|| format!("--csv {}", p.display()))?;
        }
        Ok(())
    }
}

fn write_atomic(path: &Path, data: &[u8]) -> std::io::Result<()> {
    pubsubperf_report::write_atomic(path, data)
}

/// One CSV row per run (the same columns as `pubsubperf export --csv`).
pub use pubsubperf_report::csv::csv;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_one_row_per_run_and_stable_header() {
        let s = csv(&[]);
        assert_eq!(s.lines().count(), 1);
        assert!(s.starts_with("binding,transport,test,size,"));
        assert_eq!(s.lines().next().unwrap().split(',').count(), 44);
    }
}
