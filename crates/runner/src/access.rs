//! How a plan reaches its other sides: this host's processes or threads,
//! or agents by address (with the token) or over SSH.

use crate::RunnerError;
use crate::plan::{TestPlan, UsageError};
use pubsubperf_harness::registry;
use pubsubperf_harness::session::{Peers, RemoteAccess};

/// The token this publisher presents to agents: the token file's contents,
/// or none when there is no token file at the default place (an agent that
/// wants one then refuses, saying how to get it).
pub fn agent_token(flag: Option<&std::path::Path>) -> Result<Option<String>, UsageError> {
    use pubsubperf_harness::token::{self, TokenError};
    let bad = |e: TokenError| UsageError(format!("--token-file: {e}"));
    let path = token::path(flag).map_err(bad)?;
    match token::load(&path) {
        Ok(t) => Ok(Some(t)),
        Err(TokenError::Io(_, e)) if e.kind() == std::io::ErrorKind::NotFound && flag.is_none() => {
            Ok(None)
        }
        Err(e) => Err(bad(e)),
    }
}

/// How this plan reaches remote agents: the token (read only when an agent
/// is reached by address; over SSH none is needed) and the remote binary.
pub fn remote_access(
    plan: &TestPlan,
    pool: Option<&std::sync::Arc<pubsubperf_harness::ssh::Pool>>,
) -> Result<RemoteAccess, UsageError> {
    let addrs = plan.connect.iter().chain(&plan.connect_publishers);
    let mut access = access_to(
        addrs.map(String::as_str),
        plan.token_file.as_deref(),
        plan.insecure,
        plan.remote_path.clone(),
    )?;
    access.pool = pool.cloned();
    Ok(access)
}

/// How to reach the agents at `addrs`: the token (read only when one is
/// reached by address, and not `insecure`; over SSH none is needed) and
/// the remote binary.
pub fn access_to<'a>(
    mut addrs: impl Iterator<Item = &'a str>,
    token_file: Option<&std::path::Path>,
    insecure: bool,
    remote_path: Option<String>,
) -> Result<RemoteAccess, UsageError> {
    let by_address = addrs.any(|a| !a.starts_with("ssh://"));
    Ok(RemoteAccess {
        token: if by_address && !insecure {
            agent_token(token_file)?
        } else {
            None
        },
        remote_path,
        pool: None,
    })
}

/// Chooses where the subscribers run.
pub fn peers_for(
    binding: &str,
    connect: &[String],
    access: RemoteAccess,
    n: usize,
) -> crate::Result<Peers> {
    if !connect.is_empty() {
        return Ok(Peers::Remote {
            addrs: connect.to_vec(),
            access,
        });
    }
    let in_process = registry::info(binding).is_some_and(|i| i.capabilities.in_process);
    if in_process {
        return Ok(Peers::Threads { n });
    }
    let exe = std::env::current_exe().map_err(|source| RunnerError::Exe {
        what: "subscribers",
        source,
    })?;
    Ok(Peers::Local { n, exe })
}
