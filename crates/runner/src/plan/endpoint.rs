//! What every endpoint of a plan is configured with (`EndpointConfig`),
//! checked once, and the plan's runs: one [`RunSpec`] per point of the
//! axes, each validated against its binding.

use super::*;
use checks::Knobs;
use peers::Hosts;
use times::Times;

/// The endpoint every run of a plan starts from, with what else came of
/// checking it.
pub(super) struct Endpoints {
    pub(super) base: EndpointConfig,
    pub(super) knobs: Knobs,
    /// `--batch`; None: the binding's default, per run.
    pub(super) batch: Option<usize>,
    pub(super) data_address: Option<String>,
}

/// What the runs of a plan share, beside their endpoints'.
pub(super) struct Shared<'a> {
    pub(super) test: TestKind,
    pub(super) peer: &'a str,
    pub(super) times: &'a Times,
    pub(super) endpoints: &'a Endpoints,
    pub(super) cores: (Option<usize>, Option<usize>),
    /// Subscribers on other hosts (`registry::validate` checks the
    /// binding can).
    pub(super) remote_subscribers: bool,
}

impl TestRequest {
    /// The endpoint settings every run of the plan has (its run id, size,
    /// counts and cancel token are the run's), `--batch`, the knobs, and
    /// the data address (`data_address`: `--data-address`'s, checked).
    pub(super) fn endpoint(
        &self,
        test: TestKind,
        caps: &Capabilities,
        peer: &str,
        rates: &[f64],
        hosts: &Hosts,
        data_address: Option<String>,
    ) -> Result<Endpoints, UsageError> {
        let reliability = if self.reliable {
            Reliability::Reliable
        } else if self.best_effort {
            Reliability::BestEffort
        } else {
            caps.default_reliability
        };
        let mut options = BTreeMap::new();
        for o in &self.opts {
            let (k, v) = o
                .split_once('=')
                .ok_or_else(|| UsageError(format!("--opt '{o}': expected KEY=VALUE")))?;
            options.insert(k.trim().to_string(), v.trim().to_string());
        }
        let transport = self
            .transport
            .clone()
            .unwrap_or_else(|| registry::default_transport(&self.binding, peer, self.multicast));
        let data_type = self.data_type.unwrap_or(caps.data_types[0]);
        let receive = self.receive_mode(caps, test)?;
        let history: Option<History> = self
            .history
            .as_deref()
            .map(|h| h.parse().map_err(|e| UsageError(format!("--history {e}"))))
            .transpose()?;
        let qos_file = self.qos_file_for(peer, &hosts.connect, &hosts.connect_publishers)?;
        if let Some(n) = self.instances
            && !(1..=100_000).contains(&n)
        {
            return Err(UsageError(format!(
                "--instances {n}: must be between 1 and 100000"
            )));
        }
        let knobs = self.knobs(test, reliability, rates)?;
        // `--batch 0`: no batching, where the binding's default batches.
        let batch = match self.batch.as_deref() {
            None => None,
            Some("0") => Some(0),
            Some(_) => Some(bytes_opt("--batch", &self.batch)?),
        };
        let remote = !hosts.connect.is_empty() || !hosts.connect_publishers.is_empty();
        let data_address =
            self.one_host_address(peer, &transport, remote, data_address, &mut options);
        let base = EndpointConfig {
            run_id: String::new(),
            transport,
            reliability,
            wait: self.wait(test),
            receive,
            data_type,
            zero_copy: self.zero_copy(test),
            max_sample_size: 0,
            subscribers: 0,
            publishers: 0,
            batch_bytes: batch.unwrap_or(0),
            multicast: self.multicast,
            ipv6: self.ipv6,
            bind_ip: "127.0.0.1".into(),
            socket_buffer: bytes_opt("--socket-buffer", &self.socket_buffer)?,
            send_queue: self.send_queue.unwrap_or(0),
            receive_queue: self.receive_queue.unwrap_or(0),
            reliable_block_timeout_ms: knobs.block_ms,
            history,
            durability: self.durability,
            async_publish: self.async_publish,
            domain: self.domain,
            qos_file,
            instances: self.instances.unwrap_or(0),
            no_positive_acks: self.no_positive_acks,
            bandwidth_limit: knobs.bandwidth,
            no_push_on_write: self.no_push_on_write,
            multicast_ttl: self.multicast_ttl,
            multicast_address: knobs.multicast_address.clone(),
            options,
            cancel: CancelToken::new(),
            sample_key: None,
            held_discovery: None,
        };
        Ok(Endpoints {
            base,
            knobs,
            batch,
            data_address,
        })
    }

