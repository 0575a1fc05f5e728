//! `--opt malloc=keep|default`: whether this process's C allocator keeps
//! freed large blocks for reuse while CycloneDDS runs in it.
//!
//! CycloneDDS receives into buffers (and builds samples) it allocates with
//! `malloc` and frees once the samples are gone. glibc serves a block of
//! 128 KiB or more with a fresh `mmap` and unmaps it on `free`, until a
//! free of such a block raises its threshold (glibc's dynamic threshold).
//! Whether that happens depends on the order of a process's allocations:
//! in one 1 MiB ddsperf ping/pong pair the ping process took 3 455 page
//! faults in 5 s and the pong 293 112 (the kernel's copy of each datagram
//! into a fresh receive buffer faulting page by page); ours took 601 825
//! over both processes, with p50 635 µs beside 467 µs with blocks kept.
//! `keep` (default) sets, once per process, what the dynamic threshold
//! would reach (`M_MMAP_THRESHOLD` 32 MiB, glibc's largest; `M_TRIM_THRESHOLD`
//! twice that), so that no run depends on that luck; `default` leaves
//! glibc's allocator as it is. Where the user set either threshold
//! through `GLIBC_TUNABLES` or `MALLOC_*_THRESHOLD_`, glibc's settings
//! stand in both cases.

/// What `--opt malloc` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Malloc {
    /// Keep freed blocks of up to 32 MiB for reuse (the default).
    #[default]
    Keep,
    /// Leave glibc's allocator as it is.
    Default,
}

impl Malloc {
    /// Parses the value of `--opt malloc`.
    pub fn parse(v: &str) -> Option<Malloc> {
        match v {
            "keep" => Some(Malloc::Keep),
            "default" => Some(Malloc::Default),
            _ => None,
        }
    }
}

/// The largest block glibc serves from its heap with [`Malloc::Keep`].
pub const MMAP_THRESHOLD: usize = 32 << 20;

/// True when the user set glibc's mmap or trim threshold.
fn user_set() -> bool {
    let tunables = std::env::var("GLIBC_TUNABLES").unwrap_or_default();
    tunables.contains("glibc.malloc.mmap_threshold")
        || tunables.contains("glibc.malloc.trim_threshold")
        || std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some()
        || std::env::var_os("MALLOC_TRIM_THRESHOLD_").is_some()
}

/// Applies `m` to this process (once: the first binding that keeps blocks
/// sets the thresholds, which no later one undoes).
pub fn apply(m: Malloc) {
    static KEEP: std::sync::Once = std::sync::Once::new();
    if m == Malloc::Keep && !user_set() {
        KEEP.call_once(keep_freed_blocks);
    }
}

#[cfg(target_env = "gnu")]
fn keep_freed_blocks() {
    // SAFETY: mallopt only changes the allocator's thresholds.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, (2 * MMAP_THRESHOLD) as libc::c_int);
    }
}

#[cfg(not(target_env = "gnu"))]
fn keep_freed_blocks() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_values_parse_and_others_do_not() {
        assert_eq!(Malloc::parse("keep"), Some(Malloc::Keep));
        assert_eq!(Malloc::parse("default"), Some(Malloc::Default));
        assert_eq!(Malloc::parse("yes"), None);
        assert_eq!(Malloc::default(), Malloc::Keep);
    }
}
