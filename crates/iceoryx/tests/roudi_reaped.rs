//! The RouDi a CLI run starts has exited and been reaped (no process, no
//! zombie) by the time the CLI returns: after a run that succeeds, one cut
//! short by Ctrl-C and one that fails because its subscriber died.

use pubsubperf_testkit::process::{
    expect_failure_within, interrupt, kill9, require_cli_binary, start_run,
};
use pubsubperf_testkit::roudi;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::Duration;

/// One RouDi per host: these tests take turns.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A latency run over iceoryx long enough to be interrupted.
const LONG: [&str; 9] = [
    "latency",
    "-b",
    "iceoryx",
    "-d",
    "60s",
    "--warmup",
    "0s",
    "--no-save",
    "--rate",
];

/// Takes this test's turn and starts a long latency run over iceoryx at
/// 1000 pings/s; returns once it is under way, with its subscriber's pid.
fn start_long() -> (std::sync::MutexGuard<'static, ()>, Child, u32) {
    let s = serial();
    roudi::require_alone();
    let args = [&LONG[..], &["1000"]].concat();
    let (run, sub) = start_run(&require_cli_binary(), &args, Duration::from_secs(60));
    (s, run, sub)
}

#[test]
fn roudi_is_reaped_when_a_run_succeeds() {
    let _s = serial();
    roudi::require_alone();
    let bin = require_cli_binary();
    let o = Command::new(&bin)
        .args(["latency", "-b", "iceoryx", "-n", "200", "-q", "--no-save"])
        .output()
        .expect("runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    roudi::assert_no_roudi_process("a successful run");
    roudi::assert_nothing_left("pubsubperf_iox_");
}

#[test]
fn roudi_is_reaped_when_a_run_is_interrupted() {
    let (_s, mut run, _sub) = start_long();
    interrupt(run.id());
    let st = run.wait().expect("wait");
    assert!(st.code().is_some(), "the run died of a signal: {st}");
    roudi::assert_no_roudi_process("a run stopped by Ctrl-C");
    roudi::assert_nothing_left("pubsubperf_iox_");
}

#[test]
fn roudi_is_reaped_when_a_run_fails() {
    let (_s, mut run, sub) = start_long();
    kill9(sub);
    expect_failure_within(&mut run, Duration::from_secs(30));
    roudi::assert_no_roudi_process("a run that failed");
    roudi::assert_nothing_left("pubsubperf_iox_");
}
