//! The Throughput example's command line: the one table of its flags, each
//! mapped to a pubsubperf setting or refused with the reason, and the
//! reading of a line through it into an [`Invocation`].

use crate::plan::{TestRequest, UsageError};

/// Who this process is: the example's publishing or subscribing
/// application.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Pub,
    Sub,
}

/// The value `-peer` takes for "the same host" (the example's shared
/// memory peer).
pub const SAME_HOST: &str = "shmem://";

/// What a flag does.
pub enum How {
    /// Applies the value (None for a flag without one).
    Map(fn(&mut Invocation, Option<&str>) -> Result<(), UsageError>),
    /// Refused, with the reason.
    Refuse(&'static str),
}

/// One flag of the example.
pub struct Flag {
    /// As the example spells it.
    pub name: &'static str,
    /// What its value is (None: it takes none).
    pub value: Option<&'static str>,
    pub how: How,
    /// What it becomes here (for docs/throughput-example.md).
    pub doc: &'static str,
}

/// The example's flags (its documentation's table 5.1), plus `-pub`,
/// `-sub` and `-middleware`, which pubsubperf adds.
pub const FLAGS: &[Flag] = &[
    Flag {
        name: "-pub",
        value: None,
        how: How::Map(|i, _| set_role(i, Role::Pub)),
        doc: "this process publishes (the default without -participantId, or with -participantId 0)",
    },
    Flag {
        name: "-sub",
        value: None,
        how: How::Map(|i, _| set_role(i, Role::Sub)),
        doc: "this process subscribes (the default with -participantId 1 or more)",
    },
    Flag {
        name: "-middleware",
        value: Some("NAME"),
        how: How::Map(|i, v| {
            i.request.binding = v.unwrap_or_default().to_string();
            i.applied.push(("-middleware", "binding"));
            Ok(())
        }),
        doc: "pubsubperf's binding (default connext where RTI Connext runs, else cyclonedds)",
    },
    Flag {
        name: "-domainId",
        value: Some("#"),
        how: How::Map(|i, v| set(i, "-domainId", "domain", v)),
        doc: "--domain",
    },
    Flag {
        name: "-participantId",
        value: Some("#"),
        how: How::Map(|i, v| {
            let v = v.unwrap_or_default();
            i.participant = Some(v.parse().map_err(|_| {
                UsageError(format!(
                    "-participantId '{v}': expected a whole number (0 for the publisher, 1, 2 ... for each subscriber)"
                ))
            })?);
            Ok(())
        }),
        doc: "0: the publisher; N ≥ 1: subscriber N, which listens on port 7400 + N - 1 (PUBSUBPERF_PERFTEST_PORT moves the base)",
    },
    Flag {
        name: "-nic",
        value: Some("IP"),
        how: How::Map(|i, v| set(i, "-nic", "data-address", v)),
        doc: "--data-address (the address or interface this side's data uses)",
    },
    Flag {
        name: "-transport",
        value: Some("#"),
        how: How::Map(set_transport),
        doc: "1: --transport udp; 2: --transport shm; 8: --transport udp --ipv6",
    },
    Flag {
        name: "-peer",
        value: Some("ADDR"),
        how: How::Map(|i, v| {
            let p = v.unwrap_or_default();
            if p != SAME_HOST {
                crate::perftest::options::host_only(p, "subscriber N listens on port N - 1 +")?;
            }
            i.peers.push(p.to_string());
            Ok(())
        }),
        doc: "publisher: the subscribers' hosts (--connect HOST:PORT, one per subscriber or one for all); shmem://: this host; subscriber: checked, not used",
    },
    Flag {
        name: "-subscribers",
        value: Some("#"),
        how: How::Map(|i, v| set(i, "-subscribers", "subscribers", v)),
        doc: "--subscribers",
    },
    Flag {
        name: "-duration",
        value: Some("SECONDS"),
        how: How::Map(|i, v| {
            let v = v.unwrap_or_default();
            let secs: u64 = v.parse().map_err(|_| {
                UsageError(format!(
                    "-duration '{v}': expected whole seconds per demand"
                ))
            })?;
            set(i, "-duration", "duration", Some(&format!("{secs}s")))
        }),
        doc: "--duration (per demand)",
    },
    Flag {
        name: "-size",
        value: Some("BYTES"),
        how: How::Map(|i, v| set(i, "-size", "size", v)),
        doc: "--size",
    },
    Flag {
        name: "-demand",
        value: Some("START:STEP:END"),
        how: How::Map(|i, v| set(i, "-demand", "demand", v)),
        doc: "--demand",
    },
    Flag {
        name: "-recoveryTime",
        value: Some("MS"),
        how: How::Map(|i, v| set(i, "-recoveryTime", "recovery-time", v)),
        doc: "--recovery-time",
    },
    Flag {
        name: "-reliable",
        value: None,
        how: How::Map(|i, _| {
            i.reliable = true;
            Ok(())
        }),
        doc: "--reliable (else --best-effort, the example's default)",
    },
    Flag {
        name: "-maxBlockingTime",
        value: Some("MS"),
        how: How::Map(|i, v| {
            let ms = whole("-maxBlockingTime", v, "milliseconds")?;
            set(
                i,
                "-maxBlockingTime",
                "max-blocking-time",
                Some(&format!("{ms}ms")),
            )
        }),
        doc: "--max-blocking-time (reliable runs)",
    },
    Flag {
        name: "-no_push_on_write",
        value: None,
        how: How::Map(|i, v| set(i, "-no_push_on_write", "no-push-on-write", v)),
        doc: "--no-push-on-write: connext (Connext's pull-mode reliability, push_on_write off); CycloneDDS 0.10 and Fast DDS 2.9 have none and refuse it",
    },
    Flag {
        name: "-bw_limit",
        value: Some("MBPS"),
        how: How::Map(|i, v| {
            let mbps = whole("-bw_limit", v, "Mbit/s")?;
            let bytes = mbps.saturating_mul(125_000);
            set(i, "-bw_limit", "bandwidth-limit", Some(&bytes.to_string()))
        }),
        doc: "--bandwidth-limit (MBPS × 125000 bytes/s; fastdds's flow controller, refused elsewhere)",
    },
    Flag {
        name: "-multicast_ttl",
        value: Some("#"),
        how: How::Map(|i, v| {
            set(i, "-multicast_ttl", "multicast", None)?;
            set(i, "-multicast_ttl", "multicast-ttl", v)
        }),
        doc: "--multicast --multicast-ttl # (the example's multicast test; udp, cyclonedds, fastdds, connext)",
    },
    Flag {
        name: "-mcast_recv_addr",
        value: Some("IP"),
        how: How::Map(|i, v| set_mcast_addr(i, "-mcast_recv_addr", v)),
        doc: "--multicast --multicast-address IP: on a subscriber, the group its readers join (udp, cyclonedds, fastdds, connext; the publisher needs -multicast_ttl); on the publisher, that of its own subscribers",
    },
    Flag {
        name: "-mcast_rcv_addr",
        value: Some("IP"),
        how: How::Map(|i, v| set_mcast_addr(i, "-mcast_rcv_addr", v)),
        doc: "as -mcast_recv_addr (the spelling of the example's table)",
    },
    Flag {
        name: "-strength",
        value: Some("#"),
        how: How::Refuse("ownership strength: exclusive ownership is not implemented"),
        doc: "refused (no ownership QoS)",
    },
    Flag {
        name: crate::perftest::options::PROFILE_FLAG,
        value: None,
        how: How::Map(|i, _| set(i, crate::perftest::options::PROFILE_FLAG, "profile", None)),
        doc: "ours: --profile, each side's system calls, context switches and CPU per sample, printed under the tables (docs/profiling.md)",
    },
    Flag {
        name: crate::perftest::options::EXPLAIN_FLAG,
        value: None,
        how: How::Map(|i, _| set(i, crate::perftest::options::EXPLAIN_FLAG, "explain", None)),
        doc: "ours: --explain, the kernel's account of the slow samples by percentile band (root; docs/explain.md)",
    },
    Flag {
        name: "-help",
        value: None,
        how: How::Map(|i, _| {
            i.help = true;
            Ok(())
        }),
        doc: "prints this table",
    },
];

/// A Throughput example command line, read.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// `-pub` / `-sub` as given.
    pub role_flag: Option<Role>,
    /// `-participantId`.
    pub participant: Option<u32>,
    /// The test as pubsubperf's settings.
    pub request: TestRequest,
    /// `-transport` as given.
    pub transport: Option<u8>,
    /// `-peer`s as given.
    pub peers: Vec<String>,
    /// `-reliable`.
    pub reliable: bool,
    /// The example's flags applied, with the pubsubperf setting each set:
    /// an error of the plan naming our flag is reported under the example's.
    pub applied: Vec<(&'static str, &'static str)>,
    /// `-help`.
    pub help: bool,
    /// The middleware without `-middleware` ([`crate::rti_default`]), and
    /// why it is not Connext when it is not.
    pub default_middleware: crate::rti_default::RtiDefault,
}

