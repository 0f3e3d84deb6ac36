// SPDX-License-Identifier: GPL-2.0
//! `srnic res`: every object srnic holds, device-wide, one line each, as
//! `rdma res show` prints an RDMA device's (Documentation/srnic/observability.rst).
//! Root sees every object, other users those of the contexts they opened.

use crate::output::{named_values, Output, Report};
use crate::util::CmdResult;
use clap::ValueEnum;
use serde::Serialize;
use srnic::{uapi as abi, Context, MpaFlags, QpState, Resource, Terminate};
use std::fmt;
use std::io::{self, Write};

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
    /// VMTP entities: identifier, role, transactions in progress.
    Vmtp,
}

/// Every kind, in the order `srnic res` with no kind lists them.
pub const ALL: [Kind; 6] = [
    Kind::Qp,
    Kind::Cq,
    Kind::Mr,
    Kind::Listen,
    Kind::Rmpp,
    Kind::Vmtp,
];

impl Kind {
    /// Its name on the command line and in the output.
    fn name(self) -> &'static str {
        match self {
            Kind::Qp => "qp",
            Kind::Cq => "cq",
            Kind::Mr => "mr",
            Kind::Listen => "listen",
            Kind::Rmpp => "rmpp",
            Kind::Vmtp => "vmtp",
        }
    }
}

/// A field's value: a number (a JSON number) or text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Val {
    Num(u64),
    Int(i64),
    Text(String),
}

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Val::Num(n) => write!(f, "{n}"),
            Val::Int(n) => write!(f, "{n}"),
            Val::Text(t) => f.write_str(t),
        }
    }
}

impl From<u32> for Val {
    fn from(n: u32) -> Self {
        Val::Num(n.into())
    }
}

impl From<u64> for Val {
    fn from(n: u64) -> Self {
        Val::Num(n)
    }
}

impl From<i32> for Val {
    fn from(n: i32) -> Self {
        Val::Int(n.into())
    }
}

impl From<String> for Val {
    fn from(t: String) -> Self {
        Val::Text(t)
    }
}

