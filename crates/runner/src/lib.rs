//! What a run will be, decided before anything runs: a [`plan::TestRequest`]
//! of plain values (from the command line, a sweep's cell, the main job or
//! an RTI front end), each option checked and the whole planned into the
//! harness's run specs ([`plan::TestPlan`]); the demand ramp's values
//! ([`demand`]) and the standard load beside a run ([`load`]).
//!
//! This crate is the first part of the runner (issue 66): the executor
//! (sessions, lists, topics, find-max, floors) still lives in the binary.

pub mod demand;
pub mod load;
pub mod plan;