    /// `--qos-file`, as an absolute path (subscriber processes may run
    /// elsewhere) of a file that exists, for a run of one binding.
    fn qos_file_for(
        &self,
        peer: &str,
        connect: &[String],
        connect_publishers: &[String],
    ) -> Result<Option<String>, UsageError> {
        let Some(p) = &self.qos_file else {
            return Ok(None);
        };
        if peer != self.binding {
            return Err(UsageError(format!(
                "--qos-file {}: a vendor file fits one binding; drop it for a run across {} and {peer}",
                p.display(),
                self.binding
            )));
        }
        if !p.is_file() {
            return Err(UsageError(format!(
                "--qos-file {}: no such file",
                p.display()
            )));
        }
        let abs = std::fs::canonicalize(p)
            .map_err(|e| UsageError(format!("--qos-file {}: {e}", p.display())))?;
        let abs = abs.to_string_lossy().into_owned();
        self.qos_name_fits(&abs, connect, connect_publishers)?;
        Ok(Some(abs))
    }

    /// One run per point of the axes (see `axes` for the order), each
    /// with its endpoint from `base`, validated against its binding.
    pub(super) fn specs(
        &self,
        shared: &Shared<'_>,
        points: &[axes::Point],
    ) -> Result<Vec<RunSpec>, UsageError> {
        let run_base = new_run_id();
        let mut specs = Vec::with_capacity(points.len());
        for (i, p) in points.iter().enumerate() {
            let mut endpoint = EndpointConfig {
                run_id: format!("{run_base}s{i}"),
                max_sample_size: p.size,
                subscribers: p.subscribers,
                publishers: p.publishers,
                cancel: CancelToken::new(),
                ..shared.endpoints.base.clone()
            };
            if shared.endpoints.batch.is_none() {
                endpoint.batch_bytes =
                    registry::default_batch(&self.binding, shared.peer, shared.test, &endpoint);
            }
            let spec = self.spec(endpoint, shared, p);
            registry::validate(&spec, shared.remote_subscribers).map_err(UsageError)?;
            specs.push(spec);
        }
        Ok(specs)
    }

    fn spec(&self, endpoint: EndpointConfig, shared: &Shared<'_>, p: &axes::Point) -> RunSpec {
        let (times, knobs) = (shared.times, &shared.endpoints.knobs);
        RunSpec {
            binding: self.binding.clone(),
            peer_binding: shared.peer.to_string(),
            test: shared.test,
            size: p.size,
            endpoint,
            warmup_ns: times.warmup.as_nanos() as u64,
            duration_ns: times.duration.map_or(0, |d| d.as_nanos() as u64),
            count: self.count.unwrap_or(0),
            rate: p.rate,
            sleep_ns: knobs.sleep_ns,
            pace_sleep: knobs.pace_sleep,
            demand: p.demand,
            recovery_ms: if p.demand > 0 { times.recovery_ms } else { 0 },
            latency_every: self.latency_every.unwrap_or(0),
            check: self.check,
            pub_cpu: shared.cores.0,
            sub_cpu: shared.cores.1,
            rt_priority: self.rt_priority,
            mlock: self.mlock,
            subscribers: p.subscribers,
            publishers: p.publishers,
            subscriber_index: 0,
            fan_out_every: 0,
            topics: p.topics,
            echo_timeout_ms: times.echo_timeout.as_millis() as u64,
            interval_ms: 1000,
            one_way: self.one_way,
            profile: self.profile,
            explain: self.explain,
            clock: self.clock,
            data_address: shared.endpoints.data_address.clone(),
            run_key: 0,
        }
    }
}
