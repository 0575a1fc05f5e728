//! The analysis commands (`report`, `merge`, `compare`, `history`,
//! `export`) and saving results in the results database. Their arguments
//! are defined in `cli/analysis.rs`; this turns them into the plain types
//! of pubsubperf-report, which does the work.

use crate::cli::{
    CompareArgs, ExportArgs, FilterArgs, HistoryArgs, ImportArgs, MergeArgs, ReportArgs, SaveArgs,
};
use crate::plan::UsageError;
use pubsubperf_core::escape::printable_all;
use pubsubperf_core::result::ResultsFile;
use pubsubperf_report::ReportError;
use pubsubperf_report::db::{self, Database, Filter, Saved, StoredGraph, StoredRun};
use pubsubperf_report::failif::Condition;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub use pubsubperf_report::db::SaveMeta;

/// Saves a finished results file in the results database, unless
/// `--no-save`. Returns the database path and the run-group id of the
/// saved runs (`None` with `--no-save`). Errors are one line, naming
/// `--db`; bad input (an unusable path) is a [`UsageError`].
pub fn save_results(
    args: &SaveArgs,
    file: &ResultsFile,
    meta: &SaveMeta,
) -> anyhow::Result<Option<(PathBuf, String)>> {
    if args.no_save {
        return Ok(None);
    }
    let meta = SaveMeta {
        labels: labels(&args.labels)?,
        ..meta.clone()
    };
    db::store(args.db.as_deref(), file, &meta)
        .map(Some)
        .map_err(|e| flag_error("--db", e))
}

/// The labels of `$PUBSUBPERF_LABELS` (`KEY=VALUE,...`), then of
/// `--label KEY=VALUE` (which win).
pub(crate) fn labels(flags: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let env = std::env::var("PUBSUBPERF_LABELS").unwrap_or_default();
    let from_env = env.split(',').filter(|l| !l.trim().is_empty());
    for (what, l) in from_env
        .map(|l| ("PUBSUBPERF_LABELS", l.trim()))
        .chain(flags.iter().map(|l| ("--label", l.as_str())))
    {
        match l.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                out.insert(k.trim().to_string(), v.trim().to_string());
            }
            _ => {
                return Err(UsageError(format!(
                    "{what} '{l}': expected KEY=VALUE, e.g. commit=abc123"
                ))
                .into());
            }
        }
    }
    Ok(out)
}

impl FilterArgs {
    fn is_empty(&self) -> bool {
        self.binding.is_none()
            && self.transport.is_none()
            && self.test.is_none()
            && self.size.is_none()
            && self.since.is_none()
            && self.sweep.is_none()
            && self.group.is_none()
            && self.name.is_none()
            && self.limit.is_none()
    }

    /// Validates the filters into the library's plain type.
    pub fn to_filter(&self) -> Result<Filter, UsageError> {
        if let Some(t) = &self.test
            && !["latency", "throughput", "topology"].contains(&t.as_str())
        {
            return Err(UsageError(format!(
                "--test '{t}': expected latency, throughput or topology"
            )));
        }
        let size = self
            .size
            .as_deref()
            .map(pubsubperf_core::size::parse_size)
            .transpose()
            .map_err(|e| UsageError(format!("--size: {e}")))?;
        let since = self
            .since
            .as_deref()
            .map(|s| pubsubperf_report::time::parse_since(s, pubsubperf_report::time::now_secs()))
            .transpose()
            .map_err(|e| UsageError(e.to_string()))?;
        if self.limit == Some(0) {
            return Err(UsageError("--limit: must be at least 1".into()));
        }
        Ok(Filter {
            binding: self.binding.clone(),
            transport: self.transport.clone(),
            test: self.test.clone(),
            size,
            since,
            sweep: self.sweep.clone(),
            group: self.group.clone(),
            name: self.name.clone(),
            limit: self.limit,
        })
    }
}

/// A library error as a CLI error: bad input becomes a [`UsageError`]
/// (exit 2) naming `what`; machine failures stay errors (exit 1).
fn flag_error(what: &str, e: ReportError) -> anyhow::Error {
    if e.is_usage() {
        UsageError(format!("{what}: {e}")).into()
    } else {
        anyhow::anyhow!("{what}: {e}")
    }
}

/// The results store at `path`, a file or a `postgres://` URL (default:
/// [`db::default_path`]); an unusable path (a symbolic link), URL or
/// password is bad input naming `--db`.
pub(crate) fn open_db(path: Option<&Path>) -> anyhow::Result<Database> {
    let p = match path {
        Some(p) => p.to_path_buf(),
        None => db::default_path().map_err(|e| flag_error("--db", e))?,
    };
    Database::open(&p).map_err(|e| flag_error("--db", e))
}

