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
    /// Measure the cache-line round trip alone (a tenth of a second; the
    /// bench scripts read it around each run); with --no-save, since a
    /// partial calibration is not kept.
    #[arg(long, requires = "no_save")]
    pub link_only: bool,
}
