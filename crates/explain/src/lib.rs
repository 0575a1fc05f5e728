//! The kernel's account of a run: what the scheduler, interrupts and idle
//! states did to the measuring threads and on the measuring CPUs while a
//! run measured, recorded by an eBPF program (libbpf-rs) for `--explain`.
//!
//! [`Recorder::start`] loads the program and attaches it to the kernel's
//! BTF tracepoints (root, a kernel with BTF at /sys/kernel/btf/vmlinux);
//! [`Recorder::watch`] adds a measuring thread (any process's, by tid);
//! [`Recorder::finish`] detaches and hands over the [`Recording`]. Nothing
//! is read while the run measures: the records wait in one ring buffer in
//! the kernel, and a record that finds it full is counted
//! ([`Recording::lost`]), never silently dropped.

mod account;
mod error;
mod event;
mod noise;
mod recorder;
mod timeline;

pub use account::{Cuts, Side, account};
pub use error::ExplainError;
pub use event::{KernelEvent, Task};
pub use noise::{CpuNoise, Source, summarize, text, trace};
pub use recorder::{Recorder, Recording, can_run};
