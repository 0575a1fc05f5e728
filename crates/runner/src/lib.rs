//! What a run will be, decided before anything runs: a [`plan::TestRequest`]
//! of plain values (from the command line, a sweep's cell, the main job or
//! an RTI front end; each option is one entry of [`options::OPTIONS`]), each option checked and the whole planned into the
//! harness's run specs ([`plan::TestPlan`]); the demand ramp's values
//! ([`demand`]) and the standard load beside a run ([`load`]).
//!
//! [`execute::execute`] runs a plan: sessions, lists, topics side by side,
//! `--find-max`, the link floors, the stressors and the ramp's pauses,
//! each run kept at once by the [`sink::Sink`].

pub mod access;
pub mod calibration;
pub mod demand;
pub mod environment;
mod error;
pub mod execute;
pub mod find_max;
pub mod limit;
pub mod load;
pub mod options;
pub mod plan;
pub mod quick;
pub mod sink;
pub mod topics;
pub mod topology;

pub use error::{Result, RunnerError};
