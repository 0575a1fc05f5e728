//! The command line, as clap sees it: the only module that uses clap. Its
//! types convert into the plain option structs the rest of the crate works
//! with (a test's arguments into a [`TestRequest`], which
//! `crate::plan` validates and turns into run specs).

mod analysis;
mod calibrate;
mod doctor;
mod generate;
mod relay;
mod sweep;
mod test_options;
mod topology;

pub use analysis::*;
pub use calibrate::*;
pub use doctor::*;
pub use generate::*;
pub use relay::*;
pub use sweep::*;
pub use test_options::TestOptions;
pub use topology::*;

use crate::plan::{TestPlan, UsageError};
use clap::{Args, Parser, Subcommand, ValueEnum};
use pubsubperf_core::result::TestKind;
use std::path::PathBuf;

/// Performance tests for publish/subscribe middleware: latency (ping-pong,
/// percentiles to p99.9999) and throughput (samples/s, Mbit/s, loss, CPU),
/// with one method over every binding.
///
/// Run without a command for a quick comparison of every binding available
/// on this machine.
#[derive(Debug, Parser)]
#[command(
    name = "pubsubperf",
    version,
    about,
    long_about,
    after_help = "Exit codes: 0 success, 1 a run failed, 2 bad input, 3 a 'compare --fail-if' condition held (a regression), 130 interrupted."
)]
pub struct Cli {
    /// What to do (default: a quick comparison of every available binding).
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ping-pong latency: one-way latency = round trip / 2.
    Latency(TestArgs),
    /// Throughput: samples/s, Mbit/s and loss at full speed or a set rate.
    Throughput(TestArgs),
    /// RTI Perftest's command line and output formats: `perftest -pub ...`
    /// runs the test, `perftest -sub ...` serves one run (docs/perftest.md).
    Perftest(PerftestArgs),
    /// RTI Connext's Throughput example's command line and tables: the
    /// publisher's (-demand ...) runs the ramp, a subscriber's
    /// (-participantId N) serves it (docs/throughput-example.md).
    ThroughputExample(ThroughputExampleArgs),
    /// Run as a subscriber for a publisher on another host (or started by one).
    Sub(SubArgs),
    /// Serve publishers' sessions on this host, one after another, until
    /// stopped (the subscriber host of two-host runs).
    Agent(AgentArgs),
    /// List the bindings, their capabilities, and whether they run here.
    Bindings(BindingsArgs),
    /// Quick comparison of every available binding (the default command).
    Quick(QuickArgs),
    /// Run a matrix of tests from a TOML sweep file (see sweeps/).
    Sweep(SweepArgs),
    /// Run a whole graph of nodes from a TOML topology file (see
    /// topologies/): latency per path and per hop, loss, late samples.
    Topology(TopologyArgs),
    /// Measure this machine's floors: clock cost, cross-core cache-line round
    /// trip, memcpy bandwidth (saved and attached to later results).
    Calibrate(CalibrateArgs),
    /// Check the machine under the figures: clock source, frequency, SMT,
    /// isolation, interrupts, limits, virtualisation, containers; each
    /// check with why it matters and the fix (docs/machine.md).
    Doctor(DoctorArgs),
    /// Forward UDP and TCP with a delay added to each direction (a netem stand-in).
    Relay(RelayArgs),
    /// Write an HTML report (plots as inline SVG) from results files or the database.
    Report(ReportArgs),
    /// Merge results files: repetitions of a cell become one run (exact).
    Merge(MergeArgs),
    /// Compare BASE with NEW: deltas, t-test over repetitions, --fail-if (exit 3).
    Compare(CompareArgs),
    /// List runs stored in the results database.
    History(HistoryArgs),
    /// Export runs from the results database as CSV or results JSON.
    Export(ExportArgs),
    /// Store results JSON files in the results database.
    Import(ImportArgs),
    /// Print the shell completion script for bash, zsh, fish, elvish or powershell.
    Completions(CompletionsArgs),
    /// Print the man page, or write one page per command into a directory.
    Man(ManArgs),
}

/// How readers wait (`topology --wait`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaitArg {
    /// Spin on a non-blocking poll (lowest latency, burns a core).
    Busy,
    /// Block in the kernel until data arrives.
    Block,
}

