/* Unit tests for the baseline of checks (`sunkctl health genconf`) of the
 * older check types, each against a fake root: the entries a tree implies,
 * exactly; each entry read back through the daemon's own YAML and key-table
 * parsers, as one scalar per node string whatever the string holds; and
 * each one run against the same root, where it must pass. */
#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <unistd.h>

#include "conf-keys.h"
#include "conf-tree.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "../../modules/health/checks/health-check.h"
#include "../lib/check-run.h"
#include "../lib/fake-root.h"
#include "../lib/health-check-test.h"

static void setup(void) {
        fake_root_make("/tmp/test-health-genconf-XXXXXX");
}

static void teardown(void) {
        fake_root_remove();
}

/* The baseline of @type under the root. */
static int genconf(const char *type, HealthGenconf *g) {
        const HealthCheckType *t = health_check_type_find(type);
        HealthEnv env = { .root = root };

        ck_assert_ptr_nonnull(t);
        ck_assert_msg(t->genconf, "%s makes no baseline", type);
        *g = (HealthGenconf){};
        return t->genconf(&env, g);
}

static void assert_entries(const HealthGenconf *g, const char *const *want, size_t n) {
        for (size_t i = 0; i < MIN(g->n, n); i++)
                ck_assert_str_eq(g->entries[i], want[i]);
        ck_assert_uint_eq(g->n, n);
}

/* @entry read as sunkd.yaml reads a check, then run against the root: it
 * must pass (assert_entry_passes()). */
static void assert_round_trip(const char *entry, const char *path) {
        assert_entry_passes(root, NULL, entry, path);
}

/* ---- quoting ----------------------------------------------------------- */

/* Whatever UTF-8 a node string holds comes back from sunkd.yaml's parser
 * as it was: controls, C1 controls, a byte order mark and the BMP's last
 * two non-characters, which YAML takes only as escapes, included. */
START_TEST(test_quote) {
        static const char *const strings[] = {
                "/plain",
                "/q\"uote\\back",
                "/tab\tnl\ncr\rdel\x7f",
                "/c1 \xc2\x80\xc2\x85\xc2\x9f",
                "/bom \xef\xbb\xbf",
                "/ls \xe2\x80\xa8ps \xe2\x80\xa9",
                "/nonchar \xef\xbf\xbe\xef\xbf\xbf",
                "/\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80",
        };
        char buf[256];

        for (size_t i = 0; i < ELEMENTSOF(strings); i++) {
                _cleanup_free_ char *yaml = NULL, *error = NULL;
                const char *q = health_genconf_quote(strings[i], buf, sizeof(buf));
                ConfTree *tree = NULL;

                ck_assert_ptr_nonnull(q);
                ck_assert_int_ge(asprintf(&yaml, "{p: %s}", q), 0);
                ck_assert_msg(conf_tree_parse("q.yaml", yaml, strlen(yaml), &tree, &error) == 0, "%s: %s",
                              yaml, error);
                ck_assert_str_eq(conf_node_get(tree->root, "p")->value, strings[i]);
                conf_tree_free(tree);
        }
        ck_assert_ptr_null(health_genconf_quote("/bad \xff", buf, sizeof(buf)));
        ck_assert_ptr_null(health_genconf_quote("/too long", buf, 8));
}
END_TEST

/* ---- names ------------------------------------------------------------- */

