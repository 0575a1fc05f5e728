//! `pubsubperf sweep FILE.toml`: runs every cell of a sweep file's matrix
//! (see `pubsubperf_report::sweep` for the format). Each finished cell is
//! saved at once (database and `--json`), so a crash or Ctrl-C loses
//! nothing finished, and `--resume` skips the cells already in the database
//! for this sweep with the same settings. A progress bar with ETA is drawn
//! on a terminal; plain lines otherwise. One invocation is one run group
//! in the database: every cell and repetition it measured.

use crate::analysis::{SaveMeta, save_results};
use crate::cli::SweepArgs;
use crate::plan::{TestPlan, TestRequest, UsageError};
use anyhow::Context;
use pubsubperf_core::result::TestKind;
use pubsubperf_harness::{Fault, INTERRUPTED};
use pubsubperf_report::db::Filter;
use pubsubperf_report::sweep::{Cell, PublisherHost, Sweep};
use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Instant;

#[path = "sweep_skips.rs"]
mod skips;

/// Reads a sweep file and checks its binding names against the project's
/// table before anything runs: a name the table does not have (a typo) is
/// a usage error naming the key and the known names. A binding of the
/// table that this build leaves out or this machine lacks is not an error:
/// its cells are skipped, and counted.
pub(crate) fn load(file: &Path) -> Result<Sweep, UsageError> {
    let at = |e: String| UsageError(format!("sweep {}: {e}", file.display()));
    let sweep = pubsubperf_report::sweep::load(file).map_err(|e| at(e.to_string()))?;
    let all = pubsubperf_harness::registry::ALL;
    if let Some(c) = sweep
        .cells
        .iter()
        .find(|c| !all.contains(&c.binding.as_str()))
    {
        return Err(at(format!(
            "{}.bindings: unknown binding '{}' (known: {})",
            c.matrix,
            c.binding,
            all.join(", ")
        )));
    }
    Ok(sweep)
}

/// The cell id stored in the database: the cell key and a digest of its
/// arguments, so a resumed sweep re-runs cells whose settings changed.
fn cell_id(c: &Cell) -> String {
    format!("{}#{}", c.key, c.digest)
}

/// About how long a cell takes: its duration and warm-up (by their names
/// in its settings) and about a second of set-up.
fn estimate_s(cell: &Cell) -> f64 {
    let settings = cell.settings();
    let get = |name: &str, default: f64| {
        settings
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
            .and_then(|v| crate::plan::parse_duration(name, v).ok())
            .map_or(default, |d| d.as_secs_f64())
    };
    get("duration", 5.0) + get("warmup", 1.0) + 1.0
}

