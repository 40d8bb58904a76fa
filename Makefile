# SPDX-License-Identifier: GPL-2.0
#
# secarena: make targets are the interface, scripts/ the implementation.
#
#   make                  module (running kernel, or KDIR=...), selftests, libsecarena
#   make module KDIR=...  the module against any kernel headers
#   make check            install what is missing, host checks, then vmtest
#   make vmtest           the VM suite on the oldest and newest kernel (VMTEST_SET=all: every one)
#   make demo             a short demonstration inside a VM
#   make check-debug      the VM suite on a 6.1 debug kernel (KASAN, lockdep, kmemleak...)
#   make check-matrix     the VM suite on every kernel of the matrix (Debian 12's 6.1 and
#                         6.12, Debian 13's 6.12 and 7.x) and on the old-fork debug kernel
#                         (dup_mmap() calls vm_ops->open() after copy_page_range())
#   make install          module (modules_install + depmod), udev rule, libsecarena

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
BUILD := $(CURDIR)/build
DESTDIR ?=
PREFIX ?= /usr/local
UDEVDIR ?= /lib/udev/rules.d
DKMS_VERSION := $(shell cat VERSION)

.PHONY: all module selftests userlib stat check check-debug check-matrix check-packages debs host-check vmtest demo install uninstall \
	dkms-install dkms-uninstall deps checkpatch clean

all: module selftests userlib stat

module:
	@test -d "$(KDIR)" || { echo "no kernel headers at $(KDIR): install linux-headers-$(KVER) or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

selftests:
	scripts/build-selftests.sh $(BUILD)/ksft

userlib:
	$(MAKE) -C userlib

stat:
	$(MAKE) -C tools/secarena-stat

deps:
	scripts/install-deps.sh

host-check:
	scripts/host-checks.sh $(BUILD)

vmtest:
	scripts/vmtest.sh

# One command for everything: CI runs exactly this.
check: deps
	scripts/check.sh $(BUILD)

# Builds the debug kernel once (cached outside the tree), then boots it.
check-debug: deps
	scripts/check-debug.sh $(BUILD)

# Every kernel of scripts/kernels.sh all, then the debug kernel with
# debug-kernel/old-fork-order.patch (the fork order of Debian's 6.1.0-6.1.89
# and 6.1.95-6.1.190), in its own cache tree.
check-matrix: deps
	scripts/check-matrix.sh $(BUILD)

# Every Debian package of both releases and the signed apt repository
# (BUILD/debs, BUILD/apt-repo); Documentation/admin-guide/secarena.rst.
debs: deps
	packaging/build-all.sh $(BUILD)

# The packages, lintian, the repository and the install test in VMs
# (part of check-matrix).
check-packages: deps
	scripts/check-packages.sh $(BUILD)

demo: deps
	scripts/demo.sh $(BUILD)

checkpatch:
	scripts/kernel-tools.sh $(BUILD)/ksft
	scripts/checkpatch.sh $(BUILD)/ksft

install: module userlib stat
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(DESTDIR) modules_install
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER)
	install -D -m 0644 udev/60-secarena.rules $(DESTDIR)$(UDEVDIR)/60-secarena.rules
	install -D -m 0644 uapi/linux/secarena.h $(DESTDIR)$(PREFIX)/include/linux/secarena.h
	$(MAKE) -C userlib install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	$(MAKE) -C tools/secarena-stat install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	install -D -m 0644 Documentation/man/secarena.4 $(DESTDIR)$(PREFIX)/share/man/man4/secarena.4

uninstall:
	rm -f $(DESTDIR)/lib/modules/$(KVER)/updates/secarena.ko \
	      $(DESTDIR)/lib/modules/$(KVER)/extra/secarena.ko
	depmod $(if $(DESTDIR),-b $(DESTDIR)) $(KVER)
	rm -f $(DESTDIR)$(UDEVDIR)/60-secarena.rules $(DESTDIR)$(PREFIX)/include/linux/secarena.h
	$(MAKE) -C userlib uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	$(MAKE) -C tools/secarena-stat uninstall DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	rm -f $(DESTDIR)$(PREFIX)/share/man/man4/secarena.4

# Register the source with DKMS and build/install it for KVER.
# A version already registered is removed first, so that a rerun rebuilds.
dkms-install:
	-dkms remove -m secarena -v $(DKMS_VERSION) --all >/dev/null 2>&1
	scripts/dkms-source.sh /usr/src >/dev/null
	dkms add -m secarena -v $(DKMS_VERSION)
	dkms build -m secarena -v $(DKMS_VERSION) -k $(KVER)
	dkms install -m secarena -v $(DKMS_VERSION) -k $(KVER)

dkms-uninstall:
	dkms remove -m secarena -v $(DKMS_VERSION) --all
	rm -rf /usr/src/secarena-$(DKMS_VERSION)

clean:
	-test -d "$(KDIR)" && $(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -rf $(BUILD)
