// SPDX-License-Identifier: GPL-2.0
//! The sender's round-trip estimate and the retransmission timeout made from
//! it, as TCP computes its own (RFC 6298, section 2).
//!
//! The Sandia RMPP paper gives the sender one fixed timeout. A lost packet that
//! no later packet reveals (the last of a granted block, a CTS, a NAK) is then
//! recovered only after that timeout, which must be long enough for the slowest
//! receiver: on a link that drops a frame in a hundred, that waiting is most of
//! a transfer's time. An [`Engine`](super::Engine) with a smallest timeout
//! ([`Config::min_retransmit_timeout`](super::Config)) instead times one packet
//! a block (the RTS, or the block's last data packet) to the reply it causes
//! (the CTS, MSGEND or MSGDROP), keeps a smoothed round trip and its variation,
//! and waits `srtt + 4 * rttvar`, between the smallest timeout and the
//! configured one. Packets sent again are not timed (Karn's rule), and each
//! consecutive timeout of one message doubles its wait (RFC 6298, 5.5) up to
//! the configured timeout.

/// The smoothed round trip and its mean deviation, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttEstimate {
    /// Smoothed round trip; 0 until the first sample.
    srtt: u64,
    /// Mean deviation of the round trip.
    rttvar: u64,
}

/// Most doublings of a message's timeout after consecutive timeouts.
pub const MAX_BACKOFF: u32 = 16;

impl RttEstimate {
    /// Takes one round-trip sample (RFC 6298, 2.2 and 2.3: gains 1/8 and 1/4).
    pub fn sample(&mut self, rtt: u64) {
        let rtt = rtt.max(1);
        if self.srtt == 0 {
            self.srtt = rtt;
            self.rttvar = rtt / 2;
            return;
        }
        let dev = self.srtt.abs_diff(rtt);
        self.rttvar = self.rttvar.saturating_mul(3).saturating_add(dev) / 4;
        self.srtt = self.srtt.saturating_mul(7).saturating_add(rtt) / 8;
    }

    /// The smoothed round trip, if there was a sample.
    pub fn srtt(&self) -> Option<u64> {
        (self.srtt != 0).then_some(self.srtt)
    }

    /// The retransmission timeout after `backoff` consecutive timeouts:
    /// `srtt + 4 * rttvar` (`max` before the first sample), doubled `backoff`
    /// times, kept between `min` and `max`. A `min` of 0 or at least `max`
    /// gives `max`: the paper's fixed timeout.
    pub fn rto(&self, min: u64, max: u64, backoff: u32) -> u64 {
        if min == 0 || min >= max || self.srtt == 0 {
            return max;
        }
        let base = self
            .srtt
            .saturating_add(self.rttvar.saturating_mul(4))
            .max(min);
        let factor = 1u64
            .checked_shl(backoff.min(MAX_BACKOFF))
            .unwrap_or(u64::MAX);
        base.saturating_mul(factor).min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn fixed_without_a_floor_or_a_sample() {
        let mut e = RttEstimate::default();
        assert_eq!(e.rto(MS, 100 * MS, 0), 100 * MS);
        e.sample(2 * MS);
        assert_eq!(e.rto(0, 100 * MS, 0), 100 * MS);
        assert_eq!(e.rto(100 * MS, 100 * MS, 0), 100 * MS);
    }

    #[test]
    fn follows_rfc_6298() {
        let mut e = RttEstimate::default();
        e.sample(8 * MS);
        // First sample: srtt = r, rttvar = r / 2, rto = r + 4 r / 2.
        assert_eq!(e.srtt(), Some(8 * MS));
        assert_eq!(e.rto(MS, 100 * MS, 0), 24 * MS);
        // A steady round trip shrinks the deviation towards zero.
        for _ in 0..50 {
            e.sample(8 * MS);
        }
        assert_eq!(e.srtt(), Some(8 * MS));
        let rto = e.rto(MS, 100 * MS, 0);
        assert!((8 * MS..9 * MS).contains(&rto), "{rto}");
        // The floor holds.
        assert_eq!(e.rto(20 * MS, 100 * MS, 0), 20 * MS);
        // A slower sample moves srtt by an eighth and rttvar by a quarter.
        e.sample(16 * MS);
        assert_eq!(e.srtt(), Some(9 * MS));
        assert!(e.rto(MS, 100 * MS, 0) >= 9 * MS + 8 * MS);
    }

    #[test]
    fn backoff_doubles_up_to_the_ceiling() {
        let mut e = RttEstimate::default();
        for _ in 0..100 {
            e.sample(5 * MS);
        }
        let base = e.rto(MS, 100 * MS, 0);
        assert_eq!(e.rto(MS, 100 * MS, 1), 2 * base);
        assert_eq!(e.rto(MS, 100 * MS, 3), 8 * base);
        assert_eq!(e.rto(MS, 100 * MS, 10), 100 * MS);
        assert_eq!(e.rto(MS, 100 * MS, u32::MAX), 100 * MS);
        e.sample(u64::MAX);
        assert_eq!(e.rto(MS, 100 * MS, 2), 100 * MS);
    }
}
