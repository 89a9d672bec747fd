/* Unit tests for the health module's check types of LBNL NHC's node
 * hardware checks (cpu, dmi, edac, mce, ethernet) and the NHC keys of
 * memory, file and mount: each against a fake /proc and /sys written into
 * a temp dir, passing, failing, with its input missing (UNKNOWN), and with
 * malformed, hostile and oversized input that must end in a clear UNKNOWN
 * "<type>-input-bad", never a crash; and each new type's baseline
 * (genconf) loaded back as a check that passes on the node it came from. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "../../modules/health/checks/health-check.h"
#include "../lib/check-run.h"
#include "../lib/fake-root.h"
#include "../lib/health-check-test.h"

static void setup(void) {
        fake_root_make("/tmp/test-health-nhc-XXXXXX");
}

static void teardown(void) {
        fake_root_remove();
}

static HealthResult run(const char *type, const char *body) {
        return run_in(root, type, body);
}

/* The baseline @type makes of the root, each entry also loaded back and
 * run: it must be accepted and pass.  Return: the entries joined by '\n'. */
static char *genconf(const char *type) {
        const HealthCheckType *t = health_check_type_find(type);
        HealthEnv env = { .root = root };
        HealthGenconf g = {};
        char *all = NULL;
        size_t n = 0;

        ck_assert_ptr_nonnull(t);
        ck_assert_ptr_nonnull(t->genconf);
        ck_assert_int_eq(t->genconf(&env, &g), 0);
        ck_assert(!g.oom);
        for (size_t i = 0; i < g.n; i++) {
                assert_entry_passes(root, type, g.entries[i], NULL);
                all = realloc(all, n + strlen(g.entries[i]) + 2);
                ck_assert_ptr_nonnull(all);
                n += (size_t) sprintf(all + n, "%s%s", n ? "\n" : "", g.entries[i]);
        }
        health_genconf_clear(&g);
        return all ?: strdup("");
}

/* The new types are in the table, make a baseline, and the one that asks a
 * driver runs in a child; the /proc and /sys ones that only read memory do not. */
START_TEST(test_types) {
        static const char *const names[] = { "cpu", "dmi", "edac", "mce", "ethernet" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                const HealthCheckType *t = health_check_type_find(names[i]);

                ck_assert_msg(t, "%s", names[i]);
                ck_assert_int_eq(t->runner, HEALTH_RUNNER_BUILTIN);
                ck_assert_msg(t->genconf, "%s makes no baseline", names[i]);
                ck_assert_int_eq(t->child, streq(names[i], "ethernet"));
        }
}
END_TEST

/* ---- cpu -------------------------------------------------------------- */

/* @sockets sockets of @cores cores with @smt threads each, as x86 writes cpuinfo. */
static void cpuinfo_x86(unsigned sockets, unsigned cores, unsigned smt) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        unsigned cpu = 0;

        ck_assert_ptr_nonnull(f);
        for (unsigned s = 0; s < sockets; s++)
                for (unsigned t = 0; t < cores * smt; t++, cpu++)
                        fprintf(f,
                                "processor\t: %u\nvendor_id\t: GenuineIntel\nmodel name\t: Xeon\ncpu "
                                "MHz\t\t: "
                                "2400.000\nphysical id\t: %u\nsiblings\t: %u\ncore id\t\t: %u\ncpu cores\t: "
                                "%u\nflags\t\t: fpu vme\n\n",
                                cpu, s, cores * smt, t % cores, cores);
        ck_assert_int_eq(fclose(f), 0);
        put_bytes("/proc/cpuinfo", text, size);
}

