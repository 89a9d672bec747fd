/* Unit tests for gres-topo: CPU ids to the core indexes of gres.conf's
 * Cores=, on topologies written by tests/lib/fake-cpu-topology.sh, and the
 * CPU list syntax with malformed and hostile input. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "../../modules/gres/gres-topo.h"
#include "../lib/check-run.h"

static char root[] = "/tmp/test-gres-topo-XXXXXX";

static void sh(const char *fmt, ...) _printf_(1, 2);
static void sh(const char *fmt, ...) {
        _cleanup_free_ char *cmd = NULL;
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vasprintf(&cmd, fmt, ap);
        va_end(ap);
        ck_assert_int_ge(n, 0);
        ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static void topology(unsigned sockets, unsigned cores, unsigned threads, const char *mode) {
        ck_assert_ptr_nonnull(mkdtemp(root));
        sh("'%s/tests/lib/fake-cpu-topology.sh' '%s' %u %u %u %s", getenv("SUNKD_SRCDIR"), root, sockets,
           cores, threads, mode);
}

static void teardown(void) {
        if (strchr(root, 'X') == NULL)
                sh("rm -rf '%s'", root);
        memcpy(root + strlen(root) - 6, "XXXXXX", 6);
}

/* The core list of @cpus on the topology under root. */
static char *cores(const char *cpus) {
        GresTopo t = {};
        char *ret = NULL;

        ck_assert_int_eq(gres_topo_load(root, &t), 0);
        ck_assert_int_eq(gres_topo_cores(&t, cpus, &ret), 0);
        gres_topo_done(&t);
        return ret;
}

static void assert_cores(const char *cpus, const char *want) {
        _cleanup_free_ char *got = cores(cpus);

        if (!want)
                ck_assert_msg(!got, "%s: want no cores, got %s", cpus, got);
        else
                ck_assert_msg(got && strcmp(got, want) == 0, "%s: want %s, got %s", cpus, want,
                              got ?: "(none)");
}

/* 2 sockets x 48 cores x 2 threads: an HGX host.  A GPU's affinity names
 * its socket's 96 CPUs; Slurm counts that socket's 48 cores. */
START_TEST(test_smt_two_sockets) {
        GresTopo t = {};

        topology(2, 48, 2, "");
        ck_assert_int_eq(gres_topo_load(root, &t), 0);
        ck_assert_uint_eq(t.n_cpus, 192);
        ck_assert_uint_eq(t.n_cores, 96);
        gres_topo_done(&t);
        assert_cores("0-47,96-143", "0-47");
        assert_cores("48-95,144-191", "48-95");
        assert_cores("96", "0"); /* a second thread is its core */
        assert_cores("0-191", "0-95");
}
END_TEST

/* Sockets alternate: even CPUs on socket 0.  Slurm still counts socket 0's cores first. */
START_TEST(test_interleaved) {
        topology(2, 4, 2, "interleaved");
        assert_cores("0,2,4,6,8,10,12,14", "0-3");
        assert_cores("1,3,5,7,9,11,13,15", "4-7");
        assert_cores("2", "1");
        assert_cores("3", "5");
}
END_TEST

/* Sockets and cores come in the order of their first CPU, as hwloc gives
 * them to slurmd, not in the order of their ids. */
START_TEST(test_order_of_first_cpu) {
        topology(2, 2, 1, "");
        sh("cd '%s/sys/devices/system/cpu' && echo 1 > cpu0/topology/physical_package_id && "
           "echo 1 > cpu1/topology/physical_package_id && echo 0 > cpu2/topology/physical_package_id && "
           "echo 0 > cpu3/topology/physical_package_id && echo 9 > cpu0/topology/core_id",
           root);
        assert_cores("0", "0");
        assert_cores("1", "1");
        assert_cores("2-3", "2-3");
}
END_TEST

/* An offline CPU has no topology: it is not counted, and a list naming it or
 * CPUs past the last is mapped for the CPUs that exist, as slurmd does. */
START_TEST(test_offline_and_unknown_cpus) {
        GresTopo t = {};

        topology(1, 4, 1, "");
        sh("rm -r '%s/sys/devices/system/cpu/cpu2/topology'", root);
        ck_assert_int_eq(gres_topo_load(root, &t), 0);
        ck_assert_uint_eq(t.n_cores, 3);
        gres_topo_done(&t);
        assert_cores("0-3", "0-2");
        assert_cores("3", "2");
        assert_cores("2", NULL);
        assert_cores("100-200", NULL);
}
END_TEST

START_TEST(test_no_topology) {
        GresTopo t = {};

        ck_assert_ptr_nonnull(mkdtemp(root));
        ck_assert_int_eq(gres_topo_load(root, &t), -ENOENT);
        sh("mkdir -p '%s/sys/devices/system/cpu/cpu0'", root);
        ck_assert_int_eq(gres_topo_load(root, &t), -ENOENT);
        ck_assert_int_eq(gres_topo_load("/nonexistent-gres-root", &t), -ENOENT);
}
END_TEST

