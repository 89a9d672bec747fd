# tests/: Check unit tests, TAP integration tests, fuzz replays, benchmarks.

TEST_EXTENSIONS = .t
T_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
# Every integration test has a deadline that fails it (tests/lib/with-deadline).
T_LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/lib/with-deadline
AM_TESTS_ENVIRONMENT = \
	export SUNKD_BUILDDIR='$(abs_top_builddir)'; \
	export SUNKD_SRCDIR='$(abs_top_srcdir)'; \
	export ASAN_OPTIONS='halt_on_error=1:abort_on_error=1:print_stacktrace=1:detect_leaks=1'; \
	export UBSAN_OPTIONS='halt_on_error=1:print_stacktrace=1'; \
	export CK_DEFAULT_TIMEOUT=60;

CHECK_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(SYSTEMD_CFLAGS) $(JSONC_CFLAGS) $(YAML_CFLAGS)
CHECK_TEST_LIBS = agent/libsunkd-core.la $(CHECK_LIBS)

# Modules used by the tests: one that exercises the ABI, two the loader must refuse.
TEST_MODULE_FLAGS = -module -avoid-version -shared -rpath /nowhere -Wl,-z,defs
check_LTLIBRARIES += tests/modules/testmod.la tests/modules/badabi.la tests/modules/notmodule.la
tests_modules_testmod_la_SOURCES = tests/modules/testmod.c
tests_modules_testmod_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_modules_testmod_la_LDFLAGS = $(TEST_MODULE_FLAGS) -export-symbols-regex '^sunkd_module_v1$$'
tests_modules_testmod_la_LIBADD = $(JSONC_LIBS)
tests_modules_badabi_la_SOURCES = tests/modules/badabi.c
tests_modules_badabi_la_LDFLAGS = $(TEST_MODULE_FLAGS)
tests_modules_notmodule_la_SOURCES = tests/modules/notmodule.c
tests_modules_notmodule_la_LDFLAGS = $(TEST_MODULE_FLAGS)
# A module without a reload hook, and one built against the frozen ABI 1.0 header.
check_LTLIBRARIES += tests/modules/noreload.la tests/modules/abi10.la tests/modules/abi12.la
tests_modules_noreload_la_SOURCES = tests/modules/noreload.c
tests_modules_noreload_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_modules_noreload_la_LDFLAGS = $(TEST_MODULE_FLAGS) -export-symbols-regex '^sunkd_module_v1$$'
tests_modules_noreload_la_LIBADD = $(JSONC_LIBS)
tests_modules_abi10_la_SOURCES = tests/modules/abi10.c
tests_modules_abi10_la_CPPFLAGS = -I$(top_srcdir)/tests/modules/abi-1.0 $(AM_CPPFLAGS)
tests_modules_abi10_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_modules_abi10_la_LDFLAGS = $(TEST_MODULE_FLAGS) -export-symbols-regex '^sunkd_module_v1$$'
tests_modules_abi10_la_LIBADD = $(JSONC_LIBS)
EXTRA_DIST += tests/modules/abi-1.0/sunkd/module.h
tests_modules_abi12_la_SOURCES = tests/modules/abi12.c
tests_modules_abi12_la_CPPFLAGS = -I$(top_srcdir)/tests/modules/abi-1.2 $(AM_CPPFLAGS)
tests_modules_abi12_la_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
tests_modules_abi12_la_LDFLAGS = $(TEST_MODULE_FLAGS) -export-symbols-regex '^sunkd_module_v1$$'
tests_modules_abi12_la_LIBADD = $(JSONC_LIBS)
EXTRA_DIST += tests/modules/abi-1.2/sunkd/module.h

# Unit tests (Check).
UNIT_TESTS = \
	tests/unit/test-conf \
	tests/unit/test-time-util \
	tests/unit/test-fileio \
	tests/unit/test-sched \
	tests/unit/test-metrics \
	tests/unit/test-spawn \
	tests/unit/test-lifecycle \
	tests/unit/test-module-host \
	tests/unit/test-watch \
	tests/unit/test-facts \
	tests/unit/test-errloc \
	tests/unit/test-spell \
	tests/unit/test-trusted-path \
	tests/unit/test-abi-layout \
	tests/unit/test-module-wrappers \
	# End of UNIT_TESTS
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)
tests_unit_test_conf_SOURCES = tests/unit/test-conf.c
tests_unit_test_conf_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_conf_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_time_util_SOURCES = tests/unit/test-time-util.c
tests_unit_test_time_util_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_time_util_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_fileio_SOURCES = tests/unit/test-fileio.c
tests_unit_test_fileio_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_fileio_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_sched_SOURCES = tests/unit/test-sched.c
tests_unit_test_sched_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_sched_LDADD = $(CHECK_TEST_LIBS) $(JSONC_LIBS)
tests_unit_test_metrics_SOURCES = tests/unit/test-metrics.c
tests_unit_test_metrics_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_metrics_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_lifecycle_SOURCES = tests/unit/test-lifecycle.c
tests_unit_test_lifecycle_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_lifecycle_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_module_host_SOURCES = tests/unit/test-module-host.c
tests_unit_test_module_host_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_module_host_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_spawn_SOURCES = tests/unit/test-spawn.c
tests_unit_test_spawn_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_spawn_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_watch_SOURCES = tests/unit/test-watch.c
tests_unit_test_watch_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_watch_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_facts_SOURCES = tests/unit/test-facts.c
tests_unit_test_facts_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_facts_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_errloc_SOURCES = tests/unit/test-errloc.c
tests_unit_test_errloc_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_errloc_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_spell_SOURCES = tests/unit/test-spell.c
tests_unit_test_spell_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_spell_LDADD = $(CHECK_TEST_LIBS)
tests_unit_test_trusted_path_SOURCES = tests/unit/test-trusted-path.c
tests_unit_test_trusted_path_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_trusted_path_LDADD = $(CHECK_TEST_LIBS)
# The frozen headers with their names prefixed, so that one file can hold
# today's layouts to theirs (abi10_sunkd_job_spec beside sunkd_job_spec).
ABI_FROZEN_COPIES = tests/unit/abi-frozen-1.0.h tests/unit/abi-frozen-1.2.h
tests/unit/abi-frozen-1.0.h: $(top_srcdir)/tests/modules/abi-1.0/sunkd/module.h
	$(AM_V_GEN)$(MKDIR_P) $(@D) && sed -e 's/\bsunkd_/abi10_sunkd_/g' -e 's/\bSUNKD_/abi10_SUNKD_/g' $< >$@.tmp && mv $@.tmp $@
