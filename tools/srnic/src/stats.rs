// SPDX-License-Identifier: GPL-2.0
//! `srnic stats`: the device-wide counters (iWARP, RMPP, VMTP), once or, with
//! `--watch SECS`, every SECS seconds as changes since the previous sample.

use crate::output::{named_values, Output, Report};
use crate::util::{CmdResult, Fail};
use serde::Serialize;
use std::io::{self, Write};
use std::time::{Duration, Instant};

/// Every counter, by name in ABI order: `struct srnic_stats`'s, then
/// `struct srnic_rmpp_stats`'s with an `rmpp_` prefix, then `struct
/// srnic_vmtp_stats`'s with a `vmtp_` prefix.
pub fn read(ctx: &srnic::Context) -> CmdResult<Vec<(&'static str, u64)>> {
    let mut v = ctx.stats()?.counters().to_vec();
    v.extend(ctx.rmpp_stats()?);
    v.extend(ctx.vmtp_stats()?);
    Ok(v)
}

/// What `srnic stats` prints. JSON: `counters`, an object of every counter by
/// name in ABI order.
#[derive(Clone, Debug, Serialize)]
pub struct StatsReport {
    #[serde(serialize_with = "named_values")]
    pub counters: Vec<(&'static str, u64)>,
}

impl Report for StatsReport {
    /// One `name: value` line per counter.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        for (name, value) in &self.counters {
            writeln!(out, "{name}: {value}")?;
        }
        Ok(())
    }
}

/// One sample of `srnic stats --watch`. JSON (one object per line):
/// `sample` (0, 1, ...), `elapsed_s` (seconds since the first sample),
/// `delta` (false for the first sample, whose `counters` are absolute values;
/// true for the others, whose `counters` are changes since the previous
/// sample), `counters` (every counter by name in ABI order, zeros included).
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub sample: u64,
    pub elapsed_s: f64,
    pub delta: bool,
    #[serde(serialize_with = "named_values")]
    pub counters: Vec<(&'static str, i64)>,
}

impl Report for Sample {
    /// One line: the seconds since the first sample, then the counters that
    /// are not zero as `name=value`; in a delta, every value is signed
    /// (`tx_fpdus=+12`, `qps=-1`) and an unchanged sample reads `no change`.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        write!(out, "{:.3} s:", self.elapsed_s)?;
        let mut any = false;
        for (name, v) in self.counters.iter().filter(|(_, v)| *v != 0) {
            any = true;
            if self.delta {
                write!(out, " {name}={v:+}")?;
            } else {
                write!(out, " {name}={v}")?;
            }
        }
        if !any {
            write!(
                out,
                " {}",
                if self.delta { "no change" } else { "all zero" }
            )?;
        }
        writeln!(out)
    }
}

