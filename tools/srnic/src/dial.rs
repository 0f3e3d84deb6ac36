// SPDX-License-Identifier: GPL-2.0
//! Name resolution and connecting: a host name stands for every address
//! `getaddrinfo` gives for it, and a client tries each in turn.
//!
//! The module supports IPv4 only: IPv6 addresses are skipped, and when
//! nothing else is left the error says so.

use crate::util::{CmdResult, Fail};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// Every address of `host` (an address, or a name `getaddrinfo` resolves)
/// with `port`, in `getaddrinfo`'s order, each once.
pub fn resolve_all(host: &str, port: u16) -> CmdResult<Vec<SocketAddr>> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let mut all: Vec<SocketAddr> = Vec::new();
    for a in (host, port)
        .to_socket_addrs()
        .map_err(|e| Fail::Error(format!("cannot resolve {host}: {e}")))?
    {
        // getaddrinfo lists an address once per socket type.
        if !all.contains(&a) {
            all.push(a);
        }
    }
    if all.is_empty() {
        return Err(Fail::Error(format!("{host} has no address")));
    }
    Ok(all)
}

/// The error for a host whose addresses are all IPv6.
fn ipv6_only(host: &str, v6: &[SocketAddr]) -> Fail {
    Fail::Error(format!(
        "{host} has IPv6 addresses only ({}): the srnic module supports IPv4 only",
        list(v6)
    ))
}

