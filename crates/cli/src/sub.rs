//! `pubsubperf sub`: a subscriber host's process, started by a publisher
//! (`--connect-back`), by an agent (one session, `--session-stdin`), or by
//! hand (`--listen`: one session, as an agent serves it).

use crate::cli::SubArgs;
use crate::plan::UsageError;
use pubsubperf_frontend::{agent, interrupt, serve_exit};
use pubsubperf_rti::side_print;
use std::process::ExitCode;

pub fn run(a: &SubArgs) -> anyhow::Result<ExitCode> {
    let r = if let Some(addr) = &a.connect_back {
        // Started by a publisher: it handles Ctrl-C and stops us.
        pubsubperf_harness::serve::connect_back(addr)
    } else if a.session_stdin {
        // Started by an agent: its keys first, before anything opens
        // a descriptor; SIGTERM (the agent stopping) ends the
        // session cleanly.
        let keys = a
            .session_keys_fd
            .map(pubsubperf_harness::key_pipe::take)
            .transpose()
            .map_err(|e| UsageError(e.to_string()))?;
        let keys = keys.as_ref();
        interrupt::install(interrupt::Notice::Quiet);
        let settings = agent::session_settings(a.session.as_deref())?;
        match settings.print.as_deref() {
            None => pubsubperf_harness::serve::serve_stdin(&settings, keys, &mut |_, _| {}),
            Some(p) => {
                let mut sub = side_print::SidePrint::open(p)?;
                let r =
                    pubsubperf_harness::serve::serve_stdin(&settings, keys, &mut |spec, msg| {
                        sub.show(spec, msg)
                    });
                sub.finish(r.is_ok());
                r
            }
        }
    } else {
        interrupt::install(interrupt::Notice::Say);
        let addr = a.listen.as_deref().unwrap_or("0.0.0.0:7400");
        agent::run(
            agent::Mode::Listen { addr, once: true },
            &a.host.settings(),
            None,
        )?
    };
    serve_exit(r)
}
