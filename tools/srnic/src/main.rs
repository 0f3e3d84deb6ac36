// SPDX-License-Identifier: GPL-2.0
//! `srnic`: the command-line tool of the srnic software RDMA NIC.
//!
//! Exit codes: 0 success, 1 any error (device, connection, error completion,
//! timeout), 2 bad command line, 3 data that did not verify. With `--json`
//! the same; the error message stays text, on standard error.

mod blk;
mod dial;
mod exec;
mod info;
mod output;
mod ping;
mod res;
mod rmpp;
mod rping;
mod session;
mod stats;
mod ucmatose;
mod util;
mod vmtp;
mod xfer;

use clap::{Args, Parser, Subcommand};
use output::{Format, Output};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use util::{CmdResult, Fail};

#[derive(Parser)]
#[command(name = "srnic", version, about = "srnic software RDMA NIC tool")]
struct Cli {
    /// The device node.
    #[arg(short, long, global = true, default_value = srnic::DEFAULT_PATH)]
    device: PathBuf,
    /// Print the result as one JSON object on one line instead of text (one
    /// object per line where a command prints several: `stats -w`, `xfer -s
    /// --count N`); field names in Documentation/srnic/tool.rst. Errors stay
    /// text on standard error, with the same exit codes. Not for `exec`.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    cmd: Cmd,
}

/// Which side of a connection to be.
#[derive(Args, Clone, Debug)]
#[group(required = true, multiple = false)]
struct Role {
    /// Be the server: listen and serve one client.
    #[arg(short = 's', long)]
    server: bool,
    /// Be the client: connect to ADDR (an IPv4 or IPv6 address, or a host
    /// name: each of its addresses in turn until one connects).
    #[arg(short = 'c', long, value_name = "ADDR")]
    client: Option<String>,
}

#[derive(Args, Clone, Debug)]
struct Net {
    /// The TCP port.
    #[arg(short = 'p', long, default_value_t = 18515)]
    port: u16,
    /// Server: the local address to listen on (default: every address, IPv6
    /// and IPv4).
    #[arg(short = 'b', long, value_name = "ADDR")]
    bind: Option<String>,
    #[command(flatten)]
    conn: ConnArgs,
}

impl Net {
    fn opts(&self) -> session::NetOpts {
        self.conn.opts(self.port, self.bind.clone())
    }
}

/// What every connecting command takes: the wait limit and the MPA options.
#[derive(Args, Clone, Debug)]
struct ConnArgs {
    /// Seconds a wait may go without progress before it fails: a completion
    /// wait fails when the QP moves no byte for this long (a large transfer on
    /// a slow machine is not cut short); connection and event waits end after
    /// this long.
    #[arg(short = 't', long, default_value_t = 30)]
    timeout: u64,
    /// Ask for MPA CRC32c.
    #[arg(long)]
    crc: bool,
    /// Ask the peer for MPA markers.
    #[arg(long)]
    markers: bool,
}

impl ConnArgs {
    fn opts(&self, port: u16, bind: Option<String>) -> session::NetOpts {
        session::NetOpts {
            port,
            bind,
            timeout: Duration::from_secs(self.timeout),
            crc: self.crc,
            markers: self.markers,
        }
    }
}