fn read(flag: &str, p: &Path) -> anyhow::Result<ResultsFile> {
    pubsubperf_report::read_results(p).map_err(|e| flag_error(flag, e))
}

/// The runs and the topology runs a filter selects.
fn query(db: &Database, filter: &Filter) -> anyhow::Result<(Vec<StoredRun>, Vec<StoredGraph>)> {
    let runs = db.query(filter).map_err(|e| flag_error("--db", e))?;
    let graphs = db.query_graphs(filter).map_err(|e| flag_error("--db", e))?;
    Ok((runs, graphs))
}

fn write_out(flag: &str, p: &Path, data: &[u8]) -> anyhow::Result<()> {
    if p.as_os_str() == "-" {
        use std::io::Write;
        std::io::stdout().write_all(data)?;
        return Ok(());
    }
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| UsageError(format!("{flag} {}: {e}", p.display())))?;
    }
    pubsubperf_report::write_file(p, data).map_err(|e| flag_error(flag, e))
}

/// `pubsubperf report`.
pub fn report(a: &ReportArgs) -> anyhow::Result<ExitCode> {
    use pubsubperf_report::html::{Options, Source, build_with_trends};
    use pubsubperf_report::trend;
    let settings = trend::Settings::default();
    let mut trends = Vec::new();
    let mut sources = Vec::new();
    for p in &a.results {
        sources.push(Source {
            name: p.display().to_string(),
            file: read("RESULTS", p)?,
        });
    }
    if a.results.is_empty() || a.db.is_some() || !a.filter.is_empty() {
        let filter = a.filter.to_filter()?;
        let db = open_db(a.db.as_deref())?;
        let (runs, graphs) = query(&db, &filter)?;
        if runs.is_empty() && graphs.is_empty() {
            return Err(UsageError(format!(
                "--db {}: no runs match the selection (see 'pubsubperf history')",
                db.location()
            ))
            .into());
        }
        sources.extend(db_sources(&db, &runs, &graphs));
        trends = trend::series(&trend::points(&runs), &settings);
    }
    let report = build_with_trends(
        &sources,
        &Options {
            title: a.title.clone(),
            generated_at: pubsubperf_report::time::rfc3339_now(),
        },
        Some((&trends, &settings)),
    )
    .map_err(|e| flag_error("RESULTS", e))?;
    write_out("--out", &a.out, report.html.as_bytes())?;
    if let Some(dir) = &a.svg_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| UsageError(format!("--svg-dir {}: {e}", dir.display())))?;
        for (name, svg) in &report.plots {
            write_out("--svg-dir", &dir.join(name), svg.as_bytes())?;
        }
    }
    println!(
        "pubsubperf report: wrote {} ({} plot(s){})",
        a.out.display(),
        report.plots.len(),
        a.svg_dir
            .as_ref()
            .map(|d| format!(", also as SVG files in {}", d.display()))
            .unwrap_or_default()
    );
    Ok(ExitCode::SUCCESS)
}

/// Stored runs and topology runs as report sources, one per run group
/// (each group has one environment).
fn db_sources(
    db: &Database,
    runs: &[StoredRun],
    graphs: &[StoredGraph],
) -> Vec<pubsubperf_report::html::Source> {
    type Group = (String, Vec<StoredRun>, Vec<StoredGraph>);
    fn of<'a>(groups: &'a mut Vec<Group>, id: &str) -> &'a mut Group {
        let i = match groups.iter().position(|(g, _, _)| g == id) {
            Some(i) => i,
            None => {
                groups.push((id.to_string(), Vec::new(), Vec::new()));
                groups.len() - 1
            }
        };
        &mut groups[i]
    }
    let mut groups: Vec<Group> = Vec::new();
    for r in runs {
        of(&mut groups, &r.group).1.push(r.clone());
    }
    for g in graphs {
        of(&mut groups, &g.group).2.push(g.clone());
    }
    groups
        .into_iter()
        .filter_map(|(g, v, graphs)| {
            let (file, _) = db::to_results_file(&v, &graphs).ok()?;
            Some(pubsubperf_report::html::Source {
                name: format!("{} group {g}", db.location()),
                file,
            })
        })
        .collect()
}