impl Default for Invocation {
    fn default() -> Self {
        Invocation {
            role_flag: None,
            participant: None,
            request: TestRequest {
                binding: crate::rti_default::FALLBACK.into(),
                ..TestRequest::default()
            },
            transport: None,
            peers: Vec::new(),
            reliable: false,
            applied: Vec::new(),
            help: false,
            default_middleware: crate::rti_default::RtiDefault::of(crate::rti_default::FALLBACK),
        }
    }
}

/// The flag a word names (case-insensitively, as written in the example's
/// documentation; no abbreviations).
pub fn lookup(word: &str) -> Option<&'static Flag> {
    FLAGS.iter().find(|f| f.name.eq_ignore_ascii_case(word))
}

/// Reads a Throughput example command line (the words after
/// `throughput-example`).
pub fn parse(args: &[String]) -> Result<Invocation, UsageError> {
    let mut inv = Invocation::default();
    let mut i = 0;
    while i < args.len() {
        let word = &args[i];
        let flag = lookup(word).ok_or_else(|| {
            UsageError(format!(
                "{word}: not a flag of RTI's Throughput example (docs/throughput-example.md lists them)"
            ))
        })?;
        let value = match flag.value {
            None => None,
            Some(what) => Some(
                args.get(i + 1)
                    .filter(|n| {
                        !n.starts_with('-') || n[1..].starts_with(|c: char| c.is_ascii_digit())
                    })
                    .map(String::as_str)
                    .ok_or_else(|| UsageError(format!("{}: needs a value {what}", flag.name)))?,
            ),
        };
        i += 1 + usize::from(value.is_some());
        match flag.how {
            How::Map(apply) => apply(&mut inv, value)?,
            How::Refuse(why) => {
                return Err(UsageError(format!("{}: not supported: {why}", flag.name)));
            }
        }
    }
    Ok(inv)
}