tests/unit/abi-frozen-1.2.h: $(top_srcdir)/tests/modules/abi-1.2/sunkd/module.h
	$(AM_V_GEN)$(MKDIR_P) $(@D) && sed -e 's/\bsunkd_/abi12_sunkd_/g' -e 's/\bSUNKD_/abi12_SUNKD_/g' $< >$@.tmp && mv $@.tmp $@
CLEANFILES += $(ABI_FROZEN_COPIES)
tests_unit_test_abi_layout_SOURCES = tests/unit/test-abi-layout.c
$(tests_unit_test_abi_layout_OBJECTS): $(ABI_FROZEN_COPIES)
tests_unit_test_abi_layout_CPPFLAGS = -I$(top_builddir)/tests/unit $(AM_CPPFLAGS)
tests_unit_test_abi_layout_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_abi_layout_LDADD = $(CHECK_LIBS)
# The wrappers of <sunkd/module.h> against a fake host table; it reads the
# header to find a wrapper it has no row for.
tests_unit_test_module_wrappers_SOURCES = tests/unit/test-module-wrappers.c
tests_unit_test_module_wrappers_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_module_wrappers_LDADD = $(CHECK_LIBS)

# Integration tests (TAP shell) against the real daemon.
INTEGRATION_TESTS = \
	tests/bench/verdict.t \
	tests/integration/0001-cli.t \
	tests/integration/0004-install.t \
	tests/integration/0005-layout.t \
	tests/integration/0002-docs.t \
	tests/integration/0003-etc-examples.t \
	tests/integration/0006-file-headers.t \
	tests/integration/0007-readme.t \
	tests/integration/0008-dist.t \
	tests/integration/0009-version.t \
	tests/integration/0010-lifecycle.t \
	tests/integration/0011-demo.t \
	tests/integration/0020-sunkctl.t \
	tests/integration/0030-config-errors.t \
	tests/integration/0031-config-trust.t \
	tests/integration/0040-modules.t \
	tests/integration/0045-module-jobs.t \
	tests/integration/0047-runs-always-end.t \
	tests/integration/0048-linger.t \
	tests/integration/0046-watch-facts.t \
	tests/integration/0050-jobs.t \
	tests/integration/0060-reload.t \
	tests/integration/0061-reload-unchanged.t \
	tests/integration/0070-metrics.t \
	tests/integration/0101-security-socket.t \
	tests/integration/0102-socket-per-uid.t \
	tests/integration/0110-socket-bad-input.t \
	tests/integration/0205-nsscache-golden.t \
	tests/integration/0214-nsscache-publish-fails-midway.t \
	tests/integration/0220-nsscache-daemon.t \
	tests/integration/0222-nsscache-config-refused.t \
	tests/integration/0230-nsscache-getent.t \
	tests/integration/0240-nsscache-tls.t \
	tests/integration/0250-nsscache-identity.t \
	tests/integration/0254-nsscache-s3-memory.t \
	tests/integration/0245-nsscache-ldap.t \
	tests/integration/0246-nsscache-ldap-getent.t \
	tests/integration/0247-nsscache-netgroup.t \
	tests/integration/0248-nsscache-automount.t \
	tests/integration/0255-nsscache-http.t \
	tests/integration/0256-nsscache-manifest.t \
	tests/integration/0257-nsscache-fleet.t \
	tests/integration/0258-nsscache-s3.t \
	tests/integration/0259-nsscache-delta.t \
	tests/integration/0301-readiness.t \
	tests/integration/0302-s6.t \
	tests/integration/0303-systemd-unit.t \
	tests/integration/0304-journald.t \
	tests/integration/0305-socket-activation.t \
	tests/integration/0306-s6-overlay.t \
	tests/integration/0311-socket-unit.t \
	tests/integration/0312-systemd-security.t \
	tests/integration/0313-unit-caps-gpu.t \
	tests/integration/0314-health-kept-children.t \
	# End of INTEGRATION_TESTS
TESTS += $(INTEGRATION_TESTS)
EXTRA_DIST += $(INTEGRATION_TESTS) tests/lib/tap.sh tests/lib/sunkd.sh tests/lib/summary tests/lib/scim.sh tests/lib/nginx.sh tests/lib/slapd.sh tests/lib/cut-proxy.py tests/lib/producer.sh tests/lib/gpu.sh tests/lib/s3rver.sh \
	tests/lib/etc-cache.sh tests/lib/fake-cpu-topology.sh tests/lib/scim-dump.sh tests/lib/varlink-raw.py tests/lib/notify-listen.py tests/lib/nss-index-check.py \
	tests/lib/socket-hog.py tests/lib/ptrace-hold.py tests/lib/with-deadline tests/lib/sshd.sh tests/lib/source-files.sh tests/lib/fake-nvidia-devs.sh \
	tests/bench/verdict.sh tests/bench/README.md tests/bench/ldap-bench.sh
# Run by the top-level make check-packages, on the packages it builds.
EXTRA_DIST += tests/integration/0310-packages.t
# 0002-docs.t and 0007-readme.t read these.
EXTRA_DIST += tests/lib/docs.sh tests/lib/c-scan.py tests/lib/md-snippets.py tests/lib/man-snippets.py README.md agent/README.md modules/README.md \
	modules/nsscache/README.md modules/authkeys/README.md modules/gres/README.md modules/health/README.md \
	modules/prolog/README.md tests/README.md tests/lib/README.md
# Included by the Check tests, not named in their sources.
EXTRA_DIST += tests/lib/check-run.h tests/lib/tmp-tree.h
check_SCRIPTS += tests/demo.sh
EXTRA_DIST += tests/demo.sh.in

tests/demo.sh: $(top_srcdir)/tests/demo.sh.in Makefile
	$(AM_V_GEN)$(MKDIR_P) $(@D) && sed -e 's|%BUILDDIR%|$(abs_top_builddir)|g' -e 's|%SRCDIR%|$(abs_top_srcdir)|g' \
		$(top_srcdir)/tests/demo.sh.in > $@.tmp && chmod +x $@.tmp && mv $@.tmp $@
