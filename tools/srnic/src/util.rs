// SPDX-License-Identifier: GPL-2.0
//! Helpers of the CLI: size arguments, the test pattern, and the failure type
//! that decides the exit code.

use std::fmt;

/// Exit code for errors: device, connection, error completions, timeouts.
pub const EXIT_ERROR: u8 = 1;
/// Exit code when data did not verify.
pub const EXIT_MISMATCH: u8 = 3;

/// Why a command failed.
#[derive(Debug)]
pub enum Fail {
    /// Anything but a data mismatch.
    Error(String),
    /// Data did not verify.
    Mismatch(String),
}

impl Fail {
    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Fail::Error(_) => EXIT_ERROR,
            Fail::Mismatch(_) => EXIT_MISMATCH,
        }
    }
}

impl fmt::Display for Fail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fail::Error(s) => f.write_str(s),
            Fail::Mismatch(s) => write!(f, "verification failed: {s}"),
        }
    }
}

/// What to do about an error, where the errno says it (empty otherwise).
fn hint(e: &srnic::Error) -> &'static str {
    let open = matches!(e, srnic::Error::Open { .. });
    let reg_mr = matches!(
        e,
        srnic::Error::Os {
            op: "SRNIC_IOCTL_REG_MR",
            ..
        }
    );
    match e.raw_os_error() {
        Some(libc::ENOENT | libc::ENXIO | libc::ENODEV) if open => {
            " (the srnic module is not loaded: modprobe srnic, or insmod srnic.ko)"
        }
        Some(libc::EACCES | libc::EPERM) if open => {
            " (no access to the device: see its group and mode, set by the udev rule 60-srnic.rules)"
        }
        Some(libc::ENOMEM) if reg_mr => {
            " (registered memory is charged to RLIMIT_MEMLOCK: try ulimit -l)"
        }
        Some(libc::EAFNOSUPPORT) => {
            " (srnic speaks IPv4 and IPv6: for IPv6 the kernel needs CONFIG_IPV6 and no ipv6.disable=1)"
        }
        _ => "",
    }
}

impl From<srnic::Error> for Fail {
    fn from(e: srnic::Error) -> Self {
        Fail::Error(format!("{e}{}", hint(&e)))
    }
}

/// Result of a command.
pub type CmdResult<T = ()> = Result<T, Fail>;

/// Parses a byte count: a number with an optional K, M or G suffix (powers of
/// 1024, case-insensitive, an optional trailing "B" or "iB").
pub fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (num, mult) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1usize << 10),
        Some('m') => (&body[..body.len() - 1], 1 << 20),
        Some('g') => (&body[..body.len() - 1], 1 << 30),
        _ => (body, 1),
    };
    let n: usize = num
        .parse()
        .map_err(|_| format!("invalid size {s:?} (examples: 0, 4095, 64K, 1M, 16M)"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} too large"))
}

/// The pattern word at word `k` (bytes `8k..8k+8`, little-endian) of
/// iteration `iter`. The pattern is made a word at a time so that filling and
/// checking a buffer cost a few instructions per eight bytes: verification is
/// inside the tool's timed loops, and a byte-wise hash cost the bandwidth
/// modes more CPU than the transfer itself under emulation.
fn pattern_word(iter: u64, k: u64) -> u64 {
    let x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ iter.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    x ^ (x >> 29)
}

/// The pattern byte at `offset` of iteration `iter`: differs between
/// neighbouring offsets and between iterations.
pub fn pattern_byte(iter: u64, offset: usize) -> u8 {
    pattern_word(iter, (offset / 8) as u64).to_le_bytes()[offset % 8]
}

/// Fills `buf` with iteration `iter`'s pattern.
pub fn fill_pattern(buf: &mut [u8], iter: u64) {
    let base = buf.len() - buf.len() % 8;
    let (words, tail) = buf.split_at_mut(base);
    for (k, w) in words.chunks_exact_mut(8).enumerate() {
        w.copy_from_slice(&pattern_word(iter, k as u64).to_le_bytes());
    }
    for (o, b) in tail.iter_mut().enumerate() {
        *b = pattern_byte(iter, base + o);
    }
}

/// Fills `buf` with bytes that differ from iteration `iter`'s pattern everywhere.
pub fn fill_poison(buf: &mut [u8], iter: u64) {
    fill_pattern(buf, iter);
    for b in buf {
        *b = !*b;
    }
}

