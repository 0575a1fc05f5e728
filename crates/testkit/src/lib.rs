//! pubsubperf's test kit, for the tests of every crate (a dev-dependency
//! only):
//!
//! - [`conformance`]: the binding conformance suite, the contract of
//!   [`Binding`](pubsubperf_core::Binding) written once and instantiated in
//!   each binding's `tests/conformance.rs` with [`conformance_suite!`];
//! - [`config`]: chainable test configurations,
//!   `EndpointConfig::for_test(id).transport("udp").busy()`;
//! - [`process`]: the CLI binary of this build, child processes, SIGKILL and
//!   waiting until a process is gone;
//! - [`peer`]: this test binary as a peer process (a test of its own run in
//!   a child), to kill it or to check what its end leaves;
//! - [`roudi`]: the checks around a run over iceoryx's RouDi (installed,
//!   alone, nothing left behind);
//! - [`groups`]: the multicast groups the kernel says are joined;
//! - [`postgres`]: a PostgreSQL server of a test's own (the results
//!   store's tests), stopped when its guard is dropped;
//! - [`require`]: prerequisites (root, a command, a library, a daemon) that
//!   fail the test naming what is missing instead of letting it pass
//!   unchecked.

pub mod chromium;
pub mod config;
pub mod conformance;
pub mod groups;
pub mod listing;
pub mod peer;
pub mod postgres;
pub mod process;
pub mod require;
pub mod roudi;

pub use config::TestConfig;
/// The core crate, for the macros' paths.
pub use pubsubperf_core;
