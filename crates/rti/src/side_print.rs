//! What a session process prints on the subscribing side of another tool's
//! command line: a `perftest -sub`'s Perftest lines
//! ([`crate::perftest::sub_print`]) or a Throughput example subscriber's
//! table ([`crate::throughput_example::printer::SubTable`]). The `-sub`
//! (or `-participantId N`) process hands its request to the session
//! process it starts, in the session's settings (`print`).

use crate::perftest::sub_print::{Request as PerftestRequest, SubPrint};
use crate::throughput_example::printer::SubTable;
use pubsubperf_harness::protocol::Msg;
use pubsubperf_harness::spec::RunSpec;
use serde::{Deserialize, Serialize};

/// Which front end's lines, with its output options.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// `perftest -sub`.
    Perftest(PerftestRequest),
    /// `throughput-example -participantId N`.
    ThroughputExample,
}

impl Request {
    /// The settings' `print` of this request.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("plain data serializes")
    }
}

/// The printer a session process's settings ask for.
pub enum SidePrint {
    Perftest(SubPrint),
    ThroughputExample(SubTable),
}

impl SidePrint {
    /// Opens the printer of `request` (the settings' `print`).
    pub fn open(request: &str) -> anyhow::Result<SidePrint> {
        let r: Request = serde_json::from_str(request).map_err(|e| {
            anyhow::anyhow!("--session: print settings: {e} (this option is the agent's)")
        })?;
        Ok(match r {
            Request::Perftest(p) => SidePrint::Perftest(SubPrint::open(p)?),
            Request::ThroughputExample => SidePrint::ThroughputExample(SubTable::default()),
        })
    }

    /// One interval or the result of a run this process serves.
    pub fn show(&mut self, spec: &RunSpec, msg: &Msg) {
        match self {
            SidePrint::Perftest(p) => p.show(spec, msg),
            SidePrint::ThroughputExample(t) => t.show(spec, msg),
        }
    }

    /// The end of the session: `ok` when it ended well.
    pub fn finish(self, ok: bool) {
        match self {
            SidePrint::Perftest(p) => p.finish(),
            SidePrint::ThroughputExample(t) => t.finish(ok),
        }
    }
}
