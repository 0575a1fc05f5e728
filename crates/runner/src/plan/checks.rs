//! The checks of the options that shape how a run receives, paces and is
//! traced (`--receive`, `--demand`, `--max-blocking-time`,
//! `--bandwidth-limit`, `--sleep`, `--pace`, `--profile`): each turns a request into
//! what the plan needs, or a one-line error naming the flag.

use super::*;

/// The settings [`TestRequest::knobs`] checks.
pub(super) struct Knobs {
    pub(super) block_ms: u64,
    pub(super) bandwidth: u64,
    pub(super) sleep_ns: u64,
    pub(super) pace_sleep: bool,
    /// `--multicast-address`, checked and written canonically.
    pub(super) multicast_address: Option<String>,
}

impl TestRequest {
    /// `--receive`, or the binding's default: its first mode, which is its
    /// fastest, unless `--wait busy` asks our thread to poll. Given with
    /// `--wait busy`, a listener still runs the subscriber, and the latency
    /// publisher polls for its echo (z_ping's busy mode beside z_pong).
    pub(super) fn receive_mode(
        &self,
        caps: &Capabilities,
        test: TestKind,
    ) -> Result<ReceiveMode, UsageError> {
        let Some(mode) = self.receive else {
            return Ok(if self.wait(test) == WaitMode::Busy {
                ReceiveMode::Thread
            } else {
                caps.receive[0]
            });
        };
        if !caps.receive.contains(&mode) {
            return Err(UsageError(format!(
                "--receive {}: {}'s subscriber receives on its own thread only; drop it or use --receive thread",
                mode.name(),
                self.binding
            )));
        }
        Ok(mode)
    }

    /// The demands of `--demand`, checked against the test and the other
    /// pacing options (None: no ramp).
    pub(super) fn demands(&self, test: TestKind) -> Result<Option<Vec<u64>>, UsageError> {
        let Some(v) = &self.demand else {
            return Ok(None);
        };
        if test != TestKind::Throughput {
            return Err(UsageError(
                "--demand: only for 'throughput' (bursts of samples, then 10 ms pauses)".into(),
            ));
        }
        if self.rate.is_some() {
            return Err(UsageError(
                "--demand: paces the sender itself (bursts of N samples, then 10 ms pauses); drop --rate".into(),
            ));
        }
        if self.find_max {
            return Err(UsageError(
                "--demand: a ramp of sending rates chosen by hand; drop --find-max (which searches the rate itself)".into(),
            ));
        }
        crate::demand::parse_demand(v).map(Some)
    }

    /// `--max-blocking-time`, `--bandwidth-limit`, `--sleep` and `--pace`, checked.
    pub(super) fn knobs(
        &self,
        test: TestKind,
        reliability: Reliability,
        rates: &[f64],
    ) -> Result<Knobs, UsageError> {
        let block_ms = match &self.max_blocking_time {
            None => registry::default_block_timeout(&self.binding).as_millis() as u64,
            Some(t) => {
                let d = parse_duration("--max-blocking-time", t)?;
                if reliability != Reliability::Reliable {
                    return Err(UsageError(format!(
                        "--max-blocking-time {t}: bounds a reliable writer's wait, and this run is best effort"
                    )));
                }
                if d < Duration::from_millis(1) {
                    return Err(UsageError(format!(
                        "--max-blocking-time {t}: must be at least 1ms"
                    )));
                }
                d.as_millis().min(u64::MAX as u128) as u64
            }
        };
        let bandwidth = bytes_opt("--bandwidth-limit", &self.bandwidth_limit)? as u64;
        if self.multicast_ttl.is_some() && !self.multicast {
            return Err(UsageError(
                "--multicast-ttl: needs --multicast (it is the TTL of multicast datagrams)".into(),
            ));
        }
        let multicast_address = self.multicast_address()?;
        let sleep_ns = match &self.sleep {
            None => 0,
            Some(t) => {
                let d = parse_duration("--sleep", t)?;
                if test != TestKind::Throughput {
                    return Err(UsageError(format!(
                        "--sleep {t}: only for 'throughput' (pace latency pings with --rate)"
                    )));
                }
                if self.rate.is_some() || self.find_max || self.demand.is_some() {
                    return Err(UsageError(format!(
                        "--sleep {t}: paces the publisher as --rate, --demand and --find-max do; keep one"
                    )));
                }
                if d.is_zero() {
                    return Err(UsageError(format!("--sleep {t}: must be more than 0")));
                }
                d.as_nanos().min(u64::MAX as u128) as u64
            }
        };
        let pace_sleep = match self.pace.as_deref() {
            None | Some("spin") => false,
            Some("sleep") => true,
            Some(p) => {
                return Err(UsageError(format!(
                    "--pace {p}: spin or sleep (how --rate waits for each sample's slot)"
                )));
            }
        };
        // `--rate max` alone has no slot to wait for.
        let paced = rates.iter().any(|&r| r > 0.0);
        if self.pace.is_some() && (test != TestKind::Throughput || !paced) {
            return Err(UsageError(
                "--pace: sets how a throughput test's --rate waits; add --rate N or drop --pace"
                    .into(),
            ));
        }
        Ok(Knobs {
            block_ms,
            bandwidth,
            sleep_ns,
            pace_sleep,
            multicast_address,
        })
    }

