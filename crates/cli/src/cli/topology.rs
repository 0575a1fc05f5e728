//! Arguments of `pubsubperf topology`.

use super::{SaveArgs, WaitArg};
use clap::Args;
use std::path::PathBuf;

/// `pubsubperf topology FILE`: run a whole graph of nodes from a topology
/// file (docs/topology.md): end-to-end latency per path, latency per hop,
/// loss and late samples per topic, CPU and memory per node.
#[derive(Debug, Args)]
pub struct TopologyArgs {
    /// The topology file (TOML; examples in topologies/).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The binding every node runs (default: the file's `binding`).
    #[arg(long, short = 'b')]
    pub binding: Option<String>,
    /// Transport within the binding (default: the binding's first).
    #[arg(long, short = 't')]
    pub transport: Option<String>,
    /// How long the sources send, measured (default: the file's, else 10s).
    #[arg(long, value_name = "TIME")]
    pub duration: Option<String>,
    /// How long they send first, not measured (default: the file's, else 1s).
    #[arg(long, value_name = "TIME")]
    pub warmup: Option<String>,
    /// Reliable delivery for topics that name no reliability.
    #[arg(long, conflicts_with = "best_effort")]
    pub reliable: bool,
    /// Best-effort delivery for topics that name no reliability.
    #[arg(long)]
    pub best_effort: bool,
    /// How readers wait (default: the binding's).
    #[arg(long, value_enum)]
    pub wait: Option<WaitArg>,
    /// Binding-specific option KEY=VALUE (repeatable).
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub opts: Vec<String>,
    /// The agents' token file, for nodes whose `host` is an agent's
    /// HOST:PORT (default: $PUBSUBPERF_TOKEN_FILE, else
    /// ~/.config/pubsubperf/agent.token).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Present no token to the agents (an `agent --insecure`).
    #[arg(long, conflicts_with = "token_file")]
    pub insecure: bool,
    /// The pubsubperf binary on ssh:// hosts (default: pubsubperf on the
    /// remote user's PATH).
    #[arg(long, value_name = "PATH")]
    pub remote_path: Option<String>,
    /// Time allowed for the nodes to start and match.
    #[arg(long, default_value = "10s", value_name = "TIME")]
    pub connect_timeout: String,
    /// Write the result as JSON (a results file with `graphs`).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    #[command(flatten)]
    pub save: SaveArgs,
}
