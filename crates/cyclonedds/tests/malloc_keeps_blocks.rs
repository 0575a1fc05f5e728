//! `--opt malloc=keep` (the default): once applied, a block of a few MiB
//! comes from glibc's heap instead of a fresh `mmap` (its own test binary:
//! a fresh process, whose allocator has not been tuned by anything yet).
#![cfg(target_env = "gnu")]

use pubsubperf_cyclonedds::malloc::{Malloc, apply};

/// Blocks glibc holds as separate mappings.
fn mapped_blocks() -> usize {
    // SAFETY: mallinfo2 only reads the allocator's counters.
    unsafe { libc::mallinfo2() }.hblks
}

/// Allocates `size` bytes (kept from the optimiser, which drops an
/// allocation nobody reads); the block, and whether glibc mapped it afresh.
fn allocate(size: usize) -> (*mut libc::c_void, bool) {
    let before = mapped_blocks();
    // SAFETY: a plain malloc; the caller frees the block.
    let p = std::hint::black_box(unsafe { libc::malloc(size) });
    assert!(!p.is_null(), "malloc({size}) failed");
    (p, mapped_blocks() > before)
}

#[test]
fn kept_blocks_come_from_the_heap_not_a_fresh_mapping() {
    assert!(
        std::env::var("GLIBC_TUNABLES").is_err(),
        "GLIBC_TUNABLES is set: the allocator's thresholds are the user's; unset it to run this test"
    );
    // None is freed before the last: a free would raise glibc's threshold.
    let (untuned, mapped) = allocate(2 << 20);
    assert!(
        mapped,
        "glibc should map a 2 MiB block of its own before any tuning"
    );
    apply(Malloc::Default);
    let (still, mapped) = allocate(3 << 20);
    assert!(mapped, "malloc=default leaves glibc's allocator as it is");
    apply(Malloc::Keep);
    let (kept, mapped) = allocate(4 << 20);
    assert!(
        !mapped,
        "with malloc=keep a 4 MiB block comes from the heap"
    );
    for p in [kept, still, untuned] {
        // SAFETY: blocks allocated above, freed once.
        unsafe { libc::free(p) };
    }
}
