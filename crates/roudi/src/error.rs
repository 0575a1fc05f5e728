//! What can go wrong when starting RouDi.

use crate::discovery::ROUDI_BIN;
use std::io;
use std::time::Duration;

/// Errors of [`Roudi::ensure`](crate::Roudi::ensure).
#[derive(Debug, thiserror::Error)]
pub enum RoudiError {
    /// `iox-roudi` is not installed.
    #[error("{ROUDI_BIN} not found in PATH (Debian: apt install iceoryx)")]
    NotInstalled,
    /// RouDi exited before it was ready.
    #[error("{ROUDI_BIN} exited before it was ready ({status}): {output}")]
    Exited {
        /// Its exit status.
        status: String,
        /// The end of its output.
        output: String,
    },
    /// RouDi did not say it was ready in time (it was stopped).
    #[error("{ROUDI_BIN} not ready within {0:?}: {1}")]
    NotReady(Duration, String),
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What failed.
        context: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Wraps an [`io::Error`] with what was being done.
pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(io::Error) -> RoudiError {
    let context = context.into();
    move |source| RoudiError::Io { context, source }
}
