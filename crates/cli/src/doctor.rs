//! `pubsubperf doctor`: the checks of `pubsubperf_doctor` on this machine
//! (or a tree given with `--root`), with the core-to-core link measured
//! twice by `calibrate`'s cache-line round trip and the clock's
//! synchronisation read from the kernel (`adjtimex`). Every measuring
//! command runs the file checks quietly first
//! (`pubsubperf_doctor::examine_here`) and keeps their findings in the
//! results' environment.

use crate::cli::DoctorArgs;
use crate::plan::UsageError;
use pubsubperf_doctor::probe;
use pubsubperf_doctor::{Finding, Host, LinkReadings, Options, Verdict};
use std::process::ExitCode;

/// Runs `pubsubperf doctor`.
pub fn run(a: &DoctorArgs) -> anyhow::Result<ExitCode> {
    // Any core number parses here; check_cores below refuses those the
    // examined machine does not have.
    let any: Vec<usize> = (0..libc::CPU_SETSIZE as usize).collect();
    let cpu = match (&a.cpu, &a.root) {
        (Some(c), _) => c.clone(),
        (None, Some(_)) => "0,1".to_string(),
        (None, None) => match crate::plan::parse_cpu(None, pubsubperf_core::sys::cpus())? {
            (Some(p), Some(s)) => format!("{p},{s}"),
            _ => "none".to_string(),
        },
    };
    let cores = crate::plan::parse_cpu(Some(&cpu), &any)?;
    let cores: Vec<usize> = [cores.0, cores.1].into_iter().flatten().collect();
    let (host, here) = match &a.root {
        Some(r) if !r.is_dir() => {
            return Err(UsageError(format!(
                "--root {}: not a directory (give a tree holding proc/ and sys/)",
                r.display()
            ))
            .into());
        }
        Some(r) => (Host::at(r), false),
        None => (Host::this(), true),
    };
    // A core the machine does not have would pass every per-core check.
    pubsubperf_doctor::check_cores(&host, &cores)
        .map_err(|e| UsageError(format!("--cpu {cpu}: {e}")))?;
    let interface = match &a.interface {
        Some(i) => Some(interface_of(i)?),
        None => None,
    };
    let opts = Options {
        link: (here && !a.no_link && cores.len() == 2)
            .then(|| link(&cores))
            .flatten(),
        clock: (here && interface.is_some()).then(probe::clock_state),
        ethtool: interface.as_deref().filter(|_| here).map(probe::ethtool),
        interface,
        cores,
    };
    let trace = match a.trace {
        None => None,
        Some(_) if !here => {
            return Err(UsageError(
                "--trace: watches this machine's cores; it cannot read a tree given with --root"
                    .into(),
            )
            .into());
        }
        Some(secs) => Some(trace(&opts.cores, secs)?),
    };
    let mut findings = pubsubperf_doctor::examine(&host, &opts);
    if here {
        findings.push(explain_finding());
    }
    match (a.json, &trace) {
        (true, None) => println!("{}", serde_json::to_string_pretty(&findings)?),
        (true, Some(t)) => println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({ "findings": findings, "trace": t.json })
            )?
        ),
        (false, _) => {
            print!("{}", pubsubperf_doctor::text(&findings));
            if let Some(t) = &trace {
                println!("\nWhat ran on the cores while nothing was measured (--trace):");
                print!("{}", t.text);
            }
        }
    }
    Ok(
        if a.strict && pubsubperf_doctor::worst(&findings) == Verdict::Fail {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// Whether `--explain` (the kernel's probes) can run here, and why not.
fn explain_finding() -> Finding {
    match pubsubperf_harness::explaining::refusal() {
        None => Finding {
            check: "explain".into(),
            verdict: Verdict::Ok,
            value: "the kernel's probes load here (root, BTF): --explain and --trace can run".into(),
            why: String::new(),
            fix: String::new(),
        },
        Some(why) => Finding {
            check: "explain".into(),
            verdict: Verdict::Warn,
            value: "--explain cannot run here".into(),
            why,
            fix: "run as root on a kernel with BTF (/sys/kernel/btf/vmlinux), in a build with the default features".into(),
        },
    }
}

/// `--trace SECONDS`: what runs on `cores` over that time, from the
/// kernel's probes (`pubsubperf_explain::trace`), as text.
#[cfg(feature = "explain")]
fn trace(cores: &[usize], secs: f64) -> Result<Traced, UsageError> {
    if !(secs > 0.0 && secs <= 3600.0) {
        return Err(UsageError(format!(
            "--trace {secs}: give the seconds to watch, more than 0 and at most 3600"
        )));
    }
    if cores.is_empty() {
        return Err(UsageError(
            "--trace: no cores to watch (give --cpu A,B)".into(),
        ));
    }
    let t = pubsubperf_explain::trace(cores, std::time::Duration::from_secs_f64(secs))
        .map_err(|e| UsageError(e.to_string().replacen("--explain", "--trace", 1)))?;
    Ok(Traced {
        text: pubsubperf_explain::text(&t),
        json: serde_json::to_value(&t).expect("a trace is plain data"),
    })
}

/// A build without the kernel's probes (the rust-only build).
#[cfg(not(feature = "explain"))]
fn trace(_: &[usize], _: f64) -> Result<Traced, UsageError> {
    Err(UsageError(
        "--trace: this build has no kernel probes (built without the explain feature: use the Debian package or a default build)".into(),
    ))
}

/// `--trace`'s account, printed and as JSON.
struct Traced {
    text: String,
    json: serde_json::Value,
}

/// The interface named, or the one holding the address given.
fn interface_of(s: &str) -> Result<String, UsageError> {
    if s.parse::<std::net::IpAddr>().is_err() {
        return Ok(s.to_string());
    }
    pubsubperf_core::environment::interface_holding(s).ok_or_else(|| {
        UsageError(format!(
            "--interface {s}: no interface of this host has that address (ip -br addr lists them)"
        ))
    })
}

/// Two readings of the cache-line round trip between the two cores, half
/// a second apart; None when either cannot be measured.
fn link(cores: &[usize]) -> Option<LinkReadings> {
    let pair = [cores[0], cores[1]];
    let first = pubsubperf_core::calibrate::cache_line(pair).ok()?;
    std::thread::sleep(std::time::Duration::from_millis(500));
    let second = pubsubperf_core::calibrate::cache_line(pair).ok()?;
    Some(LinkReadings {
        first_ns: first.rtt_p50_ns,
        second_ns: second.rtt_p50_ns,
    })
}

/// The line under a table measured on a machine with warnings (None on a
/// machine the checks found clean).
pub fn flag_line(findings: &[Finding]) -> Option<String> {
    let tally = pubsubperf_doctor::tally(findings);
    if tally.is_empty() {
        return None;
    }
    let names: Vec<&str> = findings
        .iter()
        .filter(|f| f.verdict != Verdict::Ok)
        .map(|f| f.check.as_str())
        .collect();
    Some(format!(
        "machine: {tally} ({}): these figures may be skewed by it; `pubsubperf doctor` says why and how to fix each",
        names.join(", ")
    ))
}
