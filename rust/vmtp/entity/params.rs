// SPDX-License-Identifier: GPL-2.0
//! An entity's parameters: the values of `SRNIC_IOCTL_VMTP_CREATE`,
//! defaulted and checked against the limits, and the engine configuration
//! made from them.

use crate::{
    proto::vmtp::engine::{Config, Role},
    uapi::*,
    verbs::limits,
};
use kernel::prelude::*;

/// Entity parameters, validated, as the entity uses them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    pub(crate) role: Role,
    pub(crate) addr: [u8; 4],
    /// 0: a client's, to be picked.
    pub(crate) discriminator: u32,
    pub(crate) flags: u32,
    pub(crate) max_clients: u32,
    pub(crate) max_recv: u32,
    pub(crate) response_timeout_ms: u32,
    pub(crate) max_retries: u32,
    pub(crate) packet_gap_us: u32,
}

impl Params {
    /// Takes the request's values (0: default) and checks them against the
    /// limits.
    pub(crate) fn from_abi(a: &SrnicVmtpCreate) -> Result<Self> {
        let d = |v: u32, def: u32| if v == 0 { def } else { v };
        let role = match a.role {
            SRNIC_VMTP_CLIENT => Role::Client,
            SRNIC_VMTP_SERVER => Role::Server,
            _ => return Err(EINVAL),
        };
        let server = role == Role::Server;
        let p = Self {
            role,
            addr: a.addr,
            discriminator: a.discriminator,
            flags: a.flags,
            max_clients: if server { d(a.max_clients, limits::VMTP_DEFAULT_CLIENTS) } else { 0 },
            max_recv: if server { d(a.max_recv, limits::VMTP_DEFAULT_RECV) } else { 0 },
            response_timeout_ms: d(a.response_timeout_ms, limits::VMTP_DEFAULT_TIMEOUT_MS),
            max_retries: d(a.max_retries, limits::VMTP_DEFAULT_RETRIES),
            packet_gap_us: a.packet_gap_us,
        };
        // A server is found by its identifier: it names it. A client's may be
        // picked. Tuning a server does not take client values and back.
        if (server && p.discriminator == 0)
            || p.discriminator > SRNIC_VMTP_MAX_DISCRIMINATOR
            || p.flags & !SRNIC_VMTP_ALL != 0
            || (!server && (a.max_clients != 0 || a.max_recv != 0))
            || p.max_clients > limits::VMTP_MAX_CLIENTS
            || p.max_recv > limits::VMTP_MAX_RECV
            || p.response_timeout_ms < limits::VMTP_MIN_TIMEOUT_MS
            || p.response_timeout_ms > limits::VMTP_MAX_TIMEOUT_MS
            || p.max_retries > limits::VMTP_MAX_RETRIES
            || p.packet_gap_us > limits::VMTP_MAX_GAP_US
            || a.addr == [0; 4]
        {
            return Err(EINVAL);
        }
        Ok(p)
    }

    /// The engine's configuration for packets of at most `mtu` bytes (IP
    /// header included).
    pub(crate) fn config(&self, mtu: u16) -> Config {
        let ms = 1_000_000u64;
        let mut c = Config::new();
        c.mtu = mtu;
        c.response_timeout = u64::from(self.response_timeout_ms) * ms;
        c.group_timeout = u64::from(limits::VMTP_GROUP_TIMEOUT_MS) * ms;
        // TS5: a server waits for an acknowledgement about as long as a
        // client waits for its Response.
        c.ack_timeout = c.response_timeout;
        c.max_retries = self.max_retries;
        // TS4: past every retransmission a client may still send, and at
        // least the minimum.
        let span = c.response_timeout.saturating_mul(u64::from(self.max_retries) + 2);
        c.linger = span.max(u64::from(limits::VMTP_MIN_LINGER_MS) * ms);
        c.packet_gap = u64::from(self.packet_gap_us) * 1_000;
        c.checksum = self.flags & SRNIC_VMTP_NO_CHECKSUM == 0;
        c
    }

    /// Writes the values in use back into the request.
    pub(crate) fn to_abi(&self, a: &mut SrnicVmtpCreate) {
        a.discriminator = self.discriminator;
        a.max_clients = self.max_clients;
        a.max_recv = self.max_recv;
        a.response_timeout_ms = self.response_timeout_ms;
        a.max_retries = self.max_retries;
        a.packet_gap_us = self.packet_gap_us;
    }
}