/// `pubsubperf merge`.
pub fn merge(a: &MergeArgs) -> anyhow::Result<ExitCode> {
    let mut files = Vec::new();
    for p in &a.results {
        files.push(read("RESULTS", p)?);
    }
    let before: usize = files.iter().map(|f| f.runs.len()).sum();
    let (merged, notes) =
        pubsubperf_report::merge::merge_files(&files).map_err(|e| flag_error("RESULTS", e))?;
    for n in &notes {
        eprintln!("pubsubperf merge: note: {}", printable_all(n));
    }
    let json = serde_json::to_string_pretty(&merged)?;
    write_out("--out", &a.out, json.as_bytes())?;
    let topologies = match merged.graphs.len() {
        0 => String::new(),
        n => format!(" ({n} topology run(s) kept as they are)"),
    };
    println!(
        "pubsubperf merge: {} run(s) from {} file(s) merged into {} cell(s){topologies}: wrote {}",
        before,
        files.len(),
        merged.runs.len(),
        a.out.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Parses a `db:` selection of `compare`.
fn db_selector(flag: &str, spec: &str) -> Result<Filter, UsageError> {
    let mut f = FilterArgs::default();
    if !spec.contains('=') {
        f.group = Some(spec.to_string());
        return f.to_filter();
    }
    for part in spec.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').ok_or_else(|| {
            UsageError(format!(
                "{flag} 'db:{spec}': expected KEY=VALUE, got '{part}'"
            ))
        })?;
        let text = v;
        let v = Some(v.to_string());
        match k {
            "group" => f.group = v,
            "sweep" => f.sweep = v,
            "binding" => f.binding = v,
            "transport" => f.transport = v,
            "test" => f.test = v,
            "size" => f.size = v,
            "name" => f.name = v,
            "since" => f.since = v,
            "limit" => {
                f.limit = Some(text.parse().map_err(|_| {
                    UsageError(format!("{flag} 'db:{spec}': limit must be a number"))
                })?)
            }
            _ => {
                return Err(UsageError(format!(
                    "{flag} 'db:{spec}': unknown key '{k}' (use group, sweep, binding, transport, test, size, name, since, limit)"
                )));
            }
        }
    }
    f.to_filter()
        .map_err(|e| UsageError(format!("{flag} 'db:{spec}': {}", e.0)))
}

fn side(flag: &str, spec: &str, db_path: Option<&Path>) -> anyhow::Result<(String, ResultsFile)> {
    if let Some(sel) = spec.strip_prefix("db:") {
        let filter = db_selector(flag, sel)?;
        let db = open_db(db_path)?;
        let (runs, graphs) = query(&db, &filter)?;
        if runs.is_empty() && graphs.is_empty() {
            return Err(UsageError(format!(
                "{flag} '{spec}': no runs match in {}",
                db.location()
            ))
            .into());
        }
        let (file, notes) = db::to_results_file(&runs, &graphs).map_err(|e| flag_error(flag, e))?;
        for n in notes {
            eprintln!("pubsubperf compare: note: {flag}: {}", printable_all(&n));
        }
        return Ok((spec.to_string(), file));
    }
    Ok((spec.to_string(), read(flag, Path::new(spec))?))
}

/// `pubsubperf compare`.
pub fn compare(a: &CompareArgs) -> anyhow::Result<ExitCode> {
    let conditions = a
        .fail_if
        .iter()
        .map(|e| Condition::parse(e).map_err(|e| UsageError(e.to_string())))
        .collect::<Result<Vec<_>, _>>()?;
    let (bn, base) = side("BASE", &a.base, a.db.as_deref())?;
    let (nn, new) = side("NEW", &a.new, a.db.as_deref())?;
    let unplanned = not_as_planned(&[("BASE", &base), ("NEW", &new)]);
    if let Some(first) = unplanned.first() {
        if !a.allow_not_as_planned {
            return Err(UsageError(format!(
                "compare: {first}{}; its figures were not measured as planned: measure it again, or pass --allow-not-as-planned to compare it anyway",
                match unplanned.len() {
                    1 => String::new(),
                    n => format!(" (and {} more run(s))", n - 1),
                }
            ))
            .into());
        }
        for u in &unplanned {
            eprintln!("pubsubperf compare: NOT AS PLANNED: {u}");
        }
    }
    let c = pubsubperf_report::compare::compare(&bn, &base, &nn, &new, &conditions)
        .map_err(|e| flag_error("compare", e))?;
    print!("{}", pubsubperf_report::text::comparison(&c));
    if c.cells.is_empty() && !(base.runs.is_empty() && new.runs.is_empty()) {
        eprintln!(
            "pubsubperf compare: no cell of BASE matches a cell of NEW (same binding, transport, test, size, QoS and settings)"
        );
    }
    if c.graphs.graphs.is_empty() && !(base.graphs.is_empty() && new.graphs.is_empty()) {
        eprintln!(
            "pubsubperf compare: no topology run of BASE matches one of NEW (same topology name, binding and transport)"
        );
    }
    Ok(if c.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(crate::EXIT_FAIL_IF)
    })
}