CLEANFILES += tests/demo.sh
noinst_SCRIPTS += tests/demo.sh

# Benchmarks (make bench): built with the tests so they keep compiling, run
# only by tests/bench/bench.sh.
BENCHES += tests/bench/bench-ping tests/bench/bench-echo tests/bench/bench-nsscache tests/bench/bench-jsonc \
	tests/bench/bench-spawn
check_PROGRAMS += $(BENCHES)
tests_bench_bench_ping_SOURCES = tests/bench/bench-ping.c
tests_bench_bench_ping_CFLAGS = $(AM_CFLAGS)
tests_bench_bench_ping_LDADD = $(PTHREAD_LIBS)
tests_bench_bench_echo_SOURCES = tests/bench/bench-echo.c
tests_bench_bench_nsscache_SOURCES = tests/bench/bench-nsscache.c
tests_bench_bench_nsscache_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_bench_bench_nsscache_LDADD = modules/nsscache/libnsscache-core.la $(CURL_LIBS)
tests_bench_bench_jsonc_SOURCES = tests/bench/bench-jsonc.c
tests_bench_bench_jsonc_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_bench_bench_jsonc_LDADD = modules/nsscache/libnsscache-core.la $(JSONC_LIBS)
tests_bench_bench_spawn_SOURCES = tests/bench/bench-spawn.c
tests_bench_bench_spawn_CFLAGS = $(AM_CFLAGS) $(SYSTEMD_CFLAGS)
tests_bench_bench_spawn_LDADD = agent/libsunkd-core.la
EXTRA_DIST += tests/bench/bench.sh tests/bench/nhc-like.sh

.PHONY: bench
bench: all $(check_PROGRAMS) $(check_LTLIBRARIES)
	@SUNKD_BUILDDIR='$(abs_top_builddir)' SUNKD_SRCDIR='$(abs_top_srcdir)' $(SHELL) $(top_srcdir)/tests/bench/bench.sh

# The control socket: codec, server, client.
check_PROGRAMS += %reldir%/unit/test-varlink
%canon_reldir%_unit_test_varlink_SOURCES = %reldir%/unit/test-varlink.c
%canon_reldir%_unit_test_varlink_CFLAGS = $(CHECK_TEST_CFLAGS)
%canon_reldir%_unit_test_varlink_LDADD = agent/libsunkd-varlink.la agent/libsunkd-util.la $(CHECK_TEST_LIBS) $(JSONC_LIBS)
TESTS += %reldir%/unit/test-varlink

check_PROGRAMS += %reldir%/unit/test-ipc
%canon_reldir%_unit_test_ipc_SOURCES = %reldir%/unit/test-ipc.c
%canon_reldir%_unit_test_ipc_CFLAGS = $(CHECK_TEST_CFLAGS)
%canon_reldir%_unit_test_ipc_LDADD = agent/libsunkd-core.la agent/client/libsunkd-client.la $(CHECK_TEST_LIBS) \
	$(SYSTEMD_LIBS) $(JSONC_LIBS)
TESTS += %reldir%/unit/test-ipc

check_PROGRAMS += %reldir%/unit/test-sunkctl
%canon_reldir%_unit_test_sunkctl_SOURCES = %reldir%/unit/test-sunkctl.c
%canon_reldir%_unit_test_sunkctl_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_unit_test_sunkctl_LDADD = agent/client/libsunkctl.la $(CHECK_LIBS) $(JSONC_LIBS)
TESTS += %reldir%/unit/test-sunkctl

# Fuzz targets.  Under `make check` each is linked with the replay main and
# runs its seed corpus through the .t wrapper next to it.
check_PROGRAMS += %reldir%/fuzz/fuzz-varlink-msg
%canon_reldir%_fuzz_fuzz_varlink_msg_SOURCES = %reldir%/fuzz/fuzz-varlink-msg.c %reldir%/fuzz/fuzz-replay.c
%canon_reldir%_fuzz_fuzz_varlink_msg_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_fuzz_fuzz_varlink_msg_LDADD = agent/libsunkd-varlink.la agent/libsunkd-util.la $(JSONC_LIBS)
TESTS += %reldir%/fuzz/varlink-msg.t
EXTRA_DIST += %reldir%/fuzz/varlink-msg.t %reldir%/fuzz/corpus/varlink-msg %reldir%/fuzz/replay.sh

check_PROGRAMS += %reldir%/fuzz/fuzz-conf-yaml
%canon_reldir%_fuzz_fuzz_conf_yaml_SOURCES = %reldir%/fuzz/fuzz-conf-yaml.c %reldir%/fuzz/fuzz-replay.c
%canon_reldir%_fuzz_fuzz_conf_yaml_CFLAGS = $(CHECK_TEST_CFLAGS)
%canon_reldir%_fuzz_fuzz_conf_yaml_LDADD = agent/libsunkd-core.la
TESTS += %reldir%/fuzz/conf-yaml.t
EXTRA_DIST += %reldir%/fuzz/conf-yaml.t %reldir%/fuzz/corpus/conf-yaml

# nsscache: the files of its subfolders name the module's headers from its
# folder, as its local.mk compiles them.
NSSCACHE_TEST_CFLAGS = -I$(top_srcdir)/modules/nsscache

# nsscache cache writer: Check tests, the golden data set, and the publish
# helper the libnss-cache integration test drives.
check_LTLIBRARIES += %reldir%/lib/libnss-golden.la
%canon_reldir%_lib_libnss_golden_la_SOURCES = %reldir%/lib/nss-golden.c %reldir%/lib/nss-golden.h
%canon_reldir%_lib_libnss_golden_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/modules/nsscache

check_PROGRAMS += %reldir%/unit/test-nsscache-cache
%canon_reldir%_unit_test_nsscache_cache_SOURCES = %reldir%/unit/test-nsscache-cache.c
%canon_reldir%_unit_test_nsscache_cache_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/modules/nsscache
%canon_reldir%_unit_test_nsscache_cache_CFLAGS = $(CHECK_TEST_CFLAGS)
%canon_reldir%_unit_test_nsscache_cache_LDADD = %reldir%/lib/libnss-golden.la \
	modules/nsscache/libnsscache-cache.la agent/libsunkd-util.la $(CHECK_TEST_LIBS)
