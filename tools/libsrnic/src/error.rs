// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Errors of the srnic library: every failure keeps the errno behind it, so that
//! callers (and the C ABI) can tell a bad handle from a busy object or a full queue.

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
    /// A batch of work requests was posted only in part: the first `posted`
    /// requests are on the queue, request number `posted` failed with `source`
    /// and none after it was posted (ibverbs' `bad_wr`).
    #[error("post: {posted} work requests posted, the next failed: {source}")]
    Post {
        /// How many work requests of the batch were posted.
        posted: usize,
        /// Why the next one could not be posted.
        source: io::Error,
    },
    /// The peer rejected the connection (an MPA reply with the reject bit).
    #[error("connection rejected by the peer ({} bytes of private data)", private_data.len())]
    Rejected {
        /// The private data of the peer's reject reply.
        private_data: Vec<u8>,
    },
    /// Connection establishment failed (SRNIC_EVENT_CONNECT_ERROR).
    #[error("connection failed: {source}")]
    ConnectFailed {
        /// The errno the module reported in the event's status.
        source: io::Error,
    },
    /// The queue pair left the connected state while the caller waited for it to
    /// be established (a QP_ERROR or DISCONNECTED event).
    #[error("queue pair {qp}: {what} (term {term:#x})")]
    QpFailed {
        /// The QP handle.
        qp: u32,
        /// "disconnected" or "error".
        what: &'static str,
        /// The TERMINATE word, as in [`crate::WorkCompletion::term`] (0 if none).
        term: u32,
    },
    /// The completion queue overflowed (SRNIC_EVENT_CQ_ERROR); completions were lost.
    #[error("completion queue {cq} overflowed")]
    CqOverflow {
        /// The CQ handle.
        cq: u32,
    },
    /// A work request completed with an error status.
    #[error("work request {wr_id:#x} ({opcode}) completed with {status}")]
    Completion {
        /// The work request id.
        wr_id: u64,
        /// What the completion reports.
        status: crate::WcStatus,
        /// The completion's opcode.
        opcode: crate::WcOpcode,
    },
    /// A wait with a timeout expired.
    #[error("timed out")]
    TimedOut,
    /// An argument the library checks before calling the module is invalid.
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The module returned something this library cannot interpret (a read() that
    /// is not a whole number of event records, a short write() inside a record).
    #[error("unexpected answer from the module: {0}")]
    Protocol(String),
}

impl Error {
    pub(crate) fn os(op: &'static str) -> impl FnOnce(io::Error) -> Error {
        move |source| Error::Os { op, source }
    }

    /// The errno behind this error, if there is one from the operating system.
    pub fn raw_os_error(&self) -> Option<i32> {
        match self {
            Error::Open { source, .. }
            | Error::Os { source, .. }
            | Error::Post { source, .. }
            | Error::ConnectFailed { source } => source.raw_os_error(),
            _ => None,
        }
    }

    /// An errno for every error (what the C ABI returns, negated): the operating
    /// system's where there is one, else the closest one.
    pub fn errno(&self) -> i32 {
        if let Some(e) = self.raw_os_error() {
            return e;
        }
        match self {
            Error::AbiMismatch { .. } => libc::EPROTO,
            Error::Rejected { .. } => libc::ECONNREFUSED,
            Error::QpFailed { .. } => libc::ECONNRESET,
            Error::CqOverflow { .. } => libc::EOVERFLOW,
            Error::Completion { .. } => libc::EIO,
            Error::TimedOut => libc::ETIMEDOUT,
            Error::InvalidArgument(_) => libc::EINVAL,
            Error::Protocol(_) => libc::EPROTO,
            _ => libc::EIO,
        }
    }

    /// Whether the module did not know the handle (it answers ENOENT or EINVAL;
    /// the ABI treats both as "bad handle").
    pub fn is_bad_handle(&self) -> bool {
        matches!(self, Error::Os { .. }) && matches!(self.errno(), libc::ENOENT | libc::EINVAL)
    }

    /// Whether the object is still in use (EBUSY: a PD with MRs or QPs, a CQ with QPs).
    pub fn is_busy(&self) -> bool {
        self.raw_os_error() == Some(libc::EBUSY)
    }
}

/// Result type of the srnic library.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    fn os(errno: i32) -> Error {
        Error::Os {
            op: "x",
            source: io::Error::from_raw_os_error(errno),
        }
    }

    #[test]
    fn errno_is_preserved() {
        assert_eq!(os(libc::EBUSY).raw_os_error(), Some(libc::EBUSY));
        assert_eq!(os(libc::EBUSY).errno(), libc::EBUSY);
        assert!(os(libc::EBUSY).is_busy());
        let p = Error::Post {
            posted: 3,
            source: io::Error::from_raw_os_error(libc::ENOMEM),
        };
        assert_eq!(p.errno(), libc::ENOMEM);
        assert!(p.to_string().contains("3 work requests posted"));
        let c = Error::ConnectFailed {
            source: io::Error::from_raw_os_error(libc::ECONNREFUSED),
        };
        assert_eq!(c.errno(), libc::ECONNREFUSED);
    }

    #[test]
    fn bad_handle_is_enoent_or_einval() {
        assert!(os(libc::ENOENT).is_bad_handle());
        assert!(os(libc::EINVAL).is_bad_handle());
        assert!(!os(libc::EBUSY).is_bad_handle());
        assert!(!Error::InvalidArgument("x").is_bad_handle());
    }

    #[test]
    fn library_errors_map_to_errnos() {
        assert_eq!(Error::TimedOut.errno(), libc::ETIMEDOUT);
        assert_eq!(Error::TimedOut.raw_os_error(), None);
        assert_eq!(Error::InvalidArgument("x").errno(), libc::EINVAL);
        assert_eq!(Error::CqOverflow { cq: 1 }.errno(), libc::EOVERFLOW);
        assert_eq!(
            Error::Rejected {
                private_data: vec![]
            }
            .errno(),
            libc::ECONNREFUSED
        );
        assert_eq!(Error::Protocol("x".into()).errno(), libc::EPROTO);
        assert_eq!(
            Error::AbiMismatch {
                module: 2,
                library: 1
            }
            .errno(),
            libc::EPROTO
        );
        assert_eq!(
            Error::QpFailed {
                qp: 1,
                what: "error",
                term: 0
            }
            .errno(),
            libc::ECONNRESET
        );
    }
}
