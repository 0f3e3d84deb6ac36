// SPDX-License-Identifier: GPL-2.0
//! Why a QP's connection failed: the one failure type of its data path, and
//! what each failure means for the work requests it ends.

use crate::{
    sys::errno::{enetdown, etimedout},
    proto::rdmap::{engine::EngineError, etype, layer, TermCode, Terminate},
    uapi::*,
};

/// The bit of the `SrnicWc::term` word that says the TERMINATE was received.
const TERM_RECEIVED: u32 = 1 << 31;

/// A failure that ends the connection and moves the QP to ERROR.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Failure {
    /// srnic found the peer's error: this TERMINATE goes to the peer.
    Detected(Terminate),
    /// The peer reported an error with this TERMINATE.
    Received(Terminate),
    /// The stream ended inside a message, with no TERMINATE either way.
    Closed,
    /// The peer left sent data unacknowledged, or its receive window closed
    /// (it stopped reading), for the stall timeout: TCP gave the connection
    /// up, so no TERMINATE can be sent.
    TimedOut,
    /// The interface the connection went through went down or away (the
    /// netdevice notifier aborted it, see `sys/netdev.rs`): no TERMINATE.
    LinkDown,
}

impl Failure {
    /// The failure a receive-side TERMINATE code stands for.
    pub(crate) fn detected(code: TermCode) -> Self {
        Failure::Detected(Terminate::new(code, None))
    }

    /// The TERMINATE srnic must send, if any.
    pub(crate) fn to_send(&self) -> Option<Terminate> {
        match self {
            Failure::Detected(t) => Some(*t),
            _ => None,
        }
    }

    /// The TERMINATE, sent or received.
    pub(crate) fn terminate(&self) -> Option<&Terminate> {
        match self {
            Failure::Detected(t) | Failure::Received(t) => Some(t),
            Failure::Closed | Failure::TimedOut | Failure::LinkDown => None,
        }
    }

    /// The `SrnicWc::term` word: layer, type and code, and bit 31 when the
    /// TERMINATE was received; 0 without one.
    pub(crate) fn term_word(&self) -> u32 {
        let Some(t) = self.terminate() else { return 0 };
        let word = u32::from(t.layer) << 12 | u32::from(t.etype) << 8 | u32::from(t.ecode);
        match self {
            Failure::Received(_) => word | TERM_RECEIVED,
            _ => word,
        }
    }

    /// The `SrnicEvent::status` of the QP_ERROR report: `-errno` of the
    /// socket's failure, 0 for a TERMINATE or a stream that ended.
    pub(crate) fn event_status(&self) -> i32 {
        match self {
            Failure::TimedOut => etimedout().to_errno(),
            Failure::LinkDown => enetdown().to_errno(),
            _ => 0,
        }
    }

    /// The status of the oldest operation in progress: a TERMINATE from the
    /// peer fails it (remote access errors for a DDP tagged-buffer or RDMAP
    /// remote-protection error, remote operation errors otherwise), a peer that
    /// stopped answering fails it with the retry error (as a hardware RNIC's
    /// transport retry limit would); everything else is flushed.
    pub(crate) fn head_status(&self) -> u32 {
        match self {
            Failure::Received(t)
                if (t.layer == layer::DDP && t.etype == etype::DDP_TAGGED)
                    || (t.layer == layer::RDMAP && t.etype == etype::RDMAP_REMOTE_PROTECTION) =>
            {
                SRNIC_WC_REM_ACCESS_ERR
            }
            Failure::Received(_) => SRNIC_WC_REM_OP_ERR,
            Failure::TimedOut => SRNIC_WC_RETRY_EXC_ERR,
            _ => SRNIC_WC_WR_FLUSH_ERR,
        }
    }
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Terminate(_, t) => Failure::Detected(t),
            EngineError::Closed => Failure::Closed,
        }
    }
}
