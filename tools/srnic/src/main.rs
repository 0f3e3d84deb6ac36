// SPDX-License-Identifier: GPL-2.0
//! `srnic`: the command-line tool of the srnic software RDMA NIC.
//!
//! Exit codes: 0 success, 1 any error (device, connection, error completion,
//! timeout), 2 bad command line, 3 data that did not verify.

mod ping;
mod rmpp;
mod session;
mod util;
mod xfer;

use clap::{Args, Parser, Subcommand};
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
    /// Be the client: connect to ADDR (an IPv4/IPv6 address or a host name).
    #[arg(short = 'c', long, value_name = "ADDR")]
    client: Option<String>,
}

#[derive(Args, Clone, Debug)]
struct Net {
    /// The TCP port.
    #[arg(short = 'p', long, default_value_t = 18515)]
    port: u16,
    /// Server: the local address to listen on (default 0.0.0.0; `::` for IPv6).
    #[arg(short = 'b', long, value_name = "ADDR")]
    bind: Option<String>,
    /// Seconds any single wait (connection, completion, event) may take.
    #[arg(short = 't', long, default_value_t = 30)]
    timeout: u64,
    /// Ask for MPA CRC32c.
    #[arg(long)]
    crc: bool,
    /// Ask the peer for MPA markers.
    #[arg(long)]
    markers: bool,
}

impl Net {
    fn opts(&self) -> session::NetOpts {
        session::NetOpts {
            port: self.port,
            bind: self.bind.clone(),
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
    /// Print the device-wide counters (iWARP, then RMPP), one `name: value` line each.
    Stats,
    /// Sandia RMPP: node table, verified send/receive, ping-pong, bandwidth.
    Rmpp {
        #[command(subcommand)]
        cmd: rmpp::RmppCmd,
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
}

fn info(dev: &srnic::Device, path: &std::path::Path) -> CmdResult {
    let a = dev.query()?;
    let r = &a.raw;
    let caps = a.capabilities.names();
    println!("device: {}", path.display());
    println!("abi_version: {}", a.abi_version);
    println!(
        "capabilities: {:#x} ({})",
        a.capabilities.0,
        if caps.is_empty() {
            "none".to_string()
        } else {
            caps.join(" ")
        }
    );
    for (name, value) in [
        ("max_pd", u64::from(r.max_pd)),
        ("max_mr", u64::from(r.max_mr)),
        ("max_mr_size", r.max_mr_size),
        ("max_cq", u64::from(r.max_cq)),
        ("max_cqe", u64::from(r.max_cqe)),
        ("max_qp", u64::from(r.max_qp)),
        ("max_qp_wr", u64::from(r.max_qp_wr)),
        ("max_sge", u64::from(r.max_sge)),
        ("max_inline_data", u64::from(r.max_inline_data)),
        ("max_ord", u64::from(r.max_ord)),
        ("max_ird", u64::from(r.max_ird)),
        ("max_rmpp_endpoints", u64::from(r.max_rmpp_endpoints)),
        ("page_size", u64::from(r.page_size)),
    ] {
        println!("{name}: {value}");
    }
    Ok(())
}

fn stats(dev: &srnic::Device) -> CmdResult {
    for (name, value) in dev.stats()?.counters() {
        println!("{name}: {value}");
    }
    for (name, value) in dev.rmpp_stats()? {
        println!("{name}: {value}");
    }
    Ok(())
}

fn run(cli: Cli) -> CmdResult {
    let dev = srnic::Device::open_path(&cli.device)?;
    match cli.cmd {
        Cmd::Info => info(&dev, &cli.device),
        Cmd::Stats => stats(&dev),
        Cmd::Rmpp { cmd } => rmpp::run(&dev, cmd),
        Cmd::Ping {
            role,
            net,
            count,
            size,
        } => {
            let size = u32::try_from(size).map_err(|_| Fail::Error("size too large".into()))?;
            match role.client {
                Some(host) => {
                    ping::client(&dev, &host, &net.opts(), ping::PingParams { size, count })
                }
                None => ping::server(&dev, &net.opts()),
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
                &dev,
                &host,
                &net.opts(),
                xfer::XferParams {
                    op,
                    size: size as u64,
                    sge,
                    iters,
                },
            ),
            None => xfer::server(&dev, &net.opts(), count),
        },
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
                assert!(net.crc && net.markers);
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
        assert!(Cli::try_parse_from(["srnic", "rmpp", "send", "--to", "1"]).is_err());
    }
}
