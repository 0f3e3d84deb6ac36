// SPDX-License-Identifier: GPL-2.0
//! `file-mem` and `memcg`: the kernel memory one open file can make srnic
//! allocate is bounded, by the module's per-file cap and by the caller's
//! memory cgroup.
//!
//! - `file-mem`: one file creates the largest CQs, then the largest QPs, until
//!   the module refuses with ENOMEM; its charge (`QUERY_DEVICE`'s
//!   `kernel_mem`) is then within the cap and less than one more object away
//!   from it. A second file can still create a CQ while the first is full;
//!   destroying the objects gives the charge back.
//! - `memcg`: a child process joins a memory cgroup (prepared by the case) and
//!   creates the largest CQs until the module refuses with ENOMEM while its
//!   own file is still below its cap: the cgroup refused. The parent, outside
//!   the cgroup, checks while the child holds everything that the cgroup's
//!   `memory.current` is within `memory.max`, that the limit was hit and no
//!   process was OOM-killed; then the child frees everything and exits 0.

use crate::util::{err, Checks, Res};
use srnic::{CompletionQueue, Context, QpCap, QpInitAttr, QueuePair};

const MIB: u64 = 1 << 20;

/// (cap, charge) of a file, in bytes.
fn mem(ctx: &Context) -> Res<(u64, u64)> {
    let a = ctx.query_device()?;
    Ok((a.raw.max_kernel_mem, a.raw.kernel_mem))
}

/// The errno of a failed creation.
fn errno<T>(r: &srnic::Result<T>) -> Option<i32> {
    r.as_ref().err().map(|e| e.raw_os_error().unwrap_or(0))
}

/// The largest QP the device allows.
fn big_qp(d: &srnic::DeviceAttr) -> QpCap {
    QpCap {
        max_send_wr: d.raw.max_qp_wr,
        max_recv_wr: d.raw.max_qp_wr,
        max_send_sge: d.raw.max_sge,
        max_recv_sge: d.raw.max_sge,
        max_inline_data: d.raw.max_inline_data,
    }
}

/// Runs `file-mem` (no peer).
pub fn run_file(c: &mut Checks) -> Res {
    let ctx = Context::open()?;
    let d = ctx.query_device()?;
    let (cap, base) = mem(&ctx)?;
    println!(
        "info: per-file cap {} MiB, charge of an empty file {base} bytes",
        cap / MIB
    );
    c.ok("the per-file cap is reported", cap > 0);
    c.ok("an empty file's charge is within the cap", base <= cap);
    let cqe = d.raw.max_cqe;
    let mut cqs: Vec<CompletionQueue> = Vec::new();
    let mut last = base;
    let mut cq_step = 0;
    let bound = (cap / MIB + 1) as usize;
    let e = loop {
        let r = ctx.create_cq(cqe);
        match r {
            Ok(cq) => {
                cqs.push(cq);
                let (_, now) = mem(&ctx)?;
                cq_step = cq_step.max(now - last);
                last = now;
                if cqs.len() > bound {
                    return err(format!("{} CQs of {cqe} entries and no refusal", cqs.len()));
                }
            }
            Err(_) => break errno(&r),
        }
    };
    c.eq(
        "the next largest CQ is refused with ENOMEM",
        e,
        Some(libc::ENOMEM),
    );
    let (_, full) = mem(&ctx)?;
    println!(
        "info: {} CQs of {cqe} entries ({cq_step} bytes each), charge {full} bytes",
        cqs.len()
    );
    c.ok(
        format!("charge within the cap ({full} <= {cap})"),
        full <= cap,
    );
    c.ok(
        format!("the refused CQ would have exceeded it ({full} + {cq_step} > {cap})"),
        full + cq_step > cap,
    );
    c.ok(
        format!(
            "the file got about its cap: {} of {} MiB",
            full / MIB,
            cap / MIB
        ),
        full >= cap * 3 / 4,
    );

    // QPs: the largest, on one small CQ, until refused.
    let pd = ctx.alloc_pd()?;
    let small = match ctx.create_cq(16) {
        Ok(cq) => Some(cq),
        Err(e) => {
            println!("info: even a 16-entry CQ is refused now: {e}");
            None
        }
    };
    if let Some(small) = &small {
        let mut attr = QpInitAttr::new(small, small);
        attr.cap = big_qp(&d);
        let mut qps: Vec<QueuePair> = Vec::new();
        let e = loop {
            let r = pd.create_qp(&attr);
            match r {
                Ok(qp) => {
                    qps.push(qp);
                    if qps.len() > bound {
                        return err("no refusal of the largest QPs");
                    }
                }
                Err(_) => break errno(&r),
            }
        };
        c.eq(
            "the next largest QP is refused with ENOMEM",
            e,
            Some(libc::ENOMEM),
        );
        let (_, now) = mem(&ctx)?;
        println!("info: {} more QPs, charge {now} bytes", qps.len());
        c.ok(
            format!("charge still within the cap ({now} <= {cap})"),
            now <= cap,
        );
        // A second file has a budget of its own.
        let other = Context::open()?;
        match other.create_cq(cqe) {
            Ok(cq) => {
                c.ok("a second file creates the largest CQ meanwhile", true);
                drop(cq);
            }
            Err(e) => {
                c.ok(
                    format!("a second file creates the largest CQ meanwhile: {e}"),
                    false,
                );
            }
        }
        c.eq(
            "the first file is still refused",
            errno(&ctx.create_cq(cqe)),
            Some(libc::ENOMEM),
        );
        drop(other);
        drop(qps);
    }
    drop(small);
    drop(pd);
    drop(cqs);
    let (_, after) = mem(&ctx)?;
    c.eq("destroying everything gives the charge back", after, base);
    match ctx.create_cq(cqe) {
        Ok(_) => c.ok("the largest CQ is created again", true),
        Err(e) => c.ok(format!("the largest CQ is created again: {e}"), false),
    };
    Ok(())
}

