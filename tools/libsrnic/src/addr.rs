// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//! Conversions between [`std::net::SocketAddr`] and the ABI's `struct srnic_sockaddr`
//! (family, port in host byte order, scope id, 16 address bytes with IPv4 in the
//! first four in network byte order).

use srnic_uapi::SrnicSockaddr;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// `AF_INET` as the ABI spells it.
pub const AF_INET: u16 = 2;
/// `AF_INET6` as the ABI spells it.
pub const AF_INET6: u16 = 10;

/// Encodes a socket address for the module. IPv6 flow information is not carried.
pub fn to_abi(addr: &SocketAddr) -> SrnicSockaddr {
    let mut s = SrnicSockaddr {
        port: addr.port(),
        ..Default::default()
    };
    match addr {
        SocketAddr::V4(a) => {
            s.family = AF_INET;
            s.addr[..4].copy_from_slice(&a.ip().octets());
        }
        SocketAddr::V6(a) => {
            s.family = AF_INET6;
            s.scope_id = a.scope_id();
            s.addr = a.ip().octets();
        }
    }
    s
}

/// Decodes a socket address from the module; `None` for an unset (family 0) or
/// unknown family.
pub fn from_abi(s: &SrnicSockaddr) -> Option<SocketAddr> {
    match s.family {
        AF_INET => {
            let ip = Ipv4Addr::new(s.addr[0], s.addr[1], s.addr[2], s.addr[3]);
            Some(SocketAddr::V4(SocketAddrV4::new(ip, s.port)))
        }
        AF_INET6 => Some(SocketAddr::V6(SocketAddrV6::new(
            Ipv6Addr::from(s.addr),
            s.port,
            0,
            s.scope_id,
        ))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_layout() {
        let a: SocketAddr = "192.168.7.2:18515".parse().unwrap();
        let s = to_abi(&a);
        assert_eq!(s.family, 2);
        assert_eq!(s.port, 18515);
        assert_eq!(s.scope_id, 0);
        assert_eq!(&s.addr[..4], &[192, 168, 7, 2]);
        assert!(s.addr[4..].iter().all(|&b| b == 0));
        assert_eq!(from_abi(&s), Some(a));
    }

    #[test]
    fn ipv6_layout_and_scope() {
        let a = SocketAddr::V6(SocketAddrV6::new("fe80::1".parse().unwrap(), 4791, 0, 3));
        let s = to_abi(&a);
        assert_eq!(s.family, 10);
        assert_eq!(s.port, 4791);
        assert_eq!(s.scope_id, 3);
        assert_eq!(s.addr[0], 0xfe);
        assert_eq!(s.addr[1], 0x80);
        assert_eq!(s.addr[15], 1);
        assert_eq!(from_abi(&s), Some(a));
    }

    #[test]
    fn unset_and_unknown_families() {
        assert_eq!(from_abi(&SrnicSockaddr::default()), None);
        let s = SrnicSockaddr {
            family: 17,
            ..Default::default()
        };
        assert_eq!(from_abi(&s), None);
    }

    #[test]
    fn any_address_round_trips() {
        for a in ["0.0.0.0:0", "[::]:65535", "127.0.0.1:1"] {
            let a: SocketAddr = a.parse().unwrap();
            assert_eq!(from_abi(&to_abi(&a)), Some(a));
        }
    }
}
