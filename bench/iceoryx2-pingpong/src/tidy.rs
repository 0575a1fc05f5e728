//! What a run leaves: nothing. Dropping the ports and the node removes
//! almost every file iceoryx2 made; the domain's last ones (the 16-byte
//! global management segment in /dev/shm and the empty `nodes` and
//! `services` directories under the root path) stay until the last node of
//! the machine is gone. After both sides have ended, with no iceoryx2 node
//! left on the machine, this removes them, as pubsubperf's binding does
//! (crates/iceoryx2/src/tidy.rs).

use iceoryx2::prelude::*;

type Svc = ipc::Service;

pub fn domain_leftovers() {
    let cfg = Config::global_config();
    let mut nodes = 0usize;
    let _ = Node::<Svc>::list(cfg, |_| {
        nodes += 1;
        CallbackProgression::Continue
    });
    if nodes > 0 {
        return;
    }
    // SAFETY: no iceoryx2 node exists on this machine; iceoryx2 allows the
    // segment's removal then (a node starting right now gets a unique id
    // all the same: ids carry the pid and the creation time).
    let _ = unsafe { iceoryx2::testing::remove_global_mgmt_segment::<Svc>(cfg) };
    let g = &cfg.global;
    let root = g.root_path().to_string();
    for dir in [g.node_dir().to_string(), g.service_dir().to_string(), root] {
        // Only empty directories go.
        let _ = std::fs::remove_dir(dir.trim_end_matches('/'));
    }
}