/// `latency` and `throughput`'s arguments: the option table's, and where
/// the results are stored.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// The test's options ([`pubsubperf_runner::options::OPTIONS`]).
    #[command(flatten)]
    pub test: TestOptions,
    /// Results database options.
    #[command(flatten)]
    pub save: SaveArgs,
}

#[derive(Debug, Args)]
pub struct SubArgs {
    /// Serve one publisher's session on this address (HOST:PORT), then
    /// exit: 'agent' for one session.
    #[arg(long, value_name = "ADDR", required_unless_present_any = ["connect_back", "session_stdin"])]
    pub listen: Option<String>,
    /// Who may use this host, for what, and over which address.
    #[command(flatten)]
    pub host: HostArgs,
    /// Internal: connect to the publisher that started this process.
    #[arg(long, value_name = "ADDR", hide = true)]
    pub connect_back: Option<String>,
    /// Internal: serve the session an agent admitted on standard input.
    #[arg(long, hide = true)]
    pub session_stdin: bool,
    /// Internal: what the agent tells its session (JSON), with --session-stdin.
    #[arg(long, value_name = "JSON", hide = true, requires = "session_stdin")]
    pub session: Option<String>,
    /// Internal: the pipe on which the agent hands the session its keys,
    /// with --session-stdin.
    #[arg(long, value_name = "FD", hide = true, requires = "session_stdin")]
    pub session_keys_fd: Option<i32>,
}

/// `perftest`: Perftest's options, read by `crate::perftest` (not clap).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct PerftestArgs {
    /// RTI Perftest 4.x options, e.g. -pub -latencyTest -dataLen 64 -executionTime 10.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

/// `throughput-example`: the example's flags, read by
/// `crate::throughput_example` (not clap).
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub struct ThroughputExampleArgs {
    /// The Throughput example's flags, e.g. -domainId 88 -nic 127.0.0.1 -transport 1 -peer 127.0.0.1 -subscribers 1 -duration 10 -size 1024 -demand 1000:1000:9000.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Where to listen for publishers (HOST:PORT).
    #[arg(long, value_name = "ADDR", default_value = "0.0.0.0:7400")]
    pub listen: String,
    /// Serve sessions on standard input and output instead of listening:
    /// how a publisher starts an agent over SSH (no token needed).
    #[arg(long, conflicts_with_all = ["listen", "token_file", "insecure"])]
    pub stdio: bool,
    /// Write a fresh token (256 random bits, mode 0600) to the token file
    /// and exit; refused when the file exists.
    #[arg(long, conflicts_with_all = ["listen", "stdio", "insecure"])]
    pub new_token: bool,
    /// Who may use this host, for what, and over which address.
    #[command(flatten)]
    pub host: HostArgs,
}

/// Who may start runs on an agent's host, what a run may ask of it, and
/// which address its data uses.
#[derive(Debug, Args)]
pub struct HostArgs {
    /// The address or interface name (eth1) this host's endpoints use for
    /// data (default: the address the publisher reached; over SSH, the SSH
    /// connection's).
    #[arg(long, alias = "nic", value_name = "ADDR|NIC")]
    pub data_address: Option<String>,
    /// The multicast group this host's readers join in multicast runs
    /// (instead of the run's; Perftest's -multicastAddr, the Throughput
    /// example's -mcast_recv_addr on a subscriber).
    #[arg(long, value_name = "ADDR")]
    pub multicast_address: Option<String>,
    /// The token publishers must present: created (mode 0600) if missing
    /// (default: $PUBSUBPERF_TOKEN_FILE, else ~/.config/pubsubperf/agent.token).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Accept publishers without a token: neither side is proven, and
    /// anyone who can reach the address can run benchmarks here. Only on a
    /// loopback address, unless --insecure-network says so too.
    #[arg(long, conflicts_with = "token_file")]
    pub insecure: bool,
    /// With --insecure on an address other than loopback: yes, anyone on
    /// that network may run benchmarks on this host.
    #[arg(long, requires = "insecure")]
    pub insecure_network: bool,
    /// Refuse runs longer than this (warm-up included); a run that
    /// outlives its length by a minute is ended.
    #[arg(long, value_name = "TIME", default_value = "1h")]
    pub max_duration: String,
    /// Refuse samples larger than this.
    #[arg(long, value_name = "BYTES", default_value = "64MiB")]
    pub max_size: String,
    /// Addresses this host may send data to besides the publisher's
    /// (comma-separated): the subscribers an extra publisher here writes
    /// to (--connect-publishers across three hosts), and the multicast
    /// groups a run may send to (its --multicast-address).
    #[arg(long, value_name = "ADDR,...", value_delimiter = ',')]
    pub allow_destination: Vec<String>,
    /// The largest multicast TTL a run may ask of this host (default: 1,
    /// this link only); its multicast groups need --allow-destination.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(1..))]
    pub allow_multicast_ttl: Option<u8>,
    /// How long a run may take beyond its warm-up and measurement
    /// (setting up, draining) before it is stopped.
    #[arg(long, value_name = "TIME", default_value = "60s")]
    pub run_grace: String,
    /// End a session whose publisher sends nothing for this long between
    /// runs.
    #[arg(long, value_name = "TIME", default_value = "60s")]
    pub idle_timeout: String,
    /// Allow runs with --rt-priority (SCHED_FIFO) on this host.
    #[arg(long)]
    pub allow_rt_priority: bool,
    /// Allow runs with --mlock on this host.
    #[arg(long)]
    pub allow_mlock: bool,
    /// The vendor files publishers may apply here: a publisher's
    /// --qos-file names a file in DIR (letters, digits, '.', '_', '-',
    /// ending in .xml), never a path (default: none may).
    #[arg(long, value_name = "DIR")]
    pub qos_dir: Option<PathBuf>,
}

