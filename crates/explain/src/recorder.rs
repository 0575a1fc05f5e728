//! Loads the eBPF program, attaches it, and drains its ring buffer.

use crate::{ExplainError, KernelEvent};
use libbpf_rs::{Link, MapCore, MapFlags, Object, ObjectBuilder, RingBufferBuilder};

/// The program, compiled by build.rs.
const PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/record.bpf.o"));

/// Probes the kernel may lack on another architecture (x86's exceptions
/// and interrupt vectors): without them the account has no IPIs or page
/// faults, and says so ([`Recording::missing`]).
const OPTIONAL: [&str; 3] = ["on_resched_entry", "on_resched_exit", "on_fault"];

/// The kernel probes, attached; see the crate's documentation.
pub struct Recorder {
    object: Object,
    links: Vec<Link>,
    missing: Vec<String>,
    cpus: Vec<usize>,
    start_ns: u64,
}

/// What [`Recorder::finish`] hands over.
#[derive(Debug, Default)]
pub struct Recording {
    /// Every record, in the ring buffer's order (each CPU's in time order).
    pub events: Vec<KernelEvent>,
    /// Records the ring buffer had no room for: the account is incomplete
    /// when this is not 0.
    pub lost: u64,
    /// Probes this kernel does not have (their events are absent).
    pub missing: Vec<String>,
    /// When the probes were all attached (CLOCK_MONOTONIC ns): the task
    /// running on a measuring CPU then is accounted from here.
    pub start_ns: u64,
    /// When they were detached: the run (or idle period) still open on a
    /// measuring CPU then is accounted up to here.
    pub end_ns: u64,
}

fn map<'o>(object: &'o Object, name: &str) -> Result<libbpf_rs::Map<'o>, ExplainError> {
    object
        .maps()
        .find(|m| m.name() == name)
        .ok_or_else(|| ExplainError::Bpf(format!("the program has no map {name}")))
}

fn open(ring_bytes: u32, skip: &[&str]) -> Result<Object, ExplainError> {
    let mut open = ObjectBuilder::default()
        .open_memory(PROGRAM)
        .map_err(|e| ExplainError::from_bpf("opening the probes", &e))?;
    for mut m in open.maps_mut() {
        if m.name() == "events" {
            m.set_max_entries(ring_bytes)
                .map_err(|e| ExplainError::from_bpf("sizing the ring buffer", &e))?;
        }
    }
    for mut p in open.progs_mut() {
        if skip.iter().any(|s| p.name() == *s) {
            p.set_autoload(false);
        }
    }
    open.load()
        .map_err(|e| ExplainError::from_bpf("loading the probes", &e))
}

/// Whether this process can load the probes: root, and a kernel with BTF.
pub fn can_run() -> Result<(), ExplainError> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(ExplainError::NotPermitted(
            "run pubsubperf as root (sudo)".into(),
        ));
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Err(ExplainError::Kernel(
            "/sys/kernel/btf/vmlinux is missing".into(),
        ));
    }
    Ok(())
}

impl Recorder {
    /// Loads and attaches the probes, watching `cpus` (the measuring
    /// CPUs); `ring_bytes` is the ring buffer's size (a power of two, at
    /// least a page).
    pub fn start(cpus: &[usize], ring_bytes: u32) -> Result<Recorder, ExplainError> {
        let mut mask = 0u64;
        for &c in cpus {
            if c >= 64 {
                return Err(ExplainError::Cpu(c));
            }
            mask |= 1 << c;
        }
        let (object, missing) = match open(ring_bytes, &[]) {
            Ok(o) => (o, Vec::new()),
            Err(ExplainError::NotPermitted(e)) => return Err(ExplainError::NotPermitted(e)),
            Err(first) => {
                let object = open(ring_bytes, &OPTIONAL).map_err(|_| first)?;
                (object, OPTIONAL.iter().map(|s| s.to_string()).collect())
            }
        };
        let mut links = Vec::new();
        for p in object.progs_mut() {
            if missing.iter().any(|s| p.name() == s.as_str()) {
                continue;
            }
            let name = p.name().to_string_lossy().into_owned();
            links.push(
                p.attach()
                    .map_err(|e| ExplainError::from_bpf(&format!("attaching {name}"), &e))?,
            );
        }
        // The CPUs are watched from one instant, once every probe is in.
        let start_ns = pubsubperf_core::clock::now_ns();
        map(&object, "origin")?
            .update(&0u32.to_ne_bytes(), &start_ns.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| ExplainError::from_bpf("setting the start", &e))?;
        map(&object, "cpu_mask")?
            .update(&0u32.to_ne_bytes(), &mask.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| ExplainError::from_bpf("setting the CPUs", &e))?;
        Ok(Recorder {
            object,
            links,
            missing,
            cpus: cpus.to_vec(),
            start_ns,
        })
    }

    /// Watches thread `tid` (of any process) from now on.
    pub fn watch(&self, tid: u32) -> Result<(), ExplainError> {
        map(&self.object, "tids")?
            .update(&tid.to_ne_bytes(), &[1u8], MapFlags::ANY)
            .map_err(|e| ExplainError::from_bpf("watching a thread", &e))
    }

    /// Watches every thread of process `pid` from now on, threads it
    /// starts later included.
    pub fn watch_process(&self, pid: u32) -> Result<(), ExplainError> {
        map(&self.object, "pids")?
            .update(&pid.to_ne_bytes(), &[1u8], MapFlags::ANY)
            .map_err(|e| ExplainError::from_bpf("watching a process", &e))
    }

    /// Detaches the probes and reads every record.
    pub fn finish(mut self) -> Result<Recording, ExplainError> {
        self.links.clear();
        let end_ns = pubsubperf_core::clock::now_ns();
        let mut events = Vec::new();
        {
            let ring = map(&self.object, "events")?;
            let mut builder = RingBufferBuilder::new();
            builder
                .add(&ring, |b: &[u8]| {
                    events.extend(KernelEvent::parse(b));
                    0
                })
                .map_err(|e| ExplainError::from_bpf("reading the ring buffer", &e))?;
            builder
                .build()
                .and_then(|r| r.consume())
                .map_err(|e| ExplainError::from_bpf("reading the ring buffer", &e))?;
        }
        let lost = map(&self.object, "lost")?
            .lookup(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| ExplainError::from_bpf("reading the lost count", &e))?
            .and_then(|v| {
                v.get(..8)
                    .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
            })
            .unwrap_or(0);
        let insides = map(&self.object, "insides")?
            .lookup_percpu(&0u32.to_ne_bytes(), MapFlags::ANY)
            .map_err(|e| ExplainError::from_bpf("reading the CPUs' state", &e))?
            .unwrap_or_default();
        for &cpu in &self.cpus {
            if let Some(e) = insides
                .get(cpu)
                .and_then(|b| crate::event::still_open(b, cpu as u32, end_ns))
            {
                events.push(e);
            }
        }
        Ok(Recording {
            events,
            lost,
            missing: self.missing,
            start_ns: self.start_ns,
            end_ns,
        })
    }
}
