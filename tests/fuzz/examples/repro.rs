// SPDX-License-Identifier: GPL-2.0
//! Runs one fuzz input through a target's checks outside libFuzzer:
//! `cargo run --example repro -- <target> <file>` (with `SRNIC_FUZZ_TRACE=1` for a
//! trace where the target has one).

fn main() {
    let mut a = std::env::args().skip(1);
    let (t, f) = (a.next().expect("target"), a.next().expect("file"));
    let data = std::fs::read(f).expect("read input");
    match t.as_str() {
        "mpa_framer" => srnic_fuzz::mpa_framer::check(&data),
        "mpa_negotiate" => srnic_fuzz::mpa_negotiate::check(&data),
        "ddp_rdmap" => srnic_fuzz::ddp_rdmap::check(&data),
        "rmpp_parse" => srnic_fuzz::rmpp_parse::check(&data),
        "rmpp_receiver" => srnic_fuzz::rmpp_receiver::check(&data),
        "vmtp_engine" => srnic_fuzz::vmtp_engine::check(&data),
        other => panic!("unknown target {other}"),
    }
    println!("ok");
}
