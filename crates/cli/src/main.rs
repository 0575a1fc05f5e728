//! pubsubperf: the command-line front end. The command line is parsed in
//! `cli/` (the only module that uses clap); `plan.rs` validates a test and
//! builds its run specs from plain values (the command line, sweep cells and
//! the quick job all go through it); output is in `output.rs`. The work is
//! done by the library crates (pubsubperf-harness, pubsubperf-core and the
//! bindings).

mod agent;
mod analysis;
mod calibrate;
mod cli;
mod discovery;
mod doctor;
mod fan_out_line;
mod find_max;
mod interrupt;
mod limit;
mod load;
mod one_way;
mod output;
mod per_subscriber;
mod perftest;
mod plan;
mod quick;
mod ramp;
mod relay;
mod rti_default;
#[cfg(test)]
mod run_fixture;
mod side_print;
mod sweep;
mod throughput_example;
mod topics;
mod topology;
mod topology_print;

use anyhow::Context;
use cli::{Cli, Command};
use plan::UsageError;
use pubsubperf_core::environment::Environment;
use pubsubperf_core::result::{Run, TestKind};
use pubsubperf_harness::session::{Peers, RemoteAccess, Session};
use pubsubperf_harness::{Fault, INTERRUPTED, registry};
use std::process::ExitCode;
use std::sync::atomic::Ordering;

/// The exit code of `compare` when a `--fail-if` condition holds: distinct
/// from 1 (a run or the comparison failed) so CI can tell a regression
/// from an error.
pub const EXIT_FAIL_IF: u8 = 3;

