//! `pubsubperf doctor`: the checks of `pubsubperf_doctor` on this machine
//! (or a tree given with `--root`), with the core-to-core link measured
//! twice by `calibrate`'s cache-line round trip and the clock's
//! synchronisation read from the kernel (`adjtimex`). Every measuring
//! command runs the file checks quietly first ([`quiet`]) and keeps their
//! findings in the results' environment.

use crate::cli::DoctorArgs;
use crate::plan::UsageError;
use pubsubperf_doctor::{ClockState, Ethtool, Finding, Host, LinkReadings, Options, Verdict};
use std::process::ExitCode;

/// Runs `pubsubperf doctor`.
pub fn run(a: &DoctorArgs) -> anyhow::Result<ExitCode> {
    let cores = crate::plan::parse_cpu(Some(&a.cpu), usize::MAX)?;
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
    let interface = match &a.interface {
        Some(i) => Some(interface_of(i)?),
        None => None,
    };
    let opts = Options {
        link: (here && !a.no_link && cores.len() == 2)
            .then(|| link(&cores))
            .flatten(),
        clock: (here && interface.is_some()).then(clock_state),
        ethtool: interface.as_deref().filter(|_| here).map(ethtool),
        interface,
        cores,
    };
    let findings = pubsubperf_doctor::examine(&host, &opts);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&findings)?);
    } else {
        print!("{}", pubsubperf_doctor::text(&findings));
    }
    Ok(
        if a.strict && pubsubperf_doctor::worst(&findings) == Verdict::Fail {
            ExitCode::from(1)
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// The interface named, or the one holding the address given.
fn interface_of(s: &str) -> Result<String, UsageError> {
    let Ok(ip) = s.parse::<std::net::IpAddr>() else {
        return Ok(s.to_string());
    };
    pubsubperf_core::sys::interface_addresses()
        .into_iter()
        .find(|(_, a)| *a == ip)
        .map(|(name, _)| name)
        .ok_or_else(|| {
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

/// What `ethtool -k NAME` and `ethtool -c NAME` print (standard output
/// and error), or None each when ethtool cannot be run. The name is this
/// host's own interface, passed as one argument.
fn ethtool(name: &str) -> Ethtool {
    let run = |flag: &str| {
        std::process::Command::new("ethtool")
            .args([flag, name])
            .output()
            .ok()
            .map(|o| {
                let mut t = String::from_utf8_lossy(&o.stdout).into_owned();
                t.push_str(&String::from_utf8_lossy(&o.stderr));
                t
            })
    };
    Ethtool {
        features: run("-k"),
        coalesce: run("-c"),
    }
}

/// The kernel clock's discipline, from `adjtimex` (read only: modes 0).
fn clock_state() -> ClockState {
    // SAFETY: a zeroed timex with modes 0 only reads; the kernel fills it.
    let mut t: libc::timex = unsafe { std::mem::zeroed() };
    // SAFETY: t is a valid, writable timex.
    let state = unsafe { libc::adjtimex(&mut t) };
    ClockState {
        synchronised: state != libc::TIME_ERROR && t.status & libc::STA_UNSYNC == 0,
        est_error_us: t.esterror as i64,
    }
}

/// The file checks for a run pinned to `cores`, without measuring: what
/// every measuring command keeps in its results' environment.
pub fn quiet(cores: &[usize]) -> Vec<Finding> {
    pubsubperf_doctor::examine(
        &Host::this(),
        &Options {
            cores: cores.to_vec(),
            ..Options::default()
        },
    )
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