START_TEST(test_names) {
        HealthGenconf g = {};
        char buf[HEALTH_GENCONF_NAME_MAX + 1];

        ck_assert_str_eq(health_genconf_name(&g, "mount", "/", buf), "mount-root");
        ck_assert_str_eq(health_genconf_name(&g, "mount", "", buf), "mount-root");
        ck_assert_str_eq(health_genconf_name(&g, "memory", NULL, buf), "memory");
        ck_assert_str_eq(health_genconf_name(&g, "mount", "/var/lib//x.y/", buf), "mount-var-lib-x-y");
        ck_assert_str_eq(health_genconf_name(&g, "mount", "/mnt/a: b\n\xff", buf), "mount-mnt-a__b__");
        ck_assert_str_eq(health_genconf_name(&g, "disk_free", "/a/very/long/path/beyond/any/name", buf),
                         "disk_free-a-very-long-path-beyon");
        ck_assert_int_eq(health_genconf_add(&g, "{name: %s, type: mount}", "mount-a"), 0);
        ck_assert_int_eq(health_genconf_add(&g, "{name: %s, type: mount}", "mount-a-2"), 0);
        ck_assert_str_eq(health_genconf_name(&g, "mount", "/a", buf), "mount-a-3");
        ck_assert_str_eq(health_genconf_name(&g, "mount", "/a/", buf), "mount-a-3");
        ck_assert_str_eq(health_genconf_name(&g, "mount", "/ab", buf), "mount-ab");
        ck_assert_int_eq(health_genconf_add(&g, "{name: %s, type: x}", "disk_free-a-very-long-path-beyon"),
                         0);
        ck_assert_str_eq(health_genconf_name(&g, "disk_free", "/a/very/long/path/beyond/any/name", buf),
                         "disk_free-a-very-long-path-bey-2");
        ck_assert_int_eq(health_genconf_note(&g, "a %s", "note"), 0);
        ck_assert_uint_eq(g.n_notes, 1);
        ck_assert_str_eq(g.notes[0], "a note");
        health_genconf_clear(&g);
}
END_TEST

/* ---- mount ------------------------------------------------------------- */

#define MI(id, parent, path, opts, type, src, sb)                                                           \
#id " " #parent " 0:1 / " path " " opts " - " type " " src " " sb "\n"