fn size_arg(s: &str) -> Result<usize, String> {
    util::parse_size(s)
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the ABI version, capabilities and limits the module reports.
    Info,
    /// Print the device-wide counters (iWARP, RMPP, VMTP), one `name: value` line
    /// each; with -w, one line per sample of their changes.
    Stats {
        /// Print the counters every SECS seconds (a fraction allowed), until
        /// interrupted: the first sample's absolute values, then each
        /// sample's changes since the previous one, one line per sample
        /// (text: the counters that are not zero; a gauge's change may be
        /// negative).
        #[arg(short = 'w', long, value_name = "SECS", value_parser = stats::parse_interval)]
        watch: Option<Duration>,
        /// With --watch: stop after N samples (the first one included).
        #[arg(short = 'c', long, value_name = "N", requires = "watch",
              value_parser = clap::value_parser!(u64).range(1..))]
        count: Option<u64>,
    },
    /// List the objects srnic holds, device-wide, one line each with its owner
    /// (pid, uid, context) and state, as `rdma res show` does: queue pairs,
    /// completion queues, memory regions (pinned pages), listeners, RMPP
    /// endpoints. Root sees every object, other users their own.
    Res {
        /// Only this kind (default: every kind).
        #[arg(value_enum)]
        kind: Option<res::Kind>,
    },
    /// Sandia RMPP: node table, verified send/receive, ping-pong, bandwidth.
    Rmpp {
        #[command(subcommand)]
        cmd: rmpp::RmppCmd,
    },
    /// VMTP (RFC 1045) message transactions: an echo and read server, a
    /// verified ping-pong client and a bulk read.
    Vmtp {
        #[command(subcommand)]
        cmd: vmtp::VmtpCmd,
    },
    /// SEND ping-pong with payload verification and round-trip statistics.
    /// The server takes size and count from the client.
    Ping {
        #[command(flatten)]
        role: Role,
        #[command(flatten)]
        net: Net,
        /// Number of pings.
        #[arg(short = 'C', long, default_value_t = 10)]
        count: u32,
        /// Payload bytes per ping (K, M suffixes).
        #[arg(short = 'S', long, default_value = "64", value_parser = size_arg)]
        size: usize,
    },
    /// Verified RDMA WRITE / READ / SEND transfers; prints bytes, time and MB/s.
    /// The server takes op, size, SGEs and iterations from the client.
    Xfer {
        #[command(flatten)]
        role: Role,
        #[command(flatten)]
        net: Net,
        /// The operation.
        #[arg(long, value_enum, default_value_t = xfer::Op::Write)]
        op: xfer::Op,
        /// Bytes per transfer: 0, 1, 4095, 4096, 64K, 1M, 16M ...
        #[arg(long, default_value = "64K", value_parser = size_arg)]
        size: usize,
        /// Split the buffer into N scatter/gather elements.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=65535))]
        sge: u32,
        /// Number of transfers.
        #[arg(long, default_value_t = 1)]
        iters: u64,
        /// Server: serve this many clients, one after the other, then exit.
        #[arg(long, default_value_t = 1)]
        count: u64,
    },
    /// rdma-core's rping, compatible on the wire: the server RDMA READs the
    /// client's buffer and RDMA WRITEs it back, 16-byte SENDs in between.
    Rping(RpingArgs),
    /// rdma-core's ucmatose (one connection), compatible on the wire: the server
    /// SENDs COUNT messages, the client SENDs COUNT back, the server disconnects.
    Ucmatose(UcmatoseArgs),
    /// srnic_blk: serve a block device export, or map and unmap one
    /// (Documentation/srnic/blk.rst).
    Blk {
        #[command(subcommand)]
        cmd: BlkCmd,
    },
    /// Run an unmodified rdma-core program (rping, ibv_devinfo, ib_write_bw -R,
    /// ...) on srnic: puts the libibverbs/librdmacm stand-ins first on
    /// LD_LIBRARY_PATH, names the device in SRNIC_DEVICE, and execs it. What
    /// works and what fails how: Documentation/srnic/rdma-core.rst. --json
    /// does not apply: the program prints what it prints.
    Exec {
        /// The directory of the stand-ins (default: $SRNIC_COMPAT_LIBDIR, then
        /// the build tree's build/rdma-compat, then /usr/lib/srnic/rdma-compat).
        #[arg(long, value_name = "DIR")]
        libdir: Option<PathBuf>,
        /// The program's connections ask for MPA CRC32c (connect and listen;
        /// used if either side asks).
        #[arg(long)]
        crc: bool,
        /// The program's connections ask the peer to insert MPA markers.
        #[arg(long)]
        markers: bool,
        /// The program and its arguments (after `--`).
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        argv: Vec<std::ffi::OsString>,
    },
}

/// `srnic blk`'s commands.
#[derive(Subcommand, Clone, Debug)]
enum BlkCmd {
    /// Export a file (shared mapping; it must be on tmpfs or hugetlbfs) or
    /// memory to srnic_blk.ko clients, until killed.
    Serve {
        /// The file to export (created if missing; grown to --size).
        #[arg(long, value_name = "PATH")]
        file: Option<PathBuf>,
        /// The export's size (K, M, G suffixes); default: the file's size.
        #[arg(long, value_parser = size_arg)]
        size: Option<usize>,
        /// The logical block size the clients use.
        #[arg(long, default_value_t = 512)]
        block_size: u32,
        /// Refuse writes.
        #[arg(long)]
        read_only: bool,
        /// The TCP port.
        #[arg(short = 'p', long, default_value_t = blk::DEFAULT_PORT)]
        port: u16,
        /// The local address to listen on (default: every address, IPv6 and
        /// IPv4).
        #[arg(short = 'b', long, value_name = "ADDR")]
        bind: Option<String>,
        #[command(flatten)]
        conn: ConnArgs,
    },
    /// Map the export at ADDR as a block device (writes srnic_blk's
    /// map_device); prints its path, /dev/srnicbN.
    Map {
        /// The server's address.
        addr: String,
        /// The server's port.
        #[arg(short = 'p', long, default_value_t = blk::DEFAULT_PORT)]
        port: u16,
    },
    /// Remove a mapped device (srnicbN or /dev/srnicbN); its outstanding
    /// requests complete or fail first.
    Unmap {
        /// The device.
        name: String,
    },
    /// List the mapped devices: name, server, port, bytes, live or failed.
    List,
}

