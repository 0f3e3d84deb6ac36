// SPDX-License-Identifier: GPL-2.0
//! Name resolution and connecting: a host name stands for every address
//! `getaddrinfo` gives for it, IPv4 and IPv6, and a client tries each in
//! turn.

use crate::util::{CmdResult, Fail};
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// Every address of `host` (an address, `[v6]` in brackets or not, or a name
/// `getaddrinfo` resolves; a link-local IPv6 address may name its interface,
/// `fe80::1%eth0`) with `port`, in `getaddrinfo`'s order, each once.
pub fn resolve_all(host: &str, port: u16) -> CmdResult<Vec<SocketAddr>> {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
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

fn list(addrs: &[SocketAddr]) -> String {
    addrs
        .iter()
        .map(|a| a.ip().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first address of `host` with `port`: where a server listens.
pub fn resolve_first(host: &str, port: u16) -> CmdResult<SocketAddr> {
    let all = resolve_all(host, port)?;
    Ok(all[0])
}

/// Tries `connect` (the connector: it sets up and connects to one address,
/// and fails if that does not connect) on each address of `addrs` in turn,
/// and returns the first that connects, with its address. When none
/// connects, the error is the last address's, naming the addresses tried
/// when there were several.
pub fn connect_each<T>(
    host: &str,
    addrs: &[SocketAddr],
    mut connect: impl FnMut(SocketAddr) -> CmdResult<T>,
) -> CmdResult<(SocketAddr, T)> {
    let mut last = None;
    for (i, &a) in addrs.iter().enumerate() {
        match connect(a) {
            Ok(t) => return Ok((a, t)),
            Err(e) => {
                if i + 1 < addrs.len() {
                    eprintln!("srnic: {a}: {e}; trying the next address of {host}");
                }
                last = Some(e);
            }
        }
    }
    let last = last.unwrap_or_else(|| Fail::Error(format!("{host}: nothing to connect to")));
    if addrs.len() == 1 {
        return Err(last);
    }
    let note = format!("tried {} addresses of {host}: {}", addrs.len(), list(addrs));
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
            a("[fd00::3]:1"),
        ];
        let mut f = Fake::new(&["10.0.0.2:1", "[fd00::3]:1"]);
        let (got, n) = connect_each("h", &addrs, |x| f.connect(x)).unwrap();
        assert_eq!(got, a("10.0.0.2:1"));
        assert_eq!(n, 3);
        // Both families in order, none after the one that connected.
        assert_eq!(f.tried, [a("[::1]:1"), a("10.0.0.1:1"), a("10.0.0.2:1")]);
        let mut f = Fake::new(&["[fd00::3]:1"]);
        let (got, _) = connect_each("h", &addrs, |x| f.connect(x)).unwrap();
        assert_eq!(got, a("[fd00::3]:1"));
    }

    #[test]
    fn the_last_error_when_none_connects() {
        let addrs = [a("10.0.0.1:1"), a("[::1]:1"), a("10.0.0.2:1")];
        let mut f = Fake::new(&[]);
        let e = connect_each("h", &addrs, |x| f.connect(x))
            .unwrap_err()
            .to_string();
        assert_eq!(f.tried, addrs);
        assert!(e.starts_with("connection to 10.0.0.2:1 refused"), "{e}");
        assert!(
            e.contains("tried 3 addresses of h: 10.0.0.1, ::1, 10.0.0.2"),
            "{e}"
        );
        // One address: its error as it is.
        let mut f = Fake::new(&[]);
        let e = connect_each("h", &[a("[fd00::9]:1")], |x| f.connect(x)).unwrap_err();
        assert_eq!(e.to_string(), "connection to [fd00::9]:1 refused");
        // The kind of failure is kept (the exit code depends on it).
        let e = connect_each("h", &addrs, |_| -> CmdResult<()> {
            Err(Fail::Mismatch("x".into()))
        })
        .unwrap_err();
        assert_eq!(e.exit_code(), crate::util::EXIT_MISMATCH);
    }

    #[test]
    fn resolution() {
        assert_eq!(resolve_all("10.1.2.3", 7).unwrap(), [a("10.1.2.3:7")]);
        assert_eq!(resolve_all("::1", 7).unwrap(), [a("[::1]:7")]);
        assert_eq!(resolve_all("[fd00::2]", 7).unwrap(), [a("[fd00::2]:7")]);
        assert_eq!(resolve_first("::1", 7).unwrap(), a("[::1]:7"));
        assert_eq!(resolve_first("10.1.2.3", 7).unwrap(), a("10.1.2.3:7"));
        // A link-local address with its interface (getaddrinfo's scope).
        let lo = resolve_all("fe80::1%lo", 7).unwrap();
        match lo[0] {
            SocketAddr::V6(v6) => assert_eq!(v6.scope_id(), 1),
            v4 => panic!("{v4}"),
        }
        // localhost resolves without a network (/etc/hosts); it may list ::1
        // first, but its IPv4 address is among its addresses.
        let all = resolve_all("localhost", 9).unwrap();
        assert!(all.contains(&a("127.0.0.1:9")), "{all:?}");
        let dedup: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(dedup.len(), all.len());
    }
}
