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
#                        run of every target, the packages (without their VM run),
#                        VM tests
#   make check-long      the VM tests with their full repetition counts
#   make fuzz-smoke      build every fuzz target and run each for 10 s
#   make fuzz TARGET=mpa_framer [SECONDS=600]   one long fuzz run
#   make demo            boot two VMs, load srnic, show it working
#   make bench [REPS=5] [VARIANT=plain] [TINY=1] [ROWS=all|rdma|blk]   srnic against siw
#                        and plain TCP, srnic_blk against NBD and NVMe-oF, in the
#                        VMs: build/bench/<timestamp>/ (table.md, samples.csv, plots);
#                        TESTS=write_bw,send_lat SIZES=65536 for a quicker run;
#                        MODULE=path/srnic.ko runs another build of srnic;
#                        PROFILE=self|total adds the guests' kernel profiles (profile.md)
#                        (PROFILE=sample: the host samples both VMs, Rust included: sample.md)
#   make vm-test CASES="query_device bad_ioctl"   run some VM cases alone
#   make fuzz-abi DURATION=3600 [SEED=S]   the ABI fuzzer (VM case abi_fuzz) alone, for
#                        DURATION seconds (default 600); it prints its seed
#   make install [PREFIX=/usr/local] [DESTDIR=]   the srnic tool, libsrnic (shared and
#                        static), its headers and srnic.pc, the udev rule; builds
#                        them first with cargo (Documentation/srnic/install.rst)
#   make modules_install [KDIR=...] [INSTALL_MOD_PATH=]   srnic.ko and srnic_blk.ko
#                        into /lib/modules/KERNELRELEASE/updates, depmod, and
#                        modules-load.d/srnic.conf (srnic loads at boot)
#   make deb             the Debian packages srnic-dkms, srnic-tools, libsrnic1 and
#                        libsrnic-dev into build/deb/ (scripts/deb.sh)
#   make check-pkg       scripts/pkg-test.sh: the packages built, checked, installed
#                        on this host, the module built by DKMS for the debug test
#                        kernel and run in the VMs (case rdma_write)
#   make clean

KDIR ?= /lib/modules/$(shell uname -r)/build
VARIANT ?= debug
# ARCH, LLVM and RUSTC come from KDIR's configuration (scripts/kmake.sh, which
# fails early on a kernel without CONFIG_RUST or without the rustc it was built
# with); set on the command line, they are used as given.
# srnic_ktest.ko, the kernel verbs API's test module (Kbuild), only when asked
# for (SRNIC_KTEST=m): what `make` builds is what `make modules_install`
# installs. The VM tests build it with scripts/module.sh.
SRNIC_KTEST ?= n
KMAKE = MAKE="$(MAKE)" $(CURDIR)/scripts/kmake.sh $(KDIR) SRNIC_KTEST=$(SRNIC_KTEST)

# The version of srnic and of its packages: Cargo.toml's [workspace.package]
# version, the one place it is set (dkms.conf and srnic.pc get it from here).
VERSION := $(shell sed -n 's/^version = "\(.*\)"$$/\1/p' $(CURDIR)/Cargo.toml)