START_TEST(test_cpu) {
        _cleanup_free_ char *g = NULL;

        cpuinfo_x86(2, 4, 2);
        assert_run("cpu", "sockets: 2\ncores: 8\nthreads: 16\n", HEALTH_PASS, "ok",
                   "2 sockets, 8 cores, 16 threads");
        assert_run("cpu", "threads: 16\n", HEALTH_PASS, "ok", "16 threads");
        assert_run("cpu", "sockets: 1\n", HEALTH_FAIL, "cpu-sockets", "2 CPU sockets, want 1");
        assert_run("cpu", "sockets: 2\ncores: 16\n", HEALTH_FAIL, "cpu-cores", "8 CPU cores, want 16");
        assert_run("cpu", "cores: 8\nthreads: 8\n", HEALTH_FAIL, "cpu-threads", "16 CPU threads, want 8");
        ck_assert_int_eq(run("cpu", "sockets: 1\n").remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        ck_assert_int_eq(run("cpu", "threads: 8\n").remedy, HEALTH_REMEDY_REBOOT);
        g = genconf("cpu");
        ck_assert_str_eq(g, "{name: cpu, type: cpu, sockets: 2, cores: 8, threads: 16}");
        /* SMT off: NHC counts siblings per socket */
        cpuinfo_x86(2, 4, 1);
        assert_run("cpu", "sockets: 2\ncores: 8\nthreads: 16\n", HEALTH_FAIL, "cpu-threads",
                   "8 CPU threads, want 16");
        /* no "physical id" (arm64, many VMs): each processor a socket, a core, a thread, as NHC */
        put("/proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n\n"
                             "processor\t: 2\n\nprocessor\t: 3\n");
        assert_run("cpu", "sockets: 4\ncores: 4\nthreads: 4\n", HEALTH_PASS, "ok",
                   "4 sockets, 4 cores, 4 threads");
        free(g);
        g = genconf("cpu");
        ck_assert_str_eq(g, "{name: cpu, type: cpu, sockets: 4, cores: 4, threads: 4}");
}
END_TEST

START_TEST(test_cpu_bad_input) {
        static const char *const bad[] = {
                "processor\t: 0\nphysical id\t: zero\n",
                "processor\t: 0\nphysical id\t: -1\n",
                "processor\t: 0\nphysical id\t: 0\ncpu cores\t: 4x\n",
                "processor\t: 0\nphysical id\t: 0\nsiblings\t: 99999999999999999999\n",
                "vendor_id\t: GenuineIntel\n", /* no processor */
                "",
        };
        _cleanup_free_ char *g = NULL;

        assert_run("cpu", "sockets: 1\n", HEALTH_UNKNOWN, "cpu-input-missing", "/proc/cpuinfo' is missing");
        g = genconf("cpu"); /* nothing to say of a node without cpuinfo */
        ck_assert_str_eq(g, "");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                put("/proc/cpuinfo", "%s", bad[i]);
                assert_run("cpu", "sockets: 1\n", HEALTH_UNKNOWN, "cpu-input-bad", "cpuinfo");
        }
        /* NHC would take 1 core and 0 threads here; sunkd judges no made-up count */
        put("/proc/cpuinfo", "processor\t: 0\nphysical id\t: 0\n");
        assert_run("cpu", "sockets: 1\n", HEALTH_PASS, "ok", "1 sockets");
        assert_run("cpu", "cores: 1\n", HEALTH_UNKNOWN, "cpu-input-bad", "gives no cores count");
        put("/proc/cpuinfo", "processor\t: 0\nphysical id\t: 0\ncpu cores\t: 2\n");
        assert_run("cpu", "threads: 2\n", HEALTH_UNKNOWN, "cpu-input-bad", "gives no threads count");
        /* siblings under cpu cores: judged as counted, left out of a baseline */
        put("/proc/cpuinfo", "processor\t: 0\nphysical id\t: 0\ncpu cores\t: 4\nsiblings\t: 3\n");
        assert_run("cpu", "sockets: 1\nthreads: 4\n", HEALTH_FAIL, "cpu-threads", "3 CPU threads, want 4");
        g = mfree(g);
        g = genconf("cpu");
        ck_assert_str_eq(g, "{name: cpu, type: cpu, sockets: 1, cores: 4}");
        put_bytes("/proc/cpuinfo", "processor\t: 0\n\0physical id: 1\n", 30);
        assert_run("cpu", "sockets: 1\n", HEALTH_UNKNOWN, "cpu-input-bad", "holds a NUL byte");
        /* a hostile table: more distinct sockets than any machine */
        {
                _cleanup_free_ char *text = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&text, &size);

                for (unsigned i = 0; i < 2000; i++)
                        fprintf(f, "processor\t: %u\nphysical id\t: %u\n", i, i);
                ck_assert_int_eq(fclose(f), 0);
                put_bytes("/proc/cpuinfo", text, size);
        }
        assert_run("cpu", "sockets: 2\n", HEALTH_UNKNOWN, "cpu-input-bad", "more than 1024 physical ids");
        /* one line longer than any line the reader keeps: skipped, the rest counted */
        put_big("/proc/cpuinfo", 'x', 200 * 1024);
        assert_run("cpu", "sockets: 1\n", HEALTH_UNKNOWN, "cpu-input-bad", "lists no processor");
        loop_at("/proc/cpuinfo");
        assert_run("cpu", "sockets: 1\n", HEALTH_UNKNOWN, "cpu-input-bad", "cpuinfo");
        unlink_at("/proc/cpuinfo");
        mkdirs("/proc/cpuinfo");
        assert_run("cpu", "sockets: 1\n", HEALTH_UNKNOWN, "cpu-input-bad", "cpuinfo");
}
END_TEST

START_TEST(test_cpu_config) {
        assert_refused("cpu", "", "key 'sockets': a cpu check needs sockets, cores, threads or several");
        assert_refused("cpu", "cores: 8\nthreads: 4\n",
                       "key 'threads': 4 threads are fewer than the 8 cores");
        assert_refused("cpu", "sockets: 0\n", "key 'sockets'");
        assert_refused("cpu", "sockets: two\n", "key 'sockets'");
        assert_refused("cpu", "cores: -1\n", "key 'cores'");
        assert_refused("cpu", "socket: 2\n", "socket");
}
END_TEST

/* ---- memory (NHC's physmem, swap, mem and their _free) ---------------- */

#define MEMINFO_NHC                                                                                         \
        "MemTotal:       16000000 kB\nMemFree:         1000000 kB\nMemAvailable:    8000000 kB\n"           \
        "Buffers:          500000 kB\nCached:          2500000 kB\nSwapCached:            0 kB\n"           \
        "SwapTotal:       4000000 kB\nSwapFree:        3000000 kB\n"