impl HostArgs {
    /// The options' values, for the agent.
    pub fn settings(&self) -> pubsubperf_frontend::agent::HostSettings {
        pubsubperf_frontend::agent::HostSettings {
            data_address: self.data_address.clone(),
            multicast_address: self.multicast_address.clone(),
            token_file: self.token_file.clone(),
            insecure: self.insecure,
            insecure_network: self.insecure_network,
            max_duration: self.max_duration.clone(),
            max_size: self.max_size.clone(),
            allow_destination: self.allow_destination.clone(),
            allow_multicast_ttl: self.allow_multicast_ttl,
            run_grace: self.run_grace.clone(),
            idle_timeout: self.idle_timeout.clone(),
            allow_rt_priority: self.allow_rt_priority,
            allow_mlock: self.allow_mlock,
            qos_dir: self.qos_dir.clone(),
        }
    }
}

#[derive(Debug, Args)]
pub struct BindingsArgs {
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct QuickArgs {
    /// Measurement time per test.
    #[arg(long, default_value = "1s", value_name = "TIME")]
    pub duration: String,
    /// Only these bindings, comma-separated (default: every binding
    /// available here except the synthetic mock; named here, mock runs too).
    #[arg(short = 'b', long, value_name = "LIST")]
    pub bindings: Option<String>,
    /// Write results as JSON.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The HTML report to write.
    #[arg(long, default_value = "pubsubperf-report.html", value_name = "FILE")]
    pub out: PathBuf,
    /// Do not write the HTML report.
    #[arg(long)]
    pub no_report: bool,
    /// Results database options.
    #[command(flatten)]
    pub save: SaveArgs,
}

impl TestArgs {
    /// The plan of this test (see [`TestRequest::plan`]).
    pub fn plan(&self, test: TestKind) -> Result<TestPlan, UsageError> {
        self.test.0.plan(test)
    }
}

/// Parses this process's command line. Help and version are printed (exit
/// 0); an error is printed as one line naming where to read more (exit 2).
pub fn parse() -> Result<Cli, std::process::ExitCode> {
    use clap::error::ErrorKind;
    use std::process::ExitCode;
    match Cli::try_parse() {
        Ok(c) => Ok(c),
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            Err(ExitCode::SUCCESS)
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            Err(ExitCode::from(2))
        }
        Err(e) => {
            // One line: clap's first line, and where to read more.
            let text = e.render().to_string();
            let mut lines = text.lines();
            let first = lines
                .next()
                .unwrap_or("error")
                .trim_start_matches("error: ");
            // A first line ending in ':' ("the following required arguments
            // were not provided:") names what it means on the indented
            // lines after it.
            let named = if first.ends_with(':') {
                let items: Vec<&str> = lines
                    .take_while(|l| l.starts_with("  ") && !l.trim().is_empty())
                    .map(str::trim)
                    .collect();
                format!(" {}", items.join(", "))
            } else {
                String::new()
            };
            // clap lists the accepted values on a line of their own.
            let choices = text
                .lines()
                .find_map(|l| l.trim().strip_prefix("[possible values: "))
                .map(|v| format!("; one of: {}", v.trim_end_matches(']')))
                .unwrap_or_default();
            eprintln!(
                "pubsubperf: {first}{named}{choices} (see 'pubsubperf --help' or 'pubsubperf COMMAND --help')"
            );
            Err(ExitCode::from(2))
        }
    }
}

