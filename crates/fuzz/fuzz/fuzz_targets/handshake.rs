#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| pubsubperf_fuzz::handshake(data));
