//! `--load PROFILE` as a user runs it: the stressors run during the test,
//! the run records them, Ctrl-C keeps the results and ends every
//! stressor, bad profiles are one line with exit 2. Needs stress-ng
//! (scripts/setup.sh installs it): without it the run fails saying so.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The tests that start stressors run one at a time: each checks that
/// none is left, which another's would fail.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pubsubperf"))
}

/// The pids of processes whose name begins with stress-ng.
fn stressors() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.starts_with("stress-ng"))
        })
        .collect()
}

fn until(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + within;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    f()
}

/// The `--temp-path` of a running stress-ng (its private directory).
fn temp_path() -> Option<std::path::PathBuf> {
    stressors().into_iter().find_map(|pid| {
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
        let args: Vec<&[u8]> = cmd.split(|b| *b == 0).collect();
        let i = args.iter().position(|a| *a == b"--temp-path")?;
        Some(std::path::PathBuf::from(
            String::from_utf8_lossy(args.get(i + 1)?).into_owned(),
        ))
    })
}

/// Kills the child if the test fails before it ends.
struct Reap(std::process::Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_run_under_load_records_it_and_ctrl_c_ends_every_stressor() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out = Command::new("stress-ng").arg("--version").output();
    assert!(
        out.is_ok_and(|o| o.status.success()),
        "prerequisite missing: stress-ng (apt-get install stress-ng; scripts/setup.sh installs it)"
    );
    assert!(
        stressors().is_empty(),
        "stress-ng runs already: {:?}",
        stressors()
    );
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = bin()
        .args([
            "latency",
            "-b",
            "udp",
            "--duration",
            "30s",
            "--warmup",
            "0s",
            "--no-save",
            "--load",
            "io",
            "--json",
        ])
        .arg(&json)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut child = Reap(child);
    let mut private = None;
    assert!(
        until(Duration::from_secs(10), || {
            private = temp_path();
            private.is_some()
        }),
        "no stressor started"
    );
    let private = private.unwrap();
    assert!(private.is_dir(), "{}", private.display());
    // A second of measurement and more, then Ctrl-C.
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    assert!(
        until(Duration::from_secs(10), || child
            .0
            .try_wait()
            .unwrap()
            .is_some()),
        "pubsubperf did not end on Ctrl-C"
    );
    let mut banner = String::new();
    std::io::Read::read_to_string(&mut child.0.stdout.take().unwrap(), &mut banner).unwrap();
    assert!(
        until(Duration::from_secs(3), || stressors().is_empty()),
        "stressors left behind: {:?}",
        stressors()
    );
    assert!(!private.exists(), "{} left behind", private.display());
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("results kept")).unwrap();
    let load = &v["runs"][0]["config"]["load"];
    assert_eq!(load["profile"], "io", "{v}");
    assert_eq!(load["command"][0], "stress-ng", "{v}");
    assert!(banner.contains("; under load: io on cores 0-"), "{banner}");
}

#[test]
fn bad_loads_are_one_line_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (args, starts) in [
        (
            vec!["latency", "-b", "udp", "--no-save", "--load", "heavy"],
            "pubsubperf: --load 'heavy': not a load profile",
        ),
        (
            vec![
                "latency",
                "-b",
                "udp",
                "--no-save",
                "--load",
                "cpu",
                "--load-cpu",
                "0-",
            ],
            "pubsubperf: --load-cpu '0-': expected a CPU list",
        ),
    ] {
        let o = bin().args(&args).current_dir(dir.path()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(starts), "{err}");
    }
    let o = bin()
        .args(["latency", "-b", "udp", "--load-cpu", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
}

/// A sweep's `load` axis: each cell once per profile, the profile in its
/// key, the loaded cell's runs carrying `config.load`, nothing left.
#[test]
fn a_sweep_runs_each_cell_under_each_load() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("load.toml");
    std::fs::write(
        &file,
        "name = \"load-sweep\"\n\
         [matrix]\n\
         bindings = [\"mock\"]\n\
         sizes = [64]\n\
         load = [\"none\", \"cpu\"]\n\
         [settings]\n\
         count = 200\n\
         warmup = \"0s\"\n\
         cpu = \"none\"\n\
         echo_timeout = \"5s\"\n",
    )
    .unwrap();
    let json = d.join("sweep.json");
    let db = d.join("r.sqlite");
    let o = bin()
        .args([
            "sweep",
            file.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--json",
        ])
        .arg(&json)
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("latency/mock/transport=default/size=64/load=none"),
        "{err}"
    );
    assert!(
        err.contains("latency/mock/transport=default/size=64/load=cpu"),
        "{err}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let loads: Vec<serde_json::Value> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["config"]["load"]["profile"].clone())
        .collect();
    assert_eq!(loads, [serde_json::Value::Null, "cpu".into()], "{v}");
    assert!(
        until(Duration::from_secs(3), || stressors().is_empty()),
        "stressors left behind"
    );
}

/// The stressors of every cell of a sweep take the same cores (before
/// 0.2.0 the second cell's ran on the one core the first run had left the
/// process pinned to): each cell's record names the process's cores.
#[test]
fn every_cell_of_a_sweep_loads_the_same_cores() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = d.join("load.toml");
    std::fs::write(
        &file,
        "name = \"load-cells\"\n\
         [matrix]\n\
         bindings = [\"udp\"]\n\
         sizes = [64, 128, 256]\n\
         load = [\"cpu\"]\n\
         [settings]\n\
         duration = \"300ms\"\n\
         warmup = \"0s\"\n",
    )
    .unwrap();
    let json = d.join("sweep.json");
    let o = bin()
        .args(["sweep", file.to_str().unwrap(), "--no-save", "--json"])
        .arg(&json)
        .current_dir(d)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cores: Vec<String> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["config"]["load"]["cores"]
                .as_str()
                .unwrap_or("-")
                .to_string()
        })
        .collect();
    let all = &v["environment"]["cores"];
    assert_eq!(cores.len(), 3, "{v}");
    assert!(cores.iter().all(|c| *c == cores[0]), "{cores:?}");
    assert_eq!(
        cores[0],
        format!("0-{}", all.as_u64().unwrap() - 1),
        "the stressors' cores are the process's: {cores:?}"
    );
    assert!(
        until(Duration::from_secs(3), || stressors().is_empty()),
        "stressors left behind"
    );
}
