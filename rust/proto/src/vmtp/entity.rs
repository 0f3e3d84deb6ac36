// SPDX-License-Identifier: GPL-2.0
//! VMTP entity identifiers (RFC 1045, section 3.1 and Appendix IV).
//!
//! An entity (a client, a server or a group of them) is named by 64 bits whose
//! four most significant bits are type flags: RAE (remote alias), GRP (group),
//! LEE (the entity's host is little-endian; for a group, UGP: anyone may join)
//! and a reserved bit. In the Internet domain (domain 1) the rest is a 28-bit
//! discriminator and the IPv4 address of the host that allocated the
//! identifier. Zero is never an entity.

/// The Internet entity domain (Appendix IV.1).
pub const DOMAIN_INTERNET: u16 = 1;

/// A 64-bit entity identifier, as carried on the wire (big-endian).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EntityId(pub u64);

/// Flag bits of the identifier's high 32 bits.
mod flag {
    pub(super) const RAE: u64 = 0x8000_0000 << 32;
    pub(super) const GRP: u64 = 0x4000_0000 << 32;
    pub(super) const LEE: u64 = 0x2000_0000 << 32;
    pub(super) const RES: u64 = 0x1000_0000 << 32;
}

/// The discriminator's bits (28) in an Internet-domain identifier.
const DISCRIMINATOR_MASK: u32 = 0x0fff_ffff;

impl EntityId {
    /// The group of every host's VMTP management module, `RG-1-224.0.1.0`:
    /// acknowledgements and retransmission requests are Requests to it.
    pub const MANAGER_GROUP: EntityId = EntityId(0x4000_0001_e000_0100);
    /// The client identifier a big-endian host uses before it has its own.
    pub const DEFAULT_BE_CLIENT: EntityId = EntityId(0x0000_0001_e000_0100);

    /// An Internet-domain identifier of a single entity allocated on the host
    /// with IPv4 address `addr` (big-endian host; the discriminator's top
    /// four bits are dropped).
    pub const fn internet(discriminator: u32, addr: [u8; 4]) -> Self {
        EntityId(
            ((discriminator & DISCRIMINATOR_MASK) as u64) << 32 | u32::from_be_bytes(addr) as u64,
        )
    }

    /// The same identifier as a group (GRP set).
    pub const fn group(self) -> Self {
        EntityId(self.0 | flag::GRP)
    }

    /// Whether this names a group of entities.
    pub const fn is_group(self) -> bool {
        self.0 & flag::GRP != 0
    }

    /// Whether this is an alias for an entity outside the domain (RAE).
    pub const fn is_remote_alias(self) -> bool {
        self.0 & flag::RAE != 0
    }

    /// For a single entity: its host sends data little-endian (LEE); for a
    /// group: anyone may join (UGP).
    pub const fn lee_ugp(self) -> bool {
        self.0 & flag::LEE != 0
    }

    /// Whether the identifier can name an entity: not zero, reserved bit clear.
    pub const fn is_valid(self) -> bool {
        self.0 != 0 && self.0 & flag::RES == 0
    }

    /// The discriminator of an Internet-domain identifier.
    pub const fn discriminator(self) -> u32 {
        (self.0 >> 32) as u32 & DISCRIMINATOR_MASK
    }

    /// The IPv4 address of an Internet-domain identifier: where it was
    /// allocated, and where a sender first looks for the entity.
    pub const fn ipv4(self) -> [u8; 4] {
        (self.0 as u32).to_be_bytes()
    }

    /// The identifier as it is on the wire.
    pub const fn to_be_bytes(self) -> [u8; 8] {
        self.0.to_be_bytes()
    }

    /// The identifier from its wire bytes.
    pub const fn from_be_bytes(b: [u8; 8]) -> Self {
        EntityId(u64::from_be_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::EntityId;

    #[test]
    fn internet_ids() {
        // The RFC's notation BE-25593-36.8.0.49.
        let e = EntityId::internet(25593, [36, 8, 0, 49]);
        assert_eq!(e.0, 0x0000_63f9_2408_0031);
        assert_eq!((e.discriminator(), e.ipv4()), (25593, [36, 8, 0, 49]));
        assert!(e.is_valid() && !e.is_group() && !e.lee_ugp() && !e.is_remote_alias());
        assert_eq!(
            EntityId::internet(1, [224, 0, 1, 0]).group(),
            EntityId::MANAGER_GROUP
        );
        assert_eq!(
            EntityId::internet(1, [224, 0, 1, 0]),
            EntityId::DEFAULT_BE_CLIENT
        );
        assert!(EntityId::MANAGER_GROUP.is_group());
        assert!(!EntityId(0).is_valid());
        assert!(!EntityId(0x1000_0000_0000_0001).is_valid());
        assert_eq!(
            EntityId::internet(u32::MAX, [0; 4]).discriminator(),
            0x0fff_ffff
        );
    }
}
