//! Arguments of `pubsubperf calibrate`.

use clap::Args;
use std::path::PathBuf;

/// Arguments of `pubsubperf calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The two cores of the cache-line ping-pong (the first also copies).
    #[arg(long, default_value = "0,1", value_name = "A,B")]
    pub cpu: String,
    /// Also write the calibration as JSON here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Do not save it for later results.
    #[arg(long)]
    pub no_save: bool,
}