/// A counter's value as a signed number (no counter comes near 2^63).
fn signed(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The change of every counter of `now` since `prev` (matched by name; a
/// counter `prev` lacks counts from 0). Gauges (contexts, qps, pinned_pages,
/// ...) may go down: their change is negative.
pub fn deltas(
    prev: &[(&'static str, u64)],
    now: &[(&'static str, u64)],
) -> Vec<(&'static str, i64)> {
    now.iter()
        .enumerate()
        .map(|(i, &(name, v))| {
            // Same order in both (the ABI's): look at the same place first.
            let before = match prev.get(i) {
                Some(&(n, b)) if n == name => b,
                _ => prev.iter().find(|(n, _)| *n == name).map_or(0, |&(_, b)| b),
            };
            (name, v.wrapping_sub(before) as i64)
        })
        .collect()
}

/// The state of a watch: the previous sample's values.
#[derive(Debug, Default)]
pub struct Watch {
    prev: Option<Vec<(&'static str, u64)>>,
    taken: u64,
}

impl Watch {
    /// The next sample from the counters `now`, read `elapsed` after the
    /// first: absolute values the first time, changes after that.
    pub fn sample(&mut self, now: Vec<(&'static str, u64)>, elapsed: Duration) -> Sample {
        let (delta, counters) = match &self.prev {
            None => (false, now.iter().map(|&(n, v)| (n, signed(v))).collect()),
            Some(prev) => (true, deltas(prev, &now)),
        };
        let s = Sample {
            sample: self.taken,
            elapsed_s: elapsed.as_secs_f64(),
            delta,
            counters,
        };
        self.prev = Some(now);
        self.taken += 1;
        s
    }
}

/// Parses `--watch`'s interval: seconds, a positive number (`1`, `0.5`).
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let secs: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("invalid interval {s:?} (seconds, say 1 or 0.5)"))?;
    if secs.is_nan() || secs <= 0.0 || secs.is_infinite() {
        return Err(format!(
            "the interval must be more than 0 seconds, not {s:?}"
        ));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("interval {s:?}: {e}"))
}

/// `srnic stats`: prints the counters once.
pub fn once(ctx: &srnic::Context, out: &Output) -> CmdResult {
    out.emit(&StatsReport {
        counters: read(ctx)?,
    })
}

/// `srnic stats --watch`: prints a sample every `interval` (on a fixed
/// schedule from the first, so the samples do not drift), `count` of them or
/// until interrupted.
pub fn watch(
    ctx: &srnic::Context,
    out: &Output,
    interval: Duration,
    count: Option<u64>,
) -> CmdResult {
    let start = Instant::now();
    let mut w = Watch::default();
    let mut n = 0u64;
    // (count is at least 1.)
    while count != Some(n) {
        if n > 0 {
            let due = interval
                .checked_mul(u32::try_from(n).unwrap_or(u32::MAX))
                .and_then(|d| start.checked_add(d))
                .ok_or_else(|| Fail::Error("the watch ran out of time".into()))?;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        // A sample's time is when its reading began; the first one's
        // defines 0.
        let at = if n == 0 {
            Duration::ZERO
        } else {
            start.elapsed()
        };
        let now = read(ctx)?;
        out.emit(&w.sample(now, at))?;
        n += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};

    #[test]
    fn stats_json_keeps_names_and_order() {
        let r = StatsReport {
            counters: vec![("qps", 0), ("contexts", 1), ("rmpp_tx_packets", 9)],
        };
        // The ABI's order, not sorted by name.
        assert_eq!(
            render(Format::Json, &r),
            "{\"counters\":{\"qps\":0,\"contexts\":1,\"rmpp_tx_packets\":9}}\n"
        );
        let v = json(&r);
        assert_eq!(v["counters"].as_object().unwrap().len(), 3);
        assert_eq!(v["counters"]["rmpp_tx_packets"], 9);
        assert!(v["counters"]["qps"].is_u64());
        assert_eq!(
            render(Format::Text, &r),
            "qps: 0\ncontexts: 1\nrmpp_tx_packets: 9\n"
        );
    }

    #[test]
    fn deltas_of_counters_and_gauges() {
        let prev = [("tx_fpdus", 10), ("qps", 3), ("crc_errors", 0)];
        let now = [("tx_fpdus", 25), ("qps", 1), ("crc_errors", 0)];
        assert_eq!(
            deltas(&prev, &now),
            [("tx_fpdus", 15), ("qps", -2), ("crc_errors", 0)]
        );
        // Matched by name, not by place; a new counter counts from 0.
        let moved = [("qps", 3), ("tx_fpdus", 10)];
        let more = [("tx_fpdus", 11), ("qps", 3), ("rmpp_grants", 4)];
        assert_eq!(
            deltas(&moved, &more),
            [("tx_fpdus", 1), ("qps", 0), ("rmpp_grants", 4)]
        );
    }

    #[test]
    fn watch_samples_absolute_then_deltas() {
        let mut w = Watch::default();
        let s0 = w.sample(vec![("contexts", 1), ("tx_bytes", 100)], Duration::ZERO);
        assert!(!s0.delta);
        assert_eq!(s0.sample, 0);
        assert_eq!(s0.counters, [("contexts", 1), ("tx_bytes", 100)]);
        let s1 = w.sample(
            vec![("contexts", 1), ("tx_bytes", 4196)],
            Duration::from_millis(1000),
        );
        assert!(s1.delta);
        assert_eq!(s1.counters, [("contexts", 0), ("tx_bytes", 4096)]);
        let s2 = w.sample(
            vec![("contexts", 0), ("tx_bytes", 4196)],
            Duration::from_millis(2000),
        );
        assert_eq!(s2.counters, [("contexts", -1), ("tx_bytes", 0)]);
        let s3 = w.sample(
            vec![("contexts", 0), ("tx_bytes", 4196)],
            Duration::from_millis(3000),
        );
        assert_eq!(s3.sample, 3);

        // Text: non-zero values only; deltas signed.
        assert_eq!(
            render(Format::Text, &s0),
            "0.000 s: contexts=1 tx_bytes=100\n"
        );
        assert_eq!(render(Format::Text, &s1), "1.000 s: tx_bytes=+4096\n");
        assert_eq!(render(Format::Text, &s2), "2.000 s: contexts=-1\n");
        assert_eq!(render(Format::Text, &s3), "3.000 s: no change\n");

        // JSON: every counter, zeros included; one object per line.
        let v = json(&s1);
        assert_eq!(v["sample"], 1);
        assert_eq!(v["delta"], true);
        assert_eq!(v["elapsed_s"], 1.0);
        assert_eq!(v["counters"]["contexts"], 0);
        assert_eq!(v["counters"]["tx_bytes"], 4096);
        assert_eq!(json(&s2)["counters"]["contexts"], -1);
        assert_eq!(json(&s0)["delta"], false);
        // The exact form (the VM case tool_json reads it with sed).
        assert_eq!(
            render(Format::Json, &s0),
            "{\"sample\":0,\"elapsed_s\":0.0,\"delta\":false,\"counters\":{\"contexts\":1,\"tx_bytes\":100}}\n"
        );
    }

    #[test]
    fn intervals() {
        assert_eq!(parse_interval("1"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_interval("0.5"), Ok(Duration::from_millis(500)));
        for s in ["0", "-1", "x", "", "inf", "NaN"] {
            assert!(parse_interval(s).is_err(), "{s}");
        }
    }
}