/// Each run of the sides that did not run as planned, with its reasons.
fn not_as_planned(sides: &[(&str, &pubsubperf_core::result::ResultsFile)]) -> Vec<String> {
    sides
        .iter()
        .flat_map(|(name, f)| {
            f.runs
                .iter()
                .filter(|r| !r.conditions.is_empty())
                .map(move |r| {
                    format!(
                        "{name} run {} {} {} B did not run as planned ({})",
                        printable_all(&r.binding),
                        r.test,
                        r.size,
                        printable_all(&r.conditions.join("; "))
                    )
                })
        })
        .collect()
}

/// `pubsubperf import`: results JSON files and SQLite stores into the
/// store; a run the store already has is not stored again.
pub fn import(a: &ImportArgs) -> anyhow::Result<ExitCode> {
    enum Source {
        File(Box<ResultsFile>),
        Store(Vec<StoredRun>, Vec<StoredGraph>),
    }
    let mut sources = Vec::new();
    for p in &a.results {
        let source = if db::is_sqlite_file(p) {
            let (runs, graphs) = db::read_sqlite_store(p).map_err(|e| flag_error("RESULTS", e))?;
            Source::Store(runs, graphs)
        } else {
            Source::File(Box::new(read("RESULTS", p)?))
        };
        sources.push((p, source));
    }
    let labels = labels(&a.labels)?;
    let mut db = open_db(a.db.as_deref())?;
    for (p, source) in sources {
        let command = format!("import {}", p.display());
        let saved = match source {
            Source::File(f) => {
                let meta = SaveMeta {
                    sweep: a.sweep.clone(),
                    command: Some(command),
                    labels: labels.clone(),
                    ..Default::default()
                };
                vec![
                    db.save_counted(&f, &meta)
                        .map_err(|e| flag_error("--db", e))?,
                ]
            }
            Source::Store(mut runs, mut graphs) => {
                for r in &mut runs {
                    r.labels.extend(labels.clone());
                    if a.sweep.is_some() {
                        r.sweep.clone_from(&a.sweep);
                    }
                }
                for g in &mut graphs {
                    g.labels.extend(labels.clone());
                }
                db.import_stored(&runs, &graphs, &command)
                    .map_err(|e| flag_error("--db", e))?
            }
        };
        println!(
            "pubsubperf import: {}",
            imported(&p.display().to_string(), &saved)
        );
    }
    eprintln!("database: {}", db.location());
    Ok(ExitCode::SUCCESS)
}

/// What an import stored from one source, in a line.
fn imported(source: &str, saved: &[Saved]) -> String {
    let (runs, graphs, already) = saved.iter().fold((0, 0, 0), |t, s| {
        (t.0 + s.runs, t.1 + s.graphs, t.2 + s.already)
    });
    let made: Vec<&str> = saved
        .iter()
        .filter(|s| s.runs + s.graphs > 0)
        .map(|s| s.group.as_str())
        .collect();
    let topologies = match graphs {
        0 => String::new(),
        n => format!(" and {n} topology run(s)"),
    };
    let groups = match made.as_slice() {
        [] => String::new(),
        [g] => format!(" as group {g}"),
        g => format!(" in {} groups", g.len()),
    };
    let already = match already {
        0 => String::new(),
        n => format!("; {n} already stored, not stored again"),
    };
    format!("{runs} run(s){topologies} from {source} stored{groups}{already}")
}

/// `pubsubperf history`.
pub fn history(a: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let mut filter = a.filter.to_filter()?;
    if a.trend {
        return trend(a, &filter);
    }
    if filter.limit.is_none() {
        filter.limit = Some(50);
    }
    let db = open_db(a.db.as_deref())?;
    let (runs, graphs) = query(&db, &filter)?;
    print!("{}", pubsubperf_report::graph_text::history(&runs, &graphs));
    let total = db.count().map_err(|e| flag_error("--db", e))?;
    let total_graphs = db.count_graphs().map_err(|e| flag_error("--db", e))?;
    let topologies = match total_graphs {
        0 => String::new(),
        n => format!(" and {} of {n} topology run(s)", graphs.len()),
    };
    eprintln!(
        "{} of {} run(s){topologies} in {}",
        runs.len(),
        total,
        db.location()
    );
    Ok(ExitCode::SUCCESS)
}

