//! What a run prints under its progress, in the terminal: the tables and
//! the lines under them (`pubsubperf latency`, `throughput`, the main job,
//! sweeps and the RTI front ends print these).

pub mod discovery;
pub mod fan_out;
pub mod limit;
pub mod one_way;
pub mod per_subscriber;
pub mod quick;
pub mod ramp;
pub mod tables;
pub mod topics;

pub use tables::*;
