// SPDX-License-Identifier: GPL-2.0
//! `srnic info`: the ABI version, capabilities and limits the module reports.

use crate::output::{named_values, Report};
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

/// What `srnic info` prints. JSON: `device` (the node's path), `abi_version`,
/// `capabilities` (the bit mask), `capability_names` (the set bits' names),
/// `limits` (an object: every limit of `struct srnic_query_device` by name,
/// in ABI order).
#[derive(Clone, Debug, Serialize)]
pub struct InfoReport {
    pub device: String,
    pub abi_version: u32,
    pub capabilities: u64,
    pub capability_names: Vec<String>,
    #[serde(serialize_with = "named_values")]
    pub limits: Vec<(&'static str, u64)>,
}

impl InfoReport {
    /// The report of the device at `path` with attributes `a`.
    pub fn new(path: &Path, a: &srnic::DeviceAttr) -> Self {
        Self {
            device: path.display().to_string(),
            abi_version: a.abi_version,
            capabilities: a.capabilities.0,
            capability_names: a.capabilities.names(),
            limits: a.raw.limits().to_vec(),
        }
    }
}

impl Report for InfoReport {
    /// `name: value` lines; the capabilities as `0xMASK (name name ...)`.
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "device: {}", self.device)?;
        writeln!(out, "abi_version: {}", self.abi_version)?;
        let names = if self.capability_names.is_empty() {
            "none".to_string()
        } else {
            self.capability_names.join(" ")
        };
        writeln!(out, "capabilities: {:#x} ({names})", self.capabilities)?;
        for (name, value) in &self.limits {
            writeln!(out, "{name}: {value}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{json, render, Format};
    use srnic::uapi as abi;

    fn attr() -> srnic::DeviceAttr {
        srnic::DeviceAttr {
            abi_version: 7,
            capabilities: srnic::Capabilities(abi::SRNIC_CAP_MPA_CRC),
            raw: abi::SrnicQueryDevice {
                max_qp: 1024,
                max_mr_size: 1 << 40,
                ..Default::default()
            },
        }
    }

    #[test]
    fn json_has_every_field() {
        let r = InfoReport::new(Path::new("/dev/srnic"), &attr());
        let v = json(&r);
        assert_eq!(v["device"], "/dev/srnic");
        assert_eq!(v["abi_version"], 7);
        assert_eq!(v["capabilities"], abi::SRNIC_CAP_MPA_CRC);
        assert_eq!(v["capability_names"], serde_json::json!(["mpa-crc"]));
        let limits = v["limits"].as_object().unwrap();
        assert_eq!(limits.len(), abi::SrnicQueryDevice::LIMIT_NAMES.len());
        assert_eq!(v["limits"]["max_qp"], 1024);
        assert_eq!(v["limits"]["max_mr_size"], 1u64 << 40);
        for name in abi::SrnicQueryDevice::LIMIT_NAMES {
            assert!(limits[name].is_u64(), "{name}");
        }
        // In ABI order, as the text lists them.
        let s = render(Format::Json, &r);
        let at: Vec<usize> = abi::SrnicQueryDevice::LIMIT_NAMES
            .iter()
            .map(|n| s.find(&format!("\"{n}\":")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{s}");
    }

    #[test]
    fn text_is_name_value_lines() {
        let t = render(
            Format::Text,
            &InfoReport::new(Path::new("/dev/srnic"), &attr()),
        );
        assert!(t.starts_with("device: /dev/srnic\nabi_version: 7\n"), "{t}");
        assert!(t.contains("\ncapabilities: 0x2 (mpa-crc)\n"), "{t}");
        assert!(t.contains("\nmax_qp: 1024\n"), "{t}");
        let none = InfoReport {
            capabilities: 0,
            capability_names: Vec::new(),
            ..InfoReport::new(Path::new("/d"), &attr())
        };
        assert!(render(Format::Text, &none).contains("capabilities: 0x0 (none)\n"));
    }
}
