//! `pubsubperf sweep FILE.toml`: runs every cell of a sweep file's matrix
//! (see `pubsubperf_report::sweep` for the format). Each finished cell is
//! saved at once (database and `--json`), so a crash or Ctrl-C loses
//! nothing finished, and `--resume` skips the cells already in the database
//! for this sweep with the same settings. A progress bar with ETA is drawn
//! on a terminal; plain lines otherwise.

use crate::analysis::{SaveArgs, SaveMeta, save_results};
use crate::cli::{Cli, Command};
use crate::options::UsageError;
use crate::output;
use anyhow::Context;
use clap::Parser;
use pubsubperf_core::result::TestKind;
use pubsubperf_harness::{Fault, INTERRUPTED};
use pubsubperf_report::db::{Database, Filter};
use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Arguments of `pubsubperf sweep`.
#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// The sweep file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Skip the cells this sweep already finished (found in the database).
    #[arg(long)]
    pub resume: bool,
    /// Only list the cells, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also write every run of this invocation as JSON (rewritten per cell).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Results database options.
    #[command(flatten)]
    pub save: SaveArgs,
}

/// The cell id stored in the database: the cell key and a digest of its
/// arguments, so a resumed sweep re-runs cells whose settings changed.
fn cell_id(c: &pubsubperf_report::sweep::Cell) -> String {
    format!("{}#{}", c.key, c.digest)
}

fn estimate_s(args: &[String]) -> f64 {
    // duration + warm-up + about a second of set-up per cell.
    let get = |flag: &str, default: f64| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| crate::options::parse_duration(flag, v).ok())
            .map_or(default, |d| d.as_secs_f64())
    };
    get("--duration", 5.0) + get("--warmup", 1.0) + 1.0
}

