//! The XML application (RTI's XML App Creation) from which Connector
//! creates one endpoint: the type, the domain and topic, one participant
//! with one writer or one reader, and their QoS, all from a [`Plan`].
//!
//! Every value in it is a number, a keyword of ours or a name made of
//! `[A-Za-z0-9_]` (topic names are cleaned by [`crate::dds_topic`]; the
//! rest is escaped anyway): nothing a peer sends becomes XML.

use crate::plan::{
    ANNOUNCE_MAX, ANNOUNCE_MIN, DATA_READER_INITIAL, DATA_READER_SAMPLES, ECHO_READER_SAMPLES,
    Endpoint, FAST_HEARTBEAT, HEARTBEAT, KEEP_DURATION, Plan, Role, SHUTDOWN_CLEANUP,
};
use pubsubperf_core::{BindingError, Durability, History, Reliability};
use std::fmt::Write;

/// The type's module and names, the same as the `cyclonedds` and `fastdds`
/// bindings' (`pubsubperf::Bytes { sequence<octet> data; }`, keyed:
/// `pubsubperf::KeyedBytes { @key uint32 id; sequence<octet> data; }`), so
/// that the three talk to each other.
pub const MODULE: &str = "pubsubperf";

/// The data member of the type.
pub const DATA: &std::ffi::CStr = c"data";
/// The key member of the keyed type.
pub const KEY: &std::ffi::CStr = c"id";

/// The Connector names of the one participant and its entity.
pub const PARTICIPANT: &str = "pubsubperf::endpoint";
/// The writer's name for `RTI_Connector_get_datawriter`.
pub const WRITER: &std::ffi::CStr = c"publisher::writer";
/// The reader's name for `RTI_Connector_get_datareader`.
pub const READER: &std::ffi::CStr = c"subscriber::reader";

/// The type's name within [`MODULE`].
pub fn type_name(keyed: bool) -> &'static str {
    if keyed { "KeyedBytes" } else { "Bytes" }
}

/// The environment variable naming a folder where each endpoint's XML
/// application is written as it is given to Connector (`TOPIC.writer.xml`,
/// `TOPIC.reader.xml`): to read the QoS a run used, or to run another
/// program on the same (bench/connext_vs_ref.sh).
pub const KEEP_ENV: &str = "PUBSUBPERF_CONNEXT_XML_DIR";

/// The longest topic name [`keep`] makes a file of (its name, with the
/// suffix, stays under the usual 255-byte limit).
pub const KEEP_NAME_MAX: usize = 200;

/// Writes `xml`, the application of `endpoint` on `topic`, into the folder
/// [`KEEP_ENV`] names, if it names one. `topic` is a DDS topic name of the
/// binding's, made from the run's id, which a publisher sends: it must be
/// `[A-Za-z0-9_]` only and at most [`KEEP_NAME_MAX`] bytes, so that the
/// file is one plain name in that folder, or nothing is written.
pub fn keep(topic: &str, endpoint: Endpoint, xml: &str) -> Result<(), BindingError> {
    let Some(dir) = std::env::var_os(KEEP_ENV).filter(|d| !d.is_empty()) else {
        return Ok(());
    };
    if topic.is_empty()
        || topic.len() > KEEP_NAME_MAX
        || !topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return Err(BindingError::Unsupported(format!(
            "{KEEP_ENV}: the topic {} is not a plain file name ([A-Za-z0-9_], at most {KEEP_NAME_MAX} bytes)",
            topic.escape_debug()
        )));
    }
    let kind = match endpoint {
        Endpoint::Writer(_) => "writer",
        Endpoint::Reader(_) => "reader",
    };
    let path = std::path::Path::new(&dir).join(format!("{topic}.{kind}.xml"));
    std::fs::write(&path, xml).map_err(|source| BindingError::Io {
        context: format!("{KEEP_ENV}: writing {}", path.display()),
        source,
    })
}

