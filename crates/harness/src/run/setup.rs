//! Before the loop: this thread pinned and prioritised, the run set up on
//! every subscriber and extra publisher, endpoints matched, and the start.

use super::*;
use crate::profiler::Profiler;
use pubsubperf_core::result::Discovery;

pub(super) struct Endpoints<B: Binding> {
    pub(super) _binding: B,
    pub(super) writer: B::Writer,
    pub(super) echo: Vec<B::Reader>,
    /// How long they (and the subscribers') took to match.
    pub(super) discovery: Discovery,
    /// What the subscribers' and extra publishers' sides set beyond the
    /// run's settings ([`Msg::Ready`]'s `deviations`), each once.
    pub(super) their_deviations: Vec<String>,
}

pub(super) fn setup<B: Binding>(s: &mut Session, spec: &RunSpec) -> Result<Endpoints<B>, Fault> {
    let timeout = s.connect_timeout;
    // This side opens first: a daemon the binding starts on first use
    // (iceoryx's RouDi) is then started by this process, the one that
    // returns to the user, which stops and reaps it before it exits; were
    // it started by a subscriber process that exits first, it would be
    // left to a watcher and end as an orphan (a zombie without a parent
    // that waits for it).
    let mut cfg = spec.keyed_endpoint();
    cfg.bind_ip = s.data_ip(spec.data_address.as_deref());
    let bind = |e: BindingError| Fault::Binding(format!("{}: {e}", spec.binding));
    let mut binding = B::open(&cfg).map_err(bind)?;
    let fan_out_every = crate::fan_out::every_of(spec, &s.subs);
    for sub in s.subs.iter_mut() {
        let mut sp = spec.clone();
        sp.subscriber_index = sub.index;
        sp.fan_out_every = fan_out_every;
        if sub.qos_by_name {
            crate::qos_dir::by_name(&mut sp.endpoint);
        }
        sub.send(&Msg::Setup { spec: Box::new(sp) })?;
    }
    let mut locators = Vec::new();
    for sub in &s.subs {
        match sub.recv(timeout)? {
            Msg::Locators { data } => locators.push(data),
            other => return Err(Fault::Peer(format!("unexpected {other:?} during set-up"))),
        }
    }
    for (i, p) in s.pubs.iter_mut().enumerate() {
        let mut sp = spec.clone();
        if p.qos_by_name {
            crate::qos_dir::by_name(&mut sp.endpoint);
        }
        p.send(&Msg::PubSetup {
            spec: Box::new(sp),
            publisher: (i + 1) as u8,
            data: locators.clone(),
        })?;
    }
    let needs_echo = spec.test == TestKind::Latency || spec.latency_every > 0;
    let echo_created = clock::now_ns();
    let mut echo = Vec::new();
    let mut echo_locs = Vec::new();
    for sub in &s.subs {
        if needs_echo {
            let (r, l) = binding
                .create_reader(&TopicSpec {
                    name: format!("echo{}", sub.index),
                    index: 0,
                })
                .map_err(bind)?;
            echo.push(r);
            echo_locs.push(l);
        } else {
            echo_locs.push(String::new());
        }
    }
    let writer_created = clock::now_ns();
    let writer = binding
        .create_writer(
            &TopicSpec {
                name: TopicSpec::data_name(spec.test == TestKind::Latency).into(),
                index: 0,
            },
            &locators,
        )
        .map_err(bind)?;
    for (sub, l) in s.subs.iter_mut().zip(echo_locs) {
        sub.send(&Msg::Peer { echo: l })?;
    }
    let mut endpoints = Endpoints {
        _binding: binding,
        writer,
        echo,
        discovery: Discovery::default(),
        their_deviations: Vec::new(),
    };
    let n = s.subs.len();
    let never = |e: BindingError| {
        Fault::Peer(format!(
            "subscribers never matched: {e} (--connect-timeout {:.1} s)",
            timeout.as_secs_f64()
        ))
    };
    endpoints
        .writer
        .wait_matched(n.min(1), timeout)
        .map_err(never)?;
    let since = |t: u64| clock::now_ns().saturating_sub(t);
    endpoints.discovery.writer_first_match_ns = since(writer_created);
    endpoints.writer.wait_matched(n, timeout).map_err(never)?;
    endpoints.discovery.writer_matched_ns = since(writer_created);
    for r in endpoints.echo.iter_mut() {
        r.wait_matched(timeout).map_err(|e| {
            Fault::Peer(format!(
                "echo never matched: {e} (--connect-timeout {:.1} s)",
                timeout.as_secs_f64()
            ))
        })?;
    }
    endpoints.discovery.echo_readers_matched_ns = needs_echo.then(|| since(echo_created));
    for sub in s.subs.iter().chain(s.pubs.iter()) {
        match sub.recv(timeout)? {
            Msg::Ready {
                discovery,
                deviations,
            } => {
                endpoints.discovery.subscribers.extend(discovery);
                for d in deviations {
                    if !endpoints.their_deviations.contains(&d) {
                        endpoints.their_deviations.push(d);
                    }
                }
            }
            other => return Err(Fault::Peer(format!("unexpected {other:?} during set-up"))),
        }
    }
    Ok(endpoints)
}

