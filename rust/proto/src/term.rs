// SPDX-License-Identifier: GPL-2.0
//! TERMINATE codes: every failure srnic detects on receive, with its layer,
//! error type and code (RFC 5040 section 4.8, RFC 6580's registry), and the
//! STag check failures of the verbs layer. Below both DDP and RDMAP, which
//! report their failures with these codes.

/// Why a verbs-layer STag check failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StagError {
    /// No such STag, or it is invalid / not in a valid state.
    InvalidStag,
    /// Offset or length outside the region.
    BaseBounds,
    /// The region does not grant the required access.
    AccessRights,
    /// The STag belongs to another protection domain (not associated with this stream).
    PdMismatch,
    /// Tagged offset plus length wraps.
    ToWrap,
}

/// Which offending header a TERMINATE carries (siw's rules, see `siw_send_terminate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// No header (LLP errors, RDMAP version/opcode errors, catastrophic errors).
    None,
    /// DDP header only (M and D set).
    Ddp,
    /// Full DDP + RDMAP header (M, D and R set).
    Full,
}

/// Every receive-side failure, each with exactly one TERMINATE layer/type/code.
///
/// This enum *is* the table of what srnic detects: [`TermCode::code`] gives the
/// triple, as the IANA RDDP registry (RFC 6580) lists them for RDMAP, DDP and MPA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermCode {
    /// CRC mismatch: LLP/MPA/0x02.
    LlpCrc,
    /// ULPDU length shorter than the header: LLP/MPA/0x03.
    LlpUlpduTooShort,
    /// A marker's FPDUPTR does not point at the FPDU start: LLP/MPA/0x03.
    LlpMarker,
    /// Bad MPA Request/Reply frame (key, revision, length): LLP/MPA/0x04.
    LlpBadReqRep,
    /// Initiator's IRD too small for the responder's ORD: LLP/MPA/0x06.
    LlpInsufficientIrd,
    /// No common peer-to-peer RTR mode: LLP/MPA/0x07.
    LlpNoMatchingRtr,
    /// DDP version wrong on a tagged segment: DDP/tagged/0x04.
    DdpVersionTagged,
    /// DDP version wrong on an untagged segment: DDP/untagged/0x06.
    DdpVersionUntagged,
    /// RDMAP version wrong: RDMAP/remote-op/0x05.
    RdmapVersion,
    /// Unknown opcode or T bit inconsistent with it: RDMAP/remote-op/0x06.
    RdmapOpcode,
    /// Invalid STag (or a continuation naming a different STag): DDP/tagged/0x00.
    TaggedInvalidStag,
    /// Access rights violated: DDP/tagged/0x00 (siw reports access as invalid STag).
    TaggedAccess,
    /// Tagged offset or length out of bounds: DDP/tagged/0x01.
    TaggedBaseBounds,
    /// STag in another protection domain: DDP/tagged/0x02.
    TaggedPdMismatch,
    /// Tagged offset wraps: DDP/tagged/0x03.
    TaggedToWrap,
    /// Bad queue number: DDP/untagged/0x01.
    UntaggedInvalidQn,
    /// No receive buffer posted, or it is too small: DDP/untagged/0x02.
    UntaggedNoBuffer,
    /// MSN wrong (or two untagged messages interleaved): DDP/untagged/0x03.
    UntaggedMsnRange,
    /// MO wrong: DDP/untagged/0x04.
    UntaggedInvalidMo,
    /// Read Response without an outstanding Read: DDP/catastrophic/0x00 (as siw).
    UnexpectedReadResponse,
    /// Too many Read Requests outstanding (IRD exceeded): RDMAP/remote-op/0x07.
    IrdExceeded,
    /// Read Response cannot be produced: RDMAP/remote-protection/code from the check.
    ReadSource(StagError),
    /// Local catastrophic error: RDMAP/catastrophic/0xff (unspecified).
    LocalCatastrophic,
}

/// TERMINATE layers (RFC 5040 section 4.8).
pub mod layer {
    /// RDMAP layer.
    pub const RDMAP: u8 = 0;
    /// DDP layer.
    pub const DDP: u8 = 1;
    /// Lower layer protocol (MPA).
    pub const LLP: u8 = 2;
}