TESTS += %reldir%/unit/test-nsscache-cache

check_PROGRAMS += %reldir%/lib/nsscache-publish
%canon_reldir%_lib_nsscache_publish_SOURCES = %reldir%/lib/nsscache-publish.c
%canon_reldir%_lib_nsscache_publish_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/modules/nsscache
%canon_reldir%_lib_nsscache_publish_LDADD = %reldir%/lib/libnss-golden.la \
	modules/nsscache/libnsscache-cache.la agent/libsunkd-util.la

TESTS += %reldir%/integration/0210-nsscache-libnss-cache.t
EXTRA_DIST += %reldir%/integration/0210-nsscache-libnss-cache.t %reldir%/data/nsscache/golden %reldir%/data/nsscache/ldap
TESTS += %reldir%/integration/0221-nsscache-unchanged.t
EXTRA_DIST += %reldir%/integration/0221-nsscache-unchanged.t
TESTS += %reldir%/integration/0211-nsscache-publish-crash.t
EXTRA_DIST += %reldir%/integration/0211-nsscache-publish-crash.t
TESTS += %reldir%/integration/0212-nsscache-trust.t
TESTS += %reldir%/integration/0213-nsscache-recover-at-start.t
EXTRA_DIST += %reldir%/integration/0213-nsscache-recover-at-start.t
EXTRA_DIST += %reldir%/integration/0212-nsscache-trust.t

