//! Our RouDi config file: the mempools, its TOML text, and reading the
//! largest chunk (and the owner) back from a config file.

use std::fs;
use std::path::Path;

/// The built-in largest chunk of iceoryx 2.0's default config (user payload bytes).
pub const ICEORYX_DEFAULT_MAX_PAYLOAD: usize = 4 * 1024 * 1024;

/// Where our config files live: each in a private directory
/// `<prefix><run id>-XXXXXX/roudi.toml`.
pub const CONFIG_PREFIX: &str = "/tmp/pubsubperf-roudi-";

/// The comment line of our config that names the process that started RouDi.
const OWNER_TAG: &str = "# owner pid ";

/// One mempool of the RouDi config: `count` chunks of `size` user-payload
/// bytes (RouDi adds its own chunk header on top).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pool {
    /// User payload bytes per chunk.
    pub size: usize,
    /// Number of chunks.
    pub count: u32,
}

/// Headroom above each power-of-two pool size, for the user headers that
/// middleware put in front of a sample (CycloneDDS's iceoryx header).
pub const HEADROOM: usize = 4096;

/// Our mempools: every size class up to 256 MiB (plus [`HEADROOM`]), with
/// chunk counts shrinking with size so that the total stays near 1.3 GiB
/// (RouDi touches all of it at start, which takes seconds on a small
/// machine). Enough for ping-pong at 256 MiB (three chunks: two in flight,
/// one being loaned) and
/// for throughput at smaller sizes.
pub fn default_pools() -> Vec<Pool> {
    const K: usize = 1024;
    const M: usize = 1024 * 1024;
    [
        (256, 10_000),
        (K + 256, 5_000),
        (16 * K + 256, 1_000),
        (128 * K + 256, 256),
        (M + HEADROOM, 64),
        (4 * M + HEADROOM, 16),
        (16 * M + HEADROOM, 8),
        (64 * M + HEADROOM, 3),
        (256 * M + HEADROOM, 3),
    ]
    .into_iter()
    .map(|(size, count)| Pool { size, count })
    .collect()
}

/// The RouDi config file text (TOML, iceoryx 2.0 format) for `pools`; a
/// comment line names this process as the owner (see [`owner_of`]).
pub fn config_toml(pools: &[Pool]) -> String {
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let mut s = format!(
        "# Written by pubsubperf; removed when its RouDi stops.\n{OWNER_TAG}{pid}\n[general]\nversion = 1\n\n[[segment]]\n",
    );
    for p in pools {
        s.push_str(&format!(
            "\n[[segment.mempool]]\nsize = {}\ncount = {}\n",
            p.size, p.count
        ));
    }
    s
}

/// The process that started a RouDi with one of our config files (a file
/// under [`CONFIG_PREFIX`] written by [`config_toml`]); `None` for any other
/// file, i.e. a RouDi pubsubperf did not start.
pub fn owner_of(config: &Path) -> Option<i32> {
    if !config.to_string_lossy().starts_with(CONFIG_PREFIX) {
        return None;
    }
    fs::read_to_string(config)
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(OWNER_TAG)?.trim().parse().ok())
}

/// The largest user payload of a RouDi config file's text (the `size`
/// entries of its mempools), if it names any.
pub fn max_payload_of_config(toml: &str) -> Option<usize> {
    toml.lines()
        .filter_map(|l| {
            let l = l.split('#').next()?.trim();
            let (k, v) = l.split_once('=')?;
            (k.trim() == "size").then(|| v.trim().parse::<usize>().ok())?
        })
        .max()
}
