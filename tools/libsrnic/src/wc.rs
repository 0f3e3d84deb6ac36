// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Work completions (ibverbs' `ibv_wc`): what `SRNIC_IOCTL_POLL_CQ` returns, with
//! typed status and opcode enums that keep values this library does not know.

use crate::error::Error;
use srnic_uapi as abi;

abi_enum! {
    /// Completion status (`SRNIC_WC_*`, the ibverbs numbering); displayed as
    /// ibverbs' `ibv_wc_status_str` spells it.
    pub enum WcStatus: "SRNIC_WC_", unknown "unknown status {}" {
        /// The work request completed.
        Success = SRNIC_WC_SUCCESS => "success",
        /// Local length error (a receive too small for the message).
        LocLenErr = SRNIC_WC_LOC_LEN_ERR => "local length error",
        /// Local QP operation error.
        LocQpOpErr = SRNIC_WC_LOC_QP_OP_ERR => "local QP operation error",
        /// Local protection error (bad lkey or range).
        LocProtErr = SRNIC_WC_LOC_PROT_ERR => "local protection error",
        /// Flushed: the QP left the connected state before the request ran.
        WrFlushErr = SRNIC_WC_WR_FLUSH_ERR => "Work Request Flushed Error",
        /// Local access error.
        LocAccessErr = SRNIC_WC_LOC_ACCESS_ERR => "local access error",
        /// The peer found the request invalid.
        RemInvReqErr = SRNIC_WC_REM_INV_REQ_ERR => "remote invalid request error",
        /// The peer refused access (bad rkey, range or rights).
        RemAccessErr = SRNIC_WC_REM_ACCESS_ERR => "remote access error",
        /// The peer failed the operation.
        RemOpErr = SRNIC_WC_REM_OP_ERR => "remote operation error",
        /// No answer from the peer in time (RMPP retries, or an iWARP peer
        /// that stopped reading or acknowledging).
        RetryExcErr = SRNIC_WC_RETRY_EXC_ERR => "transport retry counter exceeded",
        /// RMPP: the sender aborted the message, or it was reclaimed.
        RemAbortErr = SRNIC_WC_REM_ABORT_ERR => "remote abort error",
        /// Fatal error.
        FatalErr = SRNIC_WC_FATAL_ERR => "fatal error",
        /// Any other error.
        GeneralErr = SRNIC_WC_GENERAL_ERR => "general error",
    }
}

abi_enum! {
    /// Completion opcode (`SRNIC_WC_SEND` ...), displayed as the constant's name
    /// (`rdma-write`).
    pub enum WcOpcode: "SRNIC_WC_", unknown "opcode {}" {
        /// A send of any kind.
        Send = SRNIC_WC_SEND,
        /// An RDMA WRITE.
        RdmaWrite = SRNIC_WC_RDMA_WRITE,
        /// An RDMA READ.
        RdmaRead = SRNIC_WC_RDMA_READ,
        /// A receive.
        Recv = SRNIC_WC_RECV,
        /// An RMPP send.
        RmppSend = SRNIC_WC_RMPP_SEND,
        /// An RMPP receive.
        RmppRecv = SRNIC_WC_RMPP_RECV,
        /// A VMTP client's transaction ended.
        VmtpResponse = SRNIC_WC_VMTP_RESPONSE,
        /// A Request arrived at a VMTP server.
        VmtpRequest = SRNIC_WC_VMTP_REQUEST,
        /// A VMTP server's Response is done with.
        VmtpResponded = SRNIC_WC_VMTP_RESPONDED,
    }
}

/// A decoded TERMINATE word (`layer << 12 | type << 8 | code`, bit 31: received).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Terminate {
    /// The layer (0 RDMAP, 1 DDP, 2 MPA).
    pub layer: u8,
    /// The error type within the layer.
    pub etype: u8,
    /// The error code.
    pub code: u8,
    /// Whether srnic received it (else it sent it).
    pub received: bool,
}

impl Terminate {
    /// Decodes `term`; `None` for 0 (no TERMINATE).
    pub fn from_word(term: u32) -> Option<Self> {
        if term == 0 {
            return None;
        }
        Some(Self {
            layer: ((term >> 12) & 0xf) as u8,
            etype: ((term >> 8) & 0xf) as u8,
            code: (term & 0xff) as u8,
            received: term & (1 << 31) != 0,
        })
    }
}

/// A work completion. `#[repr(transparent)]` over `struct srnic_wc`, so an
/// array of them is what `SRNIC_IOCTL_POLL_CQ` fills.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkCompletion(pub abi::SrnicWc);

impl WorkCompletion {
    /// The id given to the work request.
    pub fn wr_id(&self) -> u64 {
        self.0.wr_id
    }

    /// The status.
    pub fn status(&self) -> WcStatus {
        self.0.status.into()
    }

    /// Whether the status is success.
    pub fn is_success(&self) -> bool {
        self.0.status == abi::SRNIC_WC_SUCCESS
    }

