// SPDX-License-Identifier: GPL-2.0
//! `srnic-vmtest`: the test program of srnic's two-VM cases.
//!
//! Every connected scenario runs as a server (`-s`, the passive side and the
//! target of remote accesses) on one VM and a client (`-c ADDR`) on the other.
//! The sides coordinate over a plain TCP control connection on `--port`; the
//! RDMA connections use `--port + 1`. Each side prints one `ok: ...` or
//! `FAIL: ...` line per assertion and exits 0 only when every assertion held.

mod abi_fuzz;
mod budget;
mod cq_ring;
mod dereg_inflight;
mod destroy_connecting;
mod destroy_race;
mod fence;
mod flood;
mod hostile;
mod invalidate;
mod ktest_peer;
mod link_down;
mod many_qps;
mod memlock;
mod remote_access;
mod rmpp_perm;
mod solicited;
mod stall;
mod stress;
mod tiny_mss;
mod util;
mod zcopy;

use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Duration;
use util::{resolve, Checks, Ctl, Res};

#[derive(Parser)]
#[command(name = "srnic-vmtest", about = "srnic VM test scenarios")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

/// Which side to be.
#[derive(Args, Clone, Debug)]
#[group(required = true, multiple = false)]
struct Role {
    /// Be the server (passive side, target of the remote accesses).
    #[arg(short = 's', long)]
    server: bool,
    /// Be the client: the server is at ADDR.
    #[arg(short = 'c', long, value_name = "ADDR")]
    client: Option<String>,
}

/// What every connected scenario takes.
#[derive(Args, Clone, Debug)]
struct Net {
    #[command(flatten)]
    role: Role,
    /// The control port; the RDMA listener uses the next port.
    #[arg(short = 'p', long, default_value_t = 19000)]
    port: u16,
    /// Seconds any single wait may take.
    #[arg(short = 't', long, default_value_t = 60)]
    timeout: u64,
}