fn fmt_s(s: f64) -> String {
    let s = s.max(0.0) as u64;
    format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// Runs a sweep.
pub fn run(a: &SweepArgs) -> anyhow::Result<ExitCode> {
    let sweep = pubsubperf_report::sweep::load(&a.file)
        .map_err(|e| UsageError(format!("sweep {}: {e}", a.file.display())))?;
    if a.resume && a.save.no_save {
        return Err(
            UsageError("--resume: needs the results database; drop --no-save".into()).into(),
        );
    }
    let mut done: HashSet<(String, u32)> = HashSet::new();
    if a.resume {
        let path = match &a.save.db {
            Some(p) => p.clone(),
            None => {
                pubsubperf_report::db::default_path().map_err(|e| anyhow::anyhow!("--db: {e}"))?
            }
        };
        if path.exists() {
            let db = Database::open(&path)
                .map_err(|e| anyhow::anyhow!("--db {}: {e}", path.display()))?;
            let runs = db
                .query(&Filter {
                    sweep: Some(sweep.name.clone()),
                    ..Default::default()
                })
                .map_err(|e| anyhow::anyhow!("--db: {e}"))?;
            for r in runs {
                if r.run.complete
                    && let Some(c) = r.cell
                {
                    done.insert((c, r.repetition));
                }
            }
        }
    }
    let todo: Vec<_> = sweep
        .cells
        .iter()
        .filter(|c| !done.contains(&(cell_id(c), c.repetition)))
        .collect();
    eprintln!(
        "sweep '{}': {} cells × {} repetition(s) = {} runs, {} already done, {} to run",
        sweep.name,
        sweep.cells.len() / sweep.repetitions.max(1) as usize,
        sweep.repetitions,
        sweep.cells.len(),
        sweep.cells.len() - todo.len(),
        todo.len()
    );
    if a.dry_run {
        for c in &todo {
            println!(
                "{} (repetition {}): pubsubperf {}",
                c.key,
                c.repetition,
                c.args.join(" ")
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let tty = std::io::stderr().is_terminal();
    let mut sink = output::Sink::new(
        pubsubperf_core::environment::Environment::detect(),
        a.json.as_deref(),
        None,
    );
    sink.file.environment.calibration = crate::calibrate::load();
    let total_est: f64 = todo.iter().map(|c| estimate_s(&c.args)).sum();
    let (mut spent_est, mut failed, mut skipped) = (0.0f64, 0usize, 0usize);
    let start = Instant::now();
    for (i, cell) in todo.iter().enumerate() {
        if INTERRUPTED.load(Ordering::Relaxed) {
            break;
        }
        // Progress: measured time so far scaled by what the estimate says is left.
        let elapsed = start.elapsed().as_secs_f64();
        let eta = if spent_est > 0.0 {
            elapsed / spent_est * (total_est - spent_est)
        } else {
            total_est
        };
        let line = format!(
            "[{}/{}] {} rep {}  elapsed {}  eta {}",
            i + 1,
            todo.len(),
            cell.key,
            cell.repetition,
            fmt_s(elapsed),
            fmt_s(eta)
        );
        if tty {
            let width = 30;
            let filled = (width as f64 * spent_est / total_est.max(1e-9)) as usize;
            eprint!(
                "\r\x1b[2K[{}{}] {line}",
                "#".repeat(filled.min(width)),
                " ".repeat(width - filled.min(width))
            );
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
        spent_est += estimate_s(&cell.args);
        let mut argv = vec!["pubsubperf".to_string()];
        argv.extend(cell.args.iter().cloned());
        argv.push("--quiet".into());
        let parsed = match Cli::try_parse_from(&argv) {
            Ok(c) => c,
            Err(e) => {
                let first = e
                    .render()
                    .to_string()
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                if tty {
                    eprintln!();
                }
                eprintln!("  skipped {}: {first}", cell.key);
                skipped += 1;
                continue;
            }
        };
        let (args, test) = match parsed.command {
            Some(Command::Latency(t)) => (t, TestKind::Latency),
            Some(Command::Throughput(t)) => (t, TestKind::Throughput),
            _ => anyhow::bail!(
                "sweep cell {} is not a latency or throughput test",
                cell.key
            ),
        };
        let plan = match args.plan(test) {
            Ok(p) => p,
            Err(e) => {
                if tty {
                    eprintln!();
                }
                eprintln!("  skipped {}: {e}", cell.key);
                skipped += 1;
                continue;
            }
        };
        // Each cell is saved as its own results file in the database.
        let mut cell_sink = output::Sink::new(crate::bindings_env(&plan.specs), None, None);
        cell_sink.file.environment.calibration = sink.file.environment.calibration.clone();
        let fault = crate::execute(&plan, &mut cell_sink)?;
        let meta = SaveMeta {
            sweep: Some(sweep.name.clone()),
            cell: Some(cell_id(cell)),
            repetition: cell.repetition,
            command: Some(format!("sweep {}", a.file.display())),
            ..Default::default()
        };
        if !cell_sink.file.runs.is_empty() {
            save_results(&a.save, &cell_sink.file, &meta).context("saving the cell")?;
        }
        for (name, v) in &cell_sink.file.environment.bindings {
            sink.file
                .environment
                .bindings
                .insert(name.clone(), v.clone());
        }
        for r in cell_sink.file.runs {
            sink.push(r)?;
        }
        match fault {
            None => {}
            Some(Fault::Interrupted) => break,
            Some(f) => {
                if tty {
                    eprintln!();
                }
                eprintln!("  failed {}: {f}", cell.key);
                failed += 1;
            }
        }
    }
    if tty {
        eprintln!();
    }
    sink.write()?;
    let interrupted = INTERRUPTED.load(Ordering::Relaxed);
    eprintln!(
        "sweep '{}': {} runs measured, {skipped} skipped, {failed} failed in {}{}",
        sweep.name,
        sink.file.runs.len(),
        fmt_s(start.elapsed().as_secs_f64()),
        if interrupted {
            " (interrupted: run again with --resume)"
        } else {
            ""
        }
    );
    print!("{}", output::summary_table(&sink.file.runs));
    Ok(if interrupted {
        ExitCode::from(130)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