check_PROGRAMS += tests/unit/test-nsscache-conf
TESTS += tests/unit/test-nsscache-conf
tests_unit_test_nsscache_conf_SOURCES = tests/unit/test-nsscache-conf.c
tests_unit_test_nsscache_conf_CFLAGS = $(CHECK_TEST_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_nsscache_conf_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-nsscache-mapfile
TESTS += tests/unit/test-nsscache-mapfile
tests_unit_test_nsscache_mapfile_SOURCES = tests/unit/test-nsscache-mapfile.c tests/lib/scim-collect.c tests/lib/scim-collect.h
tests_unit_test_nsscache_mapfile_CFLAGS = $(CHECK_TEST_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_nsscache_mapfile_LDADD = modules/nsscache/libnsscache-core.la $(BZ2_LIBS) $(CHECK_TEST_LIBS)
check_PROGRAMS += tests/unit/test-nsscache-s3
TESTS += tests/unit/test-nsscache-s3
tests_unit_test_nsscache_s3_SOURCES = tests/unit/test-nsscache-s3.c
tests_unit_test_nsscache_s3_CFLAGS = $(CHECK_TEST_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_nsscache_s3_LDADD = modules/nsscache/libnsscache-core.la $(CURL_LIBS) $(CHECK_TEST_LIBS) -lpthread

check_PROGRAMS += tests/unit/test-scim-cursor
TESTS += tests/unit/test-scim-cursor
tests_unit_test_scim_cursor_SOURCES = tests/unit/test-scim-cursor.c
tests_unit_test_scim_cursor_CFLAGS = $(CHECK_TEST_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_scim_cursor_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-scim-page-memory
TESTS += tests/unit/test-scim-page-memory
tests_unit_test_scim_page_memory_SOURCES = tests/unit/test-scim-page-memory.c
tests_unit_test_scim_page_memory_CFLAGS = $(CHECK_TEST_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_scim_page_memory_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-scim-map
TESTS += tests/unit/test-scim-map
tests_unit_test_scim_map_SOURCES = tests/unit/test-scim-map.c tests/lib/scim-collect.c tests/lib/scim-collect.h
tests_unit_test_scim_map_CFLAGS = $(CHECK_TEST_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_scim_map_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-attr-path
TESTS += tests/unit/test-attr-path
tests_unit_test_attr_path_SOURCES = tests/unit/test-attr-path.c
tests_unit_test_attr_path_CFLAGS = $(CHECK_TEST_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_attr_path_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-refresh-memo
TESTS += tests/unit/test-refresh-memo
tests_unit_test_refresh_memo_SOURCES = tests/unit/test-refresh-memo.c
tests_unit_test_refresh_memo_CFLAGS = $(CHECK_TEST_CFLAGS) $(JSONC_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_refresh_memo_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-dupset
TESTS += tests/unit/test-dupset
tests_unit_test_dupset_SOURCES = tests/unit/test-dupset.c
tests_unit_test_dupset_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_dupset_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-manifest
TESTS += tests/unit/test-manifest
tests_unit_test_manifest_SOURCES = tests/unit/test-manifest.c
tests_unit_test_manifest_CFLAGS = $(CHECK_TEST_CFLAGS) $(CRYPTO_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_manifest_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS) $(CRYPTO_LIBS)

check_PROGRAMS += tests/unit/test-map-delta
TESTS += tests/unit/test-map-delta
tests_unit_test_map_delta_SOURCES = tests/unit/test-map-delta.c
tests_unit_test_map_delta_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_unit_test_map_delta_LDADD = modules/nsscache/libnsscache-core.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/lib/scim-dump
tests_lib_scim_dump_SOURCES = tests/lib/scim-dump.c tests/lib/scim-collect.c tests/lib/scim-collect.h
tests_lib_scim_dump_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_lib_scim_dump_LDADD = modules/nsscache/libnsscache-core.la $(CURL_LIBS)
EXTRA_DIST += tests/lib/scim-server.py tests/lib/nsscache-seed.h
TESTS += tests/integration/0200-nsscache-scim-fetch.t
EXTRA_DIST += tests/integration/0200-nsscache-scim-fetch.t
TESTS += tests/integration/0251-nsscache-server-abuse.t
EXTRA_DIST += tests/integration/0251-nsscache-server-abuse.t
TESTS += tests/integration/0252-nsscache-cursor.t
EXTRA_DIST += tests/integration/0252-nsscache-cursor.t
TESTS += tests/integration/0260-authkeys.t
EXTRA_DIST += tests/integration/0260-authkeys.t
TESTS += tests/integration/0262-authkeys-sshd.t
EXTRA_DIST += tests/integration/0262-authkeys-sshd.t
TESTS += tests/integration/0263-authkeys-local.t
EXTRA_DIST += tests/integration/0263-authkeys-local.t
TESTS += tests/integration/0264-authkeys-sshd-local.t
EXTRA_DIST += tests/integration/0264-authkeys-sshd-local.t
TESTS += tests/integration/0265-authkeys-reload.t
EXTRA_DIST += tests/integration/0265-authkeys-reload.t
TESTS += tests/integration/0270-gres.t
EXTRA_DIST += tests/integration/0270-gres.t
TESTS += tests/integration/0271-gres-slurmd.t
EXTRA_DIST += tests/integration/0271-gres-slurmd.t
TESTS += tests/integration/0272-gres-real-nvml.t
EXTRA_DIST += tests/integration/0272-gres-real-nvml.t
TESTS += tests/integration/0273-gres-xid.t
EXTRA_DIST += tests/integration/0273-gres-xid.t
# The core's check of written paths, with gres.conf among them.
TESTS += tests/integration/0032-written-paths.t
EXTRA_DIST += tests/integration/0032-written-paths.t
TESTS += tests/integration/0274-gres-driver-text.t
EXTRA_DIST += tests/integration/0274-gres-driver-text.t
TESTS += tests/integration/0275-gres-first-answer.t
EXTRA_DIST += tests/integration/0275-gres-first-answer.t
TESTS += tests/integration/0276-gres-kmsg.t
EXTRA_DIST += tests/integration/0276-gres-kmsg.t tests/lib/kmsg-stand-in.py
TESTS += tests/integration/0277-gres-fact.t
EXTRA_DIST += tests/integration/0277-gres-fact.t

# Fuzz targets replay their corpus under make check.
check_PROGRAMS += tests/fuzz/fuzz-scim-json
TESTS += tests/fuzz/scim-json.t
tests_fuzz_fuzz_scim_json_SOURCES = tests/fuzz/fuzz-scim-json.c tests/fuzz/fuzz-replay.c tests/lib/scim-collect.c \
	tests/lib/scim-collect.h
tests_fuzz_fuzz_scim_json_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_fuzz_fuzz_scim_json_LDADD = modules/nsscache/libnsscache-core.la
EXTRA_DIST += tests/fuzz/corpus/scim-json tests/fuzz/scim-json.t
check_PROGRAMS += tests/fuzz/fuzz-ini
TESTS += tests/fuzz/ini.t
tests_fuzz_fuzz_ini_SOURCES = tests/fuzz/fuzz-ini.c tests/fuzz/fuzz-replay.c
tests_fuzz_fuzz_ini_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_fuzz_fuzz_ini_LDADD = modules/nsscache/libnsscache-core.la
EXTRA_DIST += tests/fuzz/corpus/ini tests/fuzz/ini.t
check_PROGRAMS += tests/fuzz/fuzz-map-file
TESTS += tests/fuzz/map-file.t
tests_fuzz_fuzz_map_file_SOURCES = tests/fuzz/fuzz-map-file.c tests/fuzz/fuzz-replay.c tests/lib/scim-collect.c \
	tests/lib/scim-collect.h
tests_fuzz_fuzz_map_file_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_fuzz_fuzz_map_file_LDADD = modules/nsscache/libnsscache-core.la
EXTRA_DIST += tests/fuzz/corpus/map-file tests/fuzz/map-file.t
check_PROGRAMS += tests/fuzz/fuzz-s3-object
TESTS += tests/fuzz/s3-object.t
tests_fuzz_fuzz_s3_object_SOURCES = tests/fuzz/fuzz-map-file.c tests/fuzz/fuzz-replay.c tests/lib/scim-collect.c \
	tests/lib/scim-collect.h
tests_fuzz_fuzz_s3_object_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) -DFUZZ_S3_OBJECT $(NSSCACHE_TEST_CFLAGS)
tests_fuzz_fuzz_s3_object_LDADD = modules/nsscache/libnsscache-core.la
EXTRA_DIST += tests/fuzz/corpus/s3-object tests/fuzz/s3-object.t
check_PROGRAMS += tests/fuzz/fuzz-ldap-map
TESTS += tests/fuzz/ldap-map.t
tests_fuzz_fuzz_ldap_map_SOURCES = tests/fuzz/fuzz-ldap-map.c tests/fuzz/fuzz-replay.c tests/lib/scim-collect.c \
	tests/lib/scim-collect.h
tests_fuzz_fuzz_ldap_map_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_fuzz_fuzz_ldap_map_LDADD = modules/nsscache/libnsscache-core.la
EXTRA_DIST += tests/fuzz/corpus/ldap-map tests/fuzz/ldap-map.t
check_PROGRAMS += tests/fuzz/fuzz-map-delta
TESTS += tests/fuzz/map-delta.t
tests_fuzz_fuzz_map_delta_SOURCES = tests/fuzz/fuzz-map-delta.c tests/fuzz/fuzz-replay.c
tests_fuzz_fuzz_map_delta_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir) $(NSSCACHE_TEST_CFLAGS)
tests_fuzz_fuzz_map_delta_LDADD = modules/nsscache/libnsscache-core.la
EXTRA_DIST += tests/fuzz/corpus/map-delta tests/fuzz/map-delta.t
check_PROGRAMS += tests/fuzz/fuzz-slurm-nodes
TESTS += tests/fuzz/slurm-nodes.t
tests_fuzz_fuzz_slurm_nodes_SOURCES = tests/fuzz/fuzz-slurm-nodes.c tests/fuzz/fuzz-replay.c
tests_fuzz_fuzz_slurm_nodes_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir) $(HEALTH_TEST_CFLAGS)
tests_fuzz_fuzz_slurm_nodes_LDADD = modules/health/libhealth.la agent/libsunkd-util.la $(JSONC_LIBS)
EXTRA_DIST += tests/fuzz/corpus/slurm-nodes tests/fuzz/slurm-nodes.t
check_PROGRAMS += tests/fuzz/fuzz-health-inputs
TESTS += tests/fuzz/health-inputs.t
tests_fuzz_fuzz_health_inputs_SOURCES = tests/fuzz/fuzz-health-inputs.c tests/fuzz/fuzz-replay.c
tests_fuzz_fuzz_health_inputs_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir) $(HEALTH_TEST_CFLAGS)
tests_fuzz_fuzz_health_inputs_LDADD = modules/health/libhealth.la agent/libsunkd-core.la
EXTRA_DIST += tests/fuzz/corpus/health-inputs tests/fuzz/health-inputs.t

# authkeys: key validation, fingerprints, the sshkey map.
check_PROGRAMS += tests/unit/test-authkeys-key tests/unit/test-authkeys-map tests/unit/test-authkeys-local
TESTS += tests/unit/test-authkeys-key tests/unit/test-authkeys-map tests/unit/test-authkeys-local
tests_unit_test_authkeys_key_SOURCES = tests/unit/test-authkeys-key.c
tests_unit_test_authkeys_key_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir)
tests_unit_test_authkeys_key_LDADD = modules/authkeys/libauthkeys.la $(CHECK_LIBS)
tests_unit_test_authkeys_map_SOURCES = tests/unit/test-authkeys-map.c
tests_unit_test_authkeys_map_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir)
tests_unit_test_authkeys_map_LDADD = modules/nsscache/libnsscache-cache.la modules/authkeys/libauthkeys.la $(CHECK_LIBS)
tests_unit_test_authkeys_local_SOURCES = tests/unit/test-authkeys-local.c
tests_unit_test_authkeys_local_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir)
tests_unit_test_authkeys_local_LDADD = modules/authkeys/libauthkeys.la $(CHECK_LIBS)

check_PROGRAMS += tests/fuzz/fuzz-agent-replies
TESTS += tests/fuzz/agent-replies.t
tests_fuzz_fuzz_agent_replies_SOURCES = tests/fuzz/fuzz-agent-replies.c tests/fuzz/fuzz-replay.c
tests_fuzz_fuzz_agent_replies_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir)/agent
tests_fuzz_fuzz_agent_replies_LDADD = agent/libsunkd-core.la $(JSONC_LIBS)
EXTRA_DIST += tests/fuzz/corpus/agent-replies tests/fuzz/agent-replies.t
check_PROGRAMS += tests/fuzz/fuzz-agent-methods
TESTS += tests/fuzz/agent-methods.t
tests_fuzz_fuzz_agent_methods_SOURCES = tests/fuzz/fuzz-agent-methods.c tests/fuzz/fuzz-replay.c tests/fuzz/fuzz-reply.h
tests_fuzz_fuzz_agent_methods_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir)/agent
tests_fuzz_fuzz_agent_methods_LDADD = agent/libsunkd-core.la $(JSONC_LIBS)
EXTRA_DIST += tests/fuzz/corpus/agent-methods tests/fuzz/agent-methods.t tests/fuzz/run.sh
check_PROGRAMS += tests/fuzz/fuzz-health-methods
TESTS += tests/fuzz/health-methods.t
tests_fuzz_fuzz_health_methods_SOURCES = tests/fuzz/fuzz-methods.c tests/fuzz/fuzz-replay.c tests/fuzz/fuzz-reply.h $(modules_health_health_la_SOURCES)
tests_fuzz_fuzz_health_methods_CFLAGS = $(CHECK_TEST_CFLAGS) $(SLURM_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir)/agent $(HEALTH_TEST_CFLAGS)
tests_fuzz_fuzz_health_methods_LDADD = modules/health/libhealth.la agent/libsunkd-core.la $(JSONC_LIBS) $(SLURM_LIBS) $(CURL_LIBS)
EXTRA_DIST += tests/fuzz/corpus/health-methods tests/fuzz/health-methods.t
check_PROGRAMS += tests/fuzz/fuzz-prolog-methods
TESTS += tests/fuzz/prolog-methods.t
tests_fuzz_fuzz_prolog_methods_SOURCES = tests/fuzz/fuzz-methods.c tests/fuzz/fuzz-replay.c tests/fuzz/fuzz-reply.h $(modules_prolog_prolog_la_SOURCES)
tests_fuzz_fuzz_prolog_methods_CFLAGS = $(CHECK_TEST_CFLAGS) -I$(top_srcdir)/agent
tests_fuzz_fuzz_prolog_methods_LDADD = modules/prolog/libprolog.la agent/libsunkd-core.la $(JSONC_LIBS)
EXTRA_DIST += tests/fuzz/corpus/prolog-methods tests/fuzz/prolog-methods.t
check_PROGRAMS += tests/fuzz/fuzz-gres-methods
TESTS += tests/fuzz/gres-methods.t
tests_fuzz_fuzz_gres_methods_SOURCES = tests/fuzz/fuzz-methods.c tests/fuzz/fuzz-replay.c tests/fuzz/fuzz-reply.h $(modules_gres_gres_la_SOURCES)
tests_fuzz_fuzz_gres_methods_CFLAGS = $(CHECK_TEST_CFLAGS) $(SLURM_CFLAGS) -I$(top_srcdir)/agent
tests_fuzz_fuzz_gres_methods_LDADD = modules/gres/libgres.la agent/libsunkd-core.la $(JSONC_LIBS) $(SLURM_LIBS) -ldl
EXTRA_DIST += tests/fuzz/corpus/gres-methods tests/fuzz/gres-methods.t tests/fuzz/gres-methods.lsan
check_PROGRAMS += tests/fuzz/fuzz-authkeys-methods
TESTS += tests/fuzz/authkeys-methods.t
tests_fuzz_fuzz_authkeys_methods_SOURCES = tests/fuzz/fuzz-methods.c tests/fuzz/fuzz-replay.c tests/fuzz/fuzz-reply.h $(modules_authkeys_authkeys_la_SOURCES)
tests_fuzz_fuzz_authkeys_methods_CFLAGS = $(CHECK_TEST_CFLAGS) $(CRYPTO_CFLAGS) -I$(top_srcdir)/agent
tests_fuzz_fuzz_authkeys_methods_LDADD = modules/authkeys/libauthkeys.la agent/libsunkd-core.la $(JSONC_LIBS) $(CRYPTO_LIBS)
EXTRA_DIST += tests/fuzz/corpus/authkeys-methods tests/fuzz/authkeys-methods.t
check_PROGRAMS += tests/fuzz/fuzz-authkeys-map
TESTS += tests/fuzz/authkeys-map.t
tests_fuzz_fuzz_authkeys_map_SOURCES = tests/fuzz/fuzz-authkeys-map.c tests/fuzz/fuzz-replay.c
tests_fuzz_fuzz_authkeys_map_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)
tests_fuzz_fuzz_authkeys_map_LDADD = modules/authkeys/libauthkeys.la
EXTRA_DIST += tests/fuzz/corpus/authkeys-map tests/fuzz/authkeys-map.t

