// SPDX-License-Identifier: GPL-2.0
//! `srnic res`: every object srnic holds, device-wide, one line each, as
//! `rdma res show` prints an RDMA device's (Documentation/srnic/observability.rst).
//! Root sees every object, other users those of the contexts they opened.

use crate::util::CmdResult;
use clap::ValueEnum;
use srnic::{uapi as abi, Context, MpaFlags, QpState, Resource, Terminate};

/// The kinds of object `srnic res` lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Queue pairs: state, addresses, MPA settings, queues, counters.
    Qp,
    /// Completion queues: size, completions waiting, users.
    Cq,
    /// Memory regions: STag, access, range, pinned pages.
    Mr,
    /// iWARP listeners: address, MPA settings, requests waiting.
    Listen,
    /// Sandia RMPP endpoints: interface, NID, messages in flight.
    Rmpp,
}

/// Every kind, in the order `srnic res` with no kind lists them.
pub const ALL: [Kind; 5] = [Kind::Qp, Kind::Cq, Kind::Mr, Kind::Listen, Kind::Rmpp];

/// One field of a record: its name and its value as text.
pub type Field = (&'static str, String);

fn owner(kind: &'static str, o: &abi::SrnicResOwner) -> Vec<Field> {
    vec![
        (kind, o.handle.to_string()),
        ("pid", o.pid.to_string()),
        ("uid", o.uid.to_string()),
        ("ctx", o.context.to_string()),
    ]
}

fn addr(a: &abi::SrnicSockaddr) -> String {
    srnic::sockaddr_from_abi(a).map_or_else(|| "-".into(), |s| s.to_string())
}

fn qp(r: &abi::SrnicResQp) -> Vec<Field> {
    let mut f = owner("qp", &r.owner);
    f.extend([
        ("state", QpState::from(r.state).to_string()),
        ("local", addr(&r.local)),
        ("remote", addr(&r.remote)),
        ("mpa", MpaFlags(r.mpa_flags).to_string()),
        ("ird", r.ird.to_string()),
        ("ord", r.ord.to_string()),
        ("sq", format!("{}/{}", r.send_queued, r.max_send_wr)),
        ("rq", format!("{}/{}", r.recv_queued, r.max_recv_wr)),
        ("send_cq", r.send_cq.to_string()),
        ("recv_cq", r.recv_cq.to_string()),
        ("tx_bytes", r.tx_bytes.to_string()),
        ("rx_bytes", r.rx_bytes.to_string()),
        ("tx_fpdus", r.tx_fpdus.to_string()),
        ("rx_fpdus", r.rx_fpdus.to_string()),
        ("term", term(r.term)),
    ]);
    f
}

/// A TERMINATE word as `0x1100/sent` (layer, type, code; which way), `-` for none.
fn term(word: u32) -> String {
    Terminate::from_word(word).map_or_else(
        || "-".into(),
        |t| {
            let code = u32::from(t.layer) << 12 | u32::from(t.etype) << 8 | u32::from(t.code);
            format!(
                "{code:#06x}/{}",
                if t.received { "received" } else { "sent" }
            )
        },
    )
}

fn cq(r: &abi::SrnicResCq) -> Vec<Field> {
    let mut f = owner("cq", &r.owner);
    f.extend([
        ("cqe", r.cqe.to_string()),
        ("queued", r.queued.to_string()),
        ("users", r.users.to_string()),
    ]);
    f
}

fn mr(r: &abi::SrnicResMr) -> Vec<Field> {
    let mut f = owner("mr", &r.owner);
    f.extend([
        ("lkey", format!("{:#x}", r.lkey)),
        ("access", access(r.access)),
        ("addr", format!("{:#x}", r.addr)),
        ("length", r.length.to_string()),
        ("pinned_pages", r.pinned_pages.to_string()),
    ]);
    f
}

/// `SRNIC_ACCESS_*` bits by name (`local-write,remote-read`), `-` for none.
fn access(bits: u32) -> String {
    let names: Vec<String> = (0..32)
        .map(|b| 1u32 << b)
        .filter(|bit| bits & bit != 0)
        .map(|bit| match abi::name_of("SRNIC_ACCESS_", u64::from(bit)) {
            Some(n) => n.to_ascii_lowercase().replace('_', "-"),
            None => format!("bit{}", bit.trailing_zeros()),
        })
        .collect();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(",")
    }
}