/// `s` with XML's five special characters escaped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The XML of one endpoint on `topic`.
pub fn application(plan: &Plan, topic: &str, endpoint: Endpoint) -> String {
    let topic = escape(topic);
    let ty = type_name(plan.keyed);
    let mut x = String::with_capacity(4096);
    x.push_str("<dds>\n<types>\n");
    let _ = write!(
        x,
        "<module name=\"{MODULE}\"><struct name=\"{ty}\" extensibility=\"final\">"
    );
    if plan.keyed {
        x.push_str("<member name=\"id\" type=\"uint32\" key=\"true\"/>");
    }
    x.push_str("<member name=\"data\" type=\"byte\" sequenceMaxLength=\"-1\"/>");
    x.push_str("</struct></module>\n</types>\n");
    let _ = writeln!(
        x,
        "<domain_library name=\"domains\"><domain name=\"run\" domain_id=\"{}\">\
         <register_type name=\"{MODULE}::{ty}\" type_ref=\"{MODULE}::{ty}\"/>\
         <topic name=\"{topic}\" register_type_ref=\"{MODULE}::{ty}\"/></domain></domain_library>",
        plan.domain
    );
    x.push_str(
        "<domain_participant_library name=\"pubsubperf\">\
         <domain_participant name=\"endpoint\" domain_ref=\"domains::run\">\n",
    );
    participant_qos(&mut x, plan);
    // Perftest's publisher and subscriber: topic access scope, ordered.
    let presentation = "<presentation><access_scope>TOPIC_PRESENTATION_QOS</access_scope>\
                        <ordered_access>true</ordered_access></presentation>";
    match endpoint {
        Endpoint::Writer(role) => {
            let _ = write!(
                x,
                "<publisher name=\"publisher\"><publisher_qos>{presentation}</publisher_qos>\
                 <data_writer name=\"writer\" topic_ref=\"{topic}\">"
            );
            writer_qos(&mut x, plan, role);
            x.push_str("</data_writer></publisher>\n");
        }
        Endpoint::Reader(role) => {
            // Readers ask for Connext's default presentation: a CycloneDDS
            // or Fast DDS writer offers instance scope, unordered, and a
            // reader asking for Perftest's would never match it.
            let _ = write!(
                x,
                "<subscriber name=\"subscriber\">\
                 <data_reader name=\"reader\" topic_ref=\"{topic}\">"
            );
            reader_qos(&mut x, plan, role);
            x.push_str("</data_reader></subscriber>\n");
        }
    }
    x.push_str("</domain_participant></domain_participant_library>\n</dds>\n");
    x
}

fn property(x: &mut String, name: &str, value: impl std::fmt::Display) {
    let _ = write!(
        x,
        "<element><name>{name}</name><value>{value}</value></element>"
    );
}

fn duration(x: &mut String, tag: &str, d: std::time::Duration) {
    let _ = write!(
        x,
        "<{tag}><sec>{}</sec><nanosec>{}</nanosec></{tag}>",
        d.as_secs().min(i32::MAX as u64),
        d.subsec_nanos()
    );
}

const ZERO: std::time::Duration = std::time::Duration::ZERO;

fn participant_qos(x: &mut String, plan: &Plan) {
    x.push_str("<participant_qos>");
    let _ = write!(
        x,
        "<transport_builtin><mask>{}</mask></transport_builtin>",
        plan.transport_mask
    );
    if !plan.initial_peers.is_empty() {
        x.push_str("<discovery><initial_peers>");
        for p in &plan.initial_peers {
            let _ = write!(x, "<element>{}</element>", escape(p));
        }
        x.push_str("</initial_peers>");
        if plan.no_multicast {
            x.push_str("<multicast_receive_addresses/>");
        }
        x.push_str("</discovery>");
    }
    // Only a participant's start and end, never the measured path:
    // announcements every 10-100 ms while it starts (Connext's 1 s made
    // every match wait a second), and a 10 ms clean-up period (deleting a
    // participant waits for it a few times over: 2.6 s with Connext's 1 s).
    x.push_str("<discovery_config>");
    duration(
        x,
        "min_initial_participant_announcement_period",
        ANNOUNCE_MIN,
    );
    duration(
        x,
        "max_initial_participant_announcement_period",
        ANNOUNCE_MAX,
    );
    x.push_str("</discovery_config>");
    x.push_str("<database>");
    duration(x, "shutdown_cleanup_period", SHUTDOWN_CLEANUP);
    x.push_str("</database>");
    x.push_str("<participant_name><name>pubsubperf</name></participant_name>");
    x.push_str("<property><value>");
    for (name, value) in &plan.participant_properties {
        property(x, &escape(name), escape(value));
    }
    x.push_str("</value></property>");
    x.push_str("</participant_qos>\n");
}

fn reliability(x: &mut String, plan: &Plan) {
    match plan.reliability {
        Reliability::Reliable => {
            x.push_str("<reliability><kind>RELIABLE_RELIABILITY_QOS</kind>");
            duration(x, "max_blocking_time", plan.max_blocking);
            x.push_str("</reliability>");
        }
        Reliability::BestEffort => {
            x.push_str("<reliability><kind>BEST_EFFORT_RELIABILITY_QOS</kind></reliability>")
        }
    }
    let kind = match plan.durability {
        Durability::Volatile => "VOLATILE_DURABILITY_QOS",
        Durability::TransientLocal => "TRANSIENT_LOCAL_DURABILITY_QOS",
    };
    let _ = write!(x, "<durability><kind>{kind}</kind></durability>");
}