START_TEST(test_mount) {
        static const char *const want[] = {
                "{name: mount-root, type: mount, path: \"/\", fs_type: \"ext4\"}",
                "{name: mount-home, type: mount, path: \"/home\", fs_type: \"nfs4\"}",
                "{name: mount-scratch, type: mount, path: \"/scratch\", fs_type: \"xfs\", rw: false}",
                "{name: mount-logs, type: mount, path: \"/logs\", fs_type: \"ext4\", rw: false}",
                "{name: mount-mnt-a__b, type: mount, path: \"/mnt/a: b\", fs_type: \"ext4\"}",
                "{name: mount-mnt-q_x, type: mount, path: \"/mnt/q\\\"x\", fs_type: \"ext4\"}",
                "{name: mount-mnt-nl_x, type: mount, path: \"/mnt/nl\\x0ax\", fs_type: \"ext4\"}",
                "{name: mount-mnt-a-b, type: mount, path: \"/mnt/a-b\", fs_type: \"ext4\"}",
                "{name: mount-mnt-a-b-2, type: mount, path: \"/mnt/a/b\", fs_type: \"ext4\"}",
                "{name: mount-mnt-odd, type: mount, path: \"/mnt/odd\"}",
                "{name: mount-mnt-odd2, type: mount, path: \"/mnt/odd2\"}",
        };
        static const char *const paths[] = { "/",         "/home",     "/scratch",   "/logs",
                                             "/mnt/a: b", "/mnt/q\"x", "/mnt/nl\nx", "/mnt/a-b",
                                             "/mnt/a/b",  "/mnt/odd",  "/mnt/odd2" };
        HealthGenconf g;

        put("/proc/self/mountinfo", "%s",
            MI(1, 0, "/", "rw,relatime", "ext4", "/dev/sda1",
               "rw") MI(2, 1, "/proc", "rw", "proc", "proc",
                        "rw") MI(3, 1, "/sys", "rw", "sysfs", "sysfs",
                                 "rw") MI(4, 1, "/dev", "rw", "devtmpfs", "udev",
                                          "rw") MI(5, 4, "/dev/shm", "rw", "tmpfs", "tmpfs", "rw")
                    MI(6, 3, "/sys/fs/cgroup", "rw", "cgroup2", "cgroup2",
                       "rw") MI(7, 1, "/home", "rw", "nfs4", "server:/home",
                                "rw") MI(8, 1, "/scratch", "ro,nosuid", "xfs", "/dev/sdb", "rw")
                            MI(9, 1, "/logs", "rw", "ext4", "/dev/sdc", "ro,errors=remount-ro") MI(
                                    10, 1, "/var/lib/kubelet/pods/x/volumes/v", "rw", "ext4", "/dev/sda1",
                                    "rw") MI(11, 1, "/ctr", "rw", "overlay", "overlay", "rw,lowerdir=/a")
                                    MI(12, 1, "/mnt/a:\\040b", "rw", "ext4", "/dev/sdd",
                                       "rw") MI(13, 1, "/mnt/q\"x", "rw", "ext4", "/dev/sdd",
                                                "rw") MI(14, 1, "/mnt/nl\\012x", "rw", "ext4", "/dev/sdd",
                                                         "rw") MI(15, 1, "/mnt/\377bad", "rw",
                                                                  "ext4", "/dev/sdd", "rw")
                                            MI(16, 1, "/etc/hosts", "rw", "ext4", "/dev/sda1", "rw") MI(
                                                    17, 1, "/tmp", "rw", "ext4", "/dev/sde",
                                                    "rw") MI(18, 17, "/tmp", "rw", "tmpfs", "tmpfs", "rw")
                                                    MI(19, 1, "/snap/core/1", "ro", "squashfs", "/dev/loop0",
                                                       "ro") MI(20, 1, "/mnt/a-b", "rw", "ext4", "/dev/sdf",
                                                                "rw") MI(21, 1, "/mnt/a/b", "rw", "ext4",
                                                                         "/dev/sdf", "rw")
                                                            MI(22, 1, "/mnt/gone", "rw", "ext4", "/dev/sdg",
                                                               "rw") MI(23, 1, "/mnt/odd", "rw",
                                                                        "fuse.a\\040b", "src", "rw")
                                                                    MI(24, 1, "/mnt/odd2", "rw",
                                                                       "fuse.\377x", "src",
                                                                       "rw") "a line that is no mount\n");
        /* the mount points there are, but /mnt/gone: not a directory */
        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                _cleanup_free_ char *p = at(paths[i]);

                ck_assert_int_eq(fileio_mkdir_p(p, 0755), 0);
        }
        mkdirs("/ctr");
        mkdirs("/tmp");
        mkdirs("/mnt/\377bad");
        put("/etc/hosts", "127.0.0.1 localhost\n");
        ck_assert_int_eq(genconf("mount", &g), 0);
        assert_entries(&g, want, ELEMENTSOF(want));
        ck_assert_uint_eq(g.n_notes, 3);
        ck_assert_str_eq(g.notes[0],
                         "mount: the mount point of line 15 of mountinfo left out: not UTF-8, which "
                         "YAML cannot hold");
        ck_assert_str_eq(g.notes[1],
                         "mount: line 23 of mountinfo: a file system type that does not read as one left "
                         "out of its check");
        ck_assert_str_eq(g.notes[2],
                         "mount: line 24 of mountinfo: a file system type that does not read as one left "
                         "out of its check");
        for (size_t i = 0; i < g.n; i++)
                assert_round_trip(g.entries[i], paths[i]);
        health_genconf_clear(&g);
}
END_TEST

START_TEST(test_mount_none) {
        HealthGenconf g;

        /* no mount table: nothing could be read */
        ck_assert_int_eq(genconf("mount", &g), -ENOENT);
        ck_assert_uint_eq(g.n, 0);
        health_genconf_clear(&g);
        /* only virtual ones: nothing to say */
        put("/proc/self/mountinfo", "%s", MI(2, 1, "/proc", "rw", "proc", "proc", "rw"));
        ck_assert_int_eq(genconf("mount", &g), 0);
        ck_assert_uint_eq(g.n, 0);
        ck_assert_uint_eq(g.n_notes, 0);
        health_genconf_clear(&g);
}
END_TEST

/* ---- disk_free and inodes_free ----------------------------------------- */

