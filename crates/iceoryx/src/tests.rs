use super::*;

fn base(id: &str) -> EndpointConfig {
    let mut c = EndpointConfig::for_test(id);
    c.transport = "shm".into();
    c.data_type = DataType::Flat;
    c
}

fn zc_block(id: &str) -> EndpointConfig {
    let mut c = base(id);
    c.zero_copy = true;
    c
}

fn zc_busy(id: &str) -> EndpointConfig {
    let mut c = zc_block(id);
    c.wait = WaitMode::Busy;
    c
}

fn zc_best_effort(id: &str) -> EndpointConfig {
    let mut c = zc_block(id);
    c.reliability = Reliability::BestEffort;
    c
}

/// `c` is refused with a one-line message that starts with `flag`.
fn refused(c: &EndpointConfig, flag: &str) {
    match Iceoryx::validate(c) {
        Err(BindingError::Unsupported(m)) => {
            assert!(m.starts_with(flag), "message '{m}' does not name {flag}");
            assert!(!m.contains('\n'), "message '{m}' is not one line");
        }
        other => panic!("{flag} not refused: {other:?}"),
    }
}

#[test]
fn refuses_what_it_cannot_do() {
    let mut c = base("r");
    c.transport = "udp".into();
    refused(&c, "--transport udp");
    let mut c = base("r");
    c.transport = "tcp".into();
    refused(&c, "--transport tcp");
    let mut c = base("r");
    c.data_type = DataType::Bytes;
    refused(&c, "--data-type bytes");
    let mut c = base("r");
    c.options.insert("x".into(), "1".into());
    refused(&c, "--opt x");
    let mut c = base("r");
    c.receive_queue = MAX_QUEUE + 1;
    refused(&c, "--receive-queue");
    let mut c = base("r");
    c.send_queue = 10;
    refused(&c, "--send-queue");
    let mut c = base("r");
    c.multicast = true;
    refused(&c, "--multicast");
    let mut c = base("r");
    c.ipv6 = true;
    refused(&c, "--ipv6");
    let mut c = base("r");
    c.batch_bytes = 1024;
    refused(&c, "--batch");
    let mut c = base("r");
    c.socket_buffer = 1 << 20;
    refused(&c, "--socket-buffer");
    let mut c = base("r");
    c.max_sample_size = MAX_SAMPLE + 1;
    refused(&c, "--size");
    // Several at once: the first is named, still one line.
    let mut c = base("r");
    c.multicast = true;
    c.socket_buffer = 1 << 20;
    refused(&c, "--multicast");
}

#[test]
fn accepts_what_applies() {
    for mut c in [base("a"), zc_busy("a"), zc_best_effort("a")] {
        c.receive_queue = MAX_QUEUE;
        c.max_sample_size = MAX_SAMPLE;
        Iceoryx::validate(&c).expect("valid");
    }
}
