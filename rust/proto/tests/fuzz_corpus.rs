// SPDX-License-Identifier: GPL-2.0
//! Smoke run of the fuzz targets on the stable toolchain: every committed seed in
//! `tests/fuzz/corpus/<target>/`, and every seed the generator builds now, goes
//! through the same checks the cargo-fuzz targets apply (the check modules of
//! `tests/fuzz/src/` are compiled in here). Nightly and libFuzzer are needed only to
//! search for new inputs; see `tests/fuzz/README.md`.

#[path = "../../../tests/fuzz/src/ddp_rdmap.rs"]
mod ddp_rdmap;
#[path = "../../../tests/fuzz/src/mpa_framer.rs"]
mod mpa_framer;
#[path = "../../../tests/fuzz/src/mpa_negotiate.rs"]
mod mpa_negotiate;
#[path = "../../../tests/fuzz/src/rmpp_parse.rs"]
mod rmpp_parse;
#[path = "../../../tests/fuzz/src/rmpp_receiver.rs"]
mod rmpp_receiver;
#[path = "../../../tests/fuzz/src/seeds.rs"]
mod seeds;
#[path = "../../../tests/fuzz/src/util.rs"]
mod util;
#[path = "../../../tests/fuzz/src/vmtp_engine.rs"]
mod vmtp_engine;

use std::path::PathBuf;

/// The check of the target named `name`.
pub fn target(name: &str) -> fn(&[u8]) {
    match name {
        "mpa_framer" => mpa_framer::check,
        "mpa_negotiate" => mpa_negotiate::check,
        "ddp_rdmap" => ddp_rdmap::check,
        "rmpp_parse" => rmpp_parse::check,
        "rmpp_receiver" => rmpp_receiver::check,
        "vmtp_engine" => vmtp_engine::check,
        other => panic!("unknown fuzz target {other}"),
    }
}

const TARGETS: [&str; 6] = [
    "mpa_framer",
    "mpa_negotiate",
    "ddp_rdmap",
    "rmpp_parse",
    "rmpp_receiver",
    "vmtp_engine",
];

fn corpus_dir(t: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fuzz/corpus")
        .join(t)
}

#[test]
fn committed_corpus() {
    for t in TARGETS {
        let check = target(t);
        let mut files: Vec<_> = std::fs::read_dir(corpus_dir(t))
            .unwrap_or_else(|e| panic!("corpus for {t}: {e}"))
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no seeds for {t}");
        for f in files {
            let data = std::fs::read(&f).expect("read seed");
            eprintln!("{}", f.display());
            check(&data);
        }
    }
}

#[test]
fn generated_seeds() {
    for s in seeds::all() {
        eprintln!("{}/{}", s.target, s.name);
        target(s.target)(&s.data);
        // Truncations of a seed are inputs too.
        for cut in [1, 2, 7, s.data.len() / 2] {
            target(s.target)(&s.data[..s.data.len().saturating_sub(cut)]);
        }
    }
}
