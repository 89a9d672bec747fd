# sunkd: top-level driver. This file is committed and is not generated: it
# works on a fresh clone (make deps demo, make check) and builds out of tree
# in build/ (and build-asan/ for the sanitizer run, build-fuzz/ for libFuzzer).

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
FUZZ_RUNS  ?= 100000
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
# Under `make -jN` the sub-makes share this make's job slots: forcing -j
# there would give them a jobserver of their own that configure's and
# automake's inner makes cannot reach ("read jobs pipe: Bad file descriptor").
PARALLEL    = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(JOBS))
CONFIGURE_FLAGS ?= --enable-werror --prefix=/usr --sysconfdir=/etc --localstatedir=/var
DEMO_SECONDS ?= 0

# Build dependencies (clang and clang-format for .ci/run's extra build and
# formatting check), then what the tests run for real (libnss-cache through
# getent, sshd for the AuthorizedKeysCommand, munged, slurmctld and slurmd for
# the GRES registration and the health module (with auth/jwt), s6-svscan and
# s6-notifyoncheck, the SCIM fixture in python3, nginx-light serving map files
# to the nsscache module's http source, curl as the benchmark's
# reference, test certificates from openssl, strace watching the cache writer's fsync
# and rename order, setpriv and flock from util-linux,
# groff and man for the man pages, systemd-analyze for the unit, git for the
# tarball's and the version's checks against the tracked files), and what
# make deb, make rpm and make check-packages use (debhelper, lintian,
# hardening-check from devscripts, rpmbuild and rpmlint).
DEB_PACKAGES = build-essential autoconf automake libtool autoconf-archive pkg-config \
	libsystemd-dev libcurl4-openssl-dev libjson-c-dev libyaml-dev libssl-dev check \
	libmunge-dev libslurm-dev libbz2-dev zlib1g-dev libldap2-dev slapd ldap-utils \
	clang clang-format \
	libnss-cache openssh-client openssh-server munge slurmctld slurmd slurm-client slurm-wlm-jwt-plugin s6 python3 curl openssl nginx-light strace \
	procps util-linux groff-base man-db systemd git \
	debhelper dpkg-dev fakeroot lintian devscripts rpm rpmlint

# Only the bootstrap: once configured, build/'s own Makefile regenerates
# Makefile.in and reruns configure when Makefile.am, a local.mk or
# configure.ac changes.  In a release tarball configure is newer than
# configure.ac, so nothing is regenerated there (autoreconf is not needed).
AM_INPUTS = configure.ac

.PHONY: all deps demo check check-asan check-slurm-24.11 check-packages-24.11 fuzz fuzz-run bench install dist distcheck clean distclean deb rpm check-packages

# make deb and make rpm build from a copy of the source tree (the files git
# tracks, or everything but the build folders outside a git checkout), the
# version, configure.ac's, filled in where the packaging says @VERSION@.
DEB_DIR ?= build-deb
RPM_DIR ?= build-rpm
VERSION = $(shell sed -n 's/^AC_INIT.\[sunkd\], \[\([^]]*\)\].*/\1/p' configure.ac)
SOURCE_FILES = { git ls-files -z --cached --others --exclude-standard 2>/dev/null || \
	find . -path ./.git -prune -o -path './build*' -prune -o ! -type d -print0; }

all: $(BUILD)/config.status
	$(MAKE) -C $(BUILD) $(PARALLEL)

# Needs root; see packaging/install-deps.sh for what it does to services.
# Then the Debian 13 root with Slurm 24.11 that check-slurm-24.11 runs in
# (tests/slurm-24.11/root.sh: debootstrap into $(TRIXIE_ROOT), once, and
# again only when the script or its package list changed).
TRIXIE_ROOT ?= /opt/sunkd-test/trixie
deps:
	bash packaging/install-deps.sh $(DEB_PACKAGES)
	bash tests/slurm-24.11/root.sh $(TRIXIE_ROOT)

configure: $(AM_INPUTS)
	autoreconf -fi
	@touch configure

$(BUILD)/config.status: configure
	mkdir -p $(BUILD)
	cd $(BUILD) && ../configure $(CONFIGURE_FLAGS)

$(ASAN_BUILD)/config.status: configure
	mkdir -p $(ASAN_BUILD)
	cd $(ASAN_BUILD) && ../configure $(CONFIGURE_FLAGS) --enable-sanitizers

demo: all
	DEMO_SECONDS=$(DEMO_SECONDS) $(MAKE) -C $(BUILD) demo

check: all
	$(MAKE) -C $(BUILD) $(PARALLEL) check; rc=$$?; tests/lib/summary $(BUILD); exit $$rc

check-asan: $(ASAN_BUILD)/config.status
	$(MAKE) -C $(ASAN_BUILD) $(PARALLEL)
	$(MAKE) -C $(ASAN_BUILD) $(PARALLEL) check; rc=$$?; tests/lib/summary $(ASAN_BUILD); exit $$rc