fn history(x: &mut String, history: History) {
    match history {
        History::KeepAll => x.push_str("<history><kind>KEEP_ALL_HISTORY_QOS</kind></history>"),
        History::KeepLast(n) => {
            let _ = write!(
                x,
                "<history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>{n}</depth></history>"
            );
        }
    }
}

/// `<resource_limits>`: `max` samples (None: unlimited), `initial` of them
/// allocated up front; instances for the keyed type.
fn limits(x: &mut String, plan: &Plan, max: Option<i32>, initial: i32) {
    let max = max.map_or("LENGTH_UNLIMITED".to_string(), |m| m.to_string());
    let _ = write!(
        x,
        "<resource_limits><max_samples>{max}</max_samples><initial_samples>{initial}</initial_samples>\
         <max_samples_per_instance>{max}</max_samples_per_instance>"
    );
    if plan.keyed {
        let _ = write!(
            x,
            "<max_instances>{n}</max_instances><initial_instances>{n}</initial_instances>",
            n = plan.instances
        );
    }
    x.push_str("</resource_limits>");
}

fn pool_buffer(x: &mut String, entity: &str, plan: &Plan) {
    x.push_str("<property><value>");
    property(
        x,
        &format!("dds.{entity}.history.memory_manager.fast_pool.pool_buffer_max_size"),
        plan.pool_buffer_max,
    );
    x.push_str("</value></property>");
}

/// Perftest's ThroughputQos writer (data, pings) or LatencyQos writer
/// (echoes), with what its RTIDDSImpl sets in code.
fn writer_qos(x: &mut String, plan: &Plan, role: Role) {
    let q = plan.send_queue;
    x.push_str("<datawriter_qos>");
    reliability(x, plan);
    history(x, plan.history.unwrap_or(History::KeepAll));
    let batching = role == Role::Data && plan.batch_bytes > 0;
    match role {
        Role::Data if batching => limits(x, plan, None, q),
        Role::Data => limits(x, plan, Some(q), q),
        Role::Echo => limits(x, plan, None, q),
    }
    if batching {
        let _ = write!(
            x,
            "<writer_resource_limits><max_batches>{q}</max_batches></writer_resource_limits>"
        );
    }
    if plan.reliability == Reliability::Reliable {
        x.push_str("<protocol>");
        if plan.no_positive_acks {
            x.push_str("<disable_positive_acks>true</disable_positive_acks>");
        }
        if plan.no_push_on_write {
            x.push_str("<push_on_write>false</push_on_write>");
        }
        x.push_str("<rtps_reliable_writer>");
        let (low, high) = match role {
            Role::Data => {
                let low = q / 10;
                (low, (9 * q / 10).max(low + 1))
            }
            Role::Echo => (10, 100),
        };
        let _ = write!(
            x,
            "<low_watermark>{low}</low_watermark><high_watermark>{high}</high_watermark>\
             <heartbeats_per_max_samples>{}</heartbeats_per_max_samples>",
            plan.heartbeats_per_max_samples()
        );
        duration(x, "heartbeat_period", HEARTBEAT);
        duration(x, "fast_heartbeat_period", FAST_HEARTBEAT);
        duration(x, "late_joiner_heartbeat_period", HEARTBEAT);
        x.push_str("<max_heartbeat_retries>LENGTH_UNLIMITED</max_heartbeat_retries>");
        duration(x, "min_nack_response_delay", ZERO);
        duration(x, "max_nack_response_delay", ZERO);
        if role == Role::Data {
            let _ = write!(
                x,
                "<min_send_window_size>{q}</min_send_window_size><max_send_window_size>{q}</max_send_window_size>"
            );
        }
        if plan.no_positive_acks {
            duration(
                x,
                "disable_positive_acks_min_sample_keep_duration",
                KEEP_DURATION,
            );
        }
        x.push_str("</rtps_reliable_writer></protocol>");
    }
    if batching {
        let _ = write!(
            x,
            "<batch><enable>true</enable><max_data_bytes>{}</max_data_bytes>\
             <max_samples>LENGTH_UNLIMITED</max_samples></batch>",
            plan.batch_bytes
        );
    }
    if plan.asynchronous {
        let _ = write!(
            x,
            "<publish_mode><kind>ASYNCHRONOUS_PUBLISH_MODE_QOS</kind>\
             <flow_controller_name>{}</flow_controller_name></publish_mode>",
            escape(&plan.flow_controller)
        );
    }
    x.push_str(
        "<writer_data_lifecycle><autodispose_unregistered_instances>false</autodispose_unregistered_instances></writer_data_lifecycle>",
    );
    pool_buffer(x, "data_writer", plan);
    x.push_str("</datawriter_qos>");
}

