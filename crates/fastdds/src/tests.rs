use super::*;

#[test]
fn topic_names_are_plain_identifiers() {
    assert_eq!(dds_topic("ct12-0-order", "echo0"), "pp_ct12_0_order_echo0");
}

#[test]
fn refusals_name_the_flag() {
    /// `validate` refuses `c` with a message starting with `flag`.
    fn refused(c: &EndpointConfig, flag: &str) {
        let e = FastDds::validate(c).unwrap_err().to_string();
        assert!(e.starts_with(flag), "{e}");
    }
    let mut c = EndpointConfig::for_test("r");
    c.transport = "udp".into();
    c.zero_copy = true;
    refused(&c, "--zero-copy");
    c.zero_copy = false;
    c.transport = "quic".into();
    refused(&c, "--transport");
    c.transport = "tcp".into();
    c.bind_ip = "198.18.0.1".into();
    refused(&c, "--transport tcp");
    c.bind_ip = "127.0.0.1".into();
    c.transport = "udp".into();
    c.options.insert("bogus".into(), "1".into());
    refused(&c, "--opt bogus");
}

#[test]
fn mapped_flags_and_refusals() {
    assert_eq!(QOS_FLAGS.len(), 10);
    assert!(QOS_FLAGS.contains(&"--multicast-address"));
    assert!(QOS_FLAGS.contains(&"--no-positive-acks") && QOS_FLAGS.contains(&"--bandwidth-limit"));
    assert!(!QOS_FLAGS.contains(&"--no-push-on-write"));
    assert!(why_not("--no-push-on-write").is_some() && why_not("--batch").is_some());
    let mut c = EndpointConfig::for_test("ka");
    c.transport = "udp".into();
    c.no_positive_acks = true;
    assert!(FastDds::validate(&c).is_ok());
    c.history = Some(History::KeepAll);
    let e = FastDds::validate(&c).unwrap_err().to_string();
    assert!(e.starts_with("--no-positive-acks: "), "{e}");
}

#[test]
fn reliable_writers_hold_a_bounded_number_of_bytes() {
    /// The plan of a udp run at `size`.
    fn plan_at(size: usize, edit: impl Fn(&mut EndpointConfig)) -> Plan {
        let mut c = EndpointConfig::for_test("q");
        c.transport = "udp".into();
        c.max_sample_size = size;
        edit(&mut c);
        plan(&c).unwrap()
    }
    /// (keep_all, writer depth, reader depth) of a udp run at `size`.
    fn depths(size: usize, edit: impl Fn(&mut EndpointConfig)) -> (bool, i32, i32) {
        let p = plan_at(size, edit);
        (p.keep_all, p.writer_depth, p.reader_depth)
    }
    // Reliable: keep-all writers, max_samples clamp(32 MiB / size, 2, 5000).
    assert_eq!(depths(64, |_| ()), (true, 5000, 5000));
    assert_eq!(depths(64 << 10, |_| ()), (true, 512, 5000));
    assert_eq!(depths(1 << 20, |_| ()), (true, 32, 1024));
    assert_eq!(depths(64 << 20, |_| ()), (true, 2, 16));
    // What the user sizes, and the paths that keep the queue depth.
    assert_eq!(depths(64 << 10, |c| c.send_queue = 100), (true, 100, 5000));
    assert_eq!(depths(64 << 10, |c| c.no_positive_acks = true).1, 64);
    // Keyed: per instance, the instances sharing the unkeyed bound.
    assert_eq!(depths(64, |c| c.instances = 4).1, 1250);
    assert_eq!(depths(64, |c| c.instances = 1000).1, 64);
    assert_eq!(depths(64 << 10, |c| c.instances = 4).1, 128);
    assert_eq!(
        depths(64 << 10, |c| c.reliability = Reliability::BestEffort),
        (false, 64, 5000)
    );

    // Whose max_samples is that depth: unkeyed keep-all and zero-copy
    // writers; keyed (depth per instance) and keep-last ones keep Fast DDS's.
    let limits = |edit: &dyn Fn(&mut EndpointConfig)| plan_at(64, edit).writer_limits;
    assert!(limits(&|_| ()));
    assert!(!limits(&|c| c.instances = 4));
    assert!(!limits(&|c| c.reliability = Reliability::BestEffort));
    assert!(limits(&|c| {
        c.reliability = Reliability::BestEffort;
        c.zero_copy = true;
        c.data_type = DataType::Flat;
    }));
}
