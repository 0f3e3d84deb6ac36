// SPDX-License-Identifier: GPL-2.0
//! Errors of the srnic library.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong talking to `/dev/srnic`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The device node could not be opened (module not loaded, or no permission).
    #[error("cannot open {path}: {source}")]
    Open {
        /// The path that was opened.
        path: PathBuf,
        /// The reason.
        source: io::Error,
    },
    /// A call into the module failed with an errno.
    #[error("{op}: {source}")]
    Os {
        /// The operation, e.g. "SRNIC_IOCTL_QUERY_DEVICE".
        op: &'static str,
        /// The errno the module returned.
        source: io::Error,
    },
    /// The module speaks a different ABI version than this library.
    #[error("srnic ABI version mismatch: module {module}, library {library}")]
    AbiMismatch {
        /// The module's version.
        module: u32,
        /// This library's version.
        library: u32,
    },
}

impl Error {
    /// The errno behind this error, if there is one.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::Open { source, .. } | Error::Os { source, .. } => source.raw_os_error(),
            Error::AbiMismatch { .. } => None,
        }
    }
}

/// Result type of the srnic library.
pub type Result<T> = std::result::Result<T, Error>;