/// Perftest's ThroughputQos reader (data, pings) or LatencyQos reader
/// (echoes: KEEP_LAST 1, 100 samples).
fn reader_qos(x: &mut String, plan: &Plan, role: Role) {
    x.push_str("<datareader_qos>");
    reliability(x, plan);
    match role {
        Role::Data => {
            history(x, plan.history.unwrap_or(History::KeepAll));
            let initial = plan.receive_queue.unwrap_or(DATA_READER_INITIAL);
            limits(x, plan, Some(DATA_READER_SAMPLES.max(initial)), initial);
            let _ = write!(
                x,
                "<reader_resource_limits><max_samples_per_remote_writer>{}</max_samples_per_remote_writer>\
                 <max_samples_per_read>65536</max_samples_per_read></reader_resource_limits>",
                DATA_READER_SAMPLES.max(initial)
            );
        }
        Role::Echo => {
            history(x, plan.history.unwrap_or(History::KeepLast(1)));
            let n = ECHO_READER_SAMPLES;
            limits(x, plan, Some(n), n);
            let _ = write!(
                x,
                "<reader_resource_limits><max_samples_per_remote_writer>{n}</max_samples_per_remote_writer></reader_resource_limits>"
            );
        }
    }
    if plan.reliability == Reliability::Reliable {
        x.push_str("<protocol>");
        if plan.no_positive_acks {
            x.push_str("<disable_positive_acks>true</disable_positive_acks>");
        }
        x.push_str("<rtps_reliable_reader>");
        duration(x, "min_heartbeat_response_delay", ZERO);
        duration(x, "max_heartbeat_response_delay", ZERO);
        if role == Role::Echo {
            duration(x, "heartbeat_suppression_duration", ZERO);
        }
        x.push_str("</rtps_reliable_reader></protocol>");
    }
    if let Some((data, echo)) = &plan.multicast {
        let group = if role == Role::Data { data } else { echo };
        let _ = write!(
            x,
            "<multicast><value><element><receive_address>{}</receive_address></element></value></multicast>",
            escape(group)
        );
    }
    pool_buffer(x, "data_reader", plan);
    x.push_str("</datareader_qos>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_files_are_plain_names_only() {
        let dir = std::env::temp_dir().join(format!("pp-keep-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // SAFETY: this test alone reads or writes the variable.
        unsafe { std::env::set_var(KEEP_ENV, &dir) };
        let w = Endpoint::Writer(Role::Data);
        assert!(keep("pp_run_data", w, "<dds/>").is_ok());
        assert!(dir.join("pp_run_data.writer.xml").is_file());
        for bad in ["../x", "a/b", "", &"x".repeat(KEEP_NAME_MAX + 1)] {
            assert!(keep(bad, w, "<dds/>").is_err(), "{bad}");
        }
        unsafe { std::env::remove_var(KEEP_ENV) };
        std::fs::remove_dir_all(&dir).unwrap();
    }

    use pubsubperf_core::EndpointConfig;

    fn xml(cfg: &EndpointConfig, endpoint: Endpoint) -> String {
        application(&Plan::of(cfg).unwrap(), "pp_r_data", endpoint)
    }

    fn cfg() -> EndpointConfig {
        let mut c = EndpointConfig::for_test("x");
        c.transport = "udp+shm".into();
        c.max_sample_size = 100;
        c
    }

    #[test]
    fn the_data_writer_is_perftests_throughput_writer() {
        let w = xml(&cfg(), Endpoint::Writer(Role::Data));
        for part in [
            "<mask>UDPv4|SHMEM</mask>",
            "<kind>RELIABLE_RELIABILITY_QOS</kind><max_blocking_time><sec>0</sec><nanosec>100000000</nanosec>",
            "<history><kind>KEEP_ALL_HISTORY_QOS</kind></history>",
            "<max_samples>50</max_samples><initial_samples>50</initial_samples>",
            "<low_watermark>5</low_watermark><high_watermark>45</high_watermark><heartbeats_per_max_samples>5</heartbeats_per_max_samples>",
            "<heartbeat_period><sec>0</sec><nanosec>10000000</nanosec></heartbeat_period>",
            "<fast_heartbeat_period><sec>0</sec><nanosec>1000000</nanosec></fast_heartbeat_period>",
            "<min_send_window_size>50</min_send_window_size><max_send_window_size>50</max_send_window_size>",
            "<ordered_access>true</ordered_access>",
            "fast_pool.pool_buffer_max_size</name><value>65470</value>",
            "<struct name=\"Bytes\" extensibility=\"final\"><member name=\"data\" type=\"byte\" sequenceMaxLength=\"-1\"/>",
        ] {
            assert!(w.contains(part), "{part} not in {w}");
        }
        assert!(!w.contains("<batch>") && !w.contains("ASYNCHRONOUS"));
    }

    #[test]
    fn batching_large_data_and_the_echo_endpoints() {
        let mut c = cfg();
        c.batch_bytes = 8192;
        let w = xml(&c, Endpoint::Writer(Role::Data));
        assert!(w.contains(
            "<max_samples>LENGTH_UNLIMITED</max_samples><initial_samples>50</initial_samples>"
        ));
        assert!(w.contains("<max_batches>50</max_batches>"));
        assert!(w.contains("<batch><enable>true</enable><max_data_bytes>8192</max_data_bytes>"));
        // The echo writer never batches.
        assert!(!xml(&c, Endpoint::Writer(Role::Echo)).contains("<batch>"));
        let mut c = cfg();
        c.max_sample_size = 1 << 20;
        let w = xml(&c, Endpoint::Writer(Role::Echo));
        assert!(w.contains("<publish_mode><kind>ASYNCHRONOUS_PUBLISH_MODE_QOS</kind><flow_controller_name>DDS_DEFAULT_FLOW_CONTROLLER_NAME</flow_controller_name>"));
        assert!(w.contains("<low_watermark>10</low_watermark><high_watermark>100</high_watermark><heartbeats_per_max_samples>50</heartbeats_per_max_samples>"));
        let r = xml(&cfg(), Endpoint::Reader(Role::Echo));
        assert!(
            r.contains("<history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>1</depth></history>")
        );
        assert!(r.contains("<max_samples>100</max_samples>"));
        let r = xml(&cfg(), Endpoint::Reader(Role::Data));
        assert!(
            r.contains("<max_samples>10000</max_samples><initial_samples>128</initial_samples>")
        );
    }

    #[test]
    fn the_knobs_reach_the_xml() {
        let mut c = cfg();
        c.no_positive_acks = true;
        c.no_push_on_write = true;
        c.bandwidth_limit = 10_000_000;
        c.instances = 4;
        c.history = Some(History::KeepLast(7));
        c.durability = Some(Durability::TransientLocal);
        c.send_queue = 200;
        c.receive_queue = 300;
        let w = xml(&c, Endpoint::Writer(Role::Data));
        for part in [
            "<disable_positive_acks>true</disable_positive_acks><push_on_write>false</push_on_write>",
            "<disable_positive_acks_min_sample_keep_duration><sec>0</sec><nanosec>100000</nanosec>",
            "<flow_controller_name>dds.flow_controller.token_bucket.pubsubperf</flow_controller_name>",
            "dds.flow_controller.token_bucket.pubsubperf.token_bucket.tokens_added_per_period</name><value>97</value>",
            "<member name=\"id\" type=\"uint32\" key=\"true\"/>",
            "<max_instances>4</max_instances>",
            "<history><kind>KEEP_LAST_HISTORY_QOS</kind><depth>7</depth></history>",
            "<kind>TRANSIENT_LOCAL_DURABILITY_QOS</kind>",
            "<max_samples>200</max_samples>",
        ] {
            assert!(w.contains(part), "{part} not in {w}");
        }
        let r = xml(&c, Endpoint::Reader(Role::Data));
        assert!(r.contains("<initial_samples>300</initial_samples>"), "{r}");
        let mut c = cfg();
        c.reliability = Reliability::BestEffort;
        c.multicast = true;
        c.multicast_ttl = Some(3);
        let r = xml(&c, Endpoint::Reader(Role::Echo));
        assert!(r.contains("<receive_address>239.255.1.2</receive_address>"));
        assert!(r.contains("UDPv4.builtin.multicast_ttl</name><value>3</value>"));
        assert!(r.contains("BEST_EFFORT_RELIABILITY_QOS") && !r.contains("<protocol>"));
    }

    #[test]
    fn names_are_escaped() {
        assert_eq!(escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    }
}