fn list(addrs: &[SocketAddr]) -> String {
    addrs
        .iter()
        .map(|a| a.ip().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first IPv4 address of `host` with `port`: where a server listens.
pub fn resolve_v4(host: &str, port: u16) -> CmdResult<SocketAddr> {
    let all = resolve_all(host, port)?;
    all.iter()
        .find(|a| a.is_ipv4())
        .copied()
        .ok_or_else(|| ipv6_only(host, &all))
}

/// Tries `connect` (the connector: it sets up and connects to one address,
/// and fails if that does not connect) on each IPv4 address of `addrs` in
/// turn, and returns the first that connects, with its address. IPv6
/// addresses are skipped. When none connects, the error is the last
/// address's, naming the addresses tried when there were several.
pub fn connect_each<T>(
    host: &str,
    addrs: &[SocketAddr],
    mut connect: impl FnMut(SocketAddr) -> CmdResult<T>,
) -> CmdResult<(SocketAddr, T)> {
    let (v4, v6): (Vec<SocketAddr>, Vec<SocketAddr>) = addrs.iter().partition(|a| a.is_ipv4());
    if v4.is_empty() {
        return Err(ipv6_only(host, &v6));
    }
    let mut last = None;
    for (i, &a) in v4.iter().enumerate() {
        match connect(a) {
            Ok(t) => return Ok((a, t)),
            Err(e) => {
                if i + 1 < v4.len() {
                    eprintln!("srnic: {a}: {e}; trying the next address of {host}");
                }
                last = Some(e);
            }
        }
    }
    let last = last.unwrap_or_else(|| Fail::Error(format!("{host}: nothing to connect to")));
    if v4.len() == 1 && v6.is_empty() {
        return Err(last);
    }
    let mut note = format!("tried {} IPv4 addresses of {host}: {}", v4.len(), list(&v4));
    if !v6.is_empty() {
        note += &format!(
            "; skipped its IPv6 addresses ({}): the srnic module supports IPv4 only",
            list(&v6)
        );
    }
    Err(match last {
        Fail::Error(m) => Fail::Error(format!("{m} ({note})")),
        Fail::Mismatch(m) => Fail::Mismatch(format!("{m} ({note})")),
    })
}

/// [`connect_each`] over every address of `host` with `port`.
pub fn connect_host<T>(
    host: &str,
    port: u16,
    connect: impl FnMut(SocketAddr) -> CmdResult<T>,
) -> CmdResult<(SocketAddr, T)> {
    connect_each(host, &resolve_all(host, port)?, connect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    /// A fake connector: connects to the addresses in `up`, refuses the
    /// others, and records every attempt.
    struct Fake {
        up: Vec<SocketAddr>,
        tried: Vec<SocketAddr>,
    }

    impl Fake {
        fn new(up: &[&str]) -> Self {
            Self {
                up: up.iter().map(|s| a(s)).collect(),
                tried: Vec::new(),
            }
        }

        fn connect(&mut self, addr: SocketAddr) -> CmdResult<u32> {
            self.tried.push(addr);
            if self.up.contains(&addr) {
                Ok(self.tried.len() as u32)
            } else {
                Err(Fail::Error(format!("connection to {addr} refused")))
            }
        }
    }

    #[test]
    fn first_that_connects_wins() {
        let addrs = [
            a("[::1]:1"),
            a("10.0.0.1:1"),
            a("10.0.0.2:1"),
            a("10.0.0.3:1"),
        ];
        let mut f = Fake::new(&["10.0.0.2:1", "10.0.0.3:1"]);
        let (got, n) = connect_each("h", &addrs, |x| f.connect(x)).unwrap();
        assert_eq!(got, a("10.0.0.2:1"));
        assert_eq!(n, 2);
        // IPv6 skipped, IPv4 in order, none after the one that connected.
        assert_eq!(f.tried, [a("10.0.0.1:1"), a("10.0.0.2:1")]);
    }

    #[test]
    fn the_last_error_when_none_connects() {
        let addrs = [a("10.0.0.1:1"), a("[::1]:1"), a("10.0.0.2:1")];
        let mut f = Fake::new(&[]);
        let e = connect_each("h", &addrs, |x| f.connect(x))
            .unwrap_err()
            .to_string();
        assert_eq!(f.tried, [a("10.0.0.1:1"), a("10.0.0.2:1")]);
        assert!(e.starts_with("connection to 10.0.0.2:1 refused"), "{e}");
        assert!(
            e.contains("tried 2 IPv4 addresses of h: 10.0.0.1, 10.0.0.2"),
            "{e}"
        );
        assert!(e.contains("skipped its IPv6 addresses (::1)"), "{e}");
        // One address: its error as it is.
        let mut f = Fake::new(&[]);
        let e = connect_each("h", &[a("10.0.0.9:1")], |x| f.connect(x)).unwrap_err();
        assert_eq!(e.to_string(), "connection to 10.0.0.9:1 refused");
        // The kind of failure is kept (the exit code depends on it).
        let e = connect_each("h", &addrs, |_| -> CmdResult<()> {
            Err(Fail::Mismatch("x".into()))
        })
        .unwrap_err();
        assert_eq!(e.exit_code(), crate::util::EXIT_MISMATCH);
    }

    #[test]
    fn ipv6_only_is_refused_without_trying() {
        let addrs = [a("[::1]:1"), a("[fe80::1]:1")];
        let mut f = Fake::new(&["[::1]:1"]);
        let e = connect_each("v6host", &addrs, |x| f.connect(x))
            .unwrap_err()
            .to_string();
        assert!(f.tried.is_empty());
        assert!(
            e.contains("v6host has IPv6 addresses only (::1, fe80::1)"),
            "{e}"
        );
        assert!(e.contains("IPv4 only"), "{e}");
    }

    #[test]
    fn resolution() {
        assert_eq!(resolve_all("10.1.2.3", 7).unwrap(), [a("10.1.2.3:7")]);
        assert_eq!(resolve_all("::1", 7).unwrap(), [a("[::1]:7")]);
        assert!(resolve_v4("::1", 7)
            .unwrap_err()
            .to_string()
            .contains("IPv4 only"));
        assert_eq!(resolve_v4("10.1.2.3", 7).unwrap(), a("10.1.2.3:7"));
        // localhost resolves without a network (/etc/hosts); it may list ::1
        // first, but its IPv4 address is among its addresses.
        let all = resolve_all("localhost", 9).unwrap();
        assert!(all.contains(&a("127.0.0.1:9")), "{all:?}");
        assert!(resolve_v4("localhost", 9).unwrap().is_ipv4());
        let dedup: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(dedup.len(), all.len());
    }
}
