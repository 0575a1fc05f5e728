//! What every command-line front end of pubsubperf shares (its own command
//! line and the RTI tools' front ends, `pubsubperf-rti`): running a plan
//! with its progress lines and tables, the exit code of how it ended,
//! Ctrl-C, and the agent's side of a front end. No command-line parsing
//! here: each front end reads its own line into plain values.

pub mod agent;
pub mod interrupt;
mod run;

pub use run::{execute, failure_exit, lifted, print_tables, serve_exit};
