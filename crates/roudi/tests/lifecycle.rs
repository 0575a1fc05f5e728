//! Starts a real RouDi, reuses it, stops it, and checks nothing is left.

use pubsubperf_roudi::{Options, Pool, Roudi, find_binary, running, stale_files};
use std::path::Path;

#[test]
fn start_reuse_stop_leaves_nothing() {
    if find_binary().is_none() {
        eprintln!("skipped: iox-roudi not installed");
        return;
    }
    if !running().is_empty() {
        eprintln!("skipped: a RouDi already runs on this host (it is not ours to stop)");
        return;
    }
    let mut opts = Options::new(&format!("lifecycle-{}", std::process::id()));
    // Small pools: starts in well under a second.
    opts.pools = vec![Pool {
        size: 1024,
        count: 100,
    }];
    let ours = Roudi::ensure(&opts).expect("start RouDi");
    assert!(ours.is_owned());
    assert_eq!(ours.max_payload(), 1024);
    assert!(Path::new("/tmp/roudi").exists(), "RouDi's socket");
    let again = Roudi::ensure(&opts).expect("reuse RouDi");
    assert!(!again.is_owned());
    assert_eq!(again.pid(), ours.pid());
    assert_eq!(again.max_payload(), 1024, "read from our config file");
    drop(again);
    assert!(
        running().iter().any(|r| r.pid == ours.pid()),
        "reuse must not stop it"
    );
    let pid = ours.pid();
    drop(ours);
    assert!(!running().iter().any(|r| r.pid == pid), "still running");
    assert!(stale_files().is_empty(), "left: {:?}", stale_files());
    let tag = format!("lifecycle-{}", std::process::id());
    let left: Vec<_> = std::fs::read_dir("/tmp")
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(&tag))
        .collect();
    assert!(left.is_empty(), "our config/log files remain");
}
