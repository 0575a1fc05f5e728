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
mod topology;

pub use analysis::*;
pub use calibrate::*;
pub use doctor::*;
pub use generate::*;
pub use relay::*;
pub use sweep::*;
pub use topology::*;

use crate::plan::{TestPlan, TestRequest, UsageError};
use clap::{Args, Parser, Subcommand, ValueEnum};
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{DataType, Durability, ReceiveMode, WaitMode};
use pubsubperf_harness::spec::RoundTripClock;
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

/// Reliability choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WaitArg {
    /// Spin on a non-blocking poll (lowest latency, burns a core).
    Busy,
    /// Block in the kernel until data arrives.
    Block,
}

/// Receive-thread choice (`--receive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReceiveArg {
    /// The middleware's own receive thread, in a data-available listener.
    Listener,
    /// pubsubperf's receive thread, waiting as --wait says.
    Thread,
}

/// Round-trip clock choice (`--clock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClockArg {
    /// The TSC with busy waits where usable, else CLOCK_MONOTONIC.
    Auto,
    /// CLOCK_MONOTONIC (what most peer tools use).
    Monotonic,
    /// The TSC (needs --wait busy, no --one-way, a kernel keeping time with it).
    Tsc,
}

/// Data type choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DataTypeArg {
    /// Length-prefixed byte sequence, serialized at each end.
    Bytes,
    /// Fixed-size layout used in place (FlatData).
    Flat,
}