#[derive(Subcommand)]
enum Cmd {
    /// A hostile iWARP peer: the client speaks MPA/DDP/RDMAP itself and breaks
    /// the protocol case by case (one table, each row citing the RFCs); each
    /// TERMINATE srnic sends back is checked field by field, or the close
    /// where the RFCs want no TERMINATE; a bystander QP keeps moving verified
    /// data.
    Hostile {
        #[command(flatten)]
        net: Net,
        /// Write one line per case here (client): TCP port, case, what srnic
        /// must send (for the host's tshark check).
        #[arg(long)]
        runs: Option<std::path::PathBuf>,
    },
    /// Bad STag, out of bounds, missing access right, wrong PD: the TERMINATE,
    /// error completion, QP_ERROR event and QP state on both sides, while a
    /// second QP keeps transferring verified data.
    RemoteAccess(Net),
    /// RDMA READs beyond the ORD and a fenced RDMA WRITE behind them: the
    /// READs see the old data, the WRITE completes, the server sees it.
    Fence(Net),
    /// CQ arming: solicited-only ignores a plain Send and fires on a Send with
    /// Solicited Event or an error completion; one-shot; NEXT_COMP.
    Solicited(Net),
    /// Send with Invalidate: the receiver's completion names the STag, a
    /// later RDMA WRITE or READ to it fails with the TERMINATE.
    Invalidate(Net),
    /// A QP destroyed while connecting: the late MPA Reply is refused, the
    /// socket closed, no event names the QP, nothing is left.
    DestroyConnecting(Net),
    /// Many QPs at once, each with verified WRITEs, SENDs and READs.
    ManyQps {
        #[command(flatten)]
        net: Net,
        /// How many QPs.
        #[arg(long, default_value_t = 64)]
        qps: u32,
        /// Rounds of transfers per QP.
        #[arg(long, default_value_t = 4)]
        rounds: u32,
        /// Bytes per transfer.
        #[arg(long, default_value_t = 65536)]
        size: usize,
    },
    /// Large regions and RDMA WRITEs and READs in flight until killed or the
    /// peer goes away (then: report the disconnect and exit 0).
    Stress {
        #[command(flatten)]
        net: Net,
        /// Bytes of each side's region.
        #[arg(long, default_value_t = 16 << 20)]
        size: usize,
        /// Stop after this many seconds (a safety net).
        #[arg(long, default_value_t = 300)]
        seconds: u64,
        /// Write this process's id here once transfers run.
        #[arg(long)]
        pidfile: Option<std::path::PathBuf>,
    },
    /// A connection flood: IDLE connections that send nothing and HALF that
    /// send half an MPA Request, held until STOP exists (or HOLD seconds);
    /// then how many the server closed.
    Flood {
        /// The listener's address.
        #[arg(long)]
        to: String,
        /// Its port.
        #[arg(short = 'p', long)]
        port: u16,
        /// Connections that send nothing.
        #[arg(long, default_value_t = 1000)]
        idle: u32,
        /// Connections that send half an MPA Request header.
        #[arg(long, default_value_t = 1000)]
        half: u32,
        /// Written (with the number opened) once the flood is in place.
        #[arg(long)]
        ready: std::path::PathBuf,
        /// The flood ends when this file exists.
        #[arg(long)]
        stop: std::path::PathBuf,
        /// The flood ends after this many seconds at most.
        #[arg(long, default_value_t = 600)]
        hold: u64,
        /// End as soon as the server has closed every connection.
        #[arg(long)]
        until_closed: bool,
    },
    /// RLIMIT_MEMLOCK: as an unprivileged user (no CAP_IPC_LOCK), registering
    /// beyond the limit fails with ENOMEM, within it succeeds, nothing stays
    /// charged after a failure.
    Memlock {
        /// The limit to set, in KiB.
        #[arg(long, default_value_t = 1024)]
        limit_kib: usize,
        /// The user (and group) to become after opening the device.
        #[arg(long, default_value_t = 65534)]
        uid: u32,
    },
    /// The per-file memory cap: the largest CQs, then QPs, until ENOMEM; the
    /// charge stays within the cap; a second file still allocates; destroying
    /// gives the charge back.
    FileMem,
    /// A CQ's completions through the mapped ring and through POLL_CQ: in
    /// order, each once, over many turns; one beyond the capacity overflows.
    CqRing,
    /// A child in the memory cgroup DIR (memory.max set) fills it with CQs: it
    /// gets ENOMEM, no OOM kill, memory.current stays within memory.max.
    Memcg {
        /// The cgroup directory (cgroup v2, memory controller enabled).
        #[arg(long)]
        cgroup: String,
        /// Seconds each of the child's steps may take.
        #[arg(short = 't', long, default_value_t = 120)]
        timeout: u64,
    },
    /// A large RDMA WRITE sent zero-copy to a peer that reads nothing yet
    /// completes only once the peer read it; a QP destroyed meanwhile is freed
    /// once the peer resets. Without --zerocopy (module parameter zcopy_min 0
    /// on the server) it completes while the peer reads nothing.
    Zcopy {
        #[command(flatten)]
        net: Net,
        /// The server's module sends the WRITE zero-copy.
        #[arg(long)]
        zerocopy: bool,
    },
    /// A peer requests a large RDMA READ and never reads its socket: the
    /// server's other QP keeps moving data, the stuck QP fails after the
    /// stall timeout with its work requests flushed.
    Stall {
        #[command(flatten)]
        net: Net,
        /// Bytes of the READ the stalled peer requests.
        #[arg(long, default_value_t = 16 << 20)]
        size: usize,
        /// The module's tx_stall_timeout_ms (server).
        #[arg(long, default_value_t = 30000)]
        stall_ms: u64,
        /// Written once the QP is stuck and the second QP moved its data (server).
        #[arg(long)]
        ready: Option<std::path::PathBuf>,
        /// Written once the stuck QP failed (server).
        #[arg(long)]
        errored: Option<std::path::PathBuf>,
    },
    /// Deregistering a region stops a Read Response from it, and an inbound
    /// WRITE into it, part way (a TERMINATE, invalid STag); STag keys are not
    /// a counter.
    DeregInflight {
        #[command(flatten)]
        net: Net,
        /// Bytes of the regions the client READs and WRITEs.
        #[arg(long, default_value_t = 16 << 20)]
        size: usize,
    },
    /// A QP's connection ended at a random moment (connecting, accepting,
    /// established with data moving) by destroying the QP, closing the file
    /// or killing the process, many times: nothing is left, the server sees
    /// every connection end.
    DestroyRace {
        #[command(flatten)]
        net: Net,
        /// Rounds (client).
        #[arg(long, default_value_t = 30)]
        rounds: u32,
        /// The random seed.
        #[arg(long, default_value_t = 0x5eed)]
        seed: u64,
        /// Largest random delay in milliseconds.
        #[arg(long, default_value_t = 40)]
        max_delay_ms: u64,
    },
    /// The ABI fuzzer: THREADS threads run random sequences of raw ioctl,
    /// read, write and poll calls with random and boundary arguments on two
    /// shared files of /dev/srnic for SECONDS, while CHILDREN processes do the
    /// same and are killed with SIGKILL at random moments; prints the seed
    /// and, per command, the calls and the histogram of results. Exits 1 only
    /// for a result the ABI forbids, or when /dev/srnic cannot be opened.
    AbiFuzz {
        /// How long to run.
        #[arg(long, default_value_t = 60)]
        seconds: u64,
        /// Threads sharing the two files.
        #[arg(long, default_value_t = 4)]
        threads: usize,
        /// The seed every random choice derives from.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Child processes, killed with SIGKILL and restarted.
        #[arg(long, default_value_t = 0)]
        children: usize,
        /// Connect also to this (IPv4) address (another fuzzer's VM).
        #[arg(long)]
        peer: Option<std::net::Ipv4Addr>,
        /// Listeners and connects use ports PORT_BASE to PORT_BASE + 7.
        #[arg(long, default_value_t = 29400)]
        port_base: u16,
        /// The device.
        #[arg(long, default_value = "/dev/srnic")]
        device: String,
        /// Be one of the children (one blocking file; ends by exit).
        #[arg(long, hide = true)]
        child: bool,
        /// Fault injection: each call runs with /proc/thread-self/make-it-fail
        /// set (failslab and fail_page_alloc with task-filter, configured by
        /// the caller); ENOMEM and EFAULT are then tolerated everywhere.
        #[arg(long)]
        fail: bool,
    },
    /// The child of destroy-race's "kill the process" rounds (internal).
    #[command(hide = true)]
    RaceChild {
        /// The server's address.
        #[arg(long)]
        to: String,
        /// Its RDMA port.
        #[arg(short = 'p', long)]
        port: u16,
        /// SENDs to post once connected.
        #[arg(long, default_value_t = 0)]
        sends: u32,
        /// Wait for the connection before posting.
        #[arg(long)]
        wait_established: bool,
    },
    /// One side of a QP whose interface goes down or away: QP_ERROR with
    /// -ENETDOWN, its receive flushed (or, without --expect-down, waits for
    /// STOP).
    LinkDown {
        #[command(flatten)]
        net: Net,
        /// Written once the connection works and a receive is pending.
        #[arg(long)]
        ready: std::path::PathBuf,
        /// This side's interface goes: expect the failure.
        #[arg(long)]
        expect_down: bool,
        /// Without --expect-down: end when this file exists.
        #[arg(long)]
        stop: Option<std::path::PathBuf>,
    },
    /// An RMPP endpoint with a posted receive whose netdev goes down or away:
    /// RMPP_ERROR with -ENETDOWN, the receive flushed, later posts refused.
    RmppLinkDown {
        /// The netdev.
        #[arg(long)]
        ifname: String,
        /// The endpoint's NID.
        #[arg(long, default_value_t = 9)]
        nid: u32,
        /// Written once the receive is posted.
        #[arg(long)]
        ready: std::path::PathBuf,
        /// Seconds any single wait may take.
        #[arg(short = 't', long, default_value_t = 60)]
        timeout: u64,
    },
    /// The userspace client of the kernel verbs API's test server
    /// (srnic_ktest.ko role=server): a connect it rejects, then connect,
    /// RDMA WRITE and READ of its region, SEND, its answer, disconnect.
    KtestPeer {
        /// The kernel server's address.
        #[arg(long)]
        to: String,
        /// Its port.
        #[arg(short = 'p', long)]
        port: u16,
        /// Seconds any single wait may take.
        #[arg(short = 't', long, default_value_t = 60)]
        timeout: u64,
    },
    /// A peer forcing a tiny TCP MSS is refused both ways (before MPA); at
    /// min_mss it is served with FPDUs sized for it (one process, loopback).
    TinyMss {
        /// The srnic listener's port; the plain listener uses the next one.
        #[arg(short = 'p', long, default_value_t = 19300)]
        port: u16,
        /// The module's min_mss parameter.
        #[arg(long, default_value_t = 536)]
        min_mss: usize,
        /// Seconds any single wait may take.
        #[arg(short = 't', long, default_value_t = 60)]
        timeout: u64,
    },
    /// RMPP endpoints need CAP_NET_RAW and srnic's EtherType.
    RmppPerm {
        /// The netdev.
        #[arg(long, default_value = "eth0")]
        ifname: String,
        /// The endpoint's NID.
        #[arg(long, default_value_t = 7)]
        nid: u32,
        /// The user (and group) to become after the root checks.
        #[arg(long, default_value_t = 65534)]
        uid: u32,
    },
}

