//! The results sink: every run measured goes into the results file at
//! once, and the JSON and CSV files are rewritten after each, so a crash, a
//! dead peer or Ctrl-C keeps everything measured so far.

use crate::RunnerError;
use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{ResultsFile, Run, SCHEMA_VERSION, ToolInfo};
use pubsubperf_report::csv::csv;
use pubsubperf_report::write_atomic;
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
    pub fn push(&mut self, run: Run) -> crate::Result<()> {
        self.file.runs.push(run);
        let written = self.write();
        if let (Some(f), Some(run)) = (self.on_push.as_mut(), self.file.runs.last()) {
            f(run);
        }
        written
    }

    /// Writes the files (atomically: a temporary file, then rename).
    pub fn write(&self) -> crate::Result<()> {
        let failed = |flag: &str, p: &Path| {
            let what = format!("{flag} {}", p.display());
            move |source| RunnerError::Write { what, source }
        };
        if let Some(p) = &self.json {
            let s = serde_json::to_string_pretty(&self.file)?;
            write_atomic(p, s.as_bytes()).map_err(failed("--json", p))?;
        }
        if let Some(p) = &self.csv {
            write_atomic(p, csv(&self.file.runs).as_bytes()).map_err(failed("--csv", p))?;
        }
        Ok(())
    }
}