/// Exit codes: 0 success, 1 a run failed (peer died, binding error),
/// 2 bad input, 3 a `compare --fail-if` condition held (a regression),
/// 130 interrupted.
fn main() -> ExitCode {
    // The cores runs are planned on, read before any run pins a thread.
    pubsubperf_core::sys::cpus();
    let cli = match cli::parse() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let outcome = if std::env::var_os(CHECK_ONLY).is_some() {
        check_only(cli)
    } else {
        run(cli)
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            if let Some(u) = e.downcast_ref::<UsageError>() {
                eprintln!("pubsubperf: {u}");
                return ExitCode::from(2);
            }
            eprintln!("pubsubperf: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// With this variable set, the command line is parsed and validated (a
/// test's plan built, a sweep's cells checked) and nothing runs: exit 0 when
/// the command would start, 2 with the one-line error otherwise. The docs
/// test checks every command of README.md and docs/ this way.
const CHECK_ONLY: &str = "PUBSUBPERF_CHECK_ONLY";

fn check_only(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Latency(a)) => drop(a.plan(TestKind::Latency)?),
        Some(Command::Throughput(a)) => drop(a.plan(TestKind::Throughput)?),
        Some(Command::Perftest(a)) => drop(perftest::plan(&perftest::read(&a.args)?)?),
        Some(Command::ThroughputExample(a)) => drop(throughput_example::plan(
            &throughput_example::read(&a.args)?,
        )?),
        Some(Command::Topology(a)) => drop(topology::plan(&a)?),
        Some(Command::Sweep(a)) => {
            let sweep = sweep::load(&a.file)?;
            for cell in &sweep.cells {
                if let Err(why) = sweep::check_cell(cell) {
                    eprintln!(
                        "pubsubperf: sweep {}: cell {} would be skipped: {why}",
                        a.file.display(),
                        cell.key
                    );
                }
            }
        }
        _ => {}
    }
    Ok(ExitCode::SUCCESS)
}

fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        None => {
            interrupt::install(interrupt::Notice::Say);
            // The main job is `pubsubperf quick` with its defaults.
            quick::run(&cli::QuickArgs::default())
        }
        Some(Command::Quick(a)) => {
            interrupt::install(interrupt::Notice::Say);
            quick::run(&a)
        }
        Some(Command::Latency(a)) => {
            interrupt::install(interrupt::Notice::Say);
            test(a.plan(TestKind::Latency)?, &a.save, &command_line())
        }
        Some(Command::Throughput(a)) => {
            interrupt::install(interrupt::Notice::Say);
            test(a.plan(TestKind::Throughput)?, &a.save, &command_line())
        }
        Some(Command::Perftest(a)) => perftest::run(&a.args),
        Some(Command::ThroughputExample(a)) => throughput_example::run(&a.args),
        Some(Command::Sweep(a)) => {
            interrupt::install(interrupt::Notice::Say);
            sweep::run(&a)
        }
        Some(Command::Topology(a)) => {
            interrupt::install(interrupt::Notice::Say);
            topology::run(&a)
        }
        Some(Command::Calibrate(a)) => calibrate::run(&a),
        Some(Command::Doctor(a)) => doctor::run(&a),
        Some(Command::Bindings(a)) => {
            let infos = registry::infos();
            if a.json {
                println!("{}", serde_json::to_string_pretty(&infos)?);
            } else {
                print!("{}", output::bindings_table(&infos));
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Report(a)) => analysis::report(&a),
        Some(Command::Merge(a)) => analysis::merge(&a),
        Some(Command::Compare(a)) => analysis::compare(&a),
        Some(Command::History(a)) => analysis::history(&a),
        Some(Command::Export(a)) => analysis::export(&a),
        Some(Command::Import(a)) => analysis::import(&a),
        Some(Command::Completions(a)) => {
            cli::completions(a.shell, &mut std::io::stdout().lock());
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Man(a)) => {
            match &a.dir {
                Some(dir) => {
                    for page in cli::man_pages(dir)
                        .with_context(|| format!("man --dir {}", dir.display()))?
                    {
                        println!("{}", page.display());
                    }
                }
                None => cli::man_page(&mut std::io::stdout().lock())?,
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Relay(a)) => {
            interrupt::install(interrupt::Notice::Say);
            relay::run(&a)
        }
        Some(Command::Sub(a)) => {
            let r = if let Some(addr) = &a.connect_back {
                // Started by a publisher: it handles Ctrl-C and stops us.
                pubsubperf_harness::serve::connect_back(addr)
            } else if a.session_stdin {
                // Started by an agent: its keys first, before anything opens
                // a descriptor; SIGTERM (the agent stopping) ends the
                // session cleanly.
                let keys = a
                    .session_keys_fd
                    .map(pubsubperf_harness::key_pipe::take)
                    .transpose()
                    .map_err(|e| UsageError(e.to_string()))?;
                let keys = keys.as_ref();
                interrupt::install(interrupt::Notice::Quiet);
                let settings = agent::session_settings(a.session.as_deref())?;
                match settings.print.as_deref() {
                    None => pubsubperf_harness::serve::serve_stdin(&settings, keys, &mut |_, _| {}),
                    Some(p) => {
                        let mut sub = side_print::SidePrint::open(p)?;
                        let r = pubsubperf_harness::serve::serve_stdin(
                            &settings,
                            keys,
                            &mut |spec, msg| sub.show(spec, msg),
                        );
                        sub.finish(r.is_ok());
                        r
                    }
                }
            } else {
                interrupt::install(interrupt::Notice::Say);
                let addr = a.listen.as_deref().unwrap_or("0.0.0.0:7400");
                agent::run(agent::Mode::Listen { addr, once: true }, &a.host, None)?
            };
            serve_exit(r)
        }
        Some(Command::Agent(a)) => {
            if a.new_token {
                agent::new_token(&a.host)?;
                return Ok(ExitCode::SUCCESS);
            }
            interrupt::install(interrupt::Notice::Quiet);
            let mode = if a.stdio {
                agent::Mode::Stdio
            } else {
                agent::Mode::Listen {
                    addr: &a.listen,
                    once: false,
                }
            };
            serve_exit(agent::run(mode, &a.host, None)?)
        }
    }
}

/// The exit code of a subscriber host's process.
fn serve_exit(r: Result<(), Fault>) -> anyhow::Result<ExitCode> {
    match r {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(Fault::Config(m)) => Err(UsageError(m).into()),
        Err(Fault::Interrupted) => Ok(ExitCode::from(130)),
        Err(e) => Err(anyhow::anyhow!("{e}")),
    }
}

/// The token this publisher presents to agents: the token file's contents,
/// or none when there is no token file at the default place (an agent that
/// wants one then refuses, saying how to get it).
pub fn agent_token(flag: Option<&std::path::Path>) -> anyhow::Result<Option<String>> {
    use pubsubperf_harness::token::{self, TokenError};
    let bad = |e: TokenError| UsageError(format!("--token-file: {e}"));
    let path = token::path(flag).map_err(bad)?;
    match token::load(&path) {
        Ok(t) => Ok(Some(t)),
        Err(TokenError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound && flag.is_none() => {
            Ok(None)
        }
        Err(e) => Err(bad(e).into()),
    }
}

/// How this plan reaches remote agents: the token (read only when an agent
/// is reached by address; over SSH none is needed) and the remote binary.
pub fn remote_access(
    plan: &plan::TestPlan,
    pool: Option<&std::sync::Arc<pubsubperf_harness::ssh::Pool>>,
) -> anyhow::Result<RemoteAccess> {
    let addrs = plan.connect.iter().chain(&plan.connect_publishers);
    let mut access = access_to(
        addrs.map(String::as_str),
        plan.token_file.as_deref(),
        plan.insecure,
        plan.remote_path.clone(),
    )?;
    access.pool = pool.cloned();
    Ok(access)
}

/// How to reach the agents at `addrs`: the token (read only when one is
/// reached by address, and not `insecure`; over SSH none is needed) and
/// the remote binary.
pub fn access_to<'a>(
    mut addrs: impl Iterator<Item = &'a str>,
    token_file: Option<&std::path::Path>,
    insecure: bool,
    remote_path: Option<String>,
) -> anyhow::Result<RemoteAccess> {
    let by_address = addrs.any(|a| !a.starts_with("ssh://"));
    Ok(RemoteAccess {
        token: if by_address && !insecure {
            agent_token(token_file)?
        } else {
            None
        },
        remote_path,
        pool: None,
    })
}

/// Chooses where the subscribers run.
pub fn peers_for(
    binding: &str,
    connect: &[String],
    access: RemoteAccess,
    n: usize,
) -> anyhow::Result<Peers> {
    if !connect.is_empty() {
        return Ok(Peers::Remote {
            addrs: connect.to_vec(),
            access,
        });
    }
    let in_process = registry::info(binding).is_some_and(|i| i.capabilities.in_process);
    if in_process {
        return Ok(Peers::Threads { n });
    }
    let exe = std::env::current_exe()
        .context("cannot find the pubsubperf binary to start subscribers")?;
    Ok(Peers::Local { n, exe })
}

pub fn bindings_env(specs: &[pubsubperf_harness::spec::RunSpec]) -> Environment {
    let mut env = Environment::detect();
    env.calibration = calibrate::load();
    if let Some(s) = specs.first() {
        env.doctor = pubsubperf_doctor::examine_here(&pinned(s), None);
    }
    for s in specs {
        for b in [&s.binding, &s.peer_binding] {
            if let Some(i) = registry::info(b) {
                env.bindings.insert(b.clone(), i.version);
            }
        }
    }
    env
}

/// The cores a run pins its two sides to.
fn pinned(s: &pubsubperf_harness::spec::RunSpec) -> Vec<usize> {
    [s.pub_cpu, s.sub_cpu].into_iter().flatten().collect()
}

/// Runs every spec of a plan, on one session per number of subscribers
/// and publishers (one session for most plans), pushing each finished run into
/// `sink` (which rewrites the output files at once). Returns why it stopped
/// early, if it did; set-up failures are returned the same way.
pub fn execute(
    plan: &plan::TestPlan,
    sink: &mut output::Sink,
    pool: Option<&std::sync::Arc<pubsubperf_harness::ssh::Pool>>,
) -> anyhow::Result<Option<Fault>> {
    let quiet = plan.quiet;
    // The live lines say the rate, subscribers and publishers of their
    // run where the plan's runs differ in them.
    let differ = |f: fn(&pubsubperf_harness::spec::RunSpec) -> u64| {
        plan.specs.iter().any(|s| f(s) != f(&plan.specs[0]))
    };
    let (rates, subs, pubs) = (
        differ(|s| s.rate.to_bits()),
        differ(|s| s.subscribers as u64),
        differ(|s| s.publishers as u64),
    );
    execute_with(plan, sink, pool, &mut |spec, i| {
        if !quiet {
            let mut point = String::new();
            if rates {
                point += &format!(", rate {}", pubsubperf_core::rate::format_rate(spec.rate));
            }
            if subs {
                point += &format!(", {} subscribers", spec.subscribers);
            }
            if pubs {
                point += &format!(", {} publishers", spec.publishers);
            }
            eprintln!("{}", output::interval_line(spec.test, spec.size, &point, i));
        }
    })
}

/// [`execute`], with each interval given to `on_interval` as it is
/// measured (the `perftest` front end prints them in Perftest's formats).
pub fn execute_with(
    plan: &plan::TestPlan,
    sink: &mut output::Sink,
    pool: Option<&std::sync::Arc<pubsubperf_harness::ssh::Pool>>,
    on_interval: &mut dyn FnMut(
        &pubsubperf_harness::spec::RunSpec,
        &pubsubperf_core::result::Interval,
    ),
) -> anyhow::Result<Option<Fault>> {
    plan.specs.first().context("no run")?;
    let access = remote_access(plan, pool)?;
    let quiet = plan.quiet;
    let mut failure: Option<Fault> = None;
    let mut stressors = None;
    // One session (subscriber and publisher processes) per run of specs
    // with the same numbers of subscribers and publishers: the plan puts
    // those two axes outermost (`plan::axes`).
    let mut start = 0;
    while start < plan.specs.len() && failure.is_none() {
        let first = &plan.specs[start];
        let end = start
            + plan.specs[start..]
                .iter()
                .take_while(|s| {
                    (s.topics, s.subscribers, s.publishers)
                        == (first.topics, first.subscribers, first.publishers)
                })
                .count();
        // `--topics N`: a session per topic, side by side.
        let mut sessions = Vec::new();
        for _ in 0..first.topics {
            match open_session(plan, first, access.clone(), sink)? {
                Ok(s) => sessions.push(s),
                Err(f) => {
                    failure = Some(f);
                    break;
                }
            }
        }
        if failure.is_some() {
            break;
        }
        let mut session = sessions.remove(0);
        if stressors.is_none()
            && let Some(l) = &plan.load
        {
            stressors = Some(load::Stressors::start(l, load_limit(plan))?);
        }
        let mut floors = limit::Floors::default();
        for n in start..end {
            let spec = &plan.specs[n];
            if n > 0 && plan.specs[n - 1].recovery_ms > 0 {
                // The ramp's pause after the previous demand.
                if let Err(f) = recover(plan.specs[n - 1].recovery_ms) {
                    failure = Some(f);
                    break;
                }
            }
            // A raw UDP ping-pong between the hosts, the latency floor
            // beside a middleware's (udp's own runs are that floor).
            let is_floor = [&spec.binding, &spec.peer_binding]
                .iter()
                .all(|b| b.as_str() == limit::FLOOR_BINDING);
            let udp_floor = if !plan.link_floor || is_floor {
                None
            } else {
                floors.udp(&mut session, spec)
            };
            let outcome = match plan.find_max {
                Some(max_loss) => find_max::find_max(
                    &mut session,
                    spec,
                    pubsubperf_harness::search::SearchParams {
                        max_loss_percent: max_loss,
                        ..Default::default()
                    },
                    quiet,
                ),
                None if !sessions.is_empty() => {
                    sessions.insert(0, session);
                    let o = topics::run_side_by_side(&mut sessions, spec, &mut |i| {
                        on_interval(spec, i)
                    });
                    session = sessions.remove(0);
                    o
                }
                None => {
                    pubsubperf_harness::run::run(&mut session, spec, &mut |i| on_interval(spec, i))
                }
            };
            if let Some(mut run) = outcome.run {
                if let (Some(l), Some(c)) = (&plan.load, run.config.as_object_mut()) {
                    c.insert("load".into(), l.record());
                }
                run.limit = limit::of(&run, &sink.file.environment, udp_floor);
                sink.push(run)?;
            }
            if let Some(f) = outcome.fault {
                failure = Some(f);
                break;
            }
        }
        for s in std::iter::once(session).chain(sessions) {
            if failure.is_none() {
                s.close();
            } else {
                drop(s);
            }
        }
        start = end;
    }
    drop(stressors);
    Ok(failure)
}

/// Starts the session of `first` and the specs after it with its numbers
/// of subscribers and publishers; across hosts, the subscriber host's
/// environment goes into `sink`. Set-up failures are returned inside.
fn open_session(
    plan: &plan::TestPlan,
    first: &pubsubperf_harness::spec::RunSpec,
    access: RemoteAccess,
    sink: &mut output::Sink,
) -> anyhow::Result<Result<Session, Fault>> {
    let peers = peers_for(
        &first.peer_binding,
        &plan.connect,
        access.clone(),
        first.subscribers,
    )?;
    let mut session = match Session::start(peers, plan.connect_timeout) {
        Ok(s) => s,
        Err(f) => return Ok(Err(f)),
    };
    if first.publishers > 1 {
        let extra = if plan.connect_publishers.is_empty() {
            Peers::Local {
                n: first.publishers - 1,
                exe: std::env::current_exe()
                    .context("cannot find the pubsubperf binary to start publishers")?,
            }
        } else {
            Peers::Remote {
                addrs: plan.connect_publishers.clone(),
                access,
            }
        };
        if let Err(f) = session.add_publishers(extra) {
            return Ok(Err(f));
        }
    }
    if !plan.connect.is_empty()
        && let Some(s) = session.subs.first()
    {
        sink.file.environment.subscriber_host = Some(Box::new(s.environment.clone()));
        let data_ip = session.data_ip(first.data_address.as_deref());
        // Across hosts: the NIC under the data address and the clock too.
        if let Some(nic) = pubsubperf_core::environment::interface_holding(&data_ip) {
            sink.file.environment.doctor =
                pubsubperf_doctor::examine_here(&pinned(first), Some(&nic));
        }
        sink.file.environment.data_address = Some(data_ip);
    }
    Ok(Ok(session))
}

/// The stressors' own time limit, should this process die without ending
/// them: twice the plan's planned time and a minute, or an hour when runs
/// are counted in samples.
fn load_limit(plan: &plan::TestPlan) -> std::time::Duration {
    let mut ns = 0u64;
    for s in &plan.specs {
        if s.duration_ns == 0 {
            return std::time::Duration::from_secs(3600);
        }
        ns += s.warmup_ns + s.duration_ns;
    }
    std::time::Duration::from_nanos(ns.saturating_mul(2)) + std::time::Duration::from_secs(60)
}

/// `--recovery-time`: waits `ms` between two demands of a ramp; Ctrl-C
/// ends the wait.
fn recover(ms: u64) -> Result<(), Fault> {
    let end = std::time::Instant::now() + std::time::Duration::from_millis(ms);
    while let Some(left) = end.checked_duration_since(std::time::Instant::now()) {
        if INTERRUPTED.load(Ordering::Relaxed) {
            return Err(Fault::Interrupted);
        }
        std::thread::sleep(left.min(std::time::Duration::from_millis(50)));
    }
    Ok(())
}

/// Prints the tables of a test's runs.
pub fn print_tables(runs: &[Run], env: &Environment) {
    if let Some(r) = runs.first() {
        let refs: Vec<&Run> = runs.iter().collect();
        println!("{}", output::run_banner(&refs));
        match r.test {
            TestKind::Latency => {
                print!("{}", output::latency_table(&refs));
                print!("{}", per_subscriber::lines(&refs));
                print!("{}", fan_out_line::lines(&refs));
                print!("{}", topics::lines(&refs));
                print!("{}", one_way::lines(&refs));
                print!("{}", limit::lines(&refs));
                print!("{}", discovery::lines(&refs));
            }
            TestKind::Throughput if ramp::demand_of(r).is_some() => {
                print!("{}", ramp::table(&refs));
                print!("{}", output::loss_lines(&refs));
            }
            TestKind::Throughput => {
                print!("{}", output::throughput_table(&refs));
                print!("{}", fan_out_line::lines(&refs));
                print!("{}", topics::lines(&refs));
                print!("{}", limit::lines(&refs));
                print!("{}", discovery::lines(&refs));
            }
        }
        for r in runs {
            print!("{}", pubsubperf_report::profile::text(r));
            print!("{}", pubsubperf_report::explanation::text(r));
        }
        if let Some(how) = &env.emulated {
            println!(
                "emulated: {how}; these figures are the emulator's, not {}'s",
                env.arch
            );
        }
    }
}

fn test(plan: plan::TestPlan, save: &cli::SaveArgs, command: &str) -> anyhow::Result<ExitCode> {
    let mut sink = output::Sink::new(
        bindings_env(&plan.specs),
        plan.json.as_deref(),
        plan.csv.as_deref(),
    );
    let failure = execute(&plan, &mut sink, None)?;
    print_tables(&sink.file.runs, &sink.file.environment);
    sink.write()?;
    if !sink.file.runs.is_empty() {
        let meta = analysis::SaveMeta {
            command: Some(command.to_string()),
            ..Default::default()
        };
        if let Some((path, group)) = analysis::save_results(save, &sink.file, &meta)? {
            eprintln!(
                "pubsubperf: saved as run group {group} in {}",
                path.display()
            );
        }
    }
    failure_exit(failure, !sink.file.runs.is_empty())
}

/// The exit of a test that stopped with `failure` (None: it finished);
/// `measured`: some runs' results were written.
pub fn failure_exit(failure: Option<Fault>, measured: bool) -> anyhow::Result<ExitCode> {
    match failure {
        None => Ok(ExitCode::SUCCESS),
        Some(Fault::Interrupted) => {
            eprintln!("pubsubperf: interrupted; results so far are written");
            Ok(ExitCode::from(130))
        }
        Some(Fault::Config(m)) => Err(UsageError(m).into()),
        Some(f) => {
            let saved = if measured {
                " (results measured so far are written)"
            } else {
                ""
            };
            anyhow::bail!("{f}{saved}")
        }
    }
}