# The Slurm-facing tests again, against Debian 13's Slurm 24.11 (slurmctld,
# slurmd, slurmrestd, libslurm): sunkd built inside $(TRIXIE_ROOT), in
# build-24.11/, and the tests run there (tests/slurm-24.11/run.sh).  Needs
# root and make deps.
# Makefile.in is brought up to date here, with this machine's automake, so
# that build-24.11/ only reruns config.status and never automake in the root
# (another automake than the one that made aclocal.m4).
Makefile.in: configure Makefile.am $(wildcard */local.mk */*/local.mk)
	automake
	@touch Makefile.in

check-slurm-24.11: configure Makefile.in
	SUNKD_TRIXIE_ROOT=$(TRIXIE_ROOT) JOBS=$(JOBS) bash tests/slurm-24.11/run.sh

# make deb and make rpm in that root, and 0310-packages.t there on what they
# built: sunkd-slurm built against, and depending on, Slurm 24.11's libslurm.
check-packages-24.11: configure Makefile.in
	SUNKD_TRIXIE_ROOT=$(TRIXIE_ROOT) JOBS=$(JOBS) bash tests/slurm-24.11/run.sh --packages

# The fuzz targets with libFuzzer's main (clang, ASan, UBSan; fuzz-replay.c
# steps aside under SUNKD_LIBFUZZER), and the fake NVML the gres target
# loads, built plain: a shared library cannot link the sanitizers' runtime.
# (clang warns of format strings handed on in a va_list, which gcc takes.)
# fuzz-run runs each target FUZZ_RUNS times over a copy of its corpus.
FUZZ_TARGETS = $(shell sed -n 's,^check_PROGRAMS += \(tests\|%reldir%\)/fuzz/\(fuzz-[a-z0-9-]*\)$$,tests/fuzz/\2,p' \
	tests/local.mk)

$(FUZZ_BUILD)/config.status: configure
	mkdir -p $(FUZZ_BUILD)
	cd $(FUZZ_BUILD) && CC=clang CFLAGS='-g -O1 -fsanitize=fuzzer-no-link,address,undefined -Wno-format-nonliteral' \
		CPPFLAGS=-DSUNKD_LIBFUZZER LDFLAGS=-fsanitize=address,undefined ../configure $(CONFIGURE_FLAGS)

fuzz: $(FUZZ_BUILD)/config.status
	$(MAKE) -C $(FUZZ_BUILD) CFLAGS='-g -O1' LDFLAGS= tests/fake-nvml/libnvidia-ml.la
	$(MAKE) -C $(FUZZ_BUILD) $(PARALLEL) LDFLAGS=-fsanitize=fuzzer,address,undefined $(FUZZ_TARGETS)

fuzz-run: fuzz
	tests/fuzz/run.sh -b $(FUZZ_BUILD) $(FUZZ_RUNS)

bench: all
	$(MAKE) -C $(BUILD) bench

install: all
	$(MAKE) -C $(BUILD) install

# The Debian packages sunkd, sunkd-slurm and sunkd-dev, built by
# dpkg-buildpackage from packaging/deb (as debian/) in $(DEB_DIR)/sunkd.
deb:
	rm -rf $(DEB_DIR) && mkdir -p $(DEB_DIR)/sunkd
	$(SOURCE_FILES) | tar --null -T - -cf - | tar -C $(DEB_DIR)/sunkd -xf -
	rm -rf $(DEB_DIR)/sunkd/debian && cp -r packaging/deb $(DEB_DIR)/sunkd/debian
	sed -i 's/@VERSION@/$(VERSION)/g' $(DEB_DIR)/sunkd/debian/changelog
	cd $(DEB_DIR)/sunkd && dpkg-buildpackage -b -us -uc $(PARALLEL)
	@ls $(DEB_DIR)/*.deb

# The RPMs, by rpmbuild from packaging/rpm/sunkd.spec in $(RPM_DIR).  Here
# (Debian's rpm) the build dependencies are not in the rpm database: --nodeps.
rpm:
	rm -rf $(RPM_DIR) && mkdir -p $(RPM_DIR)/SOURCES $(RPM_DIR)/tar/sunkd-$(VERSION)
	$(SOURCE_FILES) | tar --null -T - -cf - | tar -C $(RPM_DIR)/tar/sunkd-$(VERSION) -xf -
	tar -C $(RPM_DIR)/tar -czf $(RPM_DIR)/SOURCES/sunkd-$(VERSION).tar.gz sunkd-$(VERSION)
	sed 's/@VERSION@/$(VERSION)/g' packaging/rpm/sunkd.spec > $(RPM_DIR)/sunkd.spec
	rpmbuild --define "_topdir $(abspath $(RPM_DIR))" --define "_smp_build_ncpus $(JOBS)" \
		$(if $(wildcard /etc/debian_version),--nodeps) \
		-bb $(RPM_DIR)/sunkd.spec
	@find $(RPM_DIR)/RPMS -name '*.rpm'

# Both package builds, then tests/integration/0310-packages.t: lintian,
# rpmlint and hardening-check, and the .debs installed, upgraded, removed
# and purged by dpkg in a throwaway root.  Needs root.  Its log is
# $(BUILD)/tests/integration/0310-packages.log.
check-packages: deb rpm all
	SUNKD_DEB_DIR=$(abspath $(DEB_DIR)) SUNKD_RPM_DIR=$(abspath $(RPM_DIR)) \
		$(MAKE) -C $(BUILD) check TESTS=tests/integration/0310-packages.t TEST_SUITE_LOG=packages-suite.log

# The release tarball (build/sunkd-VERSION.tar.xz), and the same checked:
# unpacked, configured, built, make check, install, uninstall.
dist: $(BUILD)/config.status
	$(MAKE) -C $(BUILD) dist

distcheck: $(BUILD)/config.status
	$(MAKE) -C $(BUILD) distcheck

clean:
	-$(MAKE) -C $(BUILD) clean
	-$(MAKE) -C $(ASAN_BUILD) clean
	-$(MAKE) -C $(FUZZ_BUILD) clean

distclean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) autom4te.cache build-aux configure config.h.in \
		aclocal.m4 Makefile.in m4/libtool.m4 m4/lt*.m4