BENCHES += tests/bench/bench-authkeys-map tests/bench/bench-exec tests/bench/bench-gres tests/bench/bench-runparts
tests_bench_bench_gres_SOURCES = tests/bench/bench-gres.c
tests_bench_bench_gres_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)
tests_bench_bench_gres_LDADD = modules/gres/libgres.la agent/libsunkd-util.la $(JSONC_LIBS) -ldl
tests_bench_bench_exec_SOURCES = tests/bench/bench-exec.c
tests_bench_bench_runparts_SOURCES = tests/bench/bench-runparts.c
tests_bench_bench_authkeys_map_SOURCES = tests/bench/bench-authkeys-map.c
tests_bench_bench_authkeys_map_CFLAGS = $(AM_CFLAGS) -I$(top_srcdir)
tests_bench_bench_authkeys_map_LDADD = modules/authkeys/libauthkeys.la

# End of tests/local.mk

.PHONY: demo
demo: all tests/demo.sh tests/fake-nvml/libnvidia-ml.la
	./tests/demo.sh

# gres: gres.conf / Gres= rendering against golden files.
check_PROGRAMS += tests/unit/test-gres
TESTS += tests/unit/test-gres
tests_unit_test_gres_SOURCES = tests/unit/test-gres.c
tests_unit_test_gres_CFLAGS = $(CHECK_TEST_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_gres_LDADD = modules/gres/libgres.la agent/libsunkd-util.la $(JSONC_LIBS) $(CHECK_TEST_LIBS)
check_PROGRAMS += tests/unit/test-gres-xid
TESTS += tests/unit/test-gres-xid
tests_unit_test_gres_xid_SOURCES = tests/unit/test-gres-xid.c
tests_unit_test_gres_xid_CFLAGS = $(CHECK_TEST_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_gres_xid_LDADD = modules/gres/libgres.la agent/libsunkd-util.la $(JSONC_LIBS) $(CHECK_TEST_LIBS)
check_PROGRAMS += tests/unit/test-gres-kmsg
TESTS += tests/unit/test-gres-kmsg
tests_unit_test_gres_kmsg_SOURCES = tests/unit/test-gres-kmsg.c
tests_unit_test_gres_kmsg_CFLAGS = $(CHECK_TEST_CFLAGS) $(JSONC_CFLAGS)
tests_unit_test_gres_kmsg_LDADD = modules/gres/libgres.la agent/libsunkd-util.la $(JSONC_LIBS) $(CHECK_TEST_LIBS)
# health's XID policy and gpu judge: a library the module links; built
# into the test from its sources.
check_PROGRAMS += tests/unit/test-health-gpu
TESTS += tests/unit/test-health-gpu
tests_unit_test_health_gpu_SOURCES = tests/unit/test-health-gpu.c
tests_unit_test_health_gpu_CFLAGS = $(CHECK_TEST_CFLAGS) $(JSONC_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_gpu_LDADD = modules/health/libhealth.la $(CHECK_TEST_LIBS) agent/libsunkd-util.la $(JSONC_LIBS)
check_PROGRAMS += tests/unit/test-gres-topo
TESTS += tests/unit/test-gres-topo
tests_unit_test_gres_topo_SOURCES = tests/unit/test-gres-topo.c
tests_unit_test_gres_topo_CFLAGS = $(CHECK_TEST_CFLAGS)
tests_unit_test_gres_topo_LDADD = modules/gres/libgres.la agent/libsunkd-util.la $(CHECK_TEST_LIBS)
EXTRA_DIST += tests/data/gres

# health: the built-in check types against fake roots, munge against a real
# munged, the JWT checked with the openssl command.
# The module's subfolders (checks/, transport/) include its own headers by
# their names under modules/health/.
HEALTH_TEST_CFLAGS = -I$(top_srcdir)/modules/health
HEALTH_TEST_LIBS = modules/health/libhealth.la agent/libsunkd-util.la $(CHECK_TEST_LIBS)
check_PROGRAMS += tests/unit/test-health-checks tests/unit/test-health-munge tests/unit/test-health-jwt
check_PROGRAMS += tests/unit/test-health-proc-checks
TESTS += tests/unit/test-health-proc-checks
tests_unit_test_health_proc_checks_SOURCES = tests/unit/test-health-proc-checks.c tests/lib/health-check-test.h tests/lib/fake-root.h
tests_unit_test_health_proc_checks_CFLAGS = $(CHECK_TEST_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_proc_checks_LDADD = $(HEALTH_TEST_LIBS)
TESTS += tests/unit/test-health-checks tests/unit/test-health-munge tests/unit/test-health-jwt
tests_unit_test_health_checks_SOURCES = tests/unit/test-health-checks.c tests/lib/health-check-test.h tests/lib/fake-root.h
tests_unit_test_health_checks_CFLAGS = $(CHECK_TEST_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_checks_LDADD = $(HEALTH_TEST_LIBS)
check_PROGRAMS += tests/unit/test-health-genconf
TESTS += tests/unit/test-health-genconf
tests_unit_test_health_genconf_SOURCES = tests/unit/test-health-genconf.c tests/lib/fake-root.h tests/lib/health-check-test.h
tests_unit_test_health_genconf_CFLAGS = $(CHECK_TEST_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_genconf_LDADD = $(HEALTH_TEST_LIBS)
check_PROGRAMS += tests/unit/test-health-nhc
TESTS += tests/unit/test-health-nhc
tests_unit_test_health_nhc_SOURCES = tests/unit/test-health-nhc.c tests/lib/health-check-test.h tests/lib/fake-root.h
tests_unit_test_health_nhc_CFLAGS = $(CHECK_TEST_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_nhc_LDADD = $(HEALTH_TEST_LIBS)
tests_unit_test_health_munge_SOURCES = tests/unit/test-health-munge.c tests/lib/health-check-test.h
tests_unit_test_health_munge_CFLAGS = $(CHECK_TEST_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_munge_LDADD = $(HEALTH_TEST_LIBS)
tests_unit_test_health_jwt_SOURCES = tests/unit/test-health-jwt.c
tests_unit_test_health_jwt_CFLAGS = $(CHECK_TEST_CFLAGS) $(CRYPTO_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_jwt_LDADD = $(HEALTH_TEST_LIBS) $(JSONC_LIBS)
check_PROGRAMS += tests/unit/test-health-signal
TESTS += tests/unit/test-health-signal
tests_unit_test_health_signal_SOURCES = tests/unit/test-health-signal.c
tests_unit_test_health_signal_CFLAGS = $(CHECK_TEST_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_signal_LDADD = $(HEALTH_TEST_LIBS)
check_PROGRAMS += tests/unit/test-health-rest
TESTS += tests/unit/test-health-rest
tests_unit_test_health_rest_SOURCES = tests/unit/test-health-rest.c
tests_unit_test_health_rest_CFLAGS = $(CHECK_TEST_CFLAGS) $(HEALTH_TEST_CFLAGS)
tests_unit_test_health_rest_LDADD = $(HEALTH_TEST_LIBS) $(JSONC_LIBS)
# prolog: the directory scan and the client's own run of a script, linked
# without the daemon core, as the client links them.
check_PROGRAMS += tests/unit/test-prolog-dir
TESTS += tests/unit/test-prolog-dir
tests_unit_test_prolog_dir_SOURCES = tests/unit/test-prolog-dir.c
tests_unit_test_prolog_dir_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_prolog_dir_LDADD = modules/prolog/libprolog-exec.la modules/prolog/libprolog.la agent/libsunkd-util.la $(CHECK_LIBS)
check_PROGRAMS += tests/unit/test-prolog-reason
TESTS += tests/unit/test-prolog-reason
tests_unit_test_prolog_reason_SOURCES = tests/unit/test-prolog-reason.c
tests_unit_test_prolog_reason_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
tests_unit_test_prolog_reason_LDADD = modules/prolog/libprolog.la agent/libsunkd-util.la $(CHECK_LIBS)
# health against a real Slurm
TESTS += tests/integration/0296-health-repair-gpu.t
EXTRA_DIST += tests/integration/0296-health-repair-gpu.t
TESTS += tests/integration/0297-health-debounce.t
EXTRA_DIST += tests/integration/0297-health-debounce.t
TESTS += tests/integration/0298-health-reason-words.t
EXTRA_DIST += tests/integration/0298-health-reason-words.t
TESTS += tests/integration/0299-health-repair.t
EXTRA_DIST += tests/integration/0299-health-repair.t
TESTS += tests/integration/0330-health-gpu-depth.t
EXTRA_DIST += tests/integration/0330-health-gpu-depth.t
TESTS += tests/integration/0280-health-drain.t
EXTRA_DIST += tests/integration/0280-health-drain.t
TESTS += tests/integration/0281-health-fleet-guard.t
EXTRA_DIST += tests/integration/0281-health-fleet-guard.t
TESTS += tests/integration/0282-health-jwt.t
EXTRA_DIST += tests/integration/0282-health-jwt.t
TESTS += tests/integration/0284-health-libslurm.t
EXTRA_DIST += tests/integration/0284-health-libslurm.t
TESTS += tests/integration/0285-health-gpu.t
EXTRA_DIST += tests/integration/0285-health-gpu.t
TESTS += tests/integration/0286-health-real-gpu.t
EXTRA_DIST += tests/integration/0286-health-real-gpu.t
TESTS += tests/integration/0287-health-config.t
EXTRA_DIST += tests/integration/0287-health-config.t
TESTS += tests/integration/0288-health-script.t
EXTRA_DIST += tests/integration/0288-health-script.t
TESTS += tests/integration/0289-health-run.t
EXTRA_DIST += tests/integration/0289-health-run.t
TESTS += tests/integration/0325-health-user-processes.t
EXTRA_DIST += tests/integration/0325-health-user-processes.t
TESTS += tests/integration/0326-health-command.t
EXTRA_DIST += tests/integration/0326-health-command.t
TESTS += tests/integration/0327-health-tcp-port.t
EXTRA_DIST += tests/integration/0327-health-tcp-port.t
TESTS += tests/integration/0328-health-nhc-config.t
EXTRA_DIST += tests/integration/0328-health-nhc-config.t
TESTS += tests/integration/0335-health-genconf.t
EXTRA_DIST += tests/integration/0335-health-genconf.t
TESTS += tests/integration/0320-health-nhc-node.t
EXTRA_DIST += tests/integration/0320-health-nhc-node.t
# prolog: the module and its client, then under a real slurmd
TESTS += tests/integration/0290-prolog.t
EXTRA_DIST += tests/integration/0290-prolog.t
TESTS += tests/integration/0291-prolog-slurm.t
EXTRA_DIST += tests/integration/0291-prolog-slurm.t
TESTS += tests/integration/0292-outside-text.t
EXTRA_DIST += tests/integration/0292-outside-text.t
TESTS += tests/integration/0293-prolog-rules.t
EXTRA_DIST += tests/integration/0293-prolog-rules.t
# the slurmrestd transport against a fixture (Debian 12's slurmrestd has no node update)
TESTS += tests/integration/0283-health-slurmrestd.t
EXTRA_DIST += tests/integration/0283-health-slurmrestd.t tests/lib/slurmrestd-fixture.py
EXTRA_DIST += tests/lib/slurm.sh

# A fake libnvidia-ml.so.1 for gres discovery, driven by $FAKE_NVML_CONFIG.
check_LTLIBRARIES += tests/fake-nvml/libnvidia-ml.la
tests_fake_nvml_libnvidia_ml_la_SOURCES = tests/fake-nvml/fake-nvml.c
tests_fake_nvml_libnvidia_ml_la_LDFLAGS = $(TEST_MODULE_FLAGS) -Wl,-soname,libnvidia-ml.so.1

# make check-slurm-24.11 (tests/slurm-24.11/run.sh): the Debian 13 root, its
# runner and the tests only Slurm 24.11 can run (not in TESTS: Debian 12's
# slurmrestd has no node update).
EXTRA_DIST += tests/slurm-24.11/root.sh tests/slurm-24.11/chroot.sh tests/slurm-24.11/run.sh \
	tests/slurm-24.11/packages tests/slurm-24.11/health-slurmrestd.t tests/slurm-24.11/prolog-runinjob.t \
	tests/slurm-24.11/nsscache-debian.t
