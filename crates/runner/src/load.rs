//! `--load PROFILE`: latency and throughput under a standard load. A
//! profile is a documented set of stress-ng stressors (Debian's
//! `stress-ng`), one worker of each per core of `--load-cpu` (default:
//! every core, so the load shares the measuring cores as in the real-time
//! community's load tests), pinned there with `--taskset`. The stressors
//! run from before the first run of the command to after its last; each
//! run records the profile, the cores and the stress-ng command line in
//! `config.load`. The run ends every stressor it started: stress-ng runs in
//! a process group of its own that is ended as a whole (SIGTERM, then
//! SIGKILL), dies with this process (the parent-death signal), and carries
//! a `--timeout` as the last resort.

use crate::plan::UsageError;
use pubsubperf_doctor::{cpu_list, cpu_list_text};
use serde::{Deserialize, Serialize};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The profiles: each name with its stressors (stress-ng options taking
/// a worker count) and what it loads.
pub const PROFILES: &[(&str, &[&str], &str)] = &[
    (
        "cpu",
        &["--cpu"],
        "arithmetic on every load core (stress-ng --cpu)",
    ),
    (
        "memory",
        &["--stream"],
        "memory bandwidth: STREAM's copy, scale, add and triad (--stream)",
    ),
    ("cache", &["--cache"], "the shared cache thrashed (--cache)"),
    (
        "irq",
        &["--timer"],
        "timer interrupts at a high rate (--timer)",
    ),
    (
        "network",
        &["--udp"],
        "UDP over loopback: the network stack and its softirqs (--udp)",
    ),
    ("io", &["--hdd"], "file writes and reads (--hdd)"),
    (
        "all",
        &["--cpu", "--stream", "--cache", "--timer", "--udp", "--hdd"],
        "every stressor above at once",
    ),
];

/// A load as planned: what each run records in `config.load`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    pub profile: String,
    /// The cores the stressors are pinned to (a kernel CPU list).
    pub cores: String,
    /// The stress-ng command line (its `--timeout` and temporary directory
    /// added when it starts).
    pub command: Vec<String>,
}

impl Load {
    /// The load of `--load PROFILE` on `--load-cpu LIST` (default: cores
    /// 0 to `cores - 1`).
    pub fn plan(profile: &str, load_cpu: Option<&str>, cpus: &[usize]) -> Result<Load, UsageError> {
        let names: Vec<&str> = PROFILES.iter().map(|p| p.0).collect();
        let Some((_, stressors, _)) = PROFILES.iter().find(|p| p.0 == profile) else {
            return Err(UsageError(format!(
                "--load '{profile}': not a load profile (use {}; docs/machine.md lists what each runs)",
                names.join(", ")
            )));
        };
        let set = match load_cpu {
            None => cpus.to_vec(),
            Some(s) => cpu_list(s).filter(|v| !v.is_empty()).ok_or_else(|| {
                UsageError(format!(
                    "--load-cpu '{s}': expected a CPU list like 0-1 or 0,2"
                ))
            })?,
        };
        if let Some(c) = set.iter().find(|&&c| !cpus.contains(&c)) {
            return Err(UsageError(format!(
                "--load-cpu: core {c} is not one this process may use (cores {})",
                cpu_list_text(cpus)
            )));
        }
        let list = cpu_list_text(&set);
        let n = set.len().to_string();
        let mut command: Vec<String> = vec!["stress-ng".into()];
        for s in stressors.iter() {
            command.extend([s.to_string(), n.clone()]);
        }
        command.extend(["--taskset".into(), list.clone()]);
        Ok(Load {
            profile: profile.into(),
            cores: list,
            command,
        })
    }

    /// The run's record (`config.load`).
    pub fn record(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// Stressors running; ended when dropped.
pub struct Stressors {
    child: Child,
    /// stress-ng's files (`--hdd`): a private directory (mode 0700, a
    /// name no one can guess), removed with what is in it.
    _dir: tempfile::TempDir,
}

/// How long the stressors are given to start before the first run.
const SETTLE: Duration = Duration::from_millis(500);

impl Stressors {
    /// Starts `load` for at most `limit` (its `--timeout`, should this
    /// process die without ending it).
    pub fn start(load: &Load, limit: Duration) -> Result<Stressors, UsageError> {
        let missing = || {
            UsageError(
                "--load: stress-ng is not installed (apt-get install stress-ng; scripts/setup.sh installs it)"
                    .into(),
            )
        };
        Command::new("stress-ng")
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|_| missing())?;
        let dir = tempfile::Builder::new()
            .prefix("pubsubperf-load-")
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .map_err(|e| UsageError(format!("--load: a temporary directory: {e}")))?;
        let mut cmd = Command::new(&load.command[0]);
        cmd.args(&load.command[1..])
            .args([
                "--timeout",
                &format!("{}s", limit.as_secs().max(1)),
                "--temp-path",
            ])
            .arg(dir.path())
            .arg("--quiet")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
            // SAFETY: prctl is async-signal-safe; it only sets this
            // child's parent-death signal.
            unsafe {
                cmd.pre_exec(|| {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| UsageError(format!("--load: cannot start stress-ng: {e}")))?;
        std::thread::sleep(SETTLE);
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            let first = err.lines().next().unwrap_or("").to_string();
            return Err(UsageError(format!(
                "--load {}: stress-ng ended at once ({status}): {first}",
                load.profile
            )));
        }
        Ok(Stressors { child, _dir: dir })
    }
}

impl Drop for Stressors {
    /// Ends the whole group: SIGTERM (stress-ng ends its workers), then
    /// SIGKILL for what is left after a second.
    fn drop(&mut self) {
        let pgid = self.child.id() as libc::pid_t;
        // SAFETY: signals to the group this process created.
        unsafe { libc::kill(-pgid, libc::SIGTERM) };
        let end = Instant::now() + Duration::from_secs(1);
        while Instant::now() < end {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // SAFETY: as above; the group's workers too.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_become_stress_ng_lines_and_bad_ones_are_refused() {
        let l = Load::plan("cpu", None, &[0, 1]).unwrap();
        assert_eq!(l.command, ["stress-ng", "--cpu", "2", "--taskset", "0-1"]);
        assert_eq!(l.cores, "0-1");
        let l = Load::plan("all", Some("1"), &[0, 1, 2, 3]).unwrap();
        assert_eq!(
            l.command.join(" "),
            "stress-ng --cpu 1 --stream 1 --cache 1 --timer 1 --udp 1 --hdd 1 --taskset 1"
        );
        let e = Load::plan("heavy", None, &[0, 1]).unwrap_err().0;
        assert!(
            e.starts_with("--load 'heavy': not a load profile (use cpu, memory,"),
            "{e}"
        );
        let e = Load::plan("cpu", Some("0-x"), &[0, 1]).unwrap_err().0;
        assert!(
            e.starts_with("--load-cpu '0-x': expected a CPU list"),
            "{e}"
        );
        let e = Load::plan("cpu", Some("5"), &[0, 1]).unwrap_err().0;
        assert!(e.starts_with("--load-cpu: core 5 is not one"), "{e}");
    }
}
