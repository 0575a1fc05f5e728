//! Why the kernel's account cannot be recorded.

/// Why [`crate::Recorder`] cannot record; each names the fix.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// Loading eBPF programs needs root (CAP_BPF and CAP_PERFMON).
    #[error("--explain: loading the kernel probes needs root (CAP_BPF, CAP_PERFMON): {0}")]
    NotPermitted(String),
    /// The kernel lacks BTF or one of the tracepoints.
    #[error(
        "--explain: the kernel cannot take the probes ({0}); it needs BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF) and BPF (CONFIG_BPF_SYSCALL, CONFIG_BPF_EVENTS)"
    )]
    Kernel(String),
    /// A CPU beyond the 64 the program's mask holds.
    #[error("--explain: CPU {0} is beyond the 64 the kernel probes watch")]
    Cpu(usize),
    /// Any other failure of libbpf.
    #[error("--explain: {0}")]
    Bpf(String),
}

impl ExplainError {
    /// Sorts libbpf's error by its cause.
    pub(crate) fn from_bpf(what: &str, e: &libbpf_rs::Error) -> ExplainError {
        let text = format!("{what}: {e}");
        match e.kind() {
            libbpf_rs::ErrorKind::PermissionDenied => ExplainError::NotPermitted(text),
            libbpf_rs::ErrorKind::NotFound | libbpf_rs::ErrorKind::Unsupported => {
                ExplainError::Kernel(text)
            }
            _ => ExplainError::Bpf(text),
        }
    }
}