/// The resolved addresses and timeout of a connected scenario.
pub struct Env {
    /// Server side.
    pub server: bool,
    /// The control address (client: the server's).
    ctl: SocketAddr,
    /// The RDMA address: where the server listens, or the client connects.
    pub rdma: SocketAddr,
    /// Any single wait.
    pub timeout: Duration,
}

impl Env {
    fn new(net: &Net) -> Res<Self> {
        let rport = net.port.checked_add(1).ok_or("port too large")?;
        let (ctl, rdma) = match &net.role.client {
            Some(host) => (resolve(host, net.port)?, resolve(host, rport)?),
            None => (
                SocketAddr::from(([0, 0, 0, 0], net.port)),
                SocketAddr::from(([0, 0, 0, 0], rport)),
            ),
        };
        Ok(Self {
            server: net.role.server,
            ctl,
            rdma,
            timeout: Duration::from_secs(net.timeout),
        })
    }

    /// Opens the control connection.
    pub fn ctl(&self) -> Res<Ctl> {
        if self.server {
            Ctl::serve(self.ctl.port(), self.timeout)
        } else {
            Ctl::connect(self.ctl, self.timeout)
        }
    }

    /// "server" or "client", for messages.
    pub fn side(&self) -> &'static str {
        if self.server {
            "server"
        } else {
            "client"
        }
    }
}