fn fmt_s(s: f64) -> String {
    let s = s.max(0.0) as u64;
    format!("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60)
}

/// Checks a cell as its run would: its settings applied by name to a test
/// request (the same table the command line's options end in) and
/// validated against its binding (capabilities, the binding's own checks,
/// whether it is available here). Returns the plan to run, or the one-line
/// reason the cell is skipped.
pub(crate) fn check_cell(cell: &Cell) -> Result<TestPlan, String> {
    let test = match cell.test.as_str() {
        "latency" => TestKind::Latency,
        "throughput" => TestKind::Throughput,
        other => return Err(format!("'{other}': not a latency or throughput test")),
    };
    let mut req = TestRequest {
        quiet: true,
        ..TestRequest::default()
    };
    for (name, value) in cell.settings() {
        req.set(&name, value.as_deref()).map_err(|e| e.0)?;
    }
    req.plan(test).map_err(|e| e.0)
}

/// Runs a cell whose publisher is another host: the cell's command there
/// over SSH; its results file (with that host's environment) becomes the
/// cell's. Returns why it failed, if it did.
fn remote_publisher(
    cell: &Cell,
    host: &PublisherHost,
    sink: &mut pubsubperf_runner::sink::Sink,
) -> anyhow::Result<Option<Fault>> {
    use pubsubperf_harness::ssh;
    let target = ssh::Target::parse(&host.connect)
        .and_then(Result::ok)
        .with_context(|| format!("hosts.{}.connect: not an ssh:// address", host.name))?;
    let path = host.remote_path.as_deref().unwrap_or("pubsubperf");
    let run = match ssh::run_publisher(&target, path, &cell.args()) {
        Ok(r) => r,
        Err(f) => return Ok(Some(f)),
    };
    if !run.json.trim().is_empty() {
        sink.file = serde_json::from_str(&run.json).with_context(|| {
            format!("the results file from {} does not parse", target.display())
        })?;
    }
    Ok(match run.code {
        Some(0) => None,
        Some(130) => Some(Fault::Interrupted),
        code => Some(Fault::Peer(format!(
            "publisher on {} ({}): {}",
            host.name,
            code.map_or("no exit code".into(), |c| format!("exit {c}")),
            run.last_line
        ))),
    })
}

/// Runs a sweep.
pub fn run(a: &SweepArgs) -> anyhow::Result<ExitCode> {
    let sweep = load(&a.file)?;
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
        if pubsubperf_report::db::is_server(&path) || path.exists() {
            let db = crate::analysis::open_db(Some(&path))?;
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
        let mut refused = 0usize;
        for c in &todo {
            println!(
                "{} (repetition {}): pubsubperf {}",
                c.key,
                c.repetition,
                c.args().join(" ")
            );
            if let Err(why) = check_cell(c) {
                println!("  would be skipped: {why}");
                refused += 1;
            }
        }
        eprintln!(
            "sweep '{}': {} to run, {refused} would be skipped here",
            sweep.name,
            todo.len() - refused
        );
        return Ok(ExitCode::SUCCESS);
    }
    let tty = std::io::stderr().is_terminal();
    let mut sink = pubsubperf_runner::sink::Sink::new(
        pubsubperf_core::environment::Environment::detect(),
        a.json.as_deref(),
        None,
    );
    sink.file.environment.calibration = pubsubperf_runner::calibration::load();
    let total_est: f64 = todo.iter().map(|c| estimate_s(c)).sum();
    let (mut spent_est, mut failed, mut skipped) = (0.0f64, 0usize, 0usize);
    let mut skips = skips::Skips::default();
    let start = Instant::now();
    // One run group for every cell this invocation saves.
    let group = pubsubperf_report::db::new_group_id();
    let mut saved_in = None;
    // One agent per ssh:// host for every cell (ended when the sweep ends).
    let agents = std::sync::Arc::new(pubsubperf_harness::ssh::Pool::new());
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
        spent_est += estimate_s(cell);
        let plan = match check_cell(cell) {
            Ok(p) => p,
            Err(why) => {
                if tty {
                    eprintln!();
                }
                eprintln!("  skipped {}: {why}", cell.key);
                skipped += 1;
                skips.add(&cell.key, &why);
                continue;
            }
        };
        // Each cell is saved as its own results file in the database.
        let mut cell_sink = pubsubperf_runner::sink::Sink::new(
            pubsubperf_runner::environment::bindings_env(&plan.specs),
            None,
            None,
        );
        cell_sink.file.environment.calibration = sink.file.environment.calibration.clone();
        let fault = match &cell.publisher {
            None => crate::execute(&plan, &mut cell_sink, Some(&agents))?,
            Some(host) => remote_publisher(cell, host, &mut cell_sink)?,
        };
        let meta = SaveMeta {
            group: Some(group.clone()),
            sweep: Some(sweep.name.clone()),
            cell: Some(cell_id(cell)),
            repetition: cell.repetition,
            command: Some(format!("sweep {}", a.file.display())),
            ..Default::default()
        };
        for r in &mut cell_sink.file.runs {
            r.hosts = cell.hosts.clone();
        }
        for (name, v) in &cell_sink.file.environment.bindings {
            sink.file
                .environment
                .bindings
                .insert(name.clone(), v.clone());
        }
        // In the JSON file first: a store that fails loses nothing measured.
        for r in &cell_sink.file.runs {
            sink.push(r.clone())?;
        }
        if !cell_sink.file.runs.is_empty() {
            saved_in = save_results(&a.save, &cell_sink.file, &meta)
                .with_context(|| {
                    format!(
                        "saving cell {} (the runs measured so far are in the --json file; --resume measures the rest)",
                        cell.key
                    )
                })?
                .or(saved_in);
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
    eprint!("{}", skips.tally());
    print!(
        "{}",
        pubsubperf_report::live::summary_table(&sink.file.runs)
    );
    if let Some((path, group)) = saved_in {
        println!("database: run group {group} in {}", path.display());
    }
    Ok(if interrupted {
        ExitCode::from(130)
    } else if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pubsubperf_harness::registry;
    use std::path::Path;

    /// Refusals that depend on this machine, not on the sweep file: a
    /// binding whose middleware is not installed, or someone else's RouDi
    /// with small chunks.
    fn environmental(why: &str) -> bool {
        why.contains("not available on this machine") || why.contains("the running RouDi")
    }

    /// No cell of a shipped sweep file is refused by its binding: each one
    /// passes the check the runner makes before it runs a cell (the CLI's
    /// parser, the capabilities and the binding's own validation). With the
    /// default features (every binding, as CI builds) every cell is checked;
    /// cells of bindings not compiled in or not installed here are listed.
    #[test]
    fn every_shipped_cell_is_accepted() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sweeps");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        assert!(files.len() >= 2, "{files:?}");
        let (mut checked, mut unchecked, mut refused) = (0usize, Vec::new(), Vec::new());
        for f in &files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let sweep = pubsubperf_report::sweep::load(f).unwrap_or_else(|e| panic!("{e}"));
            for c in sweep.cells.iter().filter(|c| c.repetition == 1) {
                assert!(
                    registry::ALL.contains(&c.binding.as_str()),
                    "{name}: {}: no binding '{}'",
                    c.key,
                    c.binding
                );
                if registry::info(&c.binding).is_none() {
                    unchecked.push(format!("{name}: {}: {} not compiled in", c.key, c.binding));
                    continue;
                }
                match check_cell(c) {
                    Ok(plan) => {
                        assert_eq!(plan.specs.len(), 1, "{name}: {}", c.key);
                        assert_eq!(plan.specs[0].size, c.size, "{name}: {}", c.key);
                        checked += 1;
                    }
                    Err(why) if environmental(&why) => {
                        unchecked.push(format!("{name}: {}: {why}", c.key));
                    }
                    Err(why) => refused.push(format!("{name}: {}: {why}", c.key)),
                }
            }
        }
        for u in &unchecked {
            eprintln!("not checked here: {u}");
        }
        assert!(
            refused.is_empty(),
            "{} shipped cell(s) refused:\n{}",
            refused.len(),
            refused.join("\n")
        );
        assert!(checked > 0, "no cell checked");
    }

    /// A sweep's rate and subscribers axes and the command line's lists
    /// give the same runs: a sweep makes one cell per value (for
    /// `--resume`) and each cell's command is planned by the same code as
    /// a list's points, so the configs match but for the run ids.
    #[test]
    fn sweep_axes_and_command_line_lists_give_the_same_runs() {
        let s = pubsubperf_report::sweep::parse(
            "[matrix]\nbindings = [\"udp\"]\ntests = [\"throughput\"]\nsizes = [64]\nrate = [100, \"max\"]\nsubscribers = [1, 2]",
            "t",
        )
        .unwrap();
        let config = |s: &pubsubperf_harness::spec::RunSpec| {
            let mut c = s.config_json();
            c["endpoint"]["run_id"] = serde_json::Value::Null;
            c.to_string()
        };
        let mut from_sweep: Vec<String> = s
            .cells
            .iter()
            .map(|c| {
                let p = check_cell(c).unwrap();
                assert_eq!(p.specs.len(), 1, "{}", c.key);
                config(&p.specs[0])
            })
            .collect();
        let mut req = TestRequest {
            quiet: true,
            ..TestRequest::default()
        };
        req.set("rate", Some("100,max")).unwrap();
        req.set("subscribers", Some("1,2")).unwrap();
        let mut from_cli: Vec<String> = req
            .plan(TestKind::Throughput)
            .unwrap()
            .specs
            .iter()
            .map(config)
            .collect();
        assert_eq!(from_cli.len(), 4);
        from_sweep.sort();
        from_cli.sort();
        assert_eq!(from_sweep, from_cli);
    }

    /// The check refuses what a binding cannot do, with the binding's reason.
    #[test]
    fn check_cell_gives_the_reason() {
        let s = pubsubperf_report::sweep::parse(
            "[matrix]\nbindings = [\"udp\", \"tcp\"]\nsizes = [64, \"100KiB\"]",
            "t",
        )
        .unwrap();
        let why = |binding: &str, size: usize| {
            let c = s
                .cells
                .iter()
                .find(|c| c.binding == binding && c.size == size)
                .unwrap();
            check_cell(c)
        };
        if registry::info("udp").is_some() {
            assert!(why("udp", 64).is_ok());
            let e = why("udp", 102_400).unwrap_err();
            assert!(e.starts_with("--size 102400: exceeds udp's limit"), "{e}");
            assert!(why("tcp", 102_400).is_ok());
        }
    }
}