/// The vector of a run's interval reports, with room for every report a
/// run of `--duration` makes (see [`expected_intervals`]), its memory
/// touched now (up to [`PREFAULT_BYTES`]): the measuring loops never grow
/// the vector nor take a page fault for it, and a long run's resident
/// memory holds its reports from the start (about 120 bytes a second,
/// 420 KiB an hour), so that a growth during the run (bench/soak.sh) is
/// not the results being kept.
pub(super) fn interval_store(spec: &RunSpec, subs: usize) -> Vec<Interval> {
    let mut v = Vec::with_capacity(expected_intervals(spec, subs));
    let touch = PREFAULT_BYTES / std::mem::size_of::<Interval>();
    for slot in v.spare_capacity_mut().iter_mut().take(touch) {
        *slot = std::mem::MaybeUninit::zeroed();
    }
    v
}

/// Most bytes of interval reports touched at the start of a run (about 39
/// hours of reports at one a second).
const PREFAULT_BYTES: usize = 16 << 20;

/// Room for every interval report a run makes (one per subscriber per
/// interval in throughput runs, one per interval in latency runs, plus the
/// partial ones at the ends), so that the measuring loops never grow the
/// vector: no allocation or copy of it mid-run. The run's span is its
/// `--duration`; a run bounded by `--count` alone lasts `count / rate` at a
/// given `--rate` and is given an hour (about 420 KiB of reports) without
/// one, beyond which its vector grows by doubling.
fn expected_intervals(spec: &RunSpec, subs: usize) -> usize {
    let per_interval = spec.interval_ms.max(1) * 1_000_000;
    let span = span_ns(spec.duration_ns, spec.count, spec.rate);
    let n = (span / per_interval + 2) as usize;
    let n = if spec.test == TestKind::Throughput {
        n * subs.max(1)
    } else {
        n
    };
    n.min(1 << 20)
}

/// How long the measured part of a run lasts, as far as is known before it
/// starts (see [`expected_intervals`]).
/// A huge count at a tiny rate ends at `u64::MAX`, then at the cap of
/// [`expected_intervals`].
fn span_ns(duration_ns: u64, count: u64, rate: f64) -> u64 {
    crate::spec::measured_span_ns(duration_ns, count, rate).unwrap_or(HOUR_NS)
}

const HOUR_NS: u64 = 3_600_000_000_000;

fn apply_rt(spec: &RunSpec) -> Result<(), Fault> {
    if let Some(cpu) = spec.pub_cpu {
        sys::pin_to_cpu(cpu).map_err(Fault::Config)?;
    }
    if let Some(p) = spec.rt_priority {
        sys::set_rt_priority(p).map_err(Fault::Config)?;
    }
    if spec.mlock {
        sys::mlock_all().map_err(Fault::Config)?;
    }
    Ok(())
}

/// Pins and prioritises this thread, sets the run up on every subscriber
/// and extra publisher, attaches the profiler (`--profile`) and tells them
/// to start.
pub(super) fn start<B: Binding>(
    s: &mut Session,
    spec: &RunSpec,
) -> Result<(Endpoints<B>, Option<Profiler>), Fault> {
    apply_rt(spec)?;
    for sub in &s.subs {
        sub.touch();
    }
    let ep = setup::<B>(s, spec);
    if let Some(gate) = s.gate.take() {
        gate.pass(ep.is_ok(), s.connect_timeout)
            .inspect_err(|_| spec.endpoint.cancel.cancel())?;
    }
    let ep = ep.inspect_err(|_| spec.endpoint.cancel.cancel())?;
    let profiler = spec.profile.then(Profiler::attach);
    for sub in s.subs.iter_mut().chain(s.pubs.iter_mut()) {
        sub.send(&Msg::Start)?;
        sub.touch();
    }
    Ok((ep, profiler))
}

#[cfg(test)]
mod tests {
    use super::{HOUR_NS, span_ns};

    #[test]
    fn a_duration_bounds_the_span() {
        assert_eq!(span_ns(5_000_000_000, 10, 1.0), 5_000_000_000);
    }

    #[test]
    fn a_count_at_a_rate_lasts_count_over_rate() {
        assert_eq!(span_ns(0, 36_000_000, 10_000.0), HOUR_NS);
        assert_eq!(span_ns(0, 1_000, 100.0), 10_000_000_000);
        assert_eq!(span_ns(0, u64::MAX, 1e-9), u64::MAX);
    }

    #[test]
    fn an_unpaced_count_is_given_an_hour() {
        assert_eq!(span_ns(0, 1_000_000, 0.0), HOUR_NS);
    }
}
