# SPDX-License-Identifier: GPL-2.0
# srnic top-level Makefile.
#
#   make                 build srnic.ko against KDIR (default: the running kernel's build dir)
#   make KDIR=/path      build srnic.ko against another Rust-enabled 6.12 build tree
#   make deps            install the Debian packages and bindgen (idempotent)
#   make uapi            regenerate uapi/src/generated.rs from uapi/srnic.h
#   make compat          build the rdma-core stand-ins (libibverbs.so.1, librdmacm.so.1,
#                        ...) into build/rdma-compat; `srnic exec -- PROGRAM` uses them
#   make kernel          build the cached test kernels (VARIANT=debug|plain)
#   make check           every test: host tests, lints, module build, a short fuzz
#                        run of every target, VM tests
#   make check-long      the VM tests with their full repetition counts
#   make fuzz-smoke      build every fuzz target and run each for 10 s
#   make fuzz TARGET=mpa_framer [SECONDS=600]   one long fuzz run
#   make demo            boot two VMs, load srnic, show it working
#   make bench [REPS=5] [VARIANT=plain] [TINY=1] [ROWS=all|rdma|blk]   srnic against siw
#                        and plain TCP, srnic_blk against NBD and NVMe-oF, in the
#                        VMs: build/bench/<timestamp>/ (table.md, samples.csv, plots);
#                        TESTS=write_bw,send_lat SIZES=65536 for a quicker run
#   make vm-test CASES="query_device bad_ioctl"   run some VM cases alone
#   make fuzz-abi DURATION=3600 [SEED=S]   the ABI fuzzer (VM case abi_fuzz) alone, for
#                        DURATION seconds (default 600); it prints its seed
#   make clean

KDIR ?= /lib/modules/$(shell uname -r)/build
VARIANT ?= debug
# The toolchain the test kernels are built with (scripts/common.sh); pass your
# own when your kernel was built with something else.
LLVM ?= -19
RUSTC ?= /usr/bin/rustc
KMAKE = $(MAKE) -C $(KDIR) M=$(CURDIR) ARCH=x86_64 LLVM=$(LLVM) RUSTC=$(RUSTC) HOSTRUSTC=$(RUSTC)

.PHONY: all modules clean deps uapi compat kernel check check-host check-module check-long fuzz-smoke fuzz fuzz-abi vm-test demo bench

all: modules

modules:
	$(KMAKE) modules

clean:
	-$(KMAKE) clean 2>/dev/null
	rm -rf build target

deps:
	scripts/deps.sh

uapi: deps
	scripts/gen-uapi.sh

compat: deps
	scripts/compat.sh build

kernel: deps
	scripts/kernel.sh $(VARIANT)

check-host: deps
	scripts/gen-uapi.sh --check
	scripts/check-deps.py --self-test
	scripts/check-deps.py
	@# The repository stands alone: nothing may cite documents outside it.
	@! git grep -nE '\.\./shared|wire\.md' -- ':!Makefile' || { echo "check-host: the lines above cite documents outside the repository"; exit 1; }
	@# Every unsafe of the kernel side lives in rust/sys/ (rust/proto forbids it).
	@! git grep -nwE 'unsafe' -- 'rust/*.rs' ':!rust/sys/**' ':!rust/sys.rs' ':!rust/proto/**' || { echo "check-host: unsafe outside rust/sys/ (above)"; exit 1; }
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --quiet -- -D warnings
	cargo test --workspace --quiet
	scripts/compat.sh check

check-module: deps
	scripts/module.sh "$$(scripts/kernel.sh debug)" build/debug/module >/dev/null

vm-test: deps
	tests/vm/run.sh --variant $(VARIANT) $(CASES)

fuzz-smoke: deps
	scripts/fuzz.sh smoke

fuzz: deps
	scripts/fuzz.sh run $(TARGET) $(SECONDS)

DURATION ?= 600
fuzz-abi: deps
	tests/vm/run.sh --variant $(VARIANT) --fuzz-seconds $(DURATION) $(if $(SEED),--fuzz-seed $(SEED)) abi_fuzz

check: check-host check-module fuzz-smoke
	tests/vm/run.sh --variant debug

check-long: check-host check-module
	tests/vm/run.sh --variant debug --long $(CASES)

demo: deps
	tests/vm/run.sh --variant plain --demo

REPS ?= 5
BENCH_VARIANT = $(if $(filter command line,$(origin VARIANT)),$(VARIANT),plain)
bench: deps
	scripts/bench.sh --reps $(REPS) --variant $(BENCH_VARIANT) $(if $(TINY),--tiny) $(if $(ROWS),--rows $(ROWS)) \
		$(if $(TESTS),--tests $(TESTS)) $(if $(SIZES),--sizes $(SIZES))
