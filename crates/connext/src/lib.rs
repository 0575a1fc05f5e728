//! `connext`: RTI Connext DDS 6.1 through RTI Connector's libraries.
//!
//! RTI Connector (the `rticonnextdds-connector` wheel on the Python package
//! registry) ships Connext's native libraries. `scripts/connext.sh`
//! installs them on demand, under RTI's licence; nothing of RTI's is in the
//! repository, the build or the packages: the libraries are opened at run
//! time ([`library`]).
//!
//! - Each endpoint is one Connector: the participant, its one writer or
//!   reader, the type and the QoS of an XML application the binding writes
//!   for it ([`xml`], from a [`plan::Plan`]). Connector is how the
//!   libraries, without a licence file, create DDS entities; the binding
//!   never creates a participant any other way.
//! - The measured path is Connext's public C API on Connector's entities:
//!   `DDS_DynamicDataWriter_write` of Connector's own sample of the writer,
//!   `DDS_DynamicDataReader_take` and `return_loan`, a `DDS_WaitSet` on a
//!   read condition or a data-available listener. Connector's JSON calls are
//!   not used.
//! - The type is dynamic, `pubsubperf::Bytes { sequence<octet> data; }`
//!   (keyed: `pubsubperf::KeyedBytes { @key uint32 id; ... }`), final,
//!   the same as the `cyclonedds` and `fastdds` bindings' (Perftest's
//!   `-dynamicData`); topics are `pp_<run id>_<topic>` as theirs.
//! - QoS as Perftest 4.1 sets them for Connext by default ([`plan`]).

pub mod connector;
mod deviations;
pub mod library;
pub mod plan;
pub mod reader;
pub mod writer;
pub mod xml;

use connector::Connector;
use plan::{Endpoint, Plan, Role};
use pubsubperf_core::binding::BindingInfo;
use pubsubperf_core::handoff::Handoff;
use pubsubperf_core::result::TestKind;
use pubsubperf_core::{
    Binding, BindingError, Capabilities, DataType, EndpointConfig, Locator, ReceiveMode,
    Reliability, TopicSpec, WaitMode,
};

pub use reader::ConnextReader;
pub use writer::ConnextWriter;

/// The QoS flags the binding maps: all of core's but `--qos-file`
/// (Connector takes one XML application, which the binding writes).
pub fn qos_flags() -> &'static [&'static str] {
    static FLAGS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
        pubsubperf_core::binding::QOS_FLAGS
            .into_iter()
            .filter(|f| *f != "--qos-file")
            .collect()
    });
    &FLAGS
}

/// Perftest's default batch (`-batchSize`, DEFAULT_THROUGHPUT_BATCH_SIZE).
pub const PERFTEST_BATCH: usize = 8192;

/// Why Connext lacks a flag here.
pub fn why_not(flag: &str) -> Option<&'static str> {
    match flag {
        "--qos-file" => Some(
            "the connext binding writes the whole XML application RTI Connector creates its endpoints from; use the QoS flags",
        ),
        _ => None,
    }
}

pub(crate) fn caps() -> Capabilities {
    Capabilities {
        reliable: true,
        best_effort: true,
        default_reliability: Reliability::Reliable,
        multicast: true,
        max_sample_size: plan::MAX_SAMPLE,
        zero_copy: false,
        batching: true,
        multiple_subscribers: true,
        transports: &["udp+shm", "udp", "shm"],
        data_types: &[DataType::Bytes],
        in_process: false,
        remote: true,
        // Listener first, the default: Perftest receives in
        // on_data_available unless -useReadThread.
        receive: &[ReceiveMode::Listener, ReceiveMode::Thread],
    }
}

/// The DDS topic name of a harness topic in a run: the `cyclonedds` and
/// `fastdds` bindings' (`pp_<run id>_<topic>`, only `[A-Za-z0-9_]`).
pub fn dds_topic(run_id: &str, topic: &str) -> String {
    pubsubperf_core::dds::topic(run_id, topic)
}

pub(crate) use pubsubperf_core::dds::wait_count;

/// The `connext` binding: one Connector (participant) per endpoint.
pub struct Connext {
    api: &'static library::Api,
    cfg: EndpointConfig,
    plan: Plan,
}

impl Connext {
    fn connector(
        &self,
        topic: &TopicSpec,
        endpoint: Endpoint,
    ) -> Result<(Connector, String), BindingError> {
        let name = dds_topic(&self.cfg.run_id, &topic.name);
        let xml = xml::application(&self.plan, &name, endpoint);
        Ok((Connector::new(self.api, &xml)?, name))
    }
}