    /// `--multicast-address`: a multicast group of the run's IP family,
    /// with `--multicast`.
    fn multicast_address(&self) -> Result<Option<String>, UsageError> {
        let Some(a) = &self.multicast_address else {
            return Ok(None);
        };
        let ip: std::net::IpAddr = a.parse().map_err(|_| {
            UsageError(format!(
                "--multicast-address {a}: not an IP address; give a multicast group such as 239.255.0.2"
            ))
        })?;
        if !ip.is_multicast() {
            return Err(UsageError(format!(
                "--multicast-address {a}: not a multicast address; give one in 224.0.0.0/4 (IPv4, e.g. 239.255.0.2) or ff00::/8 (IPv6)"
            )));
        }
        if ip.is_ipv6() != self.ipv6 {
            return Err(UsageError(format!(
                "--multicast-address {a}: an {} group, and the run is {}; {}",
                if ip.is_ipv6() { "IPv6" } else { "IPv4" },
                if self.ipv6 { "IPv6 (--ipv6)" } else { "IPv4" },
                if self.ipv6 {
                    "give an IPv6 group (ff00::/8) or drop --ipv6"
                } else {
                    "add --ipv6 or give an IPv4 group (224.0.0.0/4)"
                }
            )));
        }
        if !self.multicast {
            return Err(UsageError(format!(
                "--multicast-address {a}: needs --multicast (it is the group of multicast delivery)"
            )));
        }
        Ok(Some(ip.to_string()))
    }

    /// `--profile` needs a process per side and one run per measurement.
    pub(super) fn check_profile(
        &self,
        caps: &pubsubperf_core::binding::Capabilities,
    ) -> Result<(), UsageError> {
        if !self.profile {
            return Ok(());
        }
        let why = if caps.in_process {
            format!(
                "'{}' runs both sides as threads of one process, whose system calls cannot be told apart; profile a binding with a process per side (udp, uds, shm, ...)",
                self.binding
            )
        } else if self.find_max {
            "not with --find-max (its trials are many short runs); profile the rate it found with --rate".into()
        } else if self.publishers != "1" || self.connect_publishers.is_some() {
            "one publisher process only; drop --publishers/--connect-publishers".into()
        } else {
            return Ok(());
        };
        Err(UsageError(format!("--profile: {why}")))
    }
}

impl TestRequest {
    /// `--explain`: both sides in processes of their own on this host, a
    /// real clock, latency samples, and a host that can load the probes.
    pub(super) fn check_explain(
        &self,
        caps: &pubsubperf_core::binding::Capabilities,
        test: TestKind,
    ) -> Result<(), UsageError> {
        if !self.explain {
            return Ok(());
        }
        let why = if caps.in_process || pubsubperf_harness::registry::synthetic(&self.binding) {
            format!(
                "'{}' runs both sides in one process (or on a clock of its own), which the kernel's account cannot tell apart; explain a binding with a process per side (udp, uds, shm, ...)",
                self.binding
            )
        } else if self.find_max {
            "not with --find-max (its trials are many short runs); explain the rate it found with --rate".into()
        } else if self.publishers != "1" || self.connect_publishers.is_some() {
            "one publisher process only; drop --publishers/--connect-publishers".into()
        } else if self.connect.is_some() {
            "both sides on this host only (the probes watch this host's kernel); drop --connect"
                .into()
        } else if test == TestKind::Throughput && self.latency_every.is_none_or(|n| n == 0) {
            "a throughput run's account is of its latency samples: add --latency-every N".into()
        } else if let Some(why) = pubsubperf_harness::explaining::refusal() {
            return Err(UsageError(why));
        } else {
            return Ok(());
        };
        Err(UsageError(format!("--explain: {why}")))
    }

    /// `--topics`: a list of counts (each 1-64); more than one topic runs
    /// one whole run per topic at once, each with its own subscriber (and
    /// publisher) processes on this host, which the options that need one
    /// run alone, or agents of their own, cannot do.
    pub(super) fn topic_counts(
        &self,
        connect: &[String],
        test: TestKind,
    ) -> Result<Vec<usize>, UsageError> {
        let counts = axes::counts("--topics", &self.topics)?;
        if counts.iter().all(|&n| n == 1) {
            return Ok(counts);
        }
        let refuse = |why: &str| {
            Err(UsageError(format!(
                "--topics {}: {why}; give --topics 1 or drop the other option",
                self.topics
            )))
        };
        if !connect.is_empty() || self.connect_publishers.is_some() {
            return refuse(
                "with --connect each topic would need an agent of its own (an agent serves one session at a time); not supported",
            );
        }
        if self.profile {
            return refuse("--profile traces one run's sides, and several topics run at once");
        }
        if self.find_max {
            return refuse("--find-max searches one run's rate");
        }
        if self.demand.is_some() {
            return refuse("--demand ramps one run");
        }
        if test == TestKind::Latency && self.one_way {
            return refuse("--one-way is recorded per run; several topics merge their round trips");
        }
        Ok(counts)
    }
}