impl Default for QuickArgs {
    /// `pubsubperf quick` with no options: the main job (`pubsubperf` alone).
    fn default() -> Self {
        QuickArgs {
            duration: "1s".into(),
            bindings: None,
            json: None,
            out: "pubsubperf-report.html".into(),
            no_report: false,
            save: SaveArgs::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::TestRequest;

    fn parse(args: &str) -> Cli {
        Cli::try_parse_from(format!("pubsubperf {args}").split_whitespace()).expect("parses")
    }

    /// The main job's defaults are those of `pubsubperf quick`.
    #[test]
    fn quick_defaults_are_the_main_jobs() {
        let Some(Command::Quick(q)) = parse("quick").command else {
            panic!("not quick")
        };
        let d = QuickArgs::default();
        assert_eq!(
            (&q.duration, &q.bindings, &q.json, &q.out, q.no_report),
            (&d.duration, &d.bindings, &d.json, &d.out, d.no_report)
        );
        assert_eq!((&q.save.db, q.save.no_save), (&d.save.db, d.save.no_save));
    }

    /// A test's options on the command line and the same options set by
    /// name (as sweep cells do) give the same request.
    #[test]
    fn flags_and_settings_agree() {
        let line = "--binding tcp --size 1KiB --duration 2s --reliable --wait busy --clock monotonic --data-type flat --durability transient-local --opt a=1 --subscribers 2 --cpu none --echo-timeout 2s";
        let Some(Command::Latency(a)) = parse(&format!("latency {line}")).command else {
            panic!("not latency")
        };
        let from_flags = a.test.0;
        let mut by_name = TestRequest::default();
        let mut words = line.split_whitespace().peekable();
        while let Some(w) = words.next() {
            let v = words.next_if(|n| !n.starts_with("--"));
            by_name.set(w.trim_start_matches("--"), v).unwrap();
        }
        assert_eq!(format!("{from_flags:?}"), format!("{by_name:?}"));
        assert_eq!(
            format!("{:?}", {
                let Some(Command::Latency(a)) = parse("latency").command else {
                    panic!()
                };
                a.test.0
            }),
            format!("{:?}", TestRequest::default()),
            "the command line's defaults are the request's"
        );
    }

    /// `latency` and `throughput` take the option table's options, in its
    /// order, and the store's: an option declared in clap beside the table
    /// fails here.
    #[test]
    fn test_commands_take_the_tables_options_and_the_stores() {
        use clap::CommandFactory;
        let store: Vec<String> = SaveArgs::augment_args(clap::Command::new("store"))
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        let table = pubsubperf_runner::options::OPTIONS
            .iter()
            .map(|o| o.name.to_string());
        let want: Vec<String> = table.chain(store).collect();
        let cli = Cli::command();
        for name in ["latency", "throughput"] {
            let got: Vec<String> = cli
                .find_subcommand(name)
                .unwrap()
                .get_arguments()
                .map(|a| a.get_id().to_string())
                .filter(|id| id != "help")
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    /// A value the table's setter refuses is one line naming the option
    /// (exit 2 through `parse`).
    #[test]
    fn a_bad_value_is_refused_naming_its_option() {
        let e = Cli::try_parse_from(["pubsubperf", "latency", "--count", "x"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation);
        let text = e.render().to_string();
        assert_eq!(
            text.lines().next(),
            Some("error: --count 'x': invalid digit found in string")
        );
    }

    /// Every cell of the shipped sweep files is a valid command line for
    /// this CLI (flags and values; capabilities are checked at run time).
    #[test]
    fn shipped_sweeps_parse_as_commands() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../sweeps");
        for name in ["quick.toml", "perftest-seeds.toml"] {
            let s = pubsubperf_report::sweep::load(&dir.join(name)).unwrap();
            for c in s.cells.iter().filter(|c| c.repetition == 1) {
                let argv = std::iter::once("pubsubperf".to_string()).chain(c.args());
                if let Err(e) = Cli::try_parse_from(argv) {
                    panic!("{name}: {}: {e}", c.key);
                }
            }
        }
    }
}
