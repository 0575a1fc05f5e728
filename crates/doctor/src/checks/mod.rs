//! The checks, a file a subject.

pub(crate) mod clock;
pub(crate) mod cpu;
pub(crate) mod kernel;
pub(crate) mod link;
pub(crate) mod process;
pub(crate) mod virt;

/// The `flags` of the first processor in a `/proc/cpuinfo`.
pub(crate) fn cpu_flags(cpuinfo: &str) -> Vec<&str> {
    cpuinfo
        .lines()
        .find(|l| l.starts_with("flags") || l.starts_with("Features"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, f)| f.split_whitespace().collect())
        .unwrap_or_default()
}