/* What the test's own statvfs of the root says NHC would allow. */
static unsigned want_disk_pct(void) {
        struct statvfs st;
        unsigned __int128 avail, total;
        unsigned used, limit;

        ck_assert_int_eq(statvfs(root, &st), 0);
        avail = (unsigned __int128) st.f_bavail * st.f_frsize;
        total = ((unsigned __int128) st.f_blocks - MIN(st.f_bfree, st.f_blocks) + st.f_bavail) * st.f_frsize;
        used = (unsigned) (100 - avail * 100 / total);
        limit = (unsigned __int128) st.f_blocks * st.f_frsize <= (UINT64_C(1) << 30)   ? 90
                : (unsigned __int128) st.f_blocks * st.f_frsize <= (UINT64_C(1) << 40) ? 95
                                                                                       : 99;
        return 100 - MAX(limit, used);
}

START_TEST(test_disk_free) {
        HealthGenconf g;
        char want[3][256];
        unsigned pct = want_disk_pct();

        put("/proc/self/mountinfo", "%s",
            MI(1, 0, "/", "rw", "ext4", "/dev/sda1", "rw") MI(2, 1, "/boot", "rw", "ext4", "/dev/sda2", "rw")
                    MI(3, 1, "/dev/shm", "rw", "tmpfs", "tmpfs", "rw")
                            MI(4, 1, "/data", "ro", "xfs", "/dev/sdb", "rw"));
        mkdirs("/boot");
        mkdirs("/data");
        mkdirs("/dev/shm");
        snprintf(want[0], sizeof(want[0]),
                 "{name: disk_free-root, type: disk_free, path: \"/\", min_free_pct: %u}", pct);
        snprintf(want[1], sizeof(want[1]),
                 "{name: disk_free-boot, type: disk_free, path: \"/boot\", min_free: 40M}");
        snprintf(want[2], sizeof(want[2]),
                 "{name: disk_free-data, type: disk_free, path: \"/data\", min_free_pct: %u}", pct);
        ck_assert_int_eq(genconf("disk_free", &g), 0);
        assert_entries(&g, (const char *const[]){ want[0], want[1], want[2] }, 3);
        for (size_t i = 0; i < g.n; i++)
                assert_round_trip(g.entries[i], NULL);
        health_genconf_clear(&g);
}
END_TEST

#define INODES_ROOT "{name: inodes_free-root, type: inodes_free, path: \"/\", min_free_pct: "

START_TEST(test_inodes_free) {
        HealthGenconf g;
        struct statvfs st;
        char want[64];

        put("/proc/self/mountinfo", "%s",
            MI(1, 0, "/", "rw", "ext4", "/dev/sda1", "rw") MI(2, 1, "/run", "rw", "tmpfs", "tmpfs", "rw"));
        mkdirs("/run");
        ck_assert_int_eq(statvfs(root, &st), 0);
        ck_assert_int_eq(genconf("inodes_free", &g), 0);
        if (st.f_files < 10000) { /* btrfs says 0: NHC leaves such a file system out */
                ck_assert_uint_eq(g.n, 0);
                health_genconf_clear(&g);
                return;
        }
        snprintf(want, sizeof(want), "%u}", st.f_files >= 50000000 ? 2 : 1);
        ck_assert_uint_eq(g.n, 1);
        ck_assert_msg(strncmp(g.entries[0], INODES_ROOT, strlen(INODES_ROOT)) == 0, "%s", g.entries[0]);
        ck_assert_str_eq(g.entries[0] + strlen(INODES_ROOT), want);
        assert_round_trip(g.entries[0], "/");
        health_genconf_clear(&g);
}
END_TEST

/* ---- memory ------------------------------------------------------------ */

START_TEST(test_memory) {
        HealthGenconf g;

        ck_assert_int_eq(genconf("memory", &g), -ENOENT);
        health_genconf_clear(&g);
        /* 16318076 kB less 3%, in MiB, rounded down */
        put("/proc/meminfo", "MemTotal:       16318076 kB\nMemFree:         1000000 kB\nMemAvailable:    "
                             "9000000 kB\n");
        ck_assert_int_eq(genconf("memory", &g), 0);
        assert_entries(&g, (const char *const[]){ "{name: memory, type: memory, min_total: 15457M}" }, 1);
        assert_round_trip(g.entries[0], NULL);
        health_genconf_clear(&g);
        put("/proc/meminfo", "MemFree: 1 kB\n");
        ck_assert_int_eq(genconf("memory", &g), -ENOENT);
        ck_assert_uint_eq(g.n, 0);
        health_genconf_clear(&g);
        put("/proc/meminfo", "MemTotal: lots\n");
        ck_assert_int_eq(genconf("memory", &g), -EBADMSG);
        health_genconf_clear(&g);
}
END_TEST

