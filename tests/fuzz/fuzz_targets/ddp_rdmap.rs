// SPDX-License-Identifier: GPL-2.0
//! Fuzz target `ddp_rdmap`: the checks live in `srnic_fuzz::ddp_rdmap` so that the host test
//! suite (`rust/proto/tests/fuzz_corpus.rs`) runs the same checks on the seed corpus.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| srnic_fuzz::ddp_rdmap::check(data));