impl Binding for Connext {
    type Writer = ConnextWriter;
    type Reader = ConnextReader;

    fn info() -> BindingInfo {
        let api = library::api();
        BindingInfo {
            name: "connext",
            description: "RTI Connext DDS 6.1 (RTI Connector's libraries, installed on demand): UDPv4 and shared memory, dynamic types, Perftest's QoS",
            version: match &api {
                Ok(api) => api.version(),
                Err(_) => "Connext (not installed)".into(),
            },
            capabilities: caps(),
            available: api.map(|_| ()),
        }
    }

    fn qos_flags() -> &'static [&'static str] {
        qos_flags()
    }

    fn why_not(flag: &str) -> Option<&'static str> {
        why_not(flag)
    }

    fn multiple_publishers() -> bool {
        true
    }

    /// Perftest's: a throughput test batches 8192 B while a sample is at
    /// most half of it, and synchronous.
    fn default_batch(test: TestKind, cfg: &EndpointConfig) -> usize {
        let batches = test == TestKind::Throughput
            && cfg.max_sample_size * 2 <= PERFTEST_BATCH
            && !cfg.async_publish
            && cfg.bandwidth_limit == 0;
        if batches { PERFTEST_BATCH } else { 0 }
    }

    fn deviations(_test: TestKind, cfg: &EndpointConfig) -> Vec<String> {
        deviations::of(cfg)
    }

    fn validate(cfg: &EndpointConfig) -> Result<(), BindingError> {
        Plan::of(cfg).map(|_| ())
    }

    fn open(cfg: &EndpointConfig) -> Result<Self, BindingError> {
        let plan = Plan::of(cfg)?;
        let api = library::api().map_err(BindingError::Unavailable)?;
        Ok(Connext {
            api,
            cfg: cfg.clone(),
            plan,
        })
    }

    fn create_reader(
        &mut self,
        topic: &TopicSpec,
    ) -> Result<(Self::Reader, Locator), BindingError> {
        let (connector, name) = self.connector(topic, Endpoint::Reader(Role::of(topic)))?;
        let native = connector.reader()?;
        // SAFETY: a live DataReader of a dynamic type.
        let reader = unsafe { (self.api.DDS_DynamicDataReader_narrow)(native) };
        if reader.is_null() {
            return Err(BindingError::Middleware(format!(
                "Connext's reader on {name} is not a DynamicDataReader"
            )));
        }
        let mut r = ConnextReader {
            api: self.api,
            reader,
            native,
            samples: reader::SeqStorage::boxed(),
            infos: reader::SeqStorage::boxed(),
            waitset: std::ptr::null_mut(),
            condition: std::ptr::null_mut(),
            active: reader::SeqStorage::boxed(),
            scratch: vec![0; self.cfg.max_sample_size],
            busy: self.cfg.wait == WaitMode::Busy,
            cancel: self.cfg.cancel.clone(),
            topic: name.clone(),
            handoff: (self.cfg.receive == ReceiveMode::Listener).then(Handoff::new),
            listener: None,
            _connector: connector,
        };
        r.prepare()?;
        Ok((r, name))
    }

    fn create_writer(
        &mut self,
        topic: &TopicSpec,
        _readers: &[Locator],
    ) -> Result<Self::Writer, BindingError> {
        // Readers are found by discovery on the topic name.
        let (connector, name) = self.connector(topic, Endpoint::Writer(Role::of(topic)))?;
        let native = connector.writer()?;
        let sample = connector.writer_sample()?;
        // SAFETY: a live DataWriter of a dynamic type.
        let writer = unsafe { (self.api.DDS_DynamicDataWriter_narrow)(native) };
        if writer.is_null() {
            return Err(BindingError::Middleware(format!(
                "Connext's writer on {name} is not a DynamicDataWriter"
            )));
        }
        Ok(ConnextWriter {
            api: self.api,
            writer,
            native,
            sample,
            scratch: vec![0; self.cfg.max_sample_size],
            keyed: self.plan.keyed,
            keys: pubsubperf_core::binding::InstanceKeys::new(self.cfg.instances),
            reliability: self.cfg.reliability,
            block: self.plan.block,
            sliced: self.plan.sliced() && self.cfg.reliability == Reliability::Reliable,
            cancel: self.cfg.cancel.clone(),
            topic: name,
            _connector: connector,
        })
    }
}
