# tests/: Check unit tests, TAP integration tests, fuzz replays, benchmarks.

TEST_EXTENSIONS = .t
T_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
AM_TESTS_ENVIRONMENT = \
	export SUNKD_BUILDDIR='$(abs_top_builddir)'; \
	export SUNKD_SRCDIR='$(abs_top_srcdir)'; \
	export ASAN_OPTIONS='halt_on_error=1:abort_on_error=1:print_stacktrace=1:detect_leaks=1'; \
	export UBSAN_OPTIONS='halt_on_error=1:print_stacktrace=1'; \
	export CK_DEFAULT_TIMEOUT=30;

CHECK_TEST_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) $(SYSTEMD_CFLAGS) $(JSONC_CFLAGS) $(YAML_CFLAGS)
CHECK_TEST_LIBS = $(CHECK_LIBS)

# The control socket: codec, server, client.
check_PROGRAMS += %reldir%/unit/test-varlink
%canon_reldir%_unit_test_varlink_SOURCES = %reldir%/unit/test-varlink.c
%canon_reldir%_unit_test_varlink_CFLAGS = $(CHECK_TEST_CFLAGS)
%canon_reldir%_unit_test_varlink_LDADD = agent/libsunkd-client.la $(CHECK_TEST_LIBS) $(JSONC_LIBS)
TESTS += %reldir%/unit/test-varlink

check_PROGRAMS += %reldir%/unit/test-ipc
%canon_reldir%_unit_test_ipc_SOURCES = %reldir%/unit/test-ipc.c
%canon_reldir%_unit_test_ipc_CFLAGS = $(CHECK_TEST_CFLAGS)
%canon_reldir%_unit_test_ipc_LDADD = agent/libsunkd-core.la agent/libsunkd-client.la $(CHECK_TEST_LIBS) \
	$(SYSTEMD_LIBS) $(JSONC_LIBS)
TESTS += %reldir%/unit/test-ipc

# Fuzz targets.  Under `make check` each is linked with the replay main and
# runs its seed corpus through the .t wrapper next to it.
check_PROGRAMS += %reldir%/fuzz/fuzz-varlink-msg
%canon_reldir%_fuzz_fuzz_varlink_msg_SOURCES = %reldir%/fuzz/fuzz-varlink-msg.c %reldir%/fuzz/fuzz-replay.c
%canon_reldir%_fuzz_fuzz_varlink_msg_CFLAGS = $(AM_CFLAGS) $(JSONC_CFLAGS)
%canon_reldir%_fuzz_fuzz_varlink_msg_LDADD = agent/libsunkd-client.la $(JSONC_LIBS)
TESTS += %reldir%/fuzz/varlink-msg.t
EXTRA_DIST += %reldir%/fuzz/varlink-msg.t %reldir%/fuzz/corpus/varlink-msg

# End of tests/local.mk