/* Whoever can write the tree (a container's /sys, a configured root): numbers
 * that are not, files too large, more CPUs than Slurm handles, names that
 * only look like CPUs.  An error or the entry skipped; never a crash. */
START_TEST(test_hostile_tree) {
        static const char *const bad[] = { "x", "", "1x", "99999999999999999999999", " 1" };
        GresTopo t = {};

        topology(1, 2, 1, "");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                sh("printf '%%s' '%s' > '%s/sys/devices/system/cpu/cpu1/topology/core_id'", bad[i], root);
                ck_assert_msg(gres_topo_load(root, &t) == -EBADMSG, "core_id '%s'", bad[i]);
        }
        sh("head -c 100000 /dev/zero > '%s/sys/devices/system/cpu/cpu1/topology/core_id'", root);
        ck_assert_int_eq(gres_topo_load(root, &t), -EFBIG);
        sh("echo 2 > '%s/sys/devices/system/cpu/cpu1/topology/core_id'", root);
        /* look-alikes are not CPUs */
        sh("cd '%s/sys/devices/system/cpu' && mkdir -p cpu01/topology cpu1x/topology cpu-1/topology && "
           "echo 7 > cpu01/topology/core_id",
           root);
        ck_assert_int_eq(gres_topo_load(root, &t), 0);
        ck_assert_uint_eq(t.n_cpus, 2);
        gres_topo_done(&t);
        sh("cp -r '%s/sys/devices/system/cpu/cpu1' '%s/sys/devices/system/cpu/cpu40000'", root, root);
        ck_assert_int_eq(gres_topo_load(root, &t), -E2BIG);
        sh("rm -r '%s/sys/devices/system/cpu/cpu40000' && mv '%s/sys/devices/system/cpu/cpu1' "
           "'%s/sys/devices/system/cpu/cpu4294967296'",
           root, root, root);
        ck_assert_int_eq(gres_topo_load(root, &t), 0); /* not a CPU id: not a CPU */
        ck_assert_uint_eq(t.n_cpus, 1);
        gres_topo_done(&t);
}
END_TEST

START_TEST(test_cpulist) {
        static const char *const bad[] = { "",   "-", "1-",  "-1",    "3-1", "1,,2", "1,",
                                           ",1", "a", "1 2", "1-2-3", "0x1", "1\n" };
        unsigned long m[GRES_CPUS_MAX / (8 * sizeof(unsigned long))];
        _cleanup_free_ char *s = NULL;

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                memset(m, 0, sizeof(m));
                ck_assert_msg(gres_cpulist_parse(bad[i], m, GRES_CPUS_MAX) == -EINVAL, "'%s'", bad[i]);
        }
        ck_assert_int_eq(gres_cpulist_parse("32768", m, GRES_CPUS_MAX), -ERANGE);
        ck_assert_int_eq(gres_cpulist_parse("0-99999999999999999999999", m, GRES_CPUS_MAX), -ERANGE);
        ck_assert_int_eq(gres_cpulist_parse(NULL, m, GRES_CPUS_MAX), -EINVAL);
        memset(m, 0, sizeof(m));
        ck_assert_int_eq(gres_cpulist_parse("5,0-2,3,32767,9-9", m, GRES_CPUS_MAX), 0);
        s = gres_cpulist_format(m, GRES_CPUS_MAX);
        ck_assert_str_eq(s, "0-3,5,9,32767");
        memset(m, 0, sizeof(m));
        ck_assert_ptr_null(gres_cpulist_format(m, GRES_CPUS_MAX));
}
END_TEST

/* The module's step: every GPU gets its cores, or none does. */
START_TEST(test_map_gpus) {
        GresGpu g[3] = {
                { .cpus = strdup("0-15,32-47") },
                { .cpus = strdup("16-31,48-63") },
                { .cpus = NULL },
        };

        ck_assert_ptr_nonnull(mkdtemp(root));
        ck_assert_int_eq(gres_topo_map_gpus(root, g, 3), -ENOENT);
        ck_assert(!g[0].cores && !g[1].cores && !g[2].cores);
        teardown();
        topology(2, 16, 2, "");
        ck_assert_int_eq(gres_topo_map_gpus(root, g, 3), 0);
        ck_assert_str_eq(g[0].cores, "0-15");
        ck_assert_str_eq(g[1].cores, "16-31");
        ck_assert_ptr_null(g[2].cores);
        for (size_t i = 0; i < 3; i++)
                gres_gpu_done(&g[i]);
        /* no GPU with CPUs: the topology is not even read */
        ck_assert_int_eq(gres_topo_map_gpus("/nonexistent-gres-root", g, 3), 0);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("gres-topo");
        TCase *tc = tcase_create("topo");

        tcase_add_checked_fixture(tc, NULL, teardown);
        tcase_add_test(tc, test_smt_two_sockets);
        tcase_add_test(tc, test_interleaved);
        tcase_add_test(tc, test_order_of_first_cpu);
        tcase_add_test(tc, test_offline_and_unknown_cpus);
        tcase_add_test(tc, test_no_topology);
        tcase_add_test(tc, test_hostile_tree);
        tcase_add_test(tc, test_cpulist);
        tcase_add_test(tc, test_map_gpus);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
