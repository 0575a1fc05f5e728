//! Arguments of `pubsubperf relay`.

use clap::{Args, ValueEnum};

/// Which protocol to relay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtoArg {
    /// UDP datagrams only.
    Udp,
    /// TCP connections only.
    Tcp,
}

/// `pubsubperf relay`: forward UDP and TCP with an added delay per direction.
///
/// A stand-in for `tc qdisc add dev IFACE root netem delay D` where the kernel
/// has no netem: put it between publisher and subscriber to add D to each
/// direction (one-way latency grows by D, round trip by 2 D).
#[derive(Debug, Args)]
pub struct RelayArgs {
    /// Where to listen, HOST:PORT (UDP and TCP on the same port).
    #[arg(long, value_name = "ADDR")]
    pub listen: String,
    /// Where to forward, HOST:PORT.
    #[arg(
        long,
        value_name = "ADDR",
        required_unless_present = "transparent",
        conflicts_with = "transparent"
    )]
    pub target: Option<String>,
    /// Forward each flow to its original destination, as redirected to
    /// --listen by an nftables tproxy rule (root; see the README, section "Across hosts and under faults").
    #[arg(long)]
    pub transparent: bool,
    /// Delay added to each direction (e.g. 1ms, 250us; 0 forwards at once).
    #[arg(long, default_value = "0", value_name = "TIME")]
    pub delay: String,
    /// Delay only what goes to this network (ADDR/PREFIX, or one address);
    /// the other direction passes at once: a path slower one way, as
    /// one-way latency across hosts can tell apart.
    #[arg(long, value_name = "NET")]
    pub delay_to: Option<String>,
    /// Relay only this protocol (default: both).
    #[arg(long, value_enum, value_name = "PROTO")]
    pub proto: Option<ProtoArg>,
    /// Stop after this long (default: until Ctrl-C or SIGTERM).
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// SCHED_FIFO priority (1-99) of the relay's threads, so that a busy
    /// machine does not stretch the delay (root).
    #[arg(long, value_name = "N")]
    pub rt_priority: Option<i32>,
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;
    use pubsubperf_relay::Target;
    use std::time::Duration;

    type Config = pubsubperf_relay::Config;

    fn parse(args: &str) -> Result<(Config, Option<Duration>), String> {
        let cli = Cli::try_parse_from(format!("pubsubperf relay {args}").split_whitespace())
            .map_err(|e| e.to_string())?;
        match cli.command {
            Some(Command::Relay(a)) => a.config().map_err(|e| e.0),
            _ => panic!("not relay"),
        }
    }

    #[test]
    fn relay_flags() {
        let (c, d) = parse("--listen 127.0.0.1:9000 --target 127.0.0.1:7400 --delay 1ms").unwrap();
        assert_eq!(c.delay, Duration::from_millis(1));
        assert_eq!(c.target, Target::Fixed("127.0.0.1:7400".parse().unwrap()));
        assert!(c.udp && c.tcp && d.is_none());
        let (c, d) = parse("--listen 0.0.0.0:9 --transparent --proto udp --duration 2s").unwrap();
        assert_eq!(c.target, Target::Transparent);
        assert!(c.udp && !c.tcp);
        assert_eq!(d, Some(Duration::from_secs(2)));
        assert!(
            parse("--listen 127.0.0.1:9").is_err(),
            "target or transparent"
        );
        assert!(
            parse("--listen x --target 127.0.0.1:1")
                .unwrap_err()
                .starts_with("--listen")
        );
        assert!(
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay soon")
                .unwrap_err()
                .starts_with("--delay")
        );
        assert!(
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay 1m")
                .unwrap_err()
                .starts_with("--delay")
        );
        let (c, _) =
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay 1ms --delay-to 198.18.2.0/24")
                .unwrap();
        assert_eq!(c.delay_to, Some("198.18.2.0/24".parse().unwrap()));
        let (c, _) =
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay 1ms --delay-to 10.0.0.1")
                .unwrap();
        assert_eq!(c.delay_to, Some("10.0.0.1/32".parse().unwrap()));
        assert_eq!(
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay 1ms --delay-to 10.0.0.0/40")
                .unwrap_err(),
            "--delay-to '10.0.0.0/40': expected a network ADDR/PREFIX (198.18.2.0/24) or one address"
        );
        assert!(
            parse("--listen 127.0.0.1:9 --target 127.0.0.1:1 --delay-to 10.0.0.1")
                .unwrap_err()
                .starts_with("--delay-to: needs --delay")
        );
    }
}
