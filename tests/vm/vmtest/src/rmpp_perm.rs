// SPDX-License-Identifier: GPL-2.0
//! `rmpp-perm`: RMPP endpoints send and receive raw frames, so creating one
//! needs CAP_NET_RAW, and an endpoint gets only srnic's EtherType.
//!
//! As root: an endpoint on the netdev is created; EtherTypes other than
//! 0x88B5 (IPv4's 0x0800, the other local experimental 0x88B6) are refused
//! with EINVAL. Then as an unprivileged user (no capabilities), with the
//! device, PD and CQs opened as root: creating the endpoint fails with EPERM.

use crate::memlock::drop_privileges;
use crate::util::{Checks, Res};
use srnic::{Context, RmppEndpoint, RmppEndpointAttr};

/// Runs the scenario (no peer, no node table needed).
pub fn run(c: &mut Checks, ifname: &str, nid: u32, uid: u32) -> Res {
    let ctx = Context::open()?;
    let pd = ctx.alloc_pd()?;
    let cq = ctx.create_cq(64)?;
    let attr = |ethertype: u16| RmppEndpointAttr {
        nid,
        ifname: ifname.to_owned(),
        ethertype,
        ..Default::default()
    };
    let create = |ethertype: u16| -> Option<i32> {
        match RmppEndpoint::new(&pd, &cq, &cq, &attr(ethertype)) {
            Ok(ep) => {
                drop(ep);
                None
            }
            Err(e) => {
                println!("info: endpoint with EtherType {ethertype:#06x}: {e}");
                Some(e.raw_os_error().unwrap_or(0))
            }
        }
    };
    c.eq(
        "root creates an endpoint (default EtherType)",
        create(0),
        None,
    );
    c.eq(
        "root creates an endpoint with EtherType 0x88b5",
        create(0x88B5),
        None,
    );
    c.eq(
        "EtherType 0x0800 is refused (EINVAL)",
        create(0x0800),
        Some(libc::EINVAL),
    );
    c.eq(
        "EtherType 0x88b6 is refused (EINVAL)",
        create(0x88B6),
        Some(libc::EINVAL),
    );
    drop_privileges(uid)?;
    // SAFETY: no arguments.
    let euid = unsafe { libc::geteuid() };
    c.eq("running as the unprivileged user", euid, uid);
    c.eq(
        "without CAP_NET_RAW creating an endpoint fails with EPERM",
        create(0),
        Some(libc::EPERM),
    );
    c.eq(
        "a bad EtherType is still EINVAL for it",
        create(0x0800),
        Some(libc::EINVAL),
    );
    Ok(())
}
