//! Where the tests of this package find what the build scripts made: the
//! repository, its target directory, and the host's release binary.
//!
//! The tests themselves are in `tests/`: `emulated.rs` (the aarch64 and
//! armhf cross builds under qemu-user), `install.rs` (scripts/install.sh
//! and the Debian packages), `static_build.rs` (the static builds).
//! scripts/test.sh runs them after building those files beside the other
//! tests; each test fails naming the script that makes what it misses.

use std::path::{Path, PathBuf};

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The target directory the scripts build into (`./target`, which may
/// link to scripts/test.sh's build cache).
pub fn target_dir() -> PathBuf {
    root().join("target")
}

/// The host's release binary (`cargo build --release -p pubsubperf`);
/// fails naming that command when it is missing.
pub fn host_binary() -> PathBuf {
    let bin = target_dir().join("release/pubsubperf");
    assert!(
        bin.is_file(),
        "the host's release build is missing at {}: cargo build --release -p pubsubperf (scripts/test.sh does)",
        bin.display()
    );
    bin
}
