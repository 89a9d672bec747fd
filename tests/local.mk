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
EXTRA_DIST += %reldir%/integration/0210-nsscache-libnss-cache.t %reldir%/data/nsscache/golden

# End of tests/local.mk
