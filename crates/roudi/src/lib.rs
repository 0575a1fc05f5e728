//! The iceoryx RouDi daemon (`iox-roudi`, iceoryx 2.0) for pubsubperf's
//! shared-memory runs (CycloneDDS over iceoryx, classic iceoryx).
//!
//! [`Roudi::ensure`] makes sure a RouDi runs:
//! - if one already runs (someone else's), it is used and left alone, and
//!   its largest chunk is read from its config file when its command line
//!   names one (otherwise iceoryx's built-in default, 4 MiB, is assumed);
//! - otherwise stale files of a dead RouDi are removed and one is started
//!   with our config ([`default_pools`]: chunks up to 256 MiB plus headers,
//!   about 1.3 GiB of shared memory in total), written to `roudi.toml` in
//!   a private directory made for it, `/tmp/pubsubperf-roudi-<run id>-XXXXXX`
//!   (mode 0700, mkdtemp; the files created new, mode 0600, so that no link
//!   planted in /tmp redirects a write); the call returns once RouDi says
//!   it is ready, or fails after a bounded wait with RouDi's own output.
//!
//! Dropping the returned [`Roudi`] stops a RouDi we started: SIGTERM, a
//! bounded wait, then SIGKILL, then removal of our files and, if RouDi did
//! not exit cleanly, of the files it left behind.
//!
//! ## RouDi must outlive its clients
//! An iceoryx runtime registers its *process* with RouDi and only
//! unregisters when the process exits (CycloneDDS keeps its runtime until
//! exit even after every entity is deleted). A RouDi that shuts down sends
//! SIGTERM to every registered process, and it aborts (leaving its shared
//! memory behind) when a registered client died less than ~1.5 s before.
//! So a process that is itself a client must not stop RouDi while it runs:
//! [`hold_until_exit`] keeps one RouDi per process and stops it at process
//! exit, after the iceoryx runtime has unregistered (C++ static destructors
//! registered later run first). If a client crashed shortly before, the
//! stop waits for RouDi's monitoring to drop it and, should RouDi still
//! abort, removes what it left.
//!
//! The publisher side of a run opens its binding before its subscribers
//! do, so the CLI process (the one that returns to the user) is the one
//! that starts RouDi; at exit it waits (5 s at most) for the other clients
//! when they are all its children (the run's subscriber processes), then
//! stops RouDi and reaps it (waitpid): no RouDi and no
//! zombie is left once the CLI returns, after success, an error or Ctrl-C.
//! Only when another client still runs after that wait does a detached
//! watcher take over (and RouDi, whose parent is gone by then, is reaped by
//! init).
//!
//! ## Files
//! - `config.rs`: our mempools and config file text, reading one back;
//! - `discovery.rs`: the executable, running RouDis, registered clients;
//! - `daemon.rs`: [`Roudi`], starting ours or reusing a running one, and
//!   stopping ours on drop;
//! - `hold.rs`: [`hold_until_exit`] and the watcher that outlives us;
//! - `files.rs`: what a RouDi leaves behind, and its removal;
//! - `error.rs`: [`RoudiError`].
//!
//! The tests are in `tests/`: `config.rs` (config text, no daemon) and
//! `lifecycle.rs` (a real RouDi started, reused and stopped).

mod config;
mod daemon;
mod discovery;
mod error;
mod files;
mod hold;

pub use config::{
    CONFIG_PREFIX, HEADROOM, ICEORYX_DEFAULT_MAX_PAYLOAD, Pool, config_toml, default_pools,
    max_payload_of_config, owner_of,
};
pub use daemon::{Options, Roudi};
pub use discovery::{ROUDI_BIN, RUNTIME_PREFIXES, Running, find_binary, live_clients, running};
pub use error::RoudiError;
pub use files::{clean_stale, leftover_files, stale_files};
pub use hold::{Held, hold_until_exit};