/// TERMINATE error types within each layer (RFC 6580's registry).
pub mod etype {
    /// RDMAP: local catastrophic error.
    pub const RDMAP_CATASTROPHIC: u8 = 0;
    /// RDMAP: remote protection error (an STag check failed).
    pub const RDMAP_REMOTE_PROTECTION: u8 = 1;
    /// RDMAP: remote operation error.
    pub const RDMAP_REMOTE_OPERATION: u8 = 2;
    /// DDP: local catastrophic error.
    pub const DDP_CATASTROPHIC: u8 = 0;
    /// DDP: tagged buffer error.
    pub const DDP_TAGGED: u8 = 1;
    /// DDP: untagged buffer error.
    pub const DDP_UNTAGGED: u8 = 2;
    /// LLP: the MPA errors.
    pub const LLP_MPA: u8 = 0;
}

impl TermCode {
    /// `(layer, error type, error code)` as they go on the wire.
    #[must_use]
    pub const fn code(&self) -> (u8, u8, u8) {
        use etype::*;
        use layer::{DDP, LLP, RDMAP};
        match self {
            TermCode::LlpCrc => (LLP, LLP_MPA, 0x02),
            TermCode::LlpUlpduTooShort | TermCode::LlpMarker => (LLP, LLP_MPA, 0x03),
            TermCode::LlpBadReqRep => (LLP, LLP_MPA, 0x04),
            TermCode::LlpInsufficientIrd => (LLP, LLP_MPA, 0x06),
            TermCode::LlpNoMatchingRtr => (LLP, LLP_MPA, 0x07),
            TermCode::DdpVersionTagged => (DDP, DDP_TAGGED, 0x04),
            TermCode::DdpVersionUntagged => (DDP, DDP_UNTAGGED, 0x06),
            TermCode::RdmapVersion => (RDMAP, RDMAP_REMOTE_OPERATION, 0x05),
            TermCode::RdmapOpcode => (RDMAP, RDMAP_REMOTE_OPERATION, 0x06),
            TermCode::TaggedInvalidStag | TermCode::TaggedAccess => (DDP, DDP_TAGGED, 0x00),
            TermCode::TaggedBaseBounds => (DDP, DDP_TAGGED, 0x01),
            TermCode::TaggedPdMismatch => (DDP, DDP_TAGGED, 0x02),
            TermCode::TaggedToWrap => (DDP, DDP_TAGGED, 0x03),
            TermCode::UntaggedInvalidQn => (DDP, DDP_UNTAGGED, 0x01),
            TermCode::UntaggedNoBuffer => (DDP, DDP_UNTAGGED, 0x02),
            TermCode::UntaggedMsnRange => (DDP, DDP_UNTAGGED, 0x03),
            TermCode::UntaggedInvalidMo => (DDP, DDP_UNTAGGED, 0x04),
            TermCode::UnexpectedReadResponse => (DDP, DDP_CATASTROPHIC, 0x00),
            TermCode::IrdExceeded => (RDMAP, RDMAP_REMOTE_OPERATION, 0x07),
            TermCode::ReadSource(e) => (
                RDMAP,
                RDMAP_REMOTE_PROTECTION,
                match e {
                    StagError::InvalidStag => 0x00,
                    StagError::BaseBounds => 0x01,
                    StagError::AccessRights => 0x02,
                    StagError::PdMismatch => 0x03,
                    StagError::ToWrap => 0x04,
                },
            ),
            TermCode::LocalCatastrophic => (RDMAP, RDMAP_CATASTROPHIC, 0xff),
        }
    }

    /// Which offending header the TERMINATE carries.
    #[must_use]
    pub const fn attach(&self) -> Attach {
        match self.code() {
            (layer::DDP, etype::DDP_CATASTROPHIC, _) | (layer::LLP, _, _) => Attach::None,
            (layer::DDP, _, _) => Attach::Ddp,
            (layer::RDMAP, etype::RDMAP_REMOTE_PROTECTION, _) => Attach::Full,
            (layer::RDMAP, etype::RDMAP_REMOTE_OPERATION, 0x05 | 0x06)
            | (layer::RDMAP, etype::RDMAP_CATASTROPHIC, _) => Attach::None,
            _ => Attach::Ddp,
        }
    }

    /// The DDP tagged-buffer code for a failed STag check on inbound placement.
    #[must_use]
    pub const fn tagged(e: StagError) -> Self {
        match e {
            StagError::InvalidStag => TermCode::TaggedInvalidStag,
            StagError::AccessRights => TermCode::TaggedAccess,
            StagError::BaseBounds => TermCode::TaggedBaseBounds,
            StagError::PdMismatch => TermCode::TaggedPdMismatch,
            StagError::ToWrap => TermCode::TaggedToWrap,
        }
    }
}
