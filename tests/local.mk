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

check_PROGRAMS += tests/unit/test-nsscache-conf
TESTS += tests/unit/test-nsscache-conf
tests_unit_test_nsscache_conf_SOURCES = tests/unit/test-nsscache-conf.c
tests_unit_test_nsscache_conf_CFLAGS = $(CHECK_TEST_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir)
tests_unit_test_nsscache_conf_LDADD = modules/nsscache/libnsscache-scim.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/unit/test-scim-map
TESTS += tests/unit/test-scim-map
tests_unit_test_scim_map_SOURCES = tests/unit/test-scim-map.c
tests_unit_test_scim_map_CFLAGS = $(CHECK_TEST_CFLAGS) $(CURL_CFLAGS) -I$(top_srcdir)
tests_unit_test_scim_map_LDADD = modules/nsscache/libnsscache-scim.la $(CHECK_TEST_LIBS)

check_PROGRAMS += tests/lib/scim-dump
tests_lib_scim_dump_SOURCES = tests/lib/scim-dump.c
tests_lib_scim_dump_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir)
tests_lib_scim_dump_LDADD = modules/nsscache/libnsscache-scim.la $(CURL_LIBS)
EXTRA_DIST += tests/lib/scim-server.py
TESTS += tests/integration/0200-nsscache-scim-fetch.t
EXTRA_DIST += tests/integration/0200-nsscache-scim-fetch.t

# Fuzz targets replay their corpus under make check.
check_PROGRAMS += tests/fuzz/fuzz-scim-json
TESTS += tests/fuzz/fuzz-scim-json
tests_fuzz_fuzz_scim_json_SOURCES = tests/fuzz/fuzz-scim-json.c tests/fuzz/fuzz-replay-scim.c
tests_fuzz_fuzz_scim_json_CFLAGS = $(AM_CFLAGS) $(CURL_CFLAGS) $(JSONC_CFLAGS) -I$(top_srcdir)
tests_fuzz_fuzz_scim_json_LDADD = modules/nsscache/libnsscache-scim.la
EXTRA_DIST += tests/fuzz/corpus/scim-json

# End of tests/local.mk