/// A cgroup file's content, trimmed.
fn read_cg(dir: &str, file: &str) -> Res<String> {
    Ok(std::fs::read_to_string(format!("{dir}/{file}"))?
        .trim()
        .to_owned())
}

/// One `key value` line of a flat-keyed cgroup file (memory.events).
fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' ')?.trim().parse().ok())
}

/// The child of `memcg`: joins the cgroup, fills it, stops for the parent's
/// checks, frees everything. Returns its exit status.
fn child(dir: &str) -> i32 {
    let setup = (|| -> Res<(Context, u32)> {
        let ctx = Context::open()?;
        let cqe = ctx.query_device()?.raw.max_cqe;
        std::fs::write(format!("{dir}/cgroup.procs"), "0")?;
        Ok((ctx, cqe))
    })();
    let (ctx, cqe) = match setup {
        Ok(v) => v,
        Err(e) => {
            println!("FAIL: memcg child set-up: {e}");
            return 1;
        }
    };
    // Room for every handle before the cgroup fills: nothing below allocates
    // user memory until the objects are gone again.
    let mut cqs: Vec<CompletionQueue> = Vec::with_capacity(1024);
    let mut outcome = (0, 0u64, 0u64);
    for _ in 0..1024 {
        let r = ctx.create_cq(cqe);
        match r {
            Ok(cq) => cqs.push(cq),
            Err(_) => {
                // Give back one CQ's worth before anything else runs in the
                // full cgroup (a page fault there could call the OOM killer).
                let e = errno(&r).unwrap_or(0);
                drop(cqs.pop());
                let (cap, used) = mem(&ctx).unwrap_or((0, u64::MAX));
                outcome = (e, cap, used);
                break;
            }
        }
    }
    // SAFETY: raise without pointers; the parent continues us.
    unsafe { libc::raise(libc::SIGSTOP) };
    let n = cqs.len();
    drop(cqs);
    drop(ctx);
    let (e, cap, used) = outcome;
    println!(
        "info: child: {n} CQs of {cqe} entries, then errno {e} with the file at {used} of {cap} bytes"
    );
    if e != libc::ENOMEM {
        println!("FAIL: child: the cgroup's limit was not reported as ENOMEM (errno {e})");
        return 1;
    }
    // `used` is one CQ below the refusal.
    if used.saturating_add(2 * u64::from(cqe) * 64) > cap {
        println!("FAIL: child: the per-file cap, not the cgroup, refused (raise file_mem_mib)");
        return 1;
    }
    println!("ok: child: the cgroup refused with ENOMEM below the per-file cap");
    0
}

/// Runs `memcg` with the cgroup directory `dir` (its memory.max set).
pub fn run_memcg(c: &mut Checks, dir: &str, seconds: u64) -> Res {
    let max: u64 = read_cg(dir, "memory.max")?.parse()?;
    println!("info: cgroup {dir}, memory.max {max}");
    // SAFETY: this program is single-threaded here; the child only runs
    // `child` and exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return err(format!("fork: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        let rc = child(dir);
        // SAFETY: leave the child without running the parent's exit path.
        unsafe { libc::_exit(rc) };
    }
    let wait = |flags: i32, what: &str| -> Res<i32> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
        loop {
            let mut st = 0;
            // SAFETY: `st` is a valid place for the status.
            let r = unsafe { libc::waitpid(pid, &mut st, flags | libc::WNOHANG) };
            if r == pid {
                return Ok(st);
            }
            if r < 0 {
                return err(format!("waitpid: {}", std::io::Error::last_os_error()));
            }
            if std::time::Instant::now() > deadline {
                // SAFETY: kill our own child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                return err(format!("the child did not {what} within {seconds} s"));
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let st = wait(libc::WUNTRACED, "fill the cgroup")?;
    if !libc::WIFSTOPPED(st) {
        return err(format!(
            "the child ended before filling the cgroup (status {st:#x})"
        ));
    }
    let current: u64 = read_cg(dir, "memory.current")?.parse()?;
    let events = read_cg(dir, "memory.events")?;
    println!(
        "info: memory.current {current}, memory.events: {}",
        events.replace('\n', ", ")
    );
    c.ok(
        format!("memory.current within memory.max ({current} <= {max})"),
        current <= max,
    );
    c.ok(
        format!("the child's objects filled the cgroup ({current} > {max} / 2)"),
        current > max / 2,
    );
    c.ok(
        "the cgroup's limit was hit (memory.events max > 0)",
        keyed(&events, "max").unwrap_or(0) > 0,
    );
    c.eq(
        "nobody was OOM-killed (memory.events oom_kill)",
        keyed(&events, "oom_kill"),
        Some(0),
    );
    // SAFETY: continue our own child.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let st = wait(0, "exit")?;
    c.ok(
        format!("the child exited normally, status 0 (wait status {st:#x})"),
        libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
    );
    let events = read_cg(dir, "memory.events")?;
    c.eq("still no OOM kill", keyed(&events, "oom_kill"), Some(0));
    Ok(())
}
