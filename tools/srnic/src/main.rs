// SPDX-License-Identifier: GPL-2.0
//! `srnic`: the command-line tool of the srnic software RDMA NIC.

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "srnic", version, about = "srnic software RDMA NIC tool")]
struct Cli {
    /// The device node.
    #[arg(short, long, global = true, default_value = srnic::DEFAULT_PATH)]
    device: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the ABI version, capabilities and limits the module reports.
    Info,
}

fn info(dev: &srnic::Device, path: &std::path::Path) -> srnic::Result<()> {
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = srnic::Device::open_path(&cli.device).and_then(|dev| match cli.cmd {
        Cmd::Info => info(&dev, &cli.device),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("srnic: {e}");
            ExitCode::FAILURE
        }
    }
}
