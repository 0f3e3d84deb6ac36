// SPDX-License-Identifier: GPL-2.0
//! Fuzz target `mpa_framer`: the checks live in `srnic_fuzz::mpa_framer` so that the host test
//! suite (`rust/proto/tests/fuzz_corpus.rs`) runs the same checks on the seed corpus.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| srnic_fuzz::mpa_framer::check(data));