# make install: the user-space side. LIBDIR may be a multiarch directory
# (make deb: /usr/lib/x86_64-linux-gnu). The udev and modules-load.d
# directories under PREFIX are read by udev and systemd for /usr and for
# /usr/local alike.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
MODULESLOADDIR ?= $(PREFIX)/lib/modules-load.d
# The rdma-core stand-ins (scripts/compat.sh), in a directory of their own off
# the linker's path: `srnic exec` puts it on LD_LIBRARY_PATH for one program
# (it looks in /usr/lib/srnic/rdma-compat and /usr/local/lib/srnic/rdma-compat).
COMPATDIR ?= $(PREFIX)/lib/srnic/rdma-compat
COMPAT_LIBS = libibverbs.so.1 librdmacm.so.1 libmlx5.so.1 libefa.so.1
# The shared library's SONAME (libsrnic.so.N), set by tools/libsrnic-c/build.rs
# and read back from the built library.
CARGO_OUT = $(CURDIR)/target/release
SONAME = $(shell readelf -d $(CARGO_OUT)/libsrnic_verbs.so | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
# make modules_install: INSTALL_MOD_PATH is Kbuild's staging root (DESTDIR too).
INSTALL_MOD_PATH ?= $(DESTDIR)
KRELEASE = $(shell cat $(KDIR)/include/config/kernel.release)

.PHONY: all modules clean deps uapi compat kernel check check-host check-module check-long fuzz-smoke fuzz fuzz-abi vm-test demo bench
.PHONY: user install modules_install version deb check-pkg

all: modules

modules:
	+$(KMAKE) modules

modules_install: modules
	+$(KMAKE) modules_install INSTALL_MOD_PATH=$(INSTALL_MOD_PATH)
	@# Kbuild runs depmod only when the kernel tree has its System.map.
	depmod -a $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KRELEASE)
	install -D -m 0644 packaging/modules-load.d/srnic.conf $(DESTDIR)$(MODULESLOADDIR)/srnic.conf

# The srnic tool and the C library (shared and static), with cargo.
user:
	cargo build --release --locked --manifest-path $(CURDIR)/Cargo.toml -p srnic-cli -p srnic-c

install: user
	@test -n "$(SONAME)" || { echo "install: no SONAME in $(CARGO_OUT)/libsrnic_verbs.so"; exit 1; }
	install -D -m 0755 $(CARGO_OUT)/srnic $(DESTDIR)$(BINDIR)/srnic
	install -D -m 0644 $(CARGO_OUT)/libsrnic_verbs.so $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sfn $(SONAME) $(DESTDIR)$(LIBDIR)/libsrnic.so
	install -m 0644 $(CARGO_OUT)/libsrnic_verbs.a $(DESTDIR)$(LIBDIR)/libsrnic.a
	install -D -m 0644 tools/libsrnic-c/include/srnic_verbs.h $(DESTDIR)$(INCLUDEDIR)/srnic/srnic_verbs.h
	install -m 0644 uapi/srnic.h $(DESTDIR)$(INCLUDEDIR)/srnic/srnic.h
	mkdir -p $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' packaging/srnic.pc.in >$(DESTDIR)$(PKGCONFIGDIR)/srnic.pc
	install -D -m 0644 packaging/udev/60-srnic.rules $(DESTDIR)$(UDEVRULESDIR)/60-srnic.rules
	scripts/compat.sh build $(CURDIR)/build/rdma-compat
	install -d $(DESTDIR)$(COMPATDIR)
	install -m 0644 $(addprefix $(CURDIR)/build/rdma-compat/,$(COMPAT_LIBS)) $(DESTDIR)$(COMPATDIR)/
	@# The dynamic linker's cache, on a real installation by root.
	if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

version:
	@echo $(VERSION)

deb: deps
	scripts/deb.sh $(VERSION) build/deb

check-pkg: deps
	scripts/pkg-test.sh

clean:
	-+$(KMAKE) clean 2>/dev/null
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
	scripts/bench-profile.py --self-test
	scripts/vm-sample.py --self-test
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

# The packages' test without its VM run (about two minutes; make check-pkg
# runs that too): after check-module, which built the debug kernel it needs.
check: check-host check-module fuzz-smoke
	scripts/pkg-test.sh --no-vm
	tests/vm/run.sh --variant debug

check-long: check-host check-module
	tests/vm/run.sh --variant debug --long $(CASES)

demo: deps
	tests/vm/run.sh --variant plain --demo

REPS ?= 5
BENCH_VARIANT = $(if $(filter command line,$(origin VARIANT)),$(VARIANT),plain)
bench: deps
	scripts/bench.sh --reps $(REPS) --variant $(BENCH_VARIANT) $(if $(TINY),--tiny) $(if $(ROWS),--rows $(ROWS)) \
		$(if $(TESTS),--tests $(TESTS)) $(if $(SIZES),--sizes $(SIZES)) $(if $(MODULE),--module $(MODULE)) \
		$(if $(PROFILE),--profile $(PROFILE))
