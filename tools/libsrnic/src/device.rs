// SPDX-License-Identifier: GPL-2.0
//! The device context: one open file of `/dev/srnic`.

use crate::error::{Error, Result};
use srnic_uapi as abi;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::path::Path;

/// Where the module's misc device appears.
pub const DEFAULT_PATH: &str = "/dev/srnic";

/// An open verbs context on the srnic device.
#[derive(Debug)]
pub struct Device {
    file: File,
}

/// Capability bits the module reports (`SRNIC_CAP_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities(pub u64);

impl Capabilities {
    /// The names of the set bits, in bit order; unknown bits as `bitN`.
    pub fn names(&self) -> Vec<String> {
        const NAMES: [(u64, &str); 4] = [
            (abi::SRNIC_CAP_IWARP, "iwarp"),
            (abi::SRNIC_CAP_MPA_CRC, "mpa-crc"),
            (abi::SRNIC_CAP_MPA_MARKERS, "mpa-markers"),
            (abi::SRNIC_CAP_RMPP, "rmpp"),
        ];
        (0..64)
            .map(|b| 1u64 << b)
            .filter(|bit| self.0 & bit != 0)
            .map(|bit| {
                NAMES
                    .iter()
                    .find(|(b, _)| *b == bit)
                    .map(|(_, n)| n.to_string())
                    .unwrap_or_else(|| format!("bit{}", bit.trailing_zeros()))
            })
            .collect()
    }
}

/// What `SRNIC_IOCTL_QUERY_DEVICE` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceAttr {
    /// The module's ABI version.
    pub abi_version: u32,
    /// What the module implements.
    pub capabilities: Capabilities,
    /// The raw structure with every limit.
    pub raw: abi::SrnicQueryDevice,
}

impl Device {
    /// Opens the device at [`DEFAULT_PATH`].
    pub fn open() -> Result<Self> {
        Self::open_path(DEFAULT_PATH)
    }

    /// Opens the device at `path` and checks that it speaks this library's ABI.
    pub fn open_path(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|source| Error::Open {
                path: path.to_path_buf(),
                source,
            })?;
        let dev = Self { file };
        let attr = dev.query()?;
        if attr.abi_version != abi::SRNIC_ABI_VERSION {
            return Err(Error::AbiMismatch {
                module: attr.abi_version,
                library: abi::SRNIC_ABI_VERSION,
            });
        }
        Ok(dev)
    }

    /// Queries the ABI version, capabilities and limits.
    pub fn query(&self) -> Result<DeviceAttr> {
        let mut q = abi::SrnicQueryDevice {
            size: std::mem::size_of::<abi::SrnicQueryDevice>() as u32,
            ..Default::default()
        };
        // SAFETY: `q` is a live, writable `#[repr(C)]` structure of exactly the size
        // the command number encodes.
        unsafe { self.ioctl(abi::SRNIC_IOCTL_QUERY_DEVICE, &mut q as *mut _ as usize) }.map_err(
            |source| Error::Os {
                op: "SRNIC_IOCTL_QUERY_DEVICE",
                source,
            },
        )?;
        Ok(DeviceAttr {
            abi_version: q.abi_version,
            capabilities: Capabilities(q.capabilities),
            raw: q,
        })
    }

    /// Issues a raw ioctl on the device file and returns its non-negative result.
    ///
    /// # Safety
    ///
    /// `arg` must be what `cmd` expects: for srnic's commands, the address of a
    /// live, writable argument structure of the size `cmd` encodes, or any value
    /// when testing the module's error paths with an address it must reject.
    pub unsafe fn ioctl(&self, cmd: u32, arg: usize) -> io::Result<i32> {
        // SAFETY: the caller guarantees `arg` fits `cmd`; the fd is open.
        let r = unsafe { libc::ioctl(self.file.as_raw_fd(), cmd as _, arg) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r)
        }
    }
}

impl AsFd for Device {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capability_names() {
        let c = Capabilities(abi::SRNIC_CAP_IWARP | abi::SRNIC_CAP_RMPP | 1 << 40);
        assert_eq!(c.names(), vec!["iwarp", "rmpp", "bit40"]);
        assert!(Capabilities(0).names().is_empty());
    }

    #[test]
    fn open_missing_device_reports_path() {
        let e = Device::open_path("/nonexistent/srnic").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
        assert!(e.to_string().contains("/nonexistent/srnic"));
    }
}
