//! The front ends of RTI's tools over pubsubperf's tests: `pubsubperf
//! perftest` (RTI Perftest's command line and output formats) and
//! `pubsubperf throughput-example` (RTI's Throughput example), with what
//! their subscribing sides print ([`side_print`]) and the middleware they
//! measure when the line names none ([`rti_default`]). They plan through
//! pubsubperf-runner and run through pubsubperf-frontend as the binary's own
//! commands do.

pub mod perftest;
pub mod rti_default;
pub mod side_print;
pub mod throughput_example;

use pubsubperf_frontend::{agent, execute, failure_exit, interrupt, serve_exit};
use pubsubperf_runner::plan;
