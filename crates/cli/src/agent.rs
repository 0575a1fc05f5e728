//! `pubsubperf agent`: serves publishers' sessions until stopped, or makes
//! a new token (`--new-token`).

use crate::cli::AgentArgs;
use pubsubperf_frontend::{agent, interrupt, serve_exit};
use std::process::ExitCode;

pub fn run(a: &AgentArgs) -> anyhow::Result<ExitCode> {
    if a.new_token {
        agent::new_token(&a.host.settings())?;
        return Ok(ExitCode::SUCCESS);
    }
    interrupt::install(interrupt::Notice::Quiet);
    let mode = if a.stdio {
        agent::Mode::Stdio
    } else {
        agent::Mode::Listen {
            addr: &a.listen,
            once: false,
        }
    };
    serve_exit(agent::run(mode, &a.host.settings(), None)?)
}