/// Durability choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DurabilityArg {
    /// Late-joining readers get nothing written before.
    Volatile,
    /// Writers keep their history for late-joining readers.
    TransientLocal,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Binding of the publisher (see 'pubsubperf bindings').
    #[arg(short, long, default_value = "udp", value_name = "NAME")]
    pub binding: String,
    /// Binding of the subscribers, for cross-vendor runs (default: --binding).
    #[arg(long, value_name = "NAME")]
    pub peer_binding: Option<String>,
    /// Transport within the binding (default: the binding's first).
    #[arg(short, long, value_name = "NAME")]
    pub transport: Option<String>,
    /// Sample sizes in bytes, a list: 32,64,1KiB,64KiB,1MiB. Each size is one run.
    #[arg(short, long, default_value = "64", value_name = "SIZES")]
    pub size: String,
    /// Measurement length per size (e.g. 10, 10s, 500ms, 2m).
    #[arg(short, long, value_name = "TIME")]
    pub duration: Option<String>,
    /// Measured samples per size (latency: pings; throughput: samples sent).
    #[arg(short = 'n', long, value_name = "N")]
    pub count: Option<u64>,
    /// Warm-up before measuring, excluded from results.
    #[arg(long, default_value = "1s", value_name = "TIME")]
    pub warmup: String,
    /// Samples per second (latency: pings/s, with coordinated-omission
    /// correction; throughput: sending rate), a list: 1,10,100,1k,10k,max
    /// (k: ×1000, M: ×10⁶; max: no limit). Each rate is one run. Default:
    /// max, as fast as possible.
    #[arg(long, value_name = "RATES")]
    pub rate: Option<String>,
    /// Throughput: a demand ramp as RTI's Throughput example runs it: for
    /// each N from START to END by STEP, write N samples back to back, pause
    /// 10 ms, and again for --duration; one run (table row) per demand.
    #[arg(long, value_name = "START:STEP:END")]
    pub demand: Option<String>,
    /// Throughput with --demand: pause after each demand before the next, ms
    /// (or a time like 1s; default 0).
    #[arg(long, value_name = "MS")]
    pub recovery_time: Option<String>,
    /// Batch samples into writes of up to BYTES where the binding can.
    #[arg(long, value_name = "BYTES")]
    pub batch: Option<String>,
    /// Throughput test: echo every Nth sample to measure latency under load.
    #[arg(long, value_name = "N")]
    pub latency_every: Option<u64>,
    /// Reliable delivery.
    #[arg(long, conflicts_with = "best_effort")]
    pub reliable: bool,
    /// Best-effort delivery.
    #[arg(long)]
    pub best_effort: bool,
    /// Multicast delivery (udp, cyclonedds, fastdds).
    #[arg(long)]
    pub multicast: bool,
    /// IPv6 instead of IPv4.
    #[arg(long)]
    pub ipv6: bool,
    /// Loaned shared-memory buffers (bindings with a zero-copy path);
    /// `--zero-copy false` copies. Default: as the middleware's own
    /// benchmark (iceoryx2 and iceoryx loan, the others copy).
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true")]
    pub zero_copy: Option<bool>,
    /// Sample representation.
    #[arg(long, value_enum, value_name = "TYPE")]
    pub data_type: Option<DataTypeArg>,
    /// Number of subscribers (data fans out to all; echoes round-robin), a
    /// list: 1,2,4,8 (each 1-64). Each count is one run.
    #[arg(long, default_value = "1", value_name = "N")]
    pub subscribers: String,
    /// Throughput: number of publishers, each a process writing its own
    /// numbered stream to every subscriber (loss is counted per publisher),
    /// a list: 1,2,4 (each 1-64). Each count is one run.
    #[arg(long, default_value = "1", value_name = "M")]
    pub publishers: String,
    /// Topics side by side, each with its own publisher and subscribers (a
    /// run of this test per topic, all at once), a list: 1,2,4 (each 1-64).
    /// Each count is one run; its figures are all topics' together.
    #[arg(long, default_value = "1", value_name = "T")]
    pub topics: String,
    /// Extra publishers on other hosts ('pubsubperf sub --listen ADDR' there),
    /// comma-separated, instead of local publisher processes.
    #[arg(long, value_name = "ADDR")]
    pub connect_publishers: Option<String>,
    /// Cores for publisher and subscriber, PUB,SUB (default 0,1 when there
    /// are two or more cores; 'none' to leave scheduling to the kernel).
    #[arg(long, value_name = "PUB,SUB")]
    pub cpu: Option<String>,
    /// SCHED_FIFO real-time priority (1-99) for both sides.
    #[arg(long, value_name = "N")]
    pub rt_priority: Option<i32>,
    /// Lock all memory of both sides (mlockall).
    #[arg(long)]
    pub mlock: bool,
    /// How readers wait: busy-poll or block. Default: as the middleware's
    /// own benchmark (iceoryx2 and iceoryx busy-poll, the others block).
    #[arg(long, value_enum)]
    pub wait: Option<WaitArg>,
    /// Which thread runs the subscriber's per-sample code: the middleware's
    /// (a listener, ddsperf's and Perftest's default) or our own receive
    /// thread (Perftest's -useReadThread). Default: the binding's fastest
    /// (`pubsubperf bindings` lists them, the default first).
    #[arg(long, value_enum, value_name = "MODE")]
    pub receive: Option<ReceiveArg>,
    /// Fill payloads with a pattern the subscriber verifies; bad samples are counted.
    #[arg(long)]
    pub check: bool,
    /// Latency: record each direction's one-way latency from the two sides'
    /// clocks (across hosts, with their offset estimated before and after).
    #[arg(long)]
    pub one_way: bool,
    /// Trace each side's system calls over the run (strace, else perf
    /// trace) and print them per sample with context switches and CPU
    /// time; see docs/profiling.md.
    #[arg(long)]
    pub profile: bool,
    /// The kernel's account of the slow samples: scheduler, interrupt and
    /// idle events on both sides' cores, recorded with eBPF (root), shared
    /// out by percentile band; see docs/explain.md.
    #[arg(long)]
    pub explain: bool,
    /// Latency: the clock that times round trips: auto (the TSC with --wait
    /// busy where the kernel keeps time with it, else CLOCK_MONOTONIC),
    /// monotonic, or tsc.
    #[arg(long, value_enum, default_value = "auto")]
    pub clock: ClockArg,
    /// A ping without echo after this long counts as lost (latency test).
    #[arg(long, default_value = "1s", value_name = "TIME")]
    pub echo_timeout: String,
    /// Kernel socket buffer size for socket bindings.
    #[arg(long, value_name = "BYTES")]
    pub socket_buffer: Option<String>,
    /// Writer queue size in samples (Perftest -sendQueueSize).
    #[arg(long, value_name = "N")]
    pub send_queue: Option<usize>,
    /// Reader queue size in samples (Perftest -receiveQueueSize).
    #[arg(long, value_name = "N")]
    pub receive_queue: Option<usize>,
    /// DDS history of writers and readers: keep-last:N or keep-all
    /// (default: the binding's, see README).
    #[arg(long, value_name = "KIND")]
    pub history: Option<String>,
    /// DDS durability of writers and readers (default volatile).
    #[arg(long, value_enum, value_name = "KIND")]
    pub durability: Option<DurabilityArg>,
    /// Asynchronous publishing (DDS: Fast DDS's asynchronous publish mode,
    /// CycloneDDS's send thread).
    #[arg(long = "async")]
    pub async_publish: bool,
    /// DDS domain id (default: one derived from the run id, 1-230).
    #[arg(long, value_name = "ID")]
    pub domain: Option<u32>,
    /// Vendor QoS file passed through: CycloneDDS XML configuration, Fast
    /// DDS XML profiles. An agent at HOST:PORT (--connect) is sent only
    /// the file's name, and applies the file of that name in its --qos-dir.
    #[arg(long, value_name = "PATH")]
    pub qos_file: Option<PathBuf>,
    /// Keyed type with N instances written round-robin (DDS).
    #[arg(long, value_name = "N")]
    pub instances: Option<u32>,
    /// How long a reliable writer may block on a full queue before the
    /// write fails (DDS: RELIABILITY max_blocking_time; default 10s).
    #[arg(long, value_name = "TIME")]
    pub max_blocking_time: Option<String>,
    /// Readers send no positive acknowledgements; writers keep samples
    /// 1 ms instead (Fast DDS's DisablePositiveACKs).
    #[arg(long)]
    pub no_positive_acks: bool,
    /// A flow controller limits each writer to BYTES per second (Fast DDS).
    #[arg(long, value_name = "BYTES")]
    pub bandwidth_limit: Option<String>,
    /// Pull-mode reliability (Connext's push_on_write = false); refused by
    /// every binding in this build.
    #[arg(long)]
    pub no_push_on_write: bool,
    /// Time to live of multicast datagrams, 0-255 (with --multicast; DDS).
    #[arg(long, value_name = "N")]
    pub multicast_ttl: Option<u8>,
    /// The multicast group the data goes to (with --multicast; udp,
    /// cyclonedds, fastdds); default: a group derived per run.
    #[arg(long, value_name = "ADDR")]
    pub multicast_address: Option<String>,
    /// Throughput: the publisher sleeps TIME after each write (Perftest's
    /// -sleep; batches are flushed first).
    #[arg(long, value_name = "TIME")]
    pub sleep: Option<String>,
    /// Throughput with --rate: how the publisher waits for each sample's
    /// slot: spin (exact spacing, burns its core; the default) or sleep
    /// (little CPU; a late wake-up sends the overdue samples back to back,
    /// the rate holds on average). For long runs on a shared machine.
    #[arg(long, value_name = "spin|sleep")]
    pub pace: Option<String>,
    /// Binding-specific option, KEY=VALUE (repeatable).
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub opts: Vec<String>,
    /// Subscriber(s) on other hosts (comma-separated for several), instead
    /// of local subscriber processes: HOST:PORT of a 'pubsubperf agent
    /// --listen', or ssh://[user@]host[:port] to start one there over SSH.
    #[arg(long, value_name = "ADDR")]
    pub connect: Option<String>,
    /// The agents' token file (default: $PUBSUBPERF_TOKEN_FILE, else
    /// ~/.config/pubsubperf/agent.token), with --connect.
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Present no token to the agents of --connect, and take one that has
    /// none (an `agent --insecure`): neither side is proven, anyone on the
    /// path can read and change the session.
    #[arg(long, conflicts_with = "token_file")]
    pub insecure: bool,
    /// The pubsubperf binary on ssh:// hosts (default: pubsubperf on the
    /// remote user's PATH).
    #[arg(long, value_name = "PATH")]
    pub remote_path: Option<String>,
    /// The address or interface name (eth1) this side's endpoints use for
    /// data (Perftest's -nic; default: the address towards the subscriber).
    #[arg(long, alias = "nic", value_name = "ADDR|NIC")]
    pub data_address: Option<String>,
    /// How long to wait for subscribers to connect and match.
    #[arg(long, default_value = "10s", value_name = "TIME")]
    pub connect_timeout: String,
    /// Write results as JSON (rewritten after each run).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write results as CSV, one row per run (rewritten after each run).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// No per-interval lines on stderr.
    #[arg(short, long)]
    pub quiet: bool,
    /// Throughput: search the highest sending rate whose loss is at most
    /// --max-loss (RFC 2544 style); each trial lasts --duration (default 2s here).
    #[arg(long)]
    pub find_max: bool,
    /// Throughput with --find-max: acceptable loss in percent.
    #[arg(long, value_name = "PCT", requires = "find_max")]
    pub max_loss: Option<f64>,
    /// Run under a standard load: stress-ng's stressors of PROFILE (cpu,
    /// memory, cache, irq, network, io, all) on --load-cpu for the whole
    /// command, recorded in each run (docs/machine.md).
    #[arg(long, value_name = "PROFILE")]
    pub load: Option<String>,
    /// The cores the load runs on (a CPU list: 0-1, 0,2); default every core.
    #[arg(long, value_name = "LIST", requires = "load")]
    pub load_cpu: Option<String>,
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