/// `srnic ucmatose`'s options, spelled as ucmatose's.
#[derive(Args, Clone, Debug)]
struct UcmatoseArgs {
    /// Be the client and connect to this server (without it: be the server).
    #[arg(short = 's', value_name = "SERVER_ADDR")]
    server_addr: Option<String>,
    /// Server: the address to listen on.
    #[arg(short = 'b', value_name = "ADDR")]
    bind: Option<String>,
    /// The TCP port.
    #[arg(short = 'p', default_value_t = ucmatose::DEFAULT_PORT)]
    port: u16,
    /// Messages each way.
    #[arg(short = 'C', default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=256))]
    count: u32,
    /// Bytes per message.
    #[arg(short = 'S', default_value_t = 100)]
    size: u32,
    #[command(flatten)]
    conn: ConnArgs,
}

/// `srnic rping`'s options, spelled as rping's.
#[derive(Args, Clone, Debug)]
struct RpingArgs {
    /// Be the server.
    #[arg(
        short = 's',
        conflicts_with = "client",
        required_unless_present = "client"
    )]
    server: bool,
    /// Be the client (connects to -a ADDR).
    #[arg(short = 'c', requires = "addr")]
    client: bool,
    /// Client: the server's address; server: the address to listen on.
    #[arg(short = 'a', value_name = "ADDR")]
    addr: Option<String>,
    /// The TCP port.
    #[arg(short = 'p', default_value_t = rping::DEFAULT_PORT)]
    port: u16,
    /// Number of pings (0: until interrupted).
    #[arg(short = 'C', default_value_t = 0)]
    count: u32,
    /// Bytes per ping.
    #[arg(short = 'S', default_value_t = 64,
          value_parser = clap::value_parser!(u32).range(rping::MIN_SIZE as i64..=rping::MAX_SIZE as i64))]
    size: u32,
    /// Verify the data (client: the echo; server: what it read).
    #[arg(short = 'V')]
    verify: bool,
    /// Print every ping's data.
    #[arg(short = 'v')]
    verbose: bool,
    #[command(flatten)]
    conn: ConnArgs,
}

