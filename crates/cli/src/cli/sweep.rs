//! Arguments of `pubsubperf sweep`.

use super::SaveArgs;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `pubsubperf sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The sweep file (TOML).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Skip the cells this sweep already finished (found in the database).
    #[arg(long)]
    pub resume: bool,
    /// Only list the cells, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Also write every run of this invocation as JSON (rewritten per cell).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Results database options.
    #[command(flatten)]
    pub save: SaveArgs,
}