/* ---- process ----------------------------------------------------------- */

static void proc(unsigned pid, const char *comm, const char *state, const char *uid) {
        char rel[64];

        snprintf(rel, sizeof(rel), "/proc/%u/comm", pid);
        put(rel, "%s\n", comm);
        snprintf(rel, sizeof(rel), "/proc/%u/status", pid);
        put(rel, "Name:\t%s\nState:\t%s\nTgid:\t%u\nPid:\t%u\nUid:\t%s\nGid:\t0\t0\t0\t0\n", comm, state,
            pid, pid, uid);
}

START_TEST(test_process) {
        static const char *const want[] = {
                "{name: process-sshd, type: process, process: sshd, user: root}",
                "{name: process-munged, type: process, process: munged}",
                "{name: process-slurmd, type: process, process: slurmd, user: root}",
        };
        HealthGenconf g;

        proc(100, "munged", "S (sleeping)", "104\t104\t104\t104");
        proc(200, "slurmd", "Z (zombie)", "0\t0\t0\t0");
        proc(201, "slurmd", "S (sleeping)", "0\t0\t0\t0");
        proc(300, "sshd", "S (sleeping)", "0\t0\t0\t0");
        proc(301, "sshd", "S (sleeping)", "1000\t1000\t1000\t1000");
        proc(400, "crond", "S (sleeping)", "0\t0\t0\t0");
        mkdirs("/proc/self");
        ck_assert_int_eq(genconf("process", &g), 0);
        assert_entries(&g, want, ELEMENTSOF(want));
        for (size_t i = 0; i < g.n; i++)
                assert_round_trip(g.entries[i], NULL);
        health_genconf_clear(&g);
}
END_TEST

START_TEST(test_process_none) {
        HealthGenconf g;

        ck_assert_int_eq(genconf("process", &g), -ENOENT);
        health_genconf_clear(&g);
        /* a zombie is not a service running */
        proc(200, "slurmd", "Z (zombie)", "0\t0\t0\t0");
        ck_assert_int_eq(genconf("process", &g), 0);
        ck_assert_uint_eq(g.n, 0);
        health_genconf_clear(&g);
}
END_TEST

/* ---- munge ------------------------------------------------------------- */

START_TEST(test_munge) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_free_ char *p = at("/run/munge/munge.socket.2");
        HealthGenconf g;
        int fd;

        ck_assert_int_eq(genconf("munge", &g), 0);
        ck_assert_uint_eq(g.n, 0);
        health_genconf_clear(&g);
        /* a file that is no socket is no munged */
        put("/run/munge/munge.socket.2", "x");
        ck_assert_int_eq(genconf("munge", &g), 0);
        ck_assert_uint_eq(g.n, 0);
        health_genconf_clear(&g);
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_uint_lt(strlen(p), sizeof(sa.sun_path));
        strcpy(sa.sun_path, p);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(genconf("munge", &g), 0);
        assert_entries(&g, (const char *const[]){ "{name: munge, type: munge}" }, 1);
        health_genconf_clear(&g);
        close(fd);
}
END_TEST

/* The script check has nothing of the node to describe; the gpu check's
 * baseline is the module's (it weighs a fact on the loop). */
START_TEST(test_types) {
        ck_assert_ptr_null(health_check_type_find("script")->genconf);
        ck_assert_ptr_null(health_check_type_find("gpu")->genconf);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-genconf");
        TCase *tc = tcase_create("genconf");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_quote);
        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_mount);
        tcase_add_test(tc, test_mount_none);
        tcase_add_test(tc, test_disk_free);
        tcase_add_test(tc, test_inodes_free);
        tcase_add_test(tc, test_memory);
        tcase_add_test(tc, test_process);
        tcase_add_test(tc, test_process_none);
        tcase_add_test(tc, test_munge);
        tcase_add_test(tc, test_types);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
