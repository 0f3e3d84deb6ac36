// SPDX-License-Identifier: GPL-2.0
//! `memlock`: memory registration is charged to RLIMIT_MEMLOCK.
//!
//! Root has CAP_IPC_LOCK, which bypasses the limit, so the program opens the
//! device as root, sets the limit, checks that root may register beyond it,
//! and becomes an unprivileged user (which clears every capability). Then:
//! - a region within the limit registers, and its pages show in VmPin;
//! - a region one page beyond the limit fails with ENOMEM;
//! - a region that fits alone but not next to one already registered fails
//!   with ENOMEM;
//! - after the failures nothing stays charged: VmPin and the device's
//!   pinned_pages are back at their baseline, and a region of exactly the
//!   limit registers.

use crate::util::{err, stat, Checks, Res};
use srnic::{AccessFlags, Context, MrBuffer};

const KIB: usize = 1024;

/// /proc/self/status, opened while still root: the initramfs's root directory
/// may not be searchable by the unprivileged user, and /proc regenerates the
/// file on every read from offset 0.
struct ProcStatus(std::fs::File);

impl ProcStatus {
    fn open() -> Res<Self> {
        Ok(Self(std::fs::File::open("/proc/self/status")?))
    }

    /// A field, as its first word.
    fn field(&mut self, field: &str) -> Res<String> {
        use std::io::{Read, Seek};
        let mut s = String::new();
        self.0.rewind()?;
        self.0.read_to_string(&mut s)?;
        s.lines()
            .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next())
            .map(str::to_owned)
            .ok_or_else(|| format!("no {field} in /proc/self/status").into())
    }

    /// Pinned memory of this process (mm->pinned_vm), in KiB.
    fn vm_pin(&mut self) -> Res<usize> {
        Ok(self.field("VmPin")?.parse()?)
    }
}

