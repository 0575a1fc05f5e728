//! Where the sides run: the subscribers and publishers on other hosts
//! (`--connect`, `--connect-publishers`) and how many of each, the cores
//! (`--cpu`), how the other hosts are reached (`--remote-path`,
//! `--token-file`, `--insecure`), and the standard load beside the run.

use super::*;

/// The other hosts' sides of a plan.
pub(super) struct Hosts {
    /// Subscribers (`--connect`).
    pub(super) connect: Vec<String>,
    /// Extra publishers (`--connect-publishers`).
    pub(super) connect_publishers: Vec<String>,
}

/// The addresses of a comma-separated list (empty items dropped).
fn addresses(list: Option<&str>) -> Vec<String> {
    list.map(|c| {
        c.split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

impl TestRequest {
    /// `--connect`'s addresses, and the subscriber counts they allow
    /// (`counts`: `--subscribers`'s).
    pub(super) fn subscribers_at(
        &self,
        counts: Vec<usize>,
    ) -> Result<(Vec<String>, Vec<usize>), UsageError> {
        let connect = addresses(self.connect.as_deref());
        if self.connect.is_some() && connect.is_empty() {
            return Err(UsageError(
                "--connect: expected HOST:PORT of a 'pubsubperf agent --listen'".into(),
            ));
        }
        if connect.is_empty() {
            return Ok((connect, counts));
        }
        if counts.len() > 1 {
            return Err(UsageError(format!(
                "--subscribers {}: with --connect, the number of addresses ({}) is the number of subscribers; give one count or drop --subscribers",
                self.subscribers,
                connect.len()
            )));
        }
        let n = counts[0];
        if n != 1 && n != connect.len() {
            return Err(UsageError(format!(
                "--subscribers {n}: with --connect, the number of addresses ({}) is the number of subscribers",
                connect.len()
            )));
        }
        let counts = vec![connect.len()];
        Ok((connect, counts))
    }

    /// `--connect-publishers`' addresses and the publisher counts, each
    /// point checked as a single count is.
    pub(super) fn publishers_at(
        &self,
        test: TestKind,
    ) -> Result<(Vec<String>, Vec<usize>), UsageError> {
        let connect_publishers = addresses(self.connect_publishers.as_deref());
        let mut counts = axes::counts("--publishers", &self.publishers)?;
        if !connect_publishers.is_empty() {
            let publishers = connect_publishers.len() + 1;
            if publishers > axes::MAX_PEERS {
                return Err(UsageError("--publishers: must be between 1 and 64".into()));
            }
            if counts.len() > 1 {
                return Err(UsageError(format!(
                    "--publishers {}: with --connect-publishers, this process plus the addresses ({publishers}) are the publishers; give one count or drop --publishers",
                    self.publishers
                )));
            }
            let n = counts[0];
            if n != 1 && n != publishers {
                return Err(UsageError(format!(
                    "--publishers {n}: with --connect-publishers, this process plus the addresses ({publishers}) are the publishers"
                )));
            }
            counts = vec![publishers];
        }
        for &publishers in &counts {
            self.check_publishers(test, publishers)?;
        }
        Ok((connect_publishers, counts))
    }

    fn check_publishers(&self, test: TestKind, publishers: usize) -> Result<(), UsageError> {
        if publishers > 1 && test != TestKind::Throughput {
            return Err(UsageError(
                "--publishers: only for 'throughput' (the latency test is one ping-pong)".into(),
            ));
        }
        if publishers > 1 && !registry::multiple_publishers(&self.binding) {
            return Err(UsageError(format!(
                "--publishers {publishers}: {} readers take one writer (bindings with several publishers: {})",
                self.binding,
                registry::names()
                    .into_iter()
                    .filter(|n| registry::multiple_publishers(n))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(())
    }

    /// The publisher's and the subscribers' cores. Remote subscribers run
    /// on another host: no pinning is sent unless asked. Subscribers at a
    /// loopback address share this host's cores, so they are pinned as
    /// local ones are.
    pub(super) fn cores(
        &self,
        connect: &[String],
    ) -> Result<(Option<usize>, Option<usize>), UsageError> {
        let (pub_cpu, sub_cpu) = parse_cpu(self.cpu.as_deref(), pubsubperf_core::sys::cpus())?;
        let sub_cpu = if connect.iter().all(|c| on_this_host(c)) || self.cpu.is_some() {
            sub_cpu
        } else {
            None
        };
        Ok((pub_cpu, sub_cpu))
    }

    /// How the other hosts are reached: their addresses' form, and
    /// `--remote-path`, `--token-file` and `--insecure` only where they
    /// mean something.
    pub(super) fn check_access(&self, hosts: &Hosts) -> Result<(), UsageError> {
        let (connect, connect_publishers) = (&hosts.connect, &hosts.connect_publishers);
        for a in connect.iter().chain(connect_publishers) {
            if let Some(Err(why)) = pubsubperf_harness::ssh::Target::parse(a) {
                return Err(UsageError(why));
            }
        }
        let over_ssh = connect
            .iter()
            .chain(connect_publishers)
            .any(|a| a.starts_with("ssh://"));
        if self.remote_path.is_some() && !over_ssh {
            return Err(UsageError(
                "--remote-path: only with an ssh:// address in --connect or --connect-publishers"
                    .into(),
            ));
        }
        if self.token_file.is_some() && connect.is_empty() && connect_publishers.is_empty() {
            return Err(UsageError(
                "--token-file: only with --connect or --connect-publishers (local subscribers need no token)".into(),
            ));
        }
        if self.insecure && self.token_file.is_some() {
            return Err(UsageError(
                "--insecure: presents no token; drop --token-file, or --insecure".into(),
            ));
        }
        Ok(())
    }

    /// `--load` on `--load-cpu`, planned.
    pub(super) fn load(&self) -> Result<Option<crate::load::Load>, UsageError> {
        if self.load_cpu.is_some() && self.load.is_none() {
            return Err(UsageError("--load-cpu: only with --load PROFILE".into()));
        }
        self.load
            .as_deref()
            .map(|p| {
                crate::load::Load::plan(p, self.load_cpu.as_deref(), pubsubperf_core::sys::cpus())
            })
            .transpose()
    }
}
