// SPDX-License-Identifier: GPL-2.0
//! `srnic stats`: the device-wide counters (iWARP, then RMPP).

use crate::output::{named_values, Output, Report};
use crate::util::CmdResult;
use serde::Serialize;
use std::io::{self, Write};

/// Every counter, by name in ABI order: `struct srnic_stats`'s, then
/// `struct srnic_rmpp_stats`'s with an `rmpp_` prefix.
pub fn read(ctx: &srnic::Context) -> CmdResult<Vec<(&'static str, u64)>> {
    let mut v = ctx.stats()?.counters().to_vec();
    v.extend(ctx.rmpp_stats()?);
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

/// `srnic stats`: prints the counters once.
pub fn once(ctx: &srnic::Context, out: &Output) -> CmdResult {
    out.emit(&StatsReport {
        counters: read(ctx)?,
    })
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
}