/// Sets a pubsubperf setting for one of the example's flags, remembering
/// which.
fn set(
    inv: &mut Invocation,
    ours_for: &'static str,
    ours: &'static str,
    v: Option<&str>,
) -> Result<(), UsageError> {
    inv.request.set_for(ours_for, ours, v, &mut inv.applied)
}

/// `-mcast_recv_addr IP`: a multicast run whose readers join IP.
fn set_mcast_addr(
    inv: &mut Invocation,
    flag: &'static str,
    v: Option<&str>,
) -> Result<(), UsageError> {
    set(inv, flag, "multicast", None)?;
    set(inv, flag, "multicast-address", v)
}

/// A whole number of `unit` for `flag`.
fn whole(flag: &str, v: Option<&str>, unit: &str) -> Result<u64, UsageError> {
    let v = v.unwrap_or_default();
    v.parse()
        .map_err(|_| UsageError(format!("{flag} '{v}': expected whole {unit}")))
}

fn set_role(inv: &mut Invocation, r: Role) -> Result<(), UsageError> {
    if inv.role_flag.is_some_and(|o| o != r) {
        return Err(UsageError(
            "-pub, -sub: one process is one side; give one of them".into(),
        ));
    }
    inv.role_flag = Some(r);
    Ok(())
}

fn set_transport(inv: &mut Invocation, v: Option<&str>) -> Result<(), UsageError> {
    let v = v.unwrap_or_default();
    let (t, ipv6) = match v {
        "1" => ("udp", false),
        "2" => ("shm", false),
        "8" => ("udp", true),
        _ => {
            return Err(UsageError(format!(
                "-transport '{v}': expected 1 (UDPv4), 2 (shared memory) or 8 (UDPv6)"
            )));
        }
    };
    inv.transport = v.parse().ok();
    set(inv, "-transport", "transport", Some(t))?;
    if ipv6 {
        set(inv, "-transport", "ipv6", None)?;
    }
    Ok(())
}