/// Checks `buf` against iteration `iter`'s pattern; the error names the first
/// differing offset and how many bytes differ.
pub fn verify_pattern(buf: &[u8], iter: u64) -> Result<(), String> {
    // The fast path compares whole words; only a mismatch walks the bytes.
    let base = buf.len() - buf.len() % 8;
    let (words, tail) = buf.split_at(base);
    if words
        .chunks_exact(8)
        .enumerate()
        .all(|(k, w)| w == pattern_word(iter, k as u64).to_le_bytes())
        && tail
            .iter()
            .enumerate()
            .all(|(o, &b)| b == pattern_byte(iter, base + o))
    {
        return Ok(());
    }
    let mut first = None;
    let mut bad = 0usize;
    for (o, &b) in buf.iter().enumerate() {
        let want = pattern_byte(iter, o);
        if b != want {
            if first.is_none() {
                first = Some((o, b, want));
            }
            bad += 1;
        }
    }
    match first {
        None => Ok(()),
        Some((o, got, want)) => Err(format!(
            "iteration {iter}: {bad} of {} bytes differ, first at offset {o}: got {got:#04x}, want {want:#04x}",
            buf.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(errno: i32) -> std::io::Error {
        std::io::Error::from_raw_os_error(errno)
    }

    #[test]
    fn hints_say_what_to_do() {
        let open = |errno| srnic::Error::Open {
            path: "/dev/srnic".into(),
            source: os(errno),
        };
        assert!(Fail::from(open(libc::ENOENT))
            .to_string()
            .contains("modprobe srnic"));
        assert!(Fail::from(open(libc::EACCES))
            .to_string()
            .contains("60-srnic.rules"));
        let bind = srnic::Error::Os {
            op: "SRNIC_IOCTL_LISTEN",
            source: os(libc::EAFNOSUPPORT),
        };
        assert!(Fail::from(bind).to_string().contains("IPv4 and IPv6"));
        // ENOMEM names RLIMIT_MEMLOCK for a registration only (a full queue
        // or table is not about locked memory).
        let enomem = |op| srnic::Error::Os {
            op,
            source: os(libc::ENOMEM),
        };
        assert!(Fail::from(enomem("SRNIC_IOCTL_REG_MR"))
            .to_string()
            .contains("ulimit -l"));
        assert!(!Fail::from(enomem("SRNIC_IOCTL_CREATE_QP"))
            .to_string()
            .contains("ulimit"));
        // ENOENT from anything but opening the device is not a missing module.
        let other = srnic::Error::Os {
            op: "SRNIC_IOCTL_QUERY_QP",
            source: os(libc::ENOENT),
        };
        assert!(!Fail::from(other).to_string().contains("modprobe"));
    }

    #[test]
    fn sizes() {
        for (s, n) in [
            ("0", 0),
            ("1", 1),
            ("4095", 4095),
            ("4096", 4096),
            ("64K", 65536),
            ("64k", 65536),
            ("64KiB", 65536),
            ("1M", 1 << 20),
            ("16M", 16 << 20),
            ("1mb", 1 << 20),
            ("2G", 2 << 30),
        ] {
            assert_eq!(parse_size(s), Ok(n), "{s}");
        }
        for s in ["", "K", "1.5M", "-1", "12Q", "99999999999999999999G"] {
            assert!(parse_size(s).is_err(), "{s}");
        }
    }

    #[test]
    fn pattern_verifies_and_detects() {
        let mut b = vec![0u8; 5000];
        fill_pattern(&mut b, 3);
        assert!(verify_pattern(&b, 3).is_ok());
        assert!(verify_pattern(&b, 4).is_err());
        b[4097] ^= 1;
        let e = verify_pattern(&b, 3).unwrap_err();
        assert!(e.contains("offset 4097"), "{e}");
        assert!(e.contains("1 of 5000"), "{e}");
        fill_poison(&mut b, 3);
        assert!(b.iter().enumerate().all(|(o, &x)| x != pattern_byte(3, o)));
        assert!(verify_pattern(&[], 0).is_ok());
    }

    #[test]
    fn pattern_words_match_pattern_bytes() {
        for len in [0, 1, 7, 8, 9, 63, 4097] {
            let mut b = vec![0u8; len];
            fill_pattern(&mut b, 77);
            assert!(
                b.iter().enumerate().all(|(o, &x)| x == pattern_byte(77, o)),
                "{len}"
            );
            assert!(verify_pattern(&b, 77).is_ok());
            if len > 0 {
                b[len - 1] ^= 0x80;
                let e = verify_pattern(&b, 77).unwrap_err();
                assert!(e.contains(&format!("first at offset {}", len - 1)), "{e}");
            }
        }
    }

    #[test]
    fn pattern_depends_on_iteration_and_offset() {
        let a: Vec<u8> = (0..256).map(|o| pattern_byte(0, o)).collect();
        let b: Vec<u8> = (0..256).map(|o| pattern_byte(1, o)).collect();
        assert_ne!(a, b);
        // Neighbouring offsets differ often (no constant runs).
        assert!(a.windows(2).filter(|w| w[0] != w[1]).count() > 200);
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Fail::Error("x".into()).exit_code(), 1);
        assert_eq!(Fail::Mismatch("x".into()).exit_code(), 3);
    }
}
