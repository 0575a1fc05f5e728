//! How long a run lasts and waits, and what only one test kind takes:
//! `--duration`, `--count`, `--warmup`, `--echo-timeout`,
//! `--connect-timeout`, `--demand` with `--recovery-time`, `--find-max`
//! with `--max-loss`, `--latency-every`, `--one-way`, `--clock`,
//! `--rt-priority`.

use super::*;

/// The lengths and timeouts of every run of a plan.
pub(super) struct Times {
    /// None: the runs are counted (`--count`).
    pub(super) duration: Option<Duration>,
    pub(super) warmup: Duration,
    pub(super) echo_timeout: Duration,
    pub(super) connect_timeout: Duration,
    /// `--demand`'s ramp, if any.
    pub(super) demands: Option<Vec<u64>>,
    pub(super) recovery_ms: u64,
}

impl TestRequest {
    /// The lengths and timeouts, checked; `--profile` and `--explain` are
    /// checked among them, in the order their errors have always come.
    pub(super) fn times(&self, test: TestKind, caps: &Capabilities) -> Result<Times, UsageError> {
        let duration = self
            .duration
            .as_deref()
            .map(|d| parse_duration("--duration", d))
            .transpose()?;
        if duration == Some(Duration::ZERO) {
            return Err(UsageError("--duration: must be more than 0".into()));
        }
        if self.count == Some(0) {
            return Err(UsageError("--count: must be at least 1".into()));
        }
        if self.find_max && test != TestKind::Throughput {
            return Err(UsageError("--find-max: only for 'throughput'".into()));
        }
        self.check_profile(caps)?;
        self.check_explain(caps, test)?;
        if self.find_max && self.rate.is_some() {
            return Err(UsageError(
                "--find-max: searches the rate itself; drop --rate".into(),
            ));
        }
        let demands = self.demands(test)?;
        let recovery_ms = match &self.recovery_time {
            None => DEFAULT_RECOVERY_MS,
            Some(_) if demands.is_none() => {
                return Err(UsageError(
                    "--recovery-time: the pause between demands of --demand; add --demand START:STEP:END or drop it".into(),
                ));
            }
            Some(v) => crate::demand::parse_recovery(v)?,
        };
        if let Some(l) = self.max_loss
            && !(0.0..100.0).contains(&l)
        {
            return Err(UsageError(format!(
                "--max-loss {l}: must be a percentage from 0 to below 100"
            )));
        }
        let duration = match (duration, self.count) {
            (None, None) if self.find_max => Some(Duration::from_secs(2)),
            (None, None) => Some(Duration::from_secs(5)),
            (d, _) => d,
        };
        Ok(Times {
            duration,
            warmup: parse_duration("--warmup", &self.warmup)?,
            echo_timeout: self.echo_timeout()?,
            connect_timeout: self.connect_timeout()?,
            demands,
            recovery_ms,
        })
    }

    fn echo_timeout(&self) -> Result<Duration, UsageError> {
        let t = parse_duration("--echo-timeout", &self.echo_timeout)?;
        if t < Duration::from_millis(1) {
            return Err(UsageError("--echo-timeout: must be at least 1ms".into()));
        }
        Ok(t)
    }

    fn connect_timeout(&self) -> Result<Duration, UsageError> {
        let t = parse_duration("--connect-timeout", &self.connect_timeout)?;
        if t < Duration::from_millis(100) {
            return Err(UsageError(
                "--connect-timeout: must be at least 100ms".into(),
            ));
        }
        Ok(t)
    }

    /// `--latency-every` (throughput's), `--one-way` and `--clock`
    /// (latency's), and `--rt-priority`.
    pub(super) fn check_test_kind(&self, test: TestKind) -> Result<(), UsageError> {
        if self.latency_every.is_some() && test == TestKind::Latency {
            return Err(UsageError(
                "--latency-every: only for 'throughput' (the latency test echoes every sample)"
                    .into(),
            ));
        }
        if self.latency_every == Some(0) {
            return Err(UsageError("--latency-every: must be at least 1".into()));
        }
        if self.one_way && test == TestKind::Throughput {
            return Err(UsageError("--one-way: only for 'latency'".into()));
        }
        if self.clock != RoundTripClock::Auto && test == TestKind::Throughput {
            return Err(UsageError("--clock: only for 'latency'".into()));
        }
        if self.clock == RoundTripClock::Tsc {
            self.check_tsc(test)?;
        }
        if let Some(p) = self.rt_priority
            && !(1..=99).contains(&p)
        {
            return Err(UsageError(format!("--rt-priority {p}: must be 1-99")));
        }
        Ok(())
    }

    fn check_tsc(&self, test: TestKind) -> Result<(), UsageError> {
        if self.wait(test) != WaitMode::Busy {
            return Err(UsageError(
                "--clock tsc: needs --wait busy (across a sleep the TSC may count less than CLOCK_MONOTONIC); use --clock monotonic".into(),
            ));
        }
        if self.one_way {
            return Err(UsageError(
                "--clock tsc: not with --one-way (both processes stamp with CLOCK_MONOTONIC)"
                    .into(),
            ));
        }
        if !cfg!(target_arch = "x86_64") {
            return Err(UsageError(format!(
                "--clock tsc: the TSC is x86-64's; on {} every timestamp is CLOCK_MONOTONIC: use --clock auto or monotonic",
                std::env::consts::ARCH
            )));
        }
        if !pubsubperf_core::clock::Tsc::usable() {
            return Err(UsageError(
                "--clock tsc: this host's kernel does not keep time with the TSC; use --clock auto or monotonic".into(),
            ));
        }
        Ok(())
    }
}
