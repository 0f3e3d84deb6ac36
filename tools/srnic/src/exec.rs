// SPDX-License-Identifier: GPL-2.0
//! `srnic exec -- PROGRAM ARGS`: runs an unmodified rdma-core program on srnic
//! by putting the libibverbs/librdmacm stand-ins (tools/rdma-compat,
//! Documentation/srnic/rdma-core.rst) first on LD_LIBRARY_PATH and exec'ing
//! it.

use crate::util::{CmdResult, Fail};
use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Environment variable naming the directory of the stand-ins (as `--libdir`).
pub const LIBDIR_ENV: &str = "SRNIC_COMPAT_LIBDIR";
/// Environment variable the stand-ins read the device node from.
pub const DEVICE_ENV: &str = "SRNIC_DEVICE";
/// The library whose presence marks a directory of stand-ins.
const MARKER: &str = "libibverbs.so.1";
/// Where an installation puts the stand-ins (tests/vm/initramfs.sh uses the first).
const INSTALL_DIRS: &[&str] = &[
    "/usr/lib/srnic/rdma-compat",
    "/usr/local/lib/srnic/rdma-compat",
];

/// The directories searched, in order, when neither `--libdir` nor
/// `$SRNIC_COMPAT_LIBDIR` names one: next to the executable, the build tree
/// (`make compat` writes build/rdma-compat; the tool sits in
/// target/{debug,release}), then the install directories.
fn candidates(exe: Option<&Path>) -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(dir) = exe.and_then(Path::parent) {
        v.push(dir.join("rdma-compat"));
        if let Some(top) = dir.parent().and_then(Path::parent) {
            v.push(top.join("build").join("rdma-compat"));
        }
    }
    v.extend(INSTALL_DIRS.iter().map(PathBuf::from));
    v
}

/// The stand-ins' directory: the explicit one (which must hold them), or the
/// first candidate that does.
fn find_libdir(explicit: Option<PathBuf>, exe: Option<&Path>) -> CmdResult<PathBuf> {
    if let Some(d) = explicit {
        return if d.join(MARKER).is_file() {
            Ok(d)
        } else {
            Err(Fail::Error(format!(
                "{} has no {MARKER} (build the stand-ins with `make compat`)",
                d.display()
            )))
        };
    }
    let c = candidates(exe);
    c.iter()
        .find(|d| d.join(MARKER).is_file())
        .cloned()
        .ok_or_else(|| {
            let tried: Vec<String> = c.iter().map(|d| d.display().to_string()).collect();
            Fail::Error(format!(
                "no rdma-core stand-ins found (tried {}); build them with `make compat` or pass --libdir",
                tried.join(", ")
            ))
        })
}

/// LD_LIBRARY_PATH with `dir` in front of what was there.
fn library_path(dir: &Path, old: Option<&OsStr>) -> OsString {
    let mut p = OsString::from(dir);
    if let Some(old) = old.filter(|o| !o.is_empty()) {
        p.push(":");
        p.push(old);
    }
    p
}

/// The environment variable that carries the MPA options to the librdmacm
/// stand-in (`crc`, `markers`, comma-separated; tools/rdma-compat/rdmacm).
const MPA_ENV: &str = "SRNIC_MPA";

/// MPA options for the program's connections.
#[derive(Clone, Copy, Debug, Default)]
pub struct Mpa {
    /// Ask for CRC32c.
    pub crc: bool,
    /// Ask the peer for markers.
    pub markers: bool,
}

impl Mpa {
    /// The value of `SRNIC_MPA` (empty: srnic's defaults).
    fn env_value(self) -> String {
        [(self.crc, "crc"), (self.markers, "markers")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, name)| *name)
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Replaces this process with `argv` run against the stand-ins. Returns only
/// when the exec failed.
pub fn exec(device: &Path, libdir: Option<PathBuf>, mpa: Mpa, argv: &[OsString]) -> CmdResult {
    let (prog, args) = argv
        .split_first()
        .ok_or_else(|| Fail::Error("srnic exec: no program given".into()))?;
    let explicit = libdir.or_else(|| std::env::var_os(LIBDIR_ENV).map(PathBuf::from));
    let exe = std::env::current_exe().ok();
    let dir = find_libdir(explicit, exe.as_deref())?;
    let dir = dir.canonicalize().unwrap_or(dir);
    let path = library_path(&dir, std::env::var_os("LD_LIBRARY_PATH").as_deref());
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", path)
        .env(DEVICE_ENV, device);
    let mpa = mpa.env_value();
    if !mpa.is_empty() {
        cmd.env(MPA_ENV, mpa);
    }
    let err = cmd.exec();
    Err(Fail::Error(format!(
        "srnic exec: cannot run {}: {err}",
        Path::new(prog).display()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mpa_options_become_the_environment_value() {
        assert_eq!(Mpa::default().env_value(), "");
        assert_eq!(
            Mpa {
                crc: true,
                markers: false
            }
            .env_value(),
            "crc"
        );
        assert_eq!(
            Mpa {
                crc: true,
                markers: true
            }
            .env_value(),
            "crc,markers"
        );
        assert_eq!(
            Mpa {
                crc: false,
                markers: true
            }
            .env_value(),
            "markers"
        );
    }

    #[test]
    fn library_path_prepends() {
        let d = Path::new("/x/rdma-compat");
        assert_eq!(library_path(d, None), OsString::from("/x/rdma-compat"));
        assert_eq!(
            library_path(d, Some(OsStr::new(""))),
            OsString::from("/x/rdma-compat")
        );
        assert_eq!(
            library_path(d, Some(OsStr::new("/a:/b"))),
            OsString::from("/x/rdma-compat:/a:/b")
        );
    }

    #[test]
    fn candidates_cover_the_build_tree_and_installs() {
        let c = candidates(Some(Path::new("/src/target/release/srnic")));
        assert_eq!(c[0], PathBuf::from("/src/target/release/rdma-compat"));
        assert_eq!(c[1], PathBuf::from("/src/build/rdma-compat"));
        assert!(c.ends_with(&INSTALL_DIRS.iter().map(PathBuf::from).collect::<Vec<_>>()));
        assert_eq!(candidates(None).len(), INSTALL_DIRS.len());
    }

    #[test]
    fn explicit_libdir_must_hold_the_stand_ins() {
        let dir = std::env::temp_dir().join(format!("srnic-exec-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(find_libdir(Some(dir.clone()), None).is_err());
        std::fs::write(dir.join(MARKER), b"").unwrap();
        assert_eq!(find_libdir(Some(dir.clone()), None).unwrap(), dir);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
