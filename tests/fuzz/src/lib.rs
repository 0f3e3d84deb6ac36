// SPDX-License-Identifier: GPL-2.0
//! Checks behind the srnic protocol-core fuzz targets.
//!
//! Each module has one `check(data)` function that decodes the fuzzer's bytes into
//! inputs for one part of `srnic-proto`, drives it, and asserts invariants (round
//! trips, chunking independence, bounded state, agreement between peers). A failed
//! assertion or a panic in the core is a finding. The same files are compiled into the
//! host test `rust/proto/tests/fuzz_corpus.rs`, which runs every committed seed, so
//! the modules refer to each other through `super::` only.

pub mod ddp_rdmap;
pub mod mpa_framer;
pub mod mpa_negotiate;
pub mod rmpp_parse;
pub mod rmpp_receiver;
pub mod seeds;
pub mod util;
pub mod vmtp_engine;