START_TEST(test_memory_nhc) {
        put("/proc/meminfo", "%s", MEMINFO_NHC);
        /* check_hw_physmem: min and max, exact with both */
        assert_run("memory", "min_total: 16000000K\nmax_total: 16000000K\n", HEALTH_PASS, "ok",
                   "MemTotal 15.2G");
        assert_run("memory", "max_total: 15G\n", HEALTH_FAIL, "memory-total-high",
                   "MemTotal 15.2G, want at most 15.0G");
        /* NHC's fudge: a percentage of the total found, or a size */
        assert_run("memory", "min_total: 16500000K\ntolerance: 5%\n", HEALTH_PASS, "ok", "MemTotal");
        assert_run("memory", "min_total: 17000000K\ntolerance: 5%\n", HEALTH_FAIL, "memory-total-low",
                   "(tolerance 5%)");
        assert_run("memory", "max_total: 15500000K\ntolerance: 512M\n", HEALTH_PASS, "ok", "MemTotal");
        assert_run("memory", "max_total: 15400000K\ntolerance: 512M\n", HEALTH_FAIL, "memory-total-high",
                   "(tolerance 512M)");
        /* check_hw_swap: "no swap" is a maximum of 0 */
        assert_run("memory", "max_swap: 0\n", HEALTH_FAIL, "memory-swap-high",
                   "SwapTotal 3.8G, want at most 0B");
        assert_run("memory", "min_swap: 4G\n", HEALTH_FAIL, "memory-swap-low", "SwapTotal 3.8G");
        assert_run("memory", "min_swap: 3G\nmax_swap: 4G\n", HEALTH_PASS, "ok", "SwapTotal 3.8G");
        /* check_hw_mem: RAM and swap together */
        assert_run("memory", "min_with_swap: 19G\n", HEALTH_PASS, "ok", "MemTotal+SwapTotal 19.0G");
        assert_run("memory", "min_with_swap: 20G\n", HEALTH_FAIL, "memory-with-swap-low", "19.0G");
        ck_assert_int_eq(run("memory", "min_with_swap: 20G\n").remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        assert_run("memory", "max_with_swap: 18G\n", HEALTH_FAIL, "memory-with-swap-high", "19.0G");
        /* the _free ones: MemFree+Buffers+Cached (4000000 kB), SwapFree, both */
        assert_run("memory", "min_free: 4000000K\n", HEALTH_PASS, "ok", "MemFree+Buffers+Cached 3.8G");
        assert_run("memory", "min_free: 4000001K\n", HEALTH_FAIL, "memory-free-low", "3.8G");
        assert_run("memory", "min_swap_free: 3G\n", HEALTH_FAIL, "memory-swap-free-low", "SwapFree 2.8G");
        assert_run("memory", "min_free_with_swap: 7000000K\n", HEALTH_PASS, "ok", "6.6G");
        assert_run("memory", "min_free_with_swap: 7000001K\n", HEALTH_FAIL, "memory-free-with-swap-low",
                   "6.6G");
        /* the first limit missed is the one said, MemTotal before the rest */
        assert_run("memory", "min_total: 20G\nmin_swap: 8G\n", HEALTH_FAIL, "memory-total-low", "MemTotal");
        /* a meminfo without swap lines cannot say */
        put("/proc/meminfo", "MemTotal: 100 kB\nMemFree: 50 kB\n");
        assert_run("memory", "max_swap: 0\n", HEALTH_UNKNOWN, "memory-input-bad", "has no SwapTotal");
        assert_run("memory", "min_free: 1K\n", HEALTH_UNKNOWN, "memory-input-bad", "has no Buffers");
        put("/proc/meminfo", "MemTotal: 100 kB\nSwapTotal: 12x kB\n");
        assert_run("memory", "max_swap: 0\n", HEALTH_UNKNOWN, "memory-input-bad", "SwapTotal does not read");
        unlink_at("/proc/meminfo");
        assert_run("memory", "max_swap: 0\n", HEALTH_UNKNOWN, "memory-input-missing", "missing");
}
END_TEST

START_TEST(test_memory_nhc_config) {
        assert_refused("memory", "tolerance: 5%\n", "key 'min_total': a memory check needs");
        assert_refused("memory", "min_total: 1G\ntolerance: 5 %\n", "key 'tolerance': '5 %' is neither");
        assert_refused("memory", "min_total: 1G\ntolerance: 101%\n", "key 'tolerance'");
        assert_refused("memory", "min_total: 1G\ntolerance: lots\n", "key 'tolerance'");
        assert_refused("memory", "min_total: 2G\nmax_total: 1G\n",
                       "key 'min_total': the minimum of MemTotal");
        assert_refused("memory", "min_swap: 2G\nmax_swap: 1G\n", "key 'min_swap'");
        assert_refused("memory", "min_with_swap: 2G\nmax_with_swap: 1G\n", "key 'min_with_swap'");
        assert_refused("memory", "max_swap: none\n", "key 'max_swap'");
}
END_TEST

/* ---- dmi -------------------------------------------------------------- */

START_TEST(test_dmi) {
        _cleanup_free_ char *g = NULL;

        put("/sys/class/dmi/id/bios_version", "2.1.3\n");
        put("/sys/class/dmi/id/product_name", "PowerEdge R760 \"XE\"\n");
        put("/sys/class/dmi/id/bios_vendor", "Dell Inc.\n");
        assert_run("dmi", "field: bios_version\nvalue: 2.1.3\n", HEALTH_PASS, "ok",
                   "bios_version is '2.1.3'");
        assert_run("dmi", "field: bios_version\nvalue: 2.1.4\n", HEALTH_FAIL, "dmi-mismatch",
                   "bios_version is '2.1.3', want '2.1.4'");
        assert_run("dmi", "field: bios_version\nmatch: \"^2\\\\.1\\\\.\"\n", HEALTH_PASS, "ok", "2.1.3");
        assert_run("dmi", "field: bios_version\nmatch: \"^1\\\\.\"\n", HEALTH_FAIL, "dmi-mismatch",
                   "want a match of '^1\\.'");
        /* NHC's negation: the value must not match */
        assert_run("dmi", "field: bios_vendor\nmatch: Dell\nnegate: true\n", HEALTH_FAIL, "dmi-mismatch",
                   "which must not match 'Dell'");
        assert_run("dmi", "field: bios_vendor\nvalue: HPE\nnegate: true\n", HEALTH_PASS, "ok", "Dell Inc.");
        ck_assert_int_eq(run("dmi", "field: bios_version\nvalue: x\n").remedy, HEALTH_REMEDY_NONE);
        /* the baseline: bios_version and product_name, quoted */
        g = genconf("dmi");
        ck_assert_str_eq(g,
                         "{name: dmi-bios_version, type: dmi, field: bios_version, value: \"2.1.3\"}\n"
                         "{name: dmi-product_name, type: dmi, field: product_name, value: \"PowerEdge R760 "
                         "\\\"XE\\\"\"}");
}
END_TEST

START_TEST(test_dmi_bad_input) {
        _cleanup_free_ char *g = NULL;

        assert_run("dmi", "field: bios_version\nvalue: 1\n", HEALTH_UNKNOWN, "dmi-input-missing",
                   "/sys/class/dmi/id/bios_version' is missing");
        g = genconf("dmi"); /* no SMBIOS: nothing */
        ck_assert_str_eq(g, "");
        put_bytes("/sys/class/dmi/id/bios_version", "2.1\0.3\n", 7);
        assert_run("dmi", "field: bios_version\nvalue: 2.1\n", HEALTH_UNKNOWN, "dmi-input-bad",
                   "holds a NUL byte");
        put_big("/sys/class/dmi/id/bios_version", 'v', 5000);
        assert_run("dmi", "field: bios_version\nvalue: 2.1\n", HEALTH_UNKNOWN, "dmi-input-bad", "too large");
        loop_at("/sys/class/dmi/id/bios_version");
        assert_run("dmi", "field: bios_version\nvalue: 2.1\n", HEALTH_UNKNOWN, "dmi-input-bad",
                   "bios_version");
        /* not UTF-8, with control bytes: judged, shown escaped, left out of the baseline */
        put("/sys/class/dmi/id/bios_version", "caf\xe9\x1b[2J\n");
        put("/sys/class/dmi/id/product_name", "\xff\xfe\n");
        assert_run("dmi", "field: bios_version\nvalue: x\n", HEALTH_FAIL, "dmi-mismatch",
                   "'caf\\xe9\\x1b[2J'");
        assert_run("dmi", "field: bios_version\nmatch: \"^caf\"\n", HEALTH_PASS, "ok", "caf\\xe9");
        free(g);
        g = genconf("dmi");
        ck_assert_str_eq(g, "");
        /* valid UTF-8, but a C1 control (U+0080) or a C0 one: no YAML stream holds it raw */
        put("/sys/class/dmi/id/bios_version", "2.1\xc2\x80\n");
        put("/sys/class/dmi/id/product_name", "R760\x04\n");
        free(g);
        g = genconf("dmi");
        ck_assert_str_eq(g, "");
}
END_TEST

START_TEST(test_dmi_config) {
        assert_refused("dmi", "field: bios_version\n",
                       "key 'value': a dmi check needs value or match, not both");
        assert_refused("dmi", "field: bios_version\nvalue: a\nmatch: b\n", "key 'match'");
        assert_refused("dmi", "value: a\n", "key 'field'");
        assert_refused("dmi", "field: ../../../etc/shadow\nvalue: a\n",
                       "key 'field': '../../../etc/shadow' is not a field of /sys/class/dmi/id");
        assert_refused("dmi", "field: BIOS_VERSION\nvalue: a\n", "key 'field'");
        assert_refused("dmi", "field: \"\"\nvalue: a\n", "key 'field'");
        assert_refused("dmi", "field: bios_version\nmatch: \"a(b\"\n",
                       "key 'match': 'a(b' is not a POSIX extended regular expression");
        assert_refused("dmi", "field: bios_version\nvalue: a\nnegate: maybe\n", "key 'negate'");
}
END_TEST

/* ---- edac ------------------------------------------------------------- */

#define EDAC "/sys/devices/system/edac/mc"

static void mc(unsigned n, unsigned ce, unsigned ue) {
        char rel[128];

        snprintf(rel, sizeof(rel), EDAC "/mc%u/ce_count", n);
        put(rel, "%u\n", ce);
        snprintf(rel, sizeof(rel), EDAC "/mc%u/ue_count", n);
        put(rel, "%u\n", ue);
}

static void dimm(unsigned m, unsigned d, const char *label, unsigned ce, unsigned ue) {
        char rel[128];

        snprintf(rel, sizeof(rel), EDAC "/mc%u/dimm%u/dimm_ce_count", m, d);
        put(rel, "%u\n", ce);
        snprintf(rel, sizeof(rel), EDAC "/mc%u/dimm%u/dimm_ue_count", m, d);
        put(rel, "%u\n", ue);
        snprintf(rel, sizeof(rel), EDAC "/mc%u/dimm%u/dimm_label", m, d);
        put(rel, "%s\n", label);
}

START_TEST(test_edac) {
        _cleanup_free_ char *g = NULL;

        mc(0, 3, 0);
        mc(1, 0, 0);
        mkdirs(EDAC "/power"); /* not a controller */
        assert_run("edac", "", HEALTH_PASS, "ok", "2 memory controllers: 3 corrected, 0 uncorrected");
        assert_run("edac", "max_ce: 3\n", HEALTH_PASS, "ok", "3 corrected");
        assert_run("edac", "max_ce: 2\n", HEALTH_FAIL, "edac-ce",
                   "mc0: 3 corrected memory errors, at most 2 allowed");
        ck_assert_int_eq(run("edac", "max_ce: 2\n").remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        g = genconf("edac");
        ck_assert_str_eq(g, "{name: edac, type: edac, max_ue: 0}");
        mc(1, 0, 2);
        assert_run("edac", "", HEALTH_FAIL, "edac-ue",
                   "mc1: 2 uncorrected memory errors, at most 0 allowed");
        ck_assert_int_eq(run("edac", "").remedy, HEALTH_REMEDY_REPLACE);
        assert_run("edac", "max_ue: 2\n", HEALTH_PASS, "ok", "2 uncorrected");
        free(g);
        g = genconf("edac"); /* a baseline passes on the node it came from */
        ck_assert_str_eq(g, "{name: edac, type: edac, max_ue: 2}");
        /* per DIMM: the DIMM named by its label */
        dimm(0, 0, "CPU_SrcID#0_MC#0_Chan#0_DIMM#0", 0, 0);
        dimm(0, 1, "CPU_SrcID#0_MC#0_Chan#1_DIMM#0", 3, 0);
        dimm(1, 0, "CPU_SrcID#1_MC#1_Chan#0_DIMM#0", 0, 2);
        assert_run("edac", "per_dimm: true\nmax_ce: 2\n", HEALTH_FAIL, "edac-ce",
                   "mc0 dimm1 (CPU_SrcID#0_MC#0_Chan#1_DIMM#0): 3 corrected");
        assert_run("edac", "per_dimm: true\nmax_ue: 1\n", HEALTH_FAIL, "edac-ue", "mc1 dimm0 (CPU_SrcID#1");
        assert_run("edac", "per_dimm: true\nmax_ue: 2\n", HEALTH_PASS, "ok", "3 DIMMs");
        /* older kernels: csrows */
        put(EDAC "/mc2/csrow0/ce_count", "0\n");
        put(EDAC "/mc2/csrow0/ue_count", "1\n");
        put(EDAC "/mc2/ce_count", "0\n");
        put(EDAC "/mc2/ue_count", "1\n");
        assert_run("edac", "per_dimm: true\nmax_ue: 0\n", HEALTH_FAIL, "edac-ue", "mc1 dimm0");
        assert_run("edac", "per_dimm: true\nmax_ue: 2\n", HEALTH_PASS, "ok", "4 DIMMs");
}
END_TEST

START_TEST(test_edac_bad_input) {
        _cleanup_free_ char *g = NULL;

        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-missing", "mc' is missing");
        g = genconf("edac"); /* no EDAC: nothing */
        ck_assert_str_eq(g, "");
        mkdirs(EDAC "/power");
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-missing", "no EDAC driver loaded");
        put(EDAC "/mc0/ce_count", "many\n");
        put(EDAC "/mc0/ue_count", "0\n");
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-bad", "ce_count' is 'many', not a count");
        put(EDAC "/mc0/ce_count", "-1\n");
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-bad", "not a count");
        put(EDAC "/mc0/ce_count", "99999999999999999999999\n");
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-bad", "not a count");
        put_bytes(EDAC "/mc0/ce_count", "1\0002\n", 4);
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-bad", "holds a NUL byte");
        put_big(EDAC "/mc0/ce_count", '1', 10000);
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-bad", "too large");
        unlink_at(EDAC "/mc0/ce_count");
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-missing", "ce_count' is missing");
        loop_at(EDAC "/mc0/ce_count");
        assert_run("edac", "", HEALTH_UNKNOWN, "edac-input-bad", "ce_count");
        g = mfree(g);
        ck_assert_int_eq(
                health_check_type_find("edac")->genconf(&(HealthEnv){ .root = root }, &(HealthGenconf){}),
                -EBADMSG);
        /* a failure found is told before a controller that cannot be read */
        put(EDAC "/mc1/ce_count", "0\n");
        put(EDAC "/mc1/ue_count", "5\n");
        assert_run("edac", "", HEALTH_FAIL, "edac-ue", "mc1: 5");
        unlink_at(EDAC "/mc0/ce_count");
        put(EDAC "/mc0/ce_count", "0\n");
        assert_run("edac", "", HEALTH_FAIL, "edac-ue", "mc1: 5");
        assert_refused("edac", "max_ue: -1\n", "key 'max_ue'");
        assert_refused("edac", "max_ce: x\n", "key 'max_ce'");
        assert_refused("edac", "per_dimm: 2\n", "key 'per_dimm'");
}
END_TEST

/* ---- mce -------------------------------------------------------------- */

#define INTR_HEAD                                                                                           \
        "            CPU0       CPU1       \n   0:         40          0   IO-APIC    2-edge      timer\n"

START_TEST(test_mce) {
        _cleanup_free_ char *g = NULL;

        put("/proc/interrupts", INTR_HEAD "NMI:          1          2   Non-maskable interrupts\n"
                                          "MCE:          0          0   Machine check exceptions\n"
                                          "MCP:         52         52   Machine check polls\n");
        assert_run("mce", "", HEALTH_PASS, "ok", "0 machine-check exceptions since boot");
        put("/proc/interrupts", INTR_HEAD "MCE:          0          3   Machine check exceptions\n");
        assert_run("mce", "", HEALTH_FAIL, "mce-exceptions",
                   "3 machine-check exceptions since boot, at most 0 allowed");
        ck_assert_int_eq(run("mce", "").remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        assert_run("mce", "max_exceptions: 3\n", HEALTH_PASS, "ok", "3 machine-check");
        g = genconf("mce");
        ck_assert_str_eq(g, "{name: mce, type: mce, max_exceptions: 3}");
        /* arm64: no row, nothing was checked */
        put("/proc/interrupts", INTR_HEAD "IPI0:       100        100       Rescheduling interrupts\n");
        assert_run("mce", "", HEALTH_UNKNOWN, "mce-input-missing", "has no MCE row");
        free(g);
        g = genconf("mce"); /* nothing counted: nothing to say */
        ck_assert_str_eq(g, "");
        assert_refused("mce", "max_exceptions: -1\n", "key 'max_exceptions'");
}
END_TEST

START_TEST(test_mce_bad_input) {
        static const char *const bad[] = {
                "MCE:   Machine check exceptions\n",
                "MCE:\n",
                "MCE:  1234567890123456  0  Machine check exceptions\n",
        };

        assert_run("mce", "", HEALTH_UNKNOWN, "mce-input-missing", "interrupts' is missing");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                put("/proc/interrupts", INTR_HEAD "%s", bad[i]);
                assert_run("mce", "", HEALTH_UNKNOWN, "mce-input-bad", "does not read");
        }
        /* a non-number after the counts ends them, as the description does */
        put("/proc/interrupts", "MCE: 1 2x Machine check exceptions\n");
        assert_run("mce", "max_exceptions: 1\n", HEALTH_PASS, "ok", "1 machine-check");
        put_bytes("/proc/interrupts", "CPU0\n\0MCE: 0\n", 14);
        assert_run("mce", "", HEALTH_UNKNOWN, "mce-input-bad", "does not read");
        put_big("/proc/interrupts", ' ', 100 * 1024);
        assert_run("mce", "", HEALTH_UNKNOWN, "mce-input-bad", "overlong");
        loop_at("/proc/interrupts");
        assert_run("mce", "", HEALTH_UNKNOWN, "mce-input-bad", "interrupts");
}
END_TEST

/* ---- ethernet --------------------------------------------------------- */

#define NET "/sys/class/net"

static void iface(const char *name, const char *state, const char *carrier, const char *speed,
                  bool physical) {
        char rel[256];

        snprintf(rel, sizeof(rel), NET "/%s/operstate", name);
        put(rel, "%s\n", state);
        snprintf(rel, sizeof(rel), NET "/%s/carrier", name);
        put(rel, "%s\n", carrier);
        snprintf(rel, sizeof(rel), NET "/%s/type", name);
        put(rel, "%s\n", streq(name, "ib0") ? "32" : streq(name, "lo") ? "772" : "1");
        if (speed) {
                snprintf(rel, sizeof(rel), NET "/%s/speed", name);
                put(rel, "%s\n", speed);
        }
        if (physical) {
                snprintf(rel, sizeof(rel), NET "/%s/device", name);
                mkdirs(rel);
        }
}

START_TEST(test_ethernet) {
        _cleanup_free_ char *g = NULL;

        iface("eth0", "up", "1", "25000", true);
        iface("eth1", "down", "0", NULL, true);
        iface("eth2", "up", "1", "1000", true);
        iface("lo", "unknown", "1", NULL, false);
        iface("ib0", "up", "1", "-1", true);
        iface("veth9", "up", "1", "10000", false);
        iface("tun0", "unknown", "0", NULL, false);
        iface("eno1.100", "up", "1", "100", true); /* its check's name without the dot */
        assert_run("ethernet", "interface: eth0\n", HEALTH_PASS, "ok", "eth0 is up");
        assert_run("ethernet", "interface: eth0\nmin_speed: 25000\n", HEALTH_PASS, "ok",
                   "eth0 is up at 25000 Mb/s");
        assert_run("ethernet", "interface: eth2\nmin_speed: 10000\n", HEALTH_FAIL, "ethernet-speed",
                   "eth2 runs at 1000 Mb/s, want at least 10000");
        ck_assert_int_eq(run("ethernet", "interface: eth2\nmin_speed: 10000\n").remedy,
                         HEALTH_REMEDY_CONTACT_SUPPORT);
        assert_run("ethernet", "interface: eth1\n", HEALTH_FAIL, "ethernet-down", "eth1 is down, not up");
        assert_run("ethernet", "interface: eth7\n", HEALTH_FAIL, "ethernet-missing", "no interface eth7");
        ck_assert_int_eq(run("ethernet", "interface: eth7\n").remedy, HEALTH_REMEDY_REBOOT);
        /* "unknown": up when the carrier is */
        assert_run("ethernet", "interface: lo\n", HEALTH_PASS, "ok", "lo is up");
        assert_run("ethernet", "interface: tun0\n", HEALTH_FAIL, "ethernet-down", "tun0 is unknown");
        /* a speed the driver does not know is no pass of a min_speed */
        assert_run("ethernet", "interface: ib0\nmin_speed: 1\n", HEALTH_UNKNOWN, "ethernet-input-bad",
                   "a speed its driver does not give");
        assert_run("ethernet", "interface: lo\nmin_speed: 1\n", HEALTH_UNKNOWN, "ethernet-input-bad",
                   "speed");
        /* the baseline: physical Ethernet (not IPoIB, not veth, not lo) that is up, at its speed */
        g = genconf("ethernet");
        ck_assert_str_eq(
                g, "{name: \"ethernet-eno1_100\", type: ethernet, interface: \"eno1.100\", min_speed: 100}\n"
                   "{name: \"ethernet-eth0\", type: ethernet, interface: \"eth0\", min_speed: 25000}\n"
                   "{name: \"ethernet-eth2\", type: ethernet, interface: \"eth2\", min_speed: 1000}");
}
END_TEST

START_TEST(test_ethernet_bad_input) {
        _cleanup_free_ char *g = NULL;

        g = genconf("ethernet"); /* no /sys/class/net */
        ck_assert_str_eq(g, "");
        mkdirs(NET "/eth0");
        assert_run("ethernet", "interface: eth0\n", HEALTH_UNKNOWN, "ethernet-input-missing",
                   "/sys/class/net/eth0/operstate' is missing");
        put_bytes(NET "/eth0/operstate", "u\0p\n", 4);
        assert_run("ethernet", "interface: eth0\n", HEALTH_UNKNOWN, "ethernet-input-bad", "NUL byte");
        put_big(NET "/eth0/operstate", 'u', 8192);
        assert_run("ethernet", "interface: eth0\n", HEALTH_UNKNOWN, "ethernet-input-bad", "eth0");
        loop_at(NET "/eth0/operstate");
        assert_run("ethernet", "interface: eth0\n", HEALTH_UNKNOWN, "ethernet-input-bad", "eth0");
        unlink_at(NET "/eth0/operstate");
        put(NET "/eth0/operstate", "\xff\x1b[31m\n");
        assert_run("ethernet", "interface: eth0\n", HEALTH_FAIL, "ethernet-down", "eth0 is \\xff\\x1b[31m");
        put(NET "/eth0/operstate", "up\n");
        put(NET "/eth0/speed", "fast\n");
        assert_run("ethernet", "interface: eth0\nmin_speed: 100\n", HEALTH_UNKNOWN, "ethernet-input-bad",
                   "speed does not read as Mb/s");
        put(NET "/eth0/speed", "99999999999999999999\n");
        assert_run("ethernet", "interface: eth0\nmin_speed: 100\n", HEALTH_UNKNOWN, "ethernet-input-bad",
                   "speed");
        /* an interface that is a symbolic link loop, and a name not UTF-8 in the tree */
        loop_at(NET "/eth9");
        assert_run("ethernet", "interface: eth9\n", HEALTH_UNKNOWN, "ethernet-input-bad", "eth9");
        iface("e\xff\xfe", "up", "1", "100", true);
        free(g);
        g = genconf("ethernet");
        ck_assert_str_eq(g, "");
}
END_TEST

START_TEST(test_ethernet_config) {
        assert_refused("ethernet", "", "key 'interface'");
        assert_refused("ethernet", "interface: ../../etc\n",
                       "key 'interface': '../../etc' is not an interface name");
        assert_refused("ethernet", "interface: ..\n", "key 'interface'");
        assert_refused("ethernet", "interface: eth0-and-a-very-long-name\n", "key 'interface'");
        assert_refused("ethernet", "interface: \"eth0:1\"\n", "key 'interface'");
        assert_refused("ethernet", "interface: eth0\nmin_speed: 0\n", "key 'min_speed'");
        assert_refused("ethernet", "interface: eth0\nmin_speed: 10G\n", "key 'min_speed'");
}
END_TEST

/* ---- file: owner, group, mode ----------------------------------------- */

START_TEST(test_file_stat) {
        _cleanup_free_ char *p = at("/etc/munge.key"), *body = NULL;
        uid_t uid = getuid();
        gid_t gid = getgid();

        put("/etc/munge.key", "k");
        ck_assert_int_eq(chmod(p, 0400), 0);
        ck_assert_int_ge(asprintf(&body, "path: /etc/munge.key\nowner: %u\ngroup: %u\nmode: \"0400\"\n",
                                  (unsigned) uid, (unsigned) gid),
                         0);
        assert_run("file", body, HEALTH_PASS, "ok", "exists, of the owner, group and mode asked");
        free(body);
        ck_assert_int_ge(asprintf(&body, "path: /etc/munge.key\nowner: %u\n", (unsigned) uid + 1), 0);
        assert_run("file", body, HEALTH_FAIL, "file-owner", "'/etc/munge.key' is owned by uid");
        free(body);
        ck_assert_int_ge(asprintf(&body, "path: /etc/munge.key\ngroup: %u\n", (unsigned) gid + 1), 0);
        assert_run("file", body, HEALTH_FAIL, "file-group", "'/etc/munge.key' has gid");
        assert_run("file", "path: /etc/munge.key\nmode: \"0600\"\n", HEALTH_FAIL, "file-mode",
                   "'/etc/munge.key' has mode 0400, want 0600");
        assert_run("file", "path: /etc/munge.key\nmode: 400\n", HEALTH_PASS, "ok", "mode asked");
        ck_assert_int_eq(chmod(p, 01777), 0);
        assert_run("file", "path: /etc/munge.key\nmode: \"1777\"\n", HEALTH_PASS, "ok", "mode asked");
        /* the owner checked before the content */
        free(body);
        ck_assert_int_ge(
                asprintf(&body, "path: /etc/munge.key\nowner: %u\nmatch: nothing\n", (unsigned) uid + 1), 0);
        assert_run("file", body, HEALTH_FAIL, "file-owner", "owned by uid");
        assert_run("file", "path: /etc/missing\nmode: \"0400\"\n", HEALTH_FAIL, "file-missing", "missing");
        /* a name resolved when the config is read: root is uid 0 everywhere */
        if (uid == 0)
                assert_run("file", "path: /etc/munge.key\nowner: root\n", HEALTH_PASS, "ok", "exists");
        else
                assert_run("file", "path: /etc/munge.key\nowner: root\n", HEALTH_FAIL, "file-owner",
                           "want root");
        ck_assert_int_eq(run("file", "path: /etc/munge.key\nmode: \"0600\"\n").remedy, HEALTH_REMEDY_NONE);
}
END_TEST

START_TEST(test_file_stat_config) {
        assert_refused("file", "path: /x\nowner: no-such-user-sunkd-test\n",
                       "key 'owner': no user 'no-such-user-sunkd-test' (give a number");
        assert_refused("file", "path: /x\ngroup: no-such-group-sunkd-test\n", "key 'group': no group");
        assert_refused("file", "path: /x\nowner: 4294967295\n", "key 'owner'");
        assert_refused("file", "path: /x\nmode: \"0999\"\n",
                       "key 'mode': '0999' is not octal permission bits");
        assert_refused("file", "path: /x\nmode: \"17777\"\n", "key 'mode'");
        assert_refused("file", "path: /x\nmode: rw-r--r--\n", "key 'mode'");
        assert_refused("file", "path: /x\nmode: \"\"\n", "key 'mode'");
}
END_TEST

/* ---- mount: read-only ------------------------------------------------- */

START_TEST(test_mount_ro) {
        put("/proc/self/mountinfo",
            "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
            "30 22 0:40 / /scratch rw,noatime shared:20 - lustre 10.0.0.1@o2ib:/fs rw,flock\n"
            "31 22 8:2 / /data ro,relatime shared:21 - xfs /dev/sdb1 ro\n"
            "32 22 8:3 / /logs rw,relatime - ext4 /dev/sdc1 ro,errors=remount-ro\n");
        assert_run("mount", "path: /data\nro: true\n", HEALTH_PASS, "ok", "'/data' is mounted (xfs, ro)");
        assert_run("mount", "path: /logs\nro: true\n", HEALTH_PASS, "ok", "(ext4, ro)");
        assert_run("mount", "path: /scratch\nro: true\n", HEALTH_FAIL, "mount-writable",
                   "'/scratch' (lustre) is writable, want read-only");
        ck_assert_int_eq(run("mount", "path: /scratch\nro: true\n").remedy, HEALTH_REMEDY_NONE);
        assert_run("mount", "path: /scratch\nro: true\nrw: false\n", HEALTH_FAIL, "mount-writable", "");
        assert_run("mount", "path: /data\nro: true\nfs_type: ext4\n", HEALTH_FAIL, "mount-fstype", "xfs");
        assert_run("mount", "path: /nope\nro: true\n", HEALTH_FAIL, "mount-missing", "not mounted");
        /* ro: false is the old meaning: writable by default */
        assert_run("mount", "path: /data\nro: false\n", HEALTH_FAIL, "mount-readonly", "read-only");
        assert_run("mount", "path: /data\nro: false\nrw: false\n", HEALTH_PASS, "ok", "ro");
        assert_refused("mount", "path: /data\nro: true\nrw: true\n",
                       "key 'ro': a mount is not both read-only (ro: true) and writable (rw: true)");
        assert_refused("mount", "path: /data\nro: maybe\n", "key 'ro'");
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-nhc");
        TCase *tc = tcase_create("nhc");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_types);
        tcase_add_test(tc, test_cpu);
        tcase_add_test(tc, test_cpu_bad_input);
        tcase_add_test(tc, test_cpu_config);
        tcase_add_test(tc, test_memory_nhc);
        tcase_add_test(tc, test_memory_nhc_config);
        tcase_add_test(tc, test_dmi);
        tcase_add_test(tc, test_dmi_bad_input);
        tcase_add_test(tc, test_dmi_config);
        tcase_add_test(tc, test_edac);
        tcase_add_test(tc, test_edac_bad_input);
        tcase_add_test(tc, test_mce);
        tcase_add_test(tc, test_mce_bad_input);
        tcase_add_test(tc, test_ethernet);
        tcase_add_test(tc, test_ethernet_bad_input);
        tcase_add_test(tc, test_ethernet_config);
        tcase_add_test(tc, test_file_stat);
        tcase_add_test(tc, test_file_stat_config);
        tcase_add_test(tc, test_mount_ro);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