impl Invocation {
    /// The side this process is: `-pub`/`-sub`, else by `-participantId`
    /// (the example's subscribers have 1, 2 ...; its publisher 0, the
    /// default).
    pub fn role(&self) -> Role {
        self.role_flag.unwrap_or(match self.participant {
            Some(n) if n > 0 => Role::Sub,
            _ => Role::Pub,
        })
    }

    /// The finished request, once every flag is read: reliability (best
    /// effort unless `-reliable`), a demand ramp required of the
    /// publisher, and where the subscribers are.
    pub fn finish(&mut self, base_port: u16) -> Result<(), UsageError> {
        if self.reliable {
            self.request.reliable = true;
            self.applied.push(("-reliable", "reliable"));
        } else {
            self.request.best_effort = true;
            self.applied.push(("-reliable", "best-effort"));
        }
        if self.role() == Role::Sub {
            if self.participant == Some(0) {
                return Err(UsageError(
                    "-participantId 0: the publisher's; give each subscriber 1, 2 ...".into(),
                ));
            }
            return Ok(());
        }
        if self.request.demand.is_none() {
            return Err(UsageError(
                "-demand: the publisher needs the ramp (its default is in the example's source, not its documentation), e.g. -demand 1000:1000:9000".into(),
            ));
        }
        let remote: Vec<&String> = self.peers.iter().filter(|p| *p != SAME_HOST).collect();
        if remote.is_empty() {
            return Ok(());
        }
        if remote.len() != self.peers.len() {
            return Err(UsageError(format!(
                "-peer: {SAME_HOST} and host addresses mixed; subscribers are either on this host or on the hosts given"
            )));
        }
        // One count: `set_for` refuses a list under another tool's flag.
        let n = crate::plan::axes::counts("-subscribers", &self.request.subscribers)?[0];
        let hosts: Vec<&String> = match remote.len() {
            1 => vec![remote[0]; n],
            k if k == n => remote,
            k => {
                return Err(UsageError(format!(
                    "-peer: {k} peers for -subscribers {n}; give one peer per subscriber, or one host for all"
                )));
            }
        };
        // Subscriber i (-participantId i + 1) listens on base + i.
        let connect = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let port = u32::from(base_port) + i as u32;
                if port > u32::from(u16::MAX) {
                    return Err(UsageError(format!(
                        "-subscribers {n}: ports from {base_port} run past 65535"
                    )));
                }
                Ok(crate::perftest::options::host_port(h, port))
            })
            .collect::<Result<Vec<_>, _>>()?
            .join(",");
        self.request.connect = Some(connect);
        self.applied.push(("-peer", "connect"));
        Ok(())
    }

    /// A plan error reported under the example's flag that set its setting.
    pub fn explain(&self, e: UsageError) -> UsageError {
        crate::plan::explain_under(&self.applied, e)
    }
}

/// The flag table as Markdown (docs/throughput-example.md has it; a test
/// keeps them equal).
pub fn markdown_table() -> String {
    let mut s = String::from("| Flag | Here |\n|---|---|\n");
    for f in FLAGS {
        let name = match f.value {
            Some(v) => format!("`{} {v}`", f.name),
            None => format!("`{}`", f.name),
        };
        s.push_str(&format!("| {name} | {} |\n", f.doc));
    }
    s
}