fn run(cmd: &Cmd, c: &mut Checks) -> Res {
    match cmd {
        Cmd::RemoteAccess(n) => remote_access::run(&Env::new(n)?, c),
        Cmd::Fence(n) => fence::run(&Env::new(n)?, c),
        Cmd::Zcopy { net, zerocopy } => zcopy::run(&Env::new(net)?, c, *zerocopy),
        Cmd::Solicited(n) => solicited::run(&Env::new(n)?, c),
        Cmd::Hostile { net, runs } => hostile::run(&Env::new(net)?, c, runs.as_deref()),
        Cmd::Invalidate(n) => invalidate::run(&Env::new(n)?, c),
        Cmd::DestroyConnecting(n) => destroy_connecting::run(&Env::new(n)?, c),
        Cmd::DeregInflight { net, size } => dereg_inflight::run(&Env::new(net)?, c, *size),
        Cmd::ManyQps {
            net,
            qps,
            rounds,
            size,
        } => many_qps::run(&Env::new(net)?, c, *qps, *rounds, *size),
        Cmd::Stress {
            net,
            size,
            seconds,
            pidfile,
        } => stress::run(&Env::new(net)?, c, *size, *seconds, pidfile.as_deref()),
        Cmd::Memlock { limit_kib, uid } => memlock::run(c, *limit_kib, *uid),
        Cmd::Flood {
            to,
            port,
            idle,
            half,
            ready,
            stop,
            hold,
            until_closed,
        } => flood::run(
            c,
            resolve(to, *port)?,
            *idle,
            *half,
            ready,
            stop,
            Duration::from_secs(*hold),
            *until_closed,
        ),
        Cmd::FileMem => budget::run_file(c),
        Cmd::CqRing => cq_ring::run(c),
        Cmd::Memcg { cgroup, timeout } => budget::run_memcg(c, cgroup, *timeout),
        Cmd::Stall {
            net,
            size,
            stall_ms,
            ready,
            errored,
        } => stall::run(
            &Env::new(net)?,
            c,
            &stall::Opts {
                size: *size,
                stall_ms: *stall_ms,
                ready: ready.clone(),
                errored: errored.clone(),
            },
        ),
        Cmd::DestroyRace {
            net,
            rounds,
            seed,
            max_delay_ms,
        } => destroy_race::run(
            &Env::new(net)?,
            c,
            &destroy_race::Opts {
                rounds: *rounds,
                seed: *seed,
                max_delay_ms: *max_delay_ms,
            },
        ),
        Cmd::RaceChild {
            to,
            port,
            sends,
            wait_established,
        } => destroy_race::child(to, *port, *wait_established, *sends),
        Cmd::LinkDown {
            net,
            ready,
            expect_down,
            stop,
        } => link_down::run(
            &Env::new(net)?,
            c,
            &link_down::Opts {
                ready: ready.clone(),
                expect_down: *expect_down,
                stop: stop.clone(),
            },
        ),
        Cmd::KtestPeer { to, port, timeout } => {
            ktest_peer::run(c, resolve(to, *port)?, Duration::from_secs(*timeout))
        }
        Cmd::RmppLinkDown {
            ifname,
            nid,
            ready,
            timeout,
        } => link_down::run_rmpp(c, ifname, *nid, ready, Duration::from_secs(*timeout)),
        Cmd::TinyMss {
            port,
            min_mss,
            timeout,
        } => tiny_mss::run(c, *port, *min_mss, Duration::from_secs(*timeout)),
        Cmd::RmppPerm { ifname, nid, uid } => rmpp_perm::run(c, ifname, *nid, *uid),
        // Reports and exits on its own (see main).
        Cmd::AbiFuzz { .. } => Ok(()),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Cmd::AbiFuzz {
        seconds,
        threads,
        seed,
        children,
        peer,
        port_base,
        device,
        child,
        fail,
    } = &cli.cmd
    {
        return abi_fuzz::run(&abi_fuzz::Opts {
            seconds: *seconds,
            threads: (*threads).max(1),
            seed: *seed,
            children: *children,
            peer: *peer,
            port_base: *port_base,
            device: device.clone(),
            child: *child,
            fail: *fail,
        });
    }
    let mut c = Checks::default();
    if let Err(e) = run(&cli.cmd, &mut c) {
        c.fatal(&e);
    }
    println!(
        "srnic-vmtest: {} checks passed, {} failed",
        c.passed, c.failed
    );
    if c.failed == 0 && c.passed > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines() {
        assert!(Cli::try_parse_from(["t", "remote-access", "-s"]).is_ok());
        assert!(Cli::try_parse_from(["t", "fence", "-c", "192.0.2.2"]).is_ok());
        assert!(Cli::try_parse_from(["t", "solicited", "-c", "192.0.2.2", "-p", "5"]).is_ok());
        assert!(Cli::try_parse_from(["t", "invalidate"]).is_err());
        assert!(Cli::try_parse_from(["t", "invalidate", "-s", "-c", "x"]).is_err());
        assert!(Cli::try_parse_from(["t", "many-qps", "-s", "--qps", "64"]).is_ok());
        assert!(Cli::try_parse_from(["t", "stress", "-c", "h", "--pidfile", "/tmp/p"]).is_ok());
        assert!(Cli::try_parse_from(["t", "memlock", "--limit-kib", "512"]).is_ok());
        assert!(Cli::try_parse_from([
            "t", "flood", "--to", "h", "-p", "5", "--ready", "r", "--stop", "s"
        ])
        .is_ok());
        assert!(Cli::try_parse_from(["t", "file-mem"]).is_ok());
        assert!(Cli::try_parse_from(["t", "hostile", "-c", "h", "--runs", "/tmp/r"]).is_ok());
        assert!(Cli::try_parse_from(["t", "memcg", "--cgroup", "/sys/fs/cgroup/x"]).is_ok());
        assert!(Cli::try_parse_from(["t", "memcg"]).is_err());
        assert!(Cli::try_parse_from(["t", "rmpp-perm", "--nid", "9"]).is_ok());
        assert!(Cli::try_parse_from([
            "t",
            "abi-fuzz",
            "--seconds",
            "5",
            "--threads",
            "4",
            "--seed",
            "9",
            "--children",
            "2"
        ])
        .is_ok());
        assert!(Cli::try_parse_from(["t", "abi-fuzz", "--peer", "192.0.2.2"]).is_ok());
        assert!(Cli::try_parse_from(["t", "abi-fuzz", "--peer", "nohost"]).is_err());
    }

    #[test]
    fn pattern_and_regions() {
        let mut b = [0u8; 100];
        util::fill(&mut b, 7, 10);
        assert_eq!(util::mismatch(&b, 7, 10), None);
        assert_eq!(util::mismatch(&b[5..], 7, 15), None);
        assert!(util::mismatch(&b, 8, 10).is_some());
        let m = srnic::RemoteMr {
            addr: 0x7fff_0000_1000,
            len: 4096,
            rkey: 0x1234,
        };
        assert_eq!(util::mr_from_str(&util::mr_to_str(&m)).unwrap(), m);
        assert!(util::mr_from_str("1:2").is_err());
    }
}
