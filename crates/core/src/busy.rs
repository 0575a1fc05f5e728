//! What a busy wait (`--wait busy`) does between two empty polls of a
//! middleware whose own threads deliver the samples: zenoh's receive
//! tasks, CycloneDDS's and Fast DDS's receive threads.

/// Yields the core (`sched_yield(2)`) between two empty polls of a busy
/// wait on a middleware that delivers on its own threads.
///
/// A poller that only spins keeps its core from any of those threads the
/// scheduler places there until its time slice ends: on a 2-core machine,
/// 1 KiB round trips through Fast DDS had a p99 of 0.9-1.1 ms beside
/// 63-70 µs with a yield, CycloneDDS's 0.19-0.38 ms beside 36-37 µs, and
/// zenoh's about 2 ms beside 56-76 µs. The p50 moved from 36-38 to 38-42 µs
/// (Fast DDS), from 21-22 to 26-27 µs (CycloneDDS) and from 48-53 to
/// 39-52 µs (zenoh).
/// The poller still never sleeps: with nothing else runnable on its core
/// the yield returns at once and it polls again. Loops that poll memory
/// or a socket of their own (shm, iceoryx2, the socket baselines) spin,
/// as nothing of the middleware needs their core.
#[inline]
pub fn yield_between_polls() {
    std::thread::yield_now();
}
