//! `cyclonedds`: Eclipse CycloneDDS (libddsc, the C API) through a small C
//! shim compiled by build.rs.
//!
//! - Transports: `udp` (RTPS over UDP; discovery by unicast to loopback by
//!   default, multicast off) and `shm` (CycloneDDS's iceoryx integration:
//!   local data goes through RouDi's shared memory; RouDi is started for
//!   the run when none runs, see `pubsubperf-roudi`).
//! - Data types: `bytes` = `pubsubperf::Bytes { sequence<octet> data; }`
//!   (from pubsubperf.idl via idlc, serialized), `flat` = a fixed-size type
//!   `pubsubperf::Flat<N> { uint32 len; octet data[N]; }` built at run time
//!   for the run's largest sample N, used in place; `--zero-copy` writes
//!   into loaned iceoryx chunks (`dds_loan_sample`) and readers take loans.
//! - Topics are named `pp_<run id>_<topic>`; a locator is the topic name and
//!   discovery does the matching.

mod binding;
mod config;
mod deviations;
mod domain;
mod listener;
pub mod malloc;
mod participant;
mod reader;
mod sys;
mod writer;

pub use binding::CycloneDds;
pub use config::{History, KEYS, Opts};
pub use reader::CycloneReader;
pub use writer::CycloneWriter;

use domain::{acquire_domain, release_domain};
use participant::Participant;
use pubsubperf_core::{BindingError, Capabilities, DataType, Reliability};
use std::time::Duration;
use writer::Mode;
/// Largest sample: 256 MiB, the product's largest size.
pub const MAX_SAMPLE: usize = 256 * 1024 * 1024;

/// Largest sample over `--transport udp`: verified here with 64 MiB (a
/// round trip in 0.5-1 s, as ddsperf's at the same size); 256 MiB stalls
/// CycloneDDS's reliable fragment flow on loopback (our writer blocked for
/// more than 10 s, and ddsperf's own ping got no answer in 20 s).
pub const MAX_UDP_SAMPLE: usize = 64 * 1024 * 1024;

/// Bytes CycloneDDS puts in an iceoryx chunk before the sample (its
/// `iceoryx_header_t` as the user header, plus alignment), with margin.
pub const SHM_OVERHEAD: usize = 256;

/// LATENCY_BUDGET of writers and readers with `--async` (any non-zero value
/// switches a writer to asynchronous sending; it does not delay samples).
pub const ASYNC_LATENCY_BUDGET_NS: i64 = 1_000;

/// Samples taken per `dds_take`.
pub(crate) const TAKE_MAX: usize = 32;

/// The shared-memory discovery delay: CycloneDDS connects iceoryx ports
/// through RouDi, whose discovery loop runs every 100 ms, after the DDS
/// endpoints matched. Data written before that is not delivered.
pub(crate) const SHM_CONNECT: Duration = Duration::from_millis(300);

pub(crate) fn caps() -> Capabilities {
    Capabilities {
        reliable: true,
        best_effort: true,
        default_reliability: Reliability::Reliable,
        multicast: true,
        max_sample_size: MAX_SAMPLE,
        zero_copy: true,
        batching: true,
        multiple_subscribers: true,
        transports: &["udp", "shm"],
        data_types: &[DataType::Bytes, DataType::Flat],
        in_process: false,
        remote: true,
        receive: &[
            pubsubperf_core::ReceiveMode::Listener,
            pubsubperf_core::ReceiveMode::Thread,
        ],
    }
}

pub(crate) fn availability() -> Result<(), String> {
    #[cfg(no_ddsc)]
    {
        Err(format!(
            "built without CycloneDDS: {}",
            env!("PUBSUBPERF_DDSC_MISSING")
        ))
    }
    #[cfg(not(no_ddsc))]
    {
        Ok(())
    }
}

pub(crate) fn mw(what: &str, rc: i32) -> BindingError {
    BindingError::Middleware(format!("{what}: {}", sys::retcode(rc)))
}

#[cfg(test)]
mod tests;
