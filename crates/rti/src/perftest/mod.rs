//! `pubsubperf perftest ARGS...`: RTI Perftest's command line and output
//! formats over pubsubperf's tests. The options are read through one table
//! (`options`) into a [`TestRequest`](crate::plan::TestRequest); `-pub`
//! runs the test and prints Perftest's formats (`printer`); `-sub` serves
//! one run of a `-pub` as an agent does (`pubsubperf sub --listen`).

#[cfg(test)]
mod c_printf;
pub mod formats;
pub mod options;
pub mod printer;
pub mod sub_print;
mod table;

use crate::agent::HostSettings;
use crate::plan::{TestPlan, UsageError};
use options::{Invocation, Role};
use pubsubperf_core::result::TestKind;
use std::process::ExitCode;

/// The port a `-sub` listens on, and the one a `-pub` reaches for each
/// `-peer` (and on this host, without `-peer`): 7400, the agent's, unless
/// `PUBSUBPERF_PERFTEST_PORT` says otherwise (several pairs on one host).
pub fn sub_port() -> u16 {
    std::env::var("PUBSUBPERF_PERFTEST_PORT")
        .ok()
        .and_then(|p| p.parse().ok())
        .unwrap_or(7400)
}

/// Reads a Perftest command line into a finished invocation; without
/// `-middleware` (and `-raw`) it measures this machine's default
/// ([`crate::rti_default`]: Connext where it can run).
pub fn read(args: &[String]) -> Result<Invocation, UsageError> {
    read_with(args, crate::rti_default::middleware)
}

/// [`read`], the default middleware from `default` (asked only when the
/// line names none).
pub fn read_with(
    args: &[String],
    default: impl FnOnce() -> crate::rti_default::RtiDefault,
) -> Result<Invocation, UsageError> {
    let mut inv = options::parse(args)?;
    if inv.middleware.is_none() && !inv.raw {
        inv.default_middleware = default();
    }
    inv.finish()?;
    Ok(inv)
}

/// The test's plan (a `-sub`'s too: its options are checked the same way).
pub fn plan(inv: &Invocation) -> Result<TestPlan, UsageError> {
    let kind = if inv.latency_test {
        TestKind::Latency
    } else {
        TestKind::Throughput
    };
    let mut plan = inv.request.plan(kind).map_err(|e| inv.explain(e))?;
    // Its -sub serves the runs Perftest's would, nothing more.
    plan.link_floor = false;
    Ok(plan)
}

/// Runs a Perftest command line.
pub fn run(args: &[String]) -> anyhow::Result<ExitCode> {
    if options::parse(args)?.help {
        print!("{}", options::markdown_table());
        return Ok(ExitCode::SUCCESS);
    }
    let mut inv = read(args)?;
    match inv.role {
        Role::Sub => sub(&inv),
        Role::Pub => {
            inv.default_middleware.say("perftest");
            if inv.peers.is_empty() && servable(&inv.request.binding) && sub_waiting(sub_port()) {
                let addr = format!("127.0.0.1:{}", sub_port());
                eprintln!(
                    "pubsubperf perftest -pub: a -sub waits on this host; running with it ({addr})"
                );
                inv.request.connect = Some(addr);
            }
            publish(&inv)
        }
    }
}

/// `-sub`: one run served to a `-pub`, which sends every setting.
fn sub(inv: &Invocation) -> anyhow::Result<ExitCode> {
    drop(plan(inv)?);
    if !servable(&inv.request.binding) {
        return Err(UsageError(format!(
            "-sub: {} runs within one process or host only, so no -sub can serve it; run the -pub alone (it starts its own subscriber)",
            inv.request.binding
        ))
        .into());
    }
    eprintln!(
        "pubsubperf perftest -sub: serving one run; the -pub side sends the test's settings (this side's options are checked, not used, except -nic, -multicastAddr, -qosFile and the output options)"
    );
    // The -pub's -qosFile comes by name only (as to any agent at
    // HOST:PORT): the file of that name beside this side's own -qosFile.
    let qos_dir = inv.request.qos_file.as_deref().map(|f| match f.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => ".".into(),
    });
    serve_once(
        inv.request.data_address.clone(),
        inv.request.multicast_address.clone(),
        qos_dir,
        sub_port(),
        Some(sub_print::SubPrint::request(inv)),
    )
}

/// Serves one publisher's session on `port` as an agent does, its data on
/// `data_address` (a `-nic`), its readers on the multicast group
/// `multicast_address` when the run is multicast, its vendor files from
/// `qos_dir` (the agent's `--qos-dir`), printing what `print` asks
/// ([`sub_print`]): the subscribing side of another tool's command line.
pub(crate) fn serve_once(
    data_address: Option<String>,
    multicast_address: Option<String>,
    qos_dir: Option<std::path::PathBuf>,
    port: u16,
    print: Option<String>,
) -> anyhow::Result<ExitCode> {
    let host = HostSettings {
        data_address,
        multicast_address,
        token_file: None,
        insecure: false,
        insecure_network: false,
        max_duration: "1h".into(),
        max_size: "64MiB".into(),
        idle_timeout: "60s".into(),
        allow_destination: Vec::new(),
        allow_multicast_ttl: None,
        run_grace: "60s".into(),
        allow_rt_priority: false,
        allow_mlock: false,
        qos_dir,
    };
    let listen = format!("0.0.0.0:{port}");
    crate::interrupt::install(crate::interrupt::Notice::Say);
    let r = crate::agent::run(
        crate::agent::Mode::Listen {
            addr: &listen,
            once: true,
        },
        &host,
        print,
    )?;
    crate::serve_exit(r)
}