fn listen(r: &abi::SrnicResListen) -> Vec<Field> {
    let mut f = owner("listen", &r.owner);
    f.extend([
        ("addr", addr(&r.addr)),
        ("mpa", MpaFlags(r.mpa_flags).to_string()),
        ("pending", r.pending.to_string()),
        ("backlog", r.backlog.to_string()),
    ]);
    f
}

fn rmpp(r: &abi::SrnicResRmpp) -> Vec<Field> {
    let mut f = owner("ep", &r.owner);
    f.extend([
        ("ifindex", r.ifindex.to_string()),
        ("nid", r.nid.to_string()),
        ("ethertype", format!("{:#06x}", r.ethertype)),
        ("sends", r.active_sends.to_string()),
        ("recvs", r.active_recvs.to_string()),
    ]);
    f
}

fn records<T: Resource>(ctx: &Context, fields: fn(&T) -> Vec<Field>) -> CmdResult<Vec<Vec<Field>>> {
    Ok(ctx.resources::<T>()?.iter().map(fields).collect())
}

/// The records of one kind, each as its fields.
pub fn list(ctx: &Context, kind: Kind) -> CmdResult<Vec<Vec<Field>>> {
    match kind {
        Kind::Qp => records(ctx, qp),
        Kind::Cq => records(ctx, cq),
        Kind::Mr => records(ctx, mr),
        Kind::Listen => records(ctx, listen),
        Kind::Rmpp => records(ctx, rmpp),
    }
}

/// One record as a line: `name value` pairs (as `rdma res show` prints).
pub fn line(fields: &[Field]) -> String {
    fields
        .iter()
        .map(|(n, v)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `srnic res [KIND]`: the records of `kind`, or of every kind.
pub fn run(ctx: &Context, kind: Option<Kind>) -> CmdResult {
    let one;
    let kinds: &[Kind] = match kind {
        Some(k) => {
            one = [k];
            &one
        }
        None => &ALL,
    };
    for k in kinds {
        for r in list(ctx, *k)? {
            println!("{}", line(&r));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qp_line_names_owner_state_and_addresses() {
        let r = abi::SrnicResQp {
            owner: abi::SrnicResOwner {
                pid: 261,
                uid: 1000,
                handle: 8193,
                context: 4,
            },
            state: abi::SRNIC_QPS_RTS,
            local: srnic::sockaddr_to_abi(&"192.0.2.1:47414".parse().unwrap()),
            remote: srnic::sockaddr_to_abi(&"192.0.2.2:7301".parse().unwrap()),
            send_queued: 2,
            max_send_wr: 64,
            term: 0x1100,
            ..Default::default()
        };
        let l = line(&qp(&r));
        assert!(
            l.starts_with("qp 8193 pid 261 uid 1000 ctx 4 state "),
            "{l}"
        );
        assert!(
            l.contains(" local 192.0.2.1:47414 remote 192.0.2.2:7301 "),
            "{l}"
        );
        assert!(l.contains(" sq 2/64 "), "{l}");
        assert!(l.ends_with(" term 0x1100/sent"), "{l}");
    }

    #[test]
    fn access_bits_by_name() {
        assert_eq!(access(0), "-");
        assert_eq!(
            access(abi::SRNIC_ACCESS_LOCAL_WRITE | abi::SRNIC_ACCESS_REMOTE_READ),
            "local-write,remote-read"
        );
        assert_eq!(access(1 << 9), "bit9");
    }
}