/// Becomes `uid` (user and group, no supplementary groups), which clears
/// every capability; keeps /proc/self readable.
pub fn drop_privileges(uid: u32) -> Res {
    // SAFETY: plain system calls without pointers (setgroups with none).
    let r = unsafe {
        if libc::setgroups(0, std::ptr::null()) != 0
            || libc::setresgid(uid, uid, uid) != 0
            || libc::setresuid(uid, uid, uid) != 0
        {
            -1
        } else {
            0
        }
    };
    if r != 0 {
        return err(format!(
            "dropping privileges to {uid}: {}",
            std::io::Error::last_os_error()
        ));
    }
    // The credential change made the process non-dumpable, which makes
    // /proc/self/status root's; make it readable again.
    // SAFETY: prctl without pointers.
    if unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) } != 0 {
        return err(format!(
            "PR_SET_DUMPABLE: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Registers `len` bytes; the errno on failure, printed with the error.
fn register(
    pd: &srnic::ProtectionDomain,
    len: usize,
) -> Res<Result<srnic::MemoryRegion<'static>, i32>> {
    let buf = MrBuffer::new(len)?;
    match pd.reg_buffer(buf, AccessFlags::LOCAL_WRITE) {
        Ok(m) => Ok(Ok(m)),
        Err(e) => {
            println!("info: registering {} KiB: {e}", len / KIB);
            Ok(Err(e.raw_os_error().unwrap_or(0)))
        }
    }
}

/// Runs the scenario (no peer).
pub fn run(c: &mut Checks, limit_kib: usize, uid: u32) -> Res {
    if limit_kib < 16 || limit_kib & 3 != 0 {
        return err("--limit-kib: a multiple of 4, at least 16");
    }
    let limit = limit_kib * KIB;
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let mut st = ProcStatus::open()?;
    let rl = libc::rlimit {
        rlim_cur: limit as libc::rlim_t,
        rlim_max: limit as libc::rlim_t,
    };
    // SAFETY: `rl` is a valid rlimit for the call.
    if unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &rl) } != 0 {
        return err(format!("setrlimit: {}", std::io::Error::last_os_error()));
    }
    // Root's CAP_IPC_LOCK bypasses the limit: twice the limit registers.
    match register(&pd, 2 * limit)? {
        Ok(m) => {
            c.ok(
                format!(
                    "as root (CAP_IPC_LOCK), {} KiB (twice the limit) registers",
                    2 * limit_kib
                ),
                true,
            );
            drop(m);
        }
        Err(e) => {
            c.ok(
                format!("as root, twice the limit registers: errno {e}"),
                false,
            );
        }
    }
    drop_privileges(uid)?;
    // SAFETY: no arguments.
    let euid = unsafe { libc::geteuid() };
    c.eq("running as the unprivileged user", euid, uid);
    c.eq(
        "no effective capabilities (no CAP_IPC_LOCK)",
        st.field("CapEff")?,
        "0000000000000000".to_owned(),
    );
    let pin0 = st.vm_pin()?;
    let dev0 = stat(&ctx, "pinned_pages")?;
    println!("info: RLIMIT_MEMLOCK {limit_kib} KiB, VmPin {pin0} KiB, pinned_pages {dev0}");

    // Within the limit.
    let quarter = limit / 4;
    match register(&pd, quarter)? {
        Ok(m) => {
            c.ok(
                format!("{} KiB (within the limit) registers", quarter / KIB),
                true,
            );
            c.eq(
                "VmPin charged with the region",
                st.vm_pin()?,
                pin0 + quarter / KIB,
            );
            drop(m);
            c.eq("VmPin uncharged after deregistration", st.vm_pin()?, pin0);
        }
        Err(e) => {
            c.ok(
                format!(
                    "{} KiB (within the limit) registers: errno {e}",
                    quarter / KIB
                ),
                false,
            );
        }
    }

    // Beyond the limit.
    let over = limit + 4 * KIB;
    match register(&pd, over)? {
        Ok(_) => {
            c.ok(
                format!("{} KiB (beyond the limit) fails", over / KIB),
                false,
            );
        }
        Err(e) => {
            c.eq(
                format!("{} KiB (beyond the limit) fails with ENOMEM", over / KIB),
                e,
                libc::ENOMEM,
            );
        }
    }
    c.eq("VmPin after the failure", st.vm_pin()?, pin0);

    // Within alone, beyond next to another region.
    let three = 3 * limit / 4;
    match register(&pd, three)? {
        Ok(m) => {
            c.ok(format!("{} KiB registers", three / KIB), true);
            match register(&pd, limit / 2)? {
                Ok(_) => {
                    c.ok(
                        format!(
                            "another {} KiB (beyond the limit in total) fails",
                            limit / 2 / KIB
                        ),
                        false,
                    );
                }
                Err(e) => {
                    c.eq(
                        format!(
                            "another {} KiB (beyond the limit in total) fails with ENOMEM",
                            limit / 2 / KIB
                        ),
                        e,
                        libc::ENOMEM,
                    );
                }
            }
            c.eq(
                "VmPin holds only the first region",
                st.vm_pin()?,
                pin0 + three / KIB,
            );
            drop(m);
        }
        Err(e) => {
            c.ok(format!("{} KiB registers: errno {e}", three / KIB), false);
        }
    }

    // Nothing stays charged.
    c.eq("VmPin back at its baseline", st.vm_pin()?, pin0);
    c.eq(
        "device pinned_pages back at its baseline",
        stat(&ctx, "pinned_pages")?,
        dev0,
    );
    match register(&pd, limit)? {
        Ok(m) => {
            c.ok(
                format!("exactly the limit ({limit_kib} KiB) registers after the failures"),
                true,
            );
            c.eq("VmPin charged with it", st.vm_pin()?, pin0 + limit_kib);
            drop(m);
        }
        Err(e) => {
            c.ok(
                format!("exactly the limit registers after the failures: errno {e}"),
                false,
            );
        }
    }
    c.eq("VmPin back at its baseline at the end", st.vm_pin()?, pin0);
    Ok(())
}
