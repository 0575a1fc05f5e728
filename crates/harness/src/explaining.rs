//! `--explain` on the publisher's side: the kernel's probes
//! (`pubsubperf-explain`) record both sides' processes and CPUs from just
//! before the measurement to just after it, and the samples the loop kept
//! ([`pubsubperf_core::tail`]) are accounted for afterwards
//! (`pubsubperf_explain::account`, whose module states the method).
//!
//! Both sides must run on this host, each in a process of its own (the
//! probes tell the sides apart by process): subscribers of an agent or
//! over SSH, or threads of this process, are refused when the run is
//! planned ([`refusal`]).

use crate::Fault;
use crate::session::Session;
use crate::spec::RunSpec;
use pubsubperf_core::explanation::Explanation;
use pubsubperf_core::placement::Placement;
use pubsubperf_core::stats::LatencySummary;
use pubsubperf_core::tail::TailSamples;

/// The ring buffer's size: at about 100 bytes an event and 5 events a
/// round trip, 256 MiB hold half a million round trips.
#[cfg(feature = "explain")]
const RING: u32 = 1 << 28;

/// The probes, recording.
pub(crate) struct Explaining {
    #[cfg(feature = "explain")]
    recorder: pubsubperf_explain::Recorder,
    /// The subscribers' processes.
    pids: Vec<u32>,
}

/// What the probes recorded.
pub(crate) struct Recorded {
    #[cfg(feature = "explain")]
    recording: pubsubperf_explain::Recording,
    #[cfg(feature = "explain")]
    pids: Vec<u32>,
}

/// Why `--explain` cannot run on this host or for this run, if it cannot:
/// root, the kernel's BTF, the build's probes (checked where the run is
/// planned, for a one-line refusal).
pub fn refusal() -> Option<String> {
    #[cfg(feature = "explain")]
    {
        pubsubperf_explain::can_run().err().map(|e| e.to_string())
    }
    #[cfg(not(feature = "explain"))]
    Some("--explain: this pubsubperf was built without the kernel probes (cargo feature `explain`); build it with the default features".into())
}

/// Starts the probes for `spec` when it asks for them.
pub(crate) fn start(s: &Session, spec: &RunSpec) -> Result<Option<Explaining>, Fault> {
    if !spec.explain {
        return Ok(None);
    }
    let pids = s.local_subscriber_pids().ok_or_else(|| {
        Fault::Config(
            "--explain: every subscriber must be a process this one started on this host".into(),
        )
    })?;
    start_probes(spec, pids).map(Some)
}

#[cfg(feature = "explain")]
fn start_probes(spec: &RunSpec, pids: Vec<u32>) -> Result<Explaining, Fault> {
    let cpus: Vec<usize> = match (spec.pub_cpu, spec.sub_cpu) {
        (Some(p), Some(s)) => vec![p, s],
        _ => pubsubperf_core::sys::cpus().to_vec(),
    };
    let fail = |e: pubsubperf_explain::ExplainError| Fault::Config(e.to_string());
    let recorder = pubsubperf_explain::Recorder::start(&cpus, RING).map_err(fail)?;
    recorder.watch_process(std::process::id()).map_err(fail)?;
    for &p in &pids {
        recorder.watch_process(p).map_err(fail)?;
    }
    Ok(Explaining { recorder, pids })
}

#[cfg(not(feature = "explain"))]
fn start_probes(_: &RunSpec, _: Vec<u32>) -> Result<Explaining, Fault> {
    Err(Fault::Config(refusal().unwrap_or_default()))
}

/// Stops the probes and takes their records.
pub(crate) fn stop(x: Explaining) -> Result<Recorded, Fault> {
    #[cfg(feature = "explain")]
    {
        let recording = x
            .recorder
            .finish()
            .map_err(|e| Fault::Config(e.to_string()))?;
        Ok(Recorded {
            recording,
            pids: x.pids,
        })
    }
    #[cfg(not(feature = "explain"))]
    {
        let _ = x.pids;
        Ok(Recorded {})
    }
}

/// The account of the run's samples: the publisher is this process on
/// the CPUs `placement[0]` ran on, the subscriber the processes it started
/// on the CPUs the others ran on.
pub(crate) fn account(
    r: &Recorded,
    samples: &TailSamples,
    measure_start_ns: u64,
    latency: &LatencySummary,
    placement: &[Placement],
) -> Option<Explanation> {
    #[cfg(feature = "explain")]
    {
        let cpus = |p: &[Placement]| -> Vec<u32> {
            let mut v: Vec<u32> = p
                .iter()
                .flat_map(|p| p.ran_on.iter().map(|&c| c as u32))
                .collect();
            v.sort();
            v.dedup();
            v
        };
        let sides = [
            pubsubperf_explain::Side {
                name: "publisher".into(),
                pids: vec![std::process::id()],
                cpus: cpus(&placement[..1.min(placement.len())]),
            },
            pubsubperf_explain::Side {
                name: "subscriber".into(),
                pids: r.pids.clone(),
                cpus: cpus(placement.get(1..).unwrap_or_default()),
            },
        ];
        let cuts = pubsubperf_explain::Cuts {
            p50: latency.p50,
            p90: latency.p90,
            p99: latency.p99,
            p999: latency.p99_9,
        };
        Some(pubsubperf_explain::account(
            &r.recording,
            &sides,
            samples,
            cuts,
            measure_start_ns,
        ))
    }
    #[cfg(not(feature = "explain"))]
    {
        let _ = (r, samples, measure_start_ns, latency, placement);
        None
    }
}
