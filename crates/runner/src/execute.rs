//! The executor: a plan's runs, in sessions, one after another (or a
//! topic's runs side by side), with the stressors, the link floors, the
//! ramp's pauses and `--find-max`'s search; each run measured is kept at
//! once.

use crate::RunnerError;
use crate::access::{peers_for, remote_access};
use crate::plan::TestPlan;
use crate::sink::Sink;
use pubsubperf_harness::session::{Peers, RemoteAccess, Session};
use pubsubperf_harness::{Fault, INTERRUPTED};
use std::sync::atomic::Ordering;

/// Runs every spec of a plan, on one session per number of subscribers
/// and publishers (one session for most plans), pushing each finished run
/// into `sink` (which rewrites the output files at once); each interval
/// goes to `on_interval` as it is measured. Returns why it stopped early,
/// if it did; set-up failures are returned the same way.
pub fn execute(
    plan: &TestPlan,
    sink: &mut Sink,
    pool: Option<&std::sync::Arc<pubsubperf_harness::ssh::Pool>>,
    on_interval: &mut dyn FnMut(
        &pubsubperf_harness::spec::RunSpec,
        &pubsubperf_core::result::Interval,
    ),
) -> crate::Result<Option<Fault>> {
    plan.specs.first().ok_or(RunnerError::NoRun)?;
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
            stressors = Some(crate::load::Stressors::start(l, load_limit(plan))?);
        }
        let mut floors = crate::limit::Floors::default();
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
                .all(|b| b.as_str() == crate::limit::FLOOR_BINDING);
            let udp_floor = if !plan.link_floor || is_floor {
                None
            } else {
                floors.udp(&mut session, spec)
            };
            let outcome = match plan.find_max {
                Some(max_loss) => crate::find_max::find_max(
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
                    let o = crate::topics::run_side_by_side(&mut sessions, spec, &mut |i| {
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
                run.limit = crate::limit::of(&run, &sink.file.environment, udp_floor);
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
    plan: &TestPlan,
    first: &pubsubperf_harness::spec::RunSpec,
    access: RemoteAccess,
    sink: &mut Sink,
) -> crate::Result<Result<Session, Fault>> {
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
                exe: std::env::current_exe().map_err(|source| RunnerError::Exe {
                    what: "publishers",
                    source,
                })?,
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
                pubsubperf_doctor::examine_here(&crate::environment::pinned(first), Some(&nic));
        }
        sink.file.environment.data_address = Some(data_ip);
    }
    Ok(Ok(session))
}

/// The stressors' own time limit, should this process die without ending
/// them: twice the plan's planned time and a minute, or an hour when runs
/// are counted in samples.
fn load_limit(plan: &TestPlan) -> std::time::Duration {
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