/// Where the lines go: standard output, or `-outputFile` (appended to, as
/// Perftest does; never through a symbolic link, which a stranger could
/// plant at a predictable name).
pub(crate) fn output(
    file: Option<&std::path::Path>,
) -> Result<Box<dyn std::io::Write>, UsageError> {
    use std::os::unix::fs::OpenOptionsExt;
    Ok(match file {
        None => Box::new(std::io::stdout()),
        Some(p) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(p)
                .map_err(|e| match e.raw_os_error() {
                    Some(libc::ELOOP) => UsageError(format!(
                        "-outputFile {}: a symbolic link, and lines are never appended through one; give the file it points to",
                        p.display()
                    )),
                    _ => UsageError(format!("-outputFile {}: {e}", p.display())),
                })?,
        ),
    })
}

/// `-pub`: the test, printed in Perftest's format. Its standard output is
/// what Perftest's publisher prints: the latency lines (of every sample in
/// a latency test, of one in `-latencyCount` in a throughput test), a
/// size's summary as soon as its run ends. A throughput test's subscriber
/// lines are the `-sub`'s to print; when this side started its subscriber
/// itself, they go to standard error.
fn publish(inv: &Invocation) -> anyhow::Result<ExitCode> {
    use std::cell::RefCell;
    use std::rc::Rc;
    let plan = plan(inv)?;
    let style = inv.style();
    let out = Rc::new(RefCell::new(printer::Printer::new(
        style,
        output(inv.output_file.as_deref())?,
    )));
    let alone = inv.request.connect.is_none();
    let subs = alone.then(|| {
        Rc::new(RefCell::new(printer::Printer::new(
            style,
            Box::new(std::io::stderr()),
        )))
    });
    crate::interrupt::install(crate::interrupt::Notice::Say);
    let mut sink = pubsubperf_runner::sink::Sink::new(
        pubsubperf_runner::environment::bindings_env(&plan.specs),
        None,
        None,
    );
    let print_error: Rc<RefCell<Option<std::io::Error>>> = Rc::default();
    {
        let (out, subs, print_error) = (out.clone(), subs.clone(), print_error.clone());
        let echoes = inv.request.latency_every.is_some();
        sink.on_push(Box::new(move |run| {
            let mut r = out.borrow_mut().run(run);
            // Perftest's own lines stay as RTI's build prints them; a run
            // whose sides did not run where planned says so beside them.
            eprint!(
                "{}",
                pubsubperf_report::live::condition_lines(&[run]).replace(
                    "NOT AS PLANNED:",
                    "pubsubperf perftest -pub: NOT AS PLANNED:"
                )
            );
            if run.latency_ns.is_none() {
                eprintln!(
                    "pubsubperf perftest -pub: no pong came back for {} B, so no latency lines ({})",
                    run.size,
                    if run.test == TestKind::Throughput && !echoes {
                        "across several -peer hosts no sample is echoed unless -latencyCount is given"
                    } else {
                        "fewer samples than -latencyCount were sent"
                    }
                );
            }
            if let (Some(p), Some(t)) = (&subs, &run.throughput) {
                let s = p.borrow_mut().throughput_result(
                    run.size,
                    t,
                    run.resources.subscriber.cpu_percent,
                );
                r = r.and(s);
            }
            if let Err(e) = r {
                print_error.borrow_mut().get_or_insert(e);
            }
        }));
    }
    let failure = pubsubperf_runner::execute::execute(&plan, &mut sink, None, &mut |spec, i| {
        // The publisher's own intervals carry latency (a throughput
        // test's echoes too); the subscribers' do not.
        let r = if i.latency_mean_ns.is_some() {
            out.borrow_mut().latency_interval(spec.size, i)
        } else {
            subs.as_ref()
                .map_or(Ok(()), |p| p.borrow_mut().throughput_interval(spec.size, i))
        };
        if let Err(e) = r {
            print_error.borrow_mut().get_or_insert(e);
        }
    })?;
    out.borrow_mut().finish()?;
    if let Some(p) = &subs {
        p.borrow_mut().finish()?;
    }
    // Ours, not Perftest's: under the output, but off a JSON document.
    for run in &sink.file.runs {
        let t = pubsubperf_report::profile::text(run);
        if inv.format == options::Format::Json {
            eprint!("{t}");
        } else {
            print!("{t}");
        }
    }
    if let Some(e) = print_error.take() {
        return Err(anyhow::anyhow!("writing the output: {e}"));
    }
    crate::failure_exit(failure, !sink.file.runs.is_empty())
}

/// True when a `-sub` (an agent) can serve runs of `binding`: it has a
/// network path and runs out of process.
pub(crate) fn servable(binding: &str) -> bool {
    pubsubperf_harness::registry::info(binding)
        .is_some_and(|i| i.capabilities.remote && !i.capabilities.in_process)
}

/// True when something listens on TCP `port` on this host (a `-sub`, or an
/// agent), read from /proc without connecting to it.
pub(crate) fn sub_waiting(port: u16) -> bool {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|text| {
            text.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                // local_address is ADDR:PORT in hex; state 0A is LISTEN.
                cols.len() > 3
                    && cols[3] == "0A"
                    && cols[1]
                        .rsplit_once(':')
                        .and_then(|(_, p)| u16::from_str_radix(p, 16).ok())
                        == Some(port)
            })
        })
    })
}

#[cfg(test)]
mod tests;