/// One field of a record: its name and its value.
pub type Field = (&'static str, Val);

/// One object: its fields in order (the text's `name value` pairs, the JSON
/// object's members).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Record(#[serde(serialize_with = "named_values")] pub Vec<Field>);

fn owner(kind: &'static str, o: &abi::SrnicResOwner) -> Vec<Field> {
    vec![
        (kind, o.handle.into()),
        ("pid", o.pid.into()),
        ("uid", o.uid.into()),
        ("ctx", o.context.into()),
    ]
}

fn addr(a: &abi::SrnicSockaddr) -> String {
    srnic::sockaddr_from_abi(a).map_or_else(|| "-".into(), |s| s.to_string())
}

fn qp(r: &abi::SrnicResQp) -> Vec<Field> {
    let mut f = owner("qp", &r.owner);
    f.extend::<Vec<Field>>(vec![
        ("state", QpState::from(r.state).to_string().into()),
        ("local", addr(&r.local).into()),
        ("remote", addr(&r.remote).into()),
        ("mpa", MpaFlags(r.mpa_flags).to_string().into()),
        ("ird", r.ird.into()),
        ("ord", r.ord.into()),
        ("sq", format!("{}/{}", r.send_queued, r.max_send_wr).into()),
        ("rq", format!("{}/{}", r.recv_queued, r.max_recv_wr).into()),
        ("send_cq", r.send_cq.into()),
        ("recv_cq", r.recv_cq.into()),
        ("tx_bytes", r.tx_bytes.into()),
        ("rx_bytes", r.rx_bytes.into()),
        ("tx_fpdus", r.tx_fpdus.into()),
        ("rx_fpdus", r.rx_fpdus.into()),
        ("term", term(r.term).into()),
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
    f.extend::<Vec<Field>>(vec![
        ("cqe", r.cqe.into()),
        ("queued", r.queued.into()),
        ("users", r.users.into()),
    ]);
    f
}

fn mr(r: &abi::SrnicResMr) -> Vec<Field> {
    let mut f = owner("mr", &r.owner);
    f.extend::<Vec<Field>>(vec![
        ("lkey", format!("{:#x}", r.lkey).into()),
        ("access", access(r.access).into()),
        ("addr", format!("{:#x}", r.addr).into()),
        ("length", r.length.into()),
        ("pinned_pages", r.pinned_pages.into()),
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
    f.extend::<Vec<Field>>(vec![
        ("addr", addr(&r.addr).into()),
        ("mpa", MpaFlags(r.mpa_flags).to_string().into()),
        ("pending", r.pending.into()),
        ("backlog", r.backlog.into()),
    ]);
    f
}

fn rmpp(r: &abi::SrnicResRmpp) -> Vec<Field> {
    let mut f = owner("ep", &r.owner);
    f.extend::<Vec<Field>>(vec![
        ("ifindex", r.ifindex.into()),
        ("nid", r.nid.into()),
        ("ethertype", format!("{:#06x}", r.ethertype).into()),
        ("sends", r.active_sends.into()),
        ("recvs", r.active_recvs.into()),
        ("srtt_us", r.srtt_us.into()),
    ]);
    f
}

fn vmtp(r: &abi::SrnicResVmtp) -> Vec<Field> {
    let mut f = owner("entity", &r.owner);
    f.extend::<Vec<Field>>(vec![
        ("id", srnic::VmtpEntityId(r.entity).to_string().into()),
        (
            "role",
            if r.role == abi::SRNIC_VMTP_SERVER {
                "server"
            } else {
                "client"
            }
            .to_string()
            .into(),
        ),
        ("in_progress", r.in_progress.into()),
        ("posted", r.posted.into()),
    ]);
    f
}

fn records<T: Resource>(ctx: &Context, fields: fn(&T) -> Vec<Field>) -> CmdResult<Vec<Record>> {
    Ok(ctx
        .resources::<T>()?
        .iter()
        .map(|r| Record(fields(r)))
        .collect())
}

/// The records of one kind.
pub fn list(ctx: &Context, kind: Kind) -> CmdResult<Vec<Record>> {
    match kind {
        Kind::Qp => records(ctx, qp),
        Kind::Cq => records(ctx, cq),
        Kind::Mr => records(ctx, mr),
        Kind::Listen => records(ctx, listen),
        Kind::Rmpp => records(ctx, rmpp),
        Kind::Vmtp => records(ctx, vmtp),
    }
}

/// One record as a line: `name value` pairs (as `rdma res show` prints).
pub fn line(r: &Record) -> String {
    r.0.iter()
        .map(|(n, v)| format!("{n} {v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// What `srnic res` prints: the records of each kind asked for. Text: one
/// line per record; JSON: one object with a list of records per kind.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct ResReport(
    #[serde(serialize_with = "named_values")] pub Vec<(&'static str, Vec<Record>)>,
);

impl Report for ResReport {
    fn write_text(&self, out: &mut dyn Write) -> io::Result<()> {
        for r in self.0.iter().flat_map(|(_, rs)| rs) {
            writeln!(out, "{}", line(r))?;
        }
        Ok(())
    }
}

/// `srnic res [KIND]`: the records of `kind`, or of every kind.
pub fn run(ctx: &Context, kind: Option<Kind>, out: &Output) -> CmdResult {
    let kinds = match kind {
        Some(k) => vec![k],
        None => ALL.to_vec(),
    };
    let mut report = ResReport(Vec::new());
    for k in kinds {
        report.0.push((k.name(), list(ctx, k)?));
    }
    out.emit(&report)
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
        let l = line(&Record(qp(&r)));
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
    fn json_has_a_list_per_kind_and_numbers_as_numbers() {
        let r = abi::SrnicResCq {
            owner: abi::SrnicResOwner {
                pid: 7,
                uid: 0,
                handle: 1,
                context: 2,
            },
            cqe: 96,
            ..Default::default()
        };
        let rep = ResReport(vec![("cq", vec![Record(cq(&r))]), ("mr", vec![])]);
        let v = crate::output::json(&rep);
        assert_eq!(v["cq"][0]["cq"], 1);
        assert_eq!(v["cq"][0]["pid"], 7);
        assert_eq!(v["cq"][0]["cqe"], 96);
        assert_eq!(v["mr"].as_array().unwrap().len(), 0);
        let text = crate::output::render(crate::output::Format::Text, &rep);
        assert_eq!(text, "cq 1 pid 7 uid 0 ctx 2 cqe 96 queued 0 users 0\n");
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