    /// `Ok(self)` on success, else an [`Error::Completion`].
    pub fn ok(&self) -> Result<&Self, Error> {
        if self.is_success() {
            Ok(self)
        } else {
            Err(Error::Completion {
                wr_id: self.wr_id(),
                status: self.status(),
                opcode: self.opcode(),
            })
        }
    }

    /// The opcode.
    pub fn opcode(&self) -> WcOpcode {
        self.0.opcode.into()
    }

    /// Bytes received (receives) or transferred.
    pub fn byte_len(&self) -> u32 {
        self.0.byte_len
    }

    /// The QP handle it belongs to.
    pub fn qp_handle(&self) -> u32 {
        self.0.qp_handle
    }

    /// The rkey (STag) a Send with Invalidate invalidated, if any (ibverbs'
    /// `invalidated_rkey`).
    pub fn invalidated_rkey(&self) -> Option<u32> {
        (self.0.flags & abi::SRNIC_WC_WITH_INV != 0).then_some(self.0.invalidated_stag)
    }

    /// Whether it is a receive of a Send with Solicited Event.
    pub fn is_solicited(&self) -> bool {
        self.0.flags & abi::SRNIC_WC_SOLICITED != 0
    }

    /// The TERMINATE that ended the QP, if any.
    pub fn term(&self) -> Option<Terminate> {
        Terminate::from_word(self.0.term)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_mapping_follows_the_abi() {
        let known = [
            (0, WcStatus::Success),
            (1, WcStatus::LocLenErr),
            (2, WcStatus::LocQpOpErr),
            (4, WcStatus::LocProtErr),
            (5, WcStatus::WrFlushErr),
            (8, WcStatus::LocAccessErr),
            (9, WcStatus::RemInvReqErr),
            (10, WcStatus::RemAccessErr),
            (11, WcStatus::RemOpErr),
            (12, WcStatus::RetryExcErr),
            (16, WcStatus::RemAbortErr),
            (19, WcStatus::FatalErr),
            (21, WcStatus::GeneralErr),
        ];
        for (v, s) in known {
            assert_eq!(WcStatus::from(v), s);
            assert_eq!(u32::from(s), v);
        }
        for v in [3u32, 6, 13, 22, 1000, u32::MAX] {
            assert_eq!(WcStatus::from(v), WcStatus::Unknown(v));
            assert_eq!(u32::from(WcStatus::from(v)), v);
        }
        assert_eq!(WcStatus::Unknown(3).to_string(), "unknown status 3");
    }

    #[test]
    fn opcode_mapping_follows_the_abi() {
        for (v, o) in [
            (0, WcOpcode::Send),
            (1, WcOpcode::RdmaWrite),
            (2, WcOpcode::RdmaRead),
            (128, WcOpcode::Recv),
            (192, WcOpcode::RmppSend),
            (193, WcOpcode::RmppRecv),
            (194, WcOpcode::VmtpResponse),
            (195, WcOpcode::VmtpRequest),
            (196, WcOpcode::VmtpResponded),
        ] {
            assert_eq!(WcOpcode::from(v), o);
            assert_eq!(u32::from(o), v);
        }
        assert_eq!(WcOpcode::from(3), WcOpcode::Unknown(3));
        assert_eq!(u32::from(WcOpcode::Unknown(129)), 129);
        assert_eq!(WcOpcode::RdmaWrite.to_string(), "rdma-write");
        assert_eq!(WcOpcode::RmppRecv.to_string(), "rmpp-recv");
        assert_eq!(WcOpcode::Unknown(3).to_string(), "opcode 3");
    }

    #[test]
    fn completion_accessors() {
        let wc = WorkCompletion(abi::SrnicWc {
            wr_id: 42,
            status: abi::SRNIC_WC_REM_ACCESS_ERR,
            opcode: abi::SRNIC_WC_RDMA_WRITE,
            flags: abi::SRNIC_WC_WITH_INV | abi::SRNIC_WC_SOLICITED,
            invalidated_stag: 0x1234,
            term: 1 << 31 | 1 << 12 | 2 << 8 | 0x05,
            ..Default::default()
        });
        assert_eq!(wc.status(), WcStatus::RemAccessErr);
        assert!(!wc.is_success());
        assert_eq!(wc.invalidated_rkey(), Some(0x1234));
        assert!(wc.is_solicited());
        assert_eq!(
            wc.term(),
            Some(Terminate {
                layer: 1,
                etype: 2,
                code: 5,
                received: true
            })
        );
        let e = wc.ok().unwrap_err();
        assert_eq!(e.errno(), libc::EIO);
        assert!(e.to_string().contains("remote access error"));
        let ok = WorkCompletion::default();
        assert!(ok.ok().is_ok());
        assert_eq!(ok.invalidated_rkey(), None);
        assert_eq!(ok.term(), None);
    }

    #[test]
    fn transparent_layout() {
        assert_eq!(std::mem::size_of::<WorkCompletion>(), 64);
    }
}