fn run(cli: Cli) -> CmdResult {
    let out = Output::new(if cli.json { Format::Json } else { Format::Text });
    // The program opens the device itself (through the stand-ins).
    if let Cmd::Exec {
        libdir,
        crc,
        markers,
        argv,
    } = cli.cmd
    {
        return exec::exec(&cli.device, libdir, exec::Mpa { crc, markers }, &argv);
    }
    // Mapping goes through srnic_blk's sysfs files, not the device.
    match &cli.cmd {
        Cmd::Blk {
            cmd: BlkCmd::Map { addr, port },
        } => return blk::map(addr, *port, &out),
        Cmd::Blk {
            cmd: BlkCmd::Unmap { name },
        } => return blk::unmap(name, &out),
        Cmd::Blk { cmd: BlkCmd::List } => return blk::list(&out),
        _ => {}
    }
    let ctx = srnic::Context::open_path(&cli.device)?;
    match cli.cmd {
        Cmd::Exec { .. } => unreachable!("handled above"),
        Cmd::Blk { cmd } => match cmd {
            BlkCmd::Serve {
                file,
                size,
                block_size,
                read_only,
                port,
                bind,
                conn,
            } => blk::serve(
                &ctx,
                &conn.opts(port, bind),
                &blk::ServeOpts {
                    file,
                    size: size.map(|s| s as u64),
                    block_size,
                    read_only,
                },
                &out,
            ),
            _ => unreachable!("handled above"),
        },
        Cmd::Info => out.emit(&info::InfoReport::new(&cli.device, &ctx.query_device()?)),
        Cmd::Stats { watch: None, .. } => stats::once(&ctx, &out),
        Cmd::Stats {
            watch: Some(interval),
            count,
        } => stats::watch(&ctx, &out, interval, count),
        Cmd::Res { kind } => res::run(&ctx, kind, &out),
        Cmd::Rmpp { cmd } => rmpp::run(&ctx, cmd, &out),
        Cmd::Vmtp { cmd } => vmtp::run(&ctx, cmd, &out),
        Cmd::Ping {
            role,
            net,
            count,
            size,
        } => {
            let size = u32::try_from(size).map_err(|_| Fail::Error("size too large".into()))?;
            match role.client {
                Some(host) => ping::client(
                    &ctx,
                    &host,
                    &net.opts(),
                    ping::PingParams { size, count },
                    &out,
                ),
                None => ping::server(&ctx, &net.opts(), &out),
            }
        }
        Cmd::Xfer {
            role,
            net,
            op,
            size,
            sge,
            iters,
            count,
        } => match role.client {
            Some(host) => xfer::client(
                &ctx,
                &host,
                &net.opts(),
                xfer::XferParams {
                    op,
                    size: size as u64,
                    sge,
                    iters,
                },
                &out,
            ),
            None => xfer::server(&ctx, &net.opts(), count, &out),
        },
        Cmd::Ucmatose(a) => {
            let opts = a.conn.opts(a.port, a.bind.clone());
            let o = ucmatose::UcmaOpts {
                count: a.count,
                size: a.size,
            };
            match a.server_addr {
                Some(host) => ucmatose::client(&ctx, &host, &opts, o, &out),
                None => ucmatose::server(&ctx, &opts, o, &out),
            }
        }
        Cmd::Rping(a) => {
            let bind = if a.client { None } else { a.addr.clone() };
            let opts = a.conn.opts(a.port, bind);
            let o = rping::RpingOpts {
                count: a.count,
                size: a.size,
                verify: a.verify,
                verbose: a.verbose,
            };
            match (a.client, a.addr) {
                (true, Some(host)) => rping::client(&ctx, &host, &opts, o, &out),
                _ => rping::server(&ctx, &opts, o, &out),
            }
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("srnic: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn parses_the_documented_forms() {
        let c = Cli::try_parse_from([
            "srnic",
            "xfer",
            "-c",
            "10.0.0.2",
            "--op",
            "read",
            "--size",
            "64K",
            "--sge",
            "4",
            "--iters",
            "3",
            "--crc",
            "--markers",
        ])
        .unwrap();
        match c.cmd {
            Cmd::Xfer {
                role,
                net,
                op,
                size,
                sge,
                iters,
                count,
            } => {
                assert_eq!(role.client.as_deref(), Some("10.0.0.2"));
                assert!(net.conn.crc && net.conn.markers);
                assert_eq!(net.port, 18515);
                assert_eq!((op, size, sge, iters), (xfer::Op::Read, 65536, 4, 3));
                assert_eq!(count, 1);
            }
            _ => panic!(),
        }
        let c = Cli::try_parse_from(["srnic", "ping", "-s", "-p", "9999"]).unwrap();
        match c.cmd {
            Cmd::Ping {
                role,
                net,
                count,
                size,
            } => {
                assert!(role.server);
                assert_eq!((net.port, count, size), (9999, 10, 64));
            }
            _ => panic!(),
        }
        let c = Cli::try_parse_from(["srnic", "ping", "-c", "h", "-C", "5", "-S", "1M"]).unwrap();
        assert!(matches!(
            c.cmd,
            Cmd::Ping {
                count: 5,
                size: 1048576,
                ..
            }
        ));
        // Exactly one role.
        assert!(Cli::try_parse_from(["srnic", "ping"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "ping", "-s", "-c", "x"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "xfer", "-s", "--size", "1.5M"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "xfer", "-s", "--sge", "0"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "stats"]).is_ok());
        let c = Cli::try_parse_from(["srnic", "stats", "-w", "1", "-c", "2"]).unwrap();
        assert!(!c.json);
        assert!(matches!(
            c.cmd,
            Cmd::Stats { watch: Some(w), count: Some(2) } if w == Duration::from_secs(1)
        ));
        let c = Cli::try_parse_from(["srnic", "stats", "--watch", "0.5"]).unwrap();
        assert!(matches!(c.cmd, Cmd::Stats { count: None, .. }));
        // --count only with --watch; no zero interval or count.
        assert!(Cli::try_parse_from(["srnic", "stats", "-c", "2"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "stats", "-w", "0"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "stats", "-w", "1", "-c", "0"]).is_err());
        // --json is global: before or after the subcommand.
        for argv in [
            &["srnic", "--json", "info"][..],
            &["srnic", "info", "--json"],
            &["srnic", "--json", "stats", "-w", "1"],
            &["srnic", "--json", "rmpp", "node", "del", "3"],
            &["srnic", "blk", "list", "--json"],
            &["srnic", "--json", "xfer", "-c", "h"],
        ] {
            assert!(Cli::try_parse_from(argv).unwrap().json, "{argv:?}");
        }
        let c = Cli::try_parse_from([
            "srnic",
            "rping",
            "-c",
            "-a",
            "192.0.2.2",
            "-C",
            "1000",
            "-S",
            "65535",
            "-V",
            "--crc",
        ])
        .unwrap();
        match c.cmd {
            Cmd::Rping(a) => {
                assert!(a.client && !a.server && a.verify && a.conn.crc && !a.conn.markers);
                assert_eq!(a.addr.as_deref(), Some("192.0.2.2"));
                assert_eq!((a.port, a.count, a.size), (7174, 1000, 65535));
            }
            _ => panic!(),
        }
        assert!(Cli::try_parse_from(["srnic", "rping", "-s"]).is_ok());
        let c = Cli::try_parse_from(["srnic", "ucmatose", "-s", "192.0.2.2", "-C", "100"]).unwrap();
        match c.cmd {
            Cmd::Ucmatose(a) => {
                assert_eq!(a.server_addr.as_deref(), Some("192.0.2.2"));
                assert_eq!((a.port, a.count, a.size), (7471, 100, 100));
            }
            _ => panic!(),
        }
        assert!(Cli::try_parse_from(["srnic", "ucmatose", "-C", "0"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "rping"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "rping", "-c"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "rping", "-s", "-c", "-a", "x"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "rping", "-s", "-S", "25"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "rping", "-s", "-S", "65536"]).is_err());
        assert!(Cli::try_parse_from(["srnic", "info"]).is_ok());
        let c = Cli::try_parse_from([
            "srnic", "rmpp", "send", "-n", "3", "--to", "1", "-C", "10", "-S", "1,64K,1M",
            "--rto-us", "5000",
        ])
        .unwrap();
        assert!(matches!(c.cmd, Cmd::Rmpp { .. }));
        assert!(Cli::try_parse_from([
            "srnic",
            "rmpp",
            "node",
            "add",
            "1",
            "52:54:00:00:00:01",
            "eth0"
        ])
        .is_ok());
        assert!(Cli::try_parse_from(["srnic", "rmpp", "recv", "-n", "1", "-S", "1,x"]).is_err());
        let c = Cli::try_parse_from([
            "srnic",
            "vmtp",
            "ping",
            "-a",
            "10.0.0.1",
            "-s",
            "10.0.0.2:100",
            "-C",
            "3",
            "-S",
            "0,1,16K",
        ])
        .unwrap();
        assert!(matches!(c.cmd, Cmd::Vmtp { .. }));
        assert!(
            Cli::try_parse_from(["srnic", "vmtp", "serve", "-a", "10.0.0.2", "-D", "100"]).is_ok()
        );
        assert!(Cli::try_parse_from([
            "srnic",
            "vmtp",
            "read",
            "-a",
            "10.0.0.1",
            "-s",
            "10.0.0.2:0"
        ])
        .is_err());
        assert!(Cli::try_parse_from([
            "srnic", "vmtp", "ping", "-a", "10.0.0.1", "-s", "x", "-S", "17K"
        ])
        .is_err());
        assert!(Cli::try_parse_from(["srnic", "rmpp", "send", "--to", "1"]).is_err());
        let c =
            Cli::try_parse_from(["srnic", "exec", "--", "rping", "-c", "-a", "10.0.0.2"]).unwrap();
        match c.cmd {
            Cmd::Exec {
                libdir,
                argv,
                crc,
                markers,
            } => {
                assert!(libdir.is_none() && !crc && !markers);
                assert_eq!(argv, ["rping", "-c", "-a", "10.0.0.2"]);
            }
            _ => panic!(),
        }
        let c =
            Cli::try_parse_from(["srnic", "exec", "--libdir", "/l", "ibv_devinfo", "-v"]).unwrap();
        assert!(matches!(
            c.cmd,
            Cmd::Exec {
                libdir: Some(_),
                ..
            }
        ));
        assert!(Cli::try_parse_from(["srnic", "exec"]).is_err());
        let c = Cli::try_parse_from(["srnic", "exec", "--crc", "--", "rping", "-s"]).unwrap();
        assert!(matches!(
            c.cmd,
            Cmd::Exec {
                crc: true,
                markers: false,
                ..
            }
        ));
    }
}
