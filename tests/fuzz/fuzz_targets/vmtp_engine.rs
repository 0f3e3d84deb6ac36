// SPDX-License-Identifier: GPL-2.0
//! Fuzz target `vmtp_engine`: the checks live in `srnic_fuzz::vmtp_engine` so that the host test
//! suite (`rust/proto/tests/fuzz_corpus.rs`) runs the same checks on the seed corpus.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| srnic_fuzz::vmtp_engine::check(data));