impl From<&TestArgs> for TestRequest {
    fn from(a: &TestArgs) -> Self {
        TestRequest {
            binding: a.binding.clone(),
            peer_binding: a.peer_binding.clone(),
            transport: a.transport.clone(),
            size: a.size.clone(),
            duration: a.duration.clone(),
            count: a.count,
            warmup: a.warmup.clone(),
            rate: a.rate.clone(),
            demand: a.demand.clone(),
            recovery_time: a.recovery_time.clone(),
            batch: a.batch.clone(),
            latency_every: a.latency_every,
            reliable: a.reliable,
            best_effort: a.best_effort,
            multicast: a.multicast,
            ipv6: a.ipv6,
            zero_copy: a.zero_copy,
            data_type: a.data_type.map(|d| match d {
                DataTypeArg::Bytes => DataType::Bytes,
                DataTypeArg::Flat => DataType::Flat,
            }),
            subscribers: a.subscribers.clone(),
            publishers: a.publishers.clone(),
            topics: a.topics.clone(),
            connect_publishers: a.connect_publishers.clone(),
            cpu: a.cpu.clone(),
            rt_priority: a.rt_priority,
            mlock: a.mlock,
            wait: a.wait.map(|w| match w {
                WaitArg::Busy => WaitMode::Busy,
                WaitArg::Block => WaitMode::Block,
            }),
            receive: a.receive.map(|r| match r {
                ReceiveArg::Listener => ReceiveMode::Listener,
                ReceiveArg::Thread => ReceiveMode::Thread,
            }),
            check: a.check,
            one_way: a.one_way,
            profile: a.profile,
            explain: a.explain,
            clock: match a.clock {
                ClockArg::Auto => RoundTripClock::Auto,
                ClockArg::Monotonic => RoundTripClock::Monotonic,
                ClockArg::Tsc => RoundTripClock::Tsc,
            },
            echo_timeout: a.echo_timeout.clone(),
            socket_buffer: a.socket_buffer.clone(),
            send_queue: a.send_queue,
            receive_queue: a.receive_queue,
            history: a.history.clone(),
            durability: a.durability.map(|d| match d {
                DurabilityArg::Volatile => Durability::Volatile,
                DurabilityArg::TransientLocal => Durability::TransientLocal,
            }),
            async_publish: a.async_publish,
            domain: a.domain,
            qos_file: a.qos_file.clone(),
            instances: a.instances,
            max_blocking_time: a.max_blocking_time.clone(),
            no_positive_acks: a.no_positive_acks,
            bandwidth_limit: a.bandwidth_limit.clone(),
            no_push_on_write: a.no_push_on_write,
            multicast_ttl: a.multicast_ttl,
            multicast_address: a.multicast_address.clone(),
            sleep: a.sleep.clone(),
            pace: a.pace.clone(),
            opts: a.opts.clone(),
            connect: a.connect.clone(),
            token_file: a.token_file.clone(),
            insecure: a.insecure,
            remote_path: a.remote_path.clone(),
            data_address: a.data_address.clone(),
            connect_timeout: a.connect_timeout.clone(),
            json: a.json.clone(),
            csv: a.csv.clone(),
            quiet: a.quiet,
            find_max: a.find_max,
            max_loss: a.max_loss,
            load: a.load.clone(),
            load_cpu: a.load_cpu.clone(),
            loopback_only: false,
        }
    }
}

impl TestArgs {
    /// The plan of this test (see [`TestRequest::plan`]).
    pub fn plan(&self, test: TestKind) -> Result<TestPlan, UsageError> {
        TestRequest::from(self).plan(test)
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
        let from_flags = TestRequest::from(&a);
        let mut by_name = TestRequest::default();
        let mut words = line.split_whitespace().peekable();
        while let Some(w) = words.next() {
            let v = words.next_if(|n| !n.starts_with("--"));
            by_name.set(w.trim_start_matches("--"), v).unwrap();
        }
        assert_eq!(format!("{from_flags:?}"), format!("{by_name:?}"));
        assert_eq!(
            format!(
                "{:?}",
                TestRequest::from(&{
                    let Some(Command::Latency(a)) = parse("latency").command else {
                        panic!()
                    };
                    a
                })
            ),
            format!("{:?}", TestRequest::default()),
            "the command line's defaults are the request's"
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