/// `pubsubperf history --trend [--fail-if change[>N%]]`.
fn trend(a: &HistoryArgs, filter: &Filter) -> anyhow::Result<ExitCode> {
    let bad = |c: &str| {
        UsageError(format!(
            "--fail-if '{c}': expected 'change' or 'change>N%' (e.g. change>10%)"
        ))
    };
    let limit = match a.fail_if.as_deref().map(str::trim) {
        None => None,
        Some("change") => Some(0.0),
        Some(c) => {
            let n = c
                .strip_prefix("change>")
                .and_then(|n| n.trim().strip_suffix('%'))
                .and_then(|n| n.trim().parse::<f64>().ok())
                .filter(|n| n.is_finite() && *n >= 0.0)
                .ok_or_else(|| bad(c))?;
            Some(n / 100.0)
        }
    };
    let db = open_db(a.db.as_deref())?;
    let runs = db.query(filter).map_err(|e| flag_error("--db", e))?;
    let settings = pubsubperf_report::trend::Settings::default();
    let series =
        pubsubperf_report::trend::series(&pubsubperf_report::trend::points(&runs), &settings);
    print!("{}", pubsubperf_report::trend::text(&series, &settings));
    let changes: usize = series.iter().map(|s| s.changes.len()).sum();
    eprintln!(
        "{} series of {} run(s) in {}: {changes} change point(s)",
        series.len(),
        runs.len(),
        db.location()
    );
    if let Some(limit) = limit {
        let worse: Vec<String> = series
            .iter()
            .flat_map(|s| {
                s.changes
                    .iter()
                    .filter(|c| c.worse && c.change.abs() > limit)
                    .map(move |c| {
                        format!(
                            "{}/{} {} {} B on {} at {} ({:+.1} %)",
                            s.key.binding,
                            s.key.transport,
                            s.key.test,
                            s.key.size,
                            s.key.machine,
                            printable_all(&c.revision),
                            c.change * 100.0
                        )
                    })
            })
            .collect();
        if !worse.is_empty() {
            eprintln!(
                "pubsubperf history: --fail-if {}: worse at {}",
                a.fail_if.as_deref().unwrap_or_default(),
                worse.join("; ")
            );
            return Ok(ExitCode::from(3));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `pubsubperf export`.
pub fn export(a: &ExportArgs) -> anyhow::Result<ExitCode> {
    let filter = a.filter.to_filter()?;
    let db = open_db(a.db.as_deref())?;
    let (runs, graphs) = query(&db, &filter)?;
    if runs.is_empty() && graphs.is_empty() {
        return Err(UsageError(format!(
            "--db {}: no runs match the selection (see 'pubsubperf history')",
            db.location()
        ))
        .into());
    }
    if let Some(p) = &a.csv {
        // CSV holds runs, one per line; topology runs go to --json only.
        let plain: Vec<_> = runs.iter().map(|r| r.run.clone()).collect();
        write_out("--csv", p, pubsubperf_report::csv::csv(&plain).as_bytes())?;
    }
    if let Some(p) = &a.json {
        let (file, notes) =
            db::to_results_file(&runs, &graphs).map_err(|e| flag_error("--json", e))?;
        for n in notes {
            eprintln!("pubsubperf export: note: {}", printable_all(&n));
        }
        write_out("--json", p, serde_json::to_string_pretty(&file)?.as_bytes())?;
    }
    let topologies = match graphs.len() {
        0 => String::new(),
        n => format!(" and {n} topology run(s)"),
    };
    eprintln!(
        "pubsubperf export: {} run(s){topologies} exported",
        runs.len()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_selectors() {
        let f = db_selector("BASE", "abc").unwrap();
        assert_eq!(f.group.as_deref(), Some("abc"));
        let f = db_selector("BASE", "sweep=nightly,size=1KiB,limit=5").unwrap();
        assert_eq!(
            (f.sweep.as_deref(), f.size, f.limit),
            (Some("nightly"), Some(1024), Some(5))
        );
        let f = db_selector("BASE", "name=chain5,test=topology").unwrap();
        assert_eq!(
            (f.name.as_deref(), f.test.as_deref()),
            (Some("chain5"), Some("topology"))
        );
        let e = db_selector("NEW", "colour=red").unwrap_err().0;
        assert!(e.starts_with("NEW 'db:colour=red': unknown key"), "{e}");
        let e = db_selector("NEW", "size=1XB").unwrap_err().0;
        assert!(e.starts_with("NEW 'db:size=1XB': --size"), "{e}");
    }
}
