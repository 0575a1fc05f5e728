//! The `iceoryx2` binding of pubsubperf: publish-subscribe over the
//! [iceoryx2](https://crates.io/crates/iceoryx2) crate (zero-copy shared
//! memory between processes, no daemon).
//!
//! - **Payload**: an iceoryx2 slice `[u8]` whose length iceoryx2 carries in
//!   its sample header (`--data-type bytes`). Each publisher's data segment
//!   holds fixed-size chunks of the run's largest sample
//!   (`initial_max_slice_len`, static allocation), so nothing grows during
//!   a run.
//! - **Zero copy** (`--zero-copy`): the writer loans a chunk, the harness
//!   fills it in place, the reader reads the borrowed chunk in place. Without
//!   the flag the binding copies like an application that keeps its data in
//!   its own buffers: the writer copies its private buffer into the loan
//!   (`write_from_slice`), the reader copies the sample out before using it.
//! - **Waits**: `--wait busy` spins on `Subscriber::receive`; `--wait block`
//!   pairs each publish-subscribe service with an iceoryx2 event service: the
//!   writer notifies after each send, the reader blocks in
//!   `Listener::timed_wait` for at most 100 ms at a time.
//! - **Reliability**: reliable = no safe overflow and a blocking publisher
//!   (bounded by `--reliable-block-timeout`); best effort = safe overflow, the
//!   oldest queued sample is replaced and the reader sees the gap.
//! - **Clean-up**: every run uses its own service names (run id), removes the
//!   resources of dead iceoryx2 nodes (earlier runs killed with SIGKILL) when
//!   it opens and when it ends, and the last iceoryx2 node on the machine to
//!   end removes the domain's remaining files (see [`tidy`]).

mod binding;
pub mod tidy;

pub use binding::{
    Iceoryx2, Iceoryx2Reader, Iceoryx2Writer, MAX_SAMPLE, QUEUE_BYTES, buffer_size, service_name,
};
