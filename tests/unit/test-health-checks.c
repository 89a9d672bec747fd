/* Unit tests for the health module's built-in check types: each against a
 * fake root (mountinfo, meminfo, loadavg, cpu/online, /proc/<pid>, the
 * InfiniBand sysfs) written into a temp dir, its keys read through the
 * daemon's own key-table parser, and each with malformed, hostile and
 * oversized input that must end in a clear result, never a crash. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "../../modules/health/checks/health-check.h"
#include "../../modules/health/checks/health-gpu-limits.h"
#include "../lib/check-run.h"
#include "../lib/fake-root.h"
#include "../lib/health-check-test.h"

static void setup(void) {
        fake_root_make("/tmp/test-health-checks-XXXXXX");
}

static void teardown(void) {
        fake_root_remove();
}

static HealthResult run(const char *type, const char *body) {
        return run_in(root, type, body);
}

START_TEST(test_types_table) {
        static const char *const names[] = {
                "mount", "disk_free", "inodes_free",   "memory",         "process",  "file",    "load",
                "ib",    "munge",     "process_limit", "user_processes", "tcp_port", "command", "cpu",
                "dmi",   "edac",      "mce",           "ethernet",       "script",   "gpu"
        };
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                const HealthCheckType *t = health_check_type_find(names[i]);

                ck_assert_msg(t && streq(t->name, names[i]), "%s", names[i]);
                /* the keys every check has come first, then the type's own */
                ck_assert_str_eq(t->keys[0].key, "name");
                ck_assert_str_eq(t->keys[1].key, "type");
                ck_assert_str_eq(t->keys[2].key, "timeout");
                ck_assert_str_eq(t->keys[3].key, "action");
                ck_assert_uint_gt(t->n_keys, streq(t->name, "gpu") ? 3 : 4);
                /* a type's own key never shadows one every check has */
                for (size_t a = 0; a < t->n_keys; a++)
                        for (size_t b = a + 1; b < t->n_keys; b++)
                                ck_assert_msg(!streq(t->keys[a].key, t->keys[b].key), "%s: key '%s' twice",
                                              t->name, t->keys[a].key);
                ck_assert_uint_ge(t->conf_size, sizeof(HealthCheckCommon));
                /* a built-in type runs itself; script and gpu the module runs */
                if (t->runner == HEALTH_RUNNER_BUILTIN)
                        ck_assert_ptr_nonnull(t->run);
                else
                        ck_assert_ptr_null(t->run);
        }
        while (health_check_types[n])
                n++;
        ck_assert_uint_eq(n, ELEMENTSOF(names));
        ck_assert_int_eq(health_check_type_find("script")->runner, HEALTH_RUNNER_SCRIPT);
        ck_assert_int_eq(health_check_type_find("gpu")->runner, HEALTH_RUNNER_GPU);
        ck_assert_int_eq(health_check_type_find("munge")->runner, HEALTH_RUNNER_BUILTIN);
        ck_assert_ptr_null(health_check_type_find("scripts"));
        ck_assert_ptr_null(health_check_type_find(""));
        ck_assert_ptr_null(health_check_type_find(NULL));
        /* what may hang in the kernel or on a daemon runs in a child */
        ck_assert(health_check_type_find("mount")->child);
        ck_assert(health_check_type_find("disk_free")->child);
        ck_assert(health_check_type_find("inodes_free")->child);
        ck_assert(health_check_type_find("file")->child);
        ck_assert(health_check_type_find("ib")->child);
        ck_assert(health_check_type_find("munge")->child);
        ck_assert(!health_check_type_find("memory")->child);
        ck_assert(!health_check_type_find("load")->child);
        ck_assert(!health_check_type_find("process")->child);
}
END_TEST

START_TEST(test_result_set) {
        HealthResult r;
        char long_text[600];

        health_result_set(&r, HEALTH_FAIL, "x-code", "a\nb\tc\x1b[31m%s\x7f", "d");
        ck_assert_int_eq(r.status, HEALTH_FAIL);
        ck_assert_str_eq(r.code, "x-code");
        ck_assert_str_eq(r.detail, "a\\x0ab\\x09c\\x1b[31md\\x7f");
        /* bytes that are not UTF-8, and Latin-1, are escaped, never dropped */
        health_result_set(&r, HEALTH_FAIL, "bad\xff", "%s", "\xff\xfe caf\xe9 \xed\xa0\x80 \\x \xc3\xa9");
        ck_assert_str_eq(r.code, "bad\\xff");
        ck_assert_str_eq(r.detail, "\\xff\\xfe caf\\xe9 \\xed\\xa0\\x80 \\x \xc3\xa9");
        /* cut to the buffer, never inside a UTF-8 sequence: 254 bytes then "é" (2 bytes) */
        memset(long_text, 'a', 254);
        strcpy(long_text + 254, "\xc3\xa9zz");
        health_result_set(&r, HEALTH_PASS, "ok", "%s", long_text);
        ck_assert_uint_eq(strlen(r.detail), 254);
        memset(long_text, 'a', 253);
        strcpy(long_text + 253, "\xc3\xa9zz");
        health_result_set(&r, HEALTH_PASS, "ok", "%s", long_text);
        ck_assert_uint_eq(strlen(r.detail), 255);
        ck_assert_str_eq(r.detail + 253, "\xc3\xa9");
        memset(long_text, 'b', sizeof(long_text) - 1);
        long_text[sizeof(long_text) - 1] = 0;
        health_result_set(&r, HEALTH_PASS, "a-code-longer-than-the-forty-eight-bytes-it-may-have", "%s",
                          long_text);
        ck_assert_uint_eq(strlen(r.detail), HEALTH_DETAIL_MAX - 1);
        ck_assert_uint_eq(strlen(r.code), HEALTH_CODE_MAX - 1);
}
END_TEST

/* ---- mount ------------------------------------------------------------ */

#define MI_ROOT "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
#define MI_SCRATCH "30 22 0:40 / /scratch rw,noatime shared:20 - lustre 10.0.0.1@o2ib:/fs rw,flock\n"
#define MI_RO "31 22 8:2 / /data ro,relatime shared:21 - xfs /dev/sdb1 ro\n"
#define MI_SB_RO "32 22 8:3 / /logs rw,relatime - ext4 /dev/sdc1 ro,errors=remount-ro\n"
#define MI_SPACE "33 22 0:41 / /mnt/with\\040space\\011tab rw - nfs4 srv:/x rw\n"

static void mountinfo(const char *extra) {
        put("/proc/self/mountinfo", "%s%s%s%s%s%s", MI_ROOT, MI_SCRATCH, MI_RO, MI_SB_RO, MI_SPACE, extra);
}

/* Every code of the catalogue once, each failure's remedy its row's; a
 * pass and an unknown recommend nothing; a script's own code none. */
START_TEST(test_codes) {
        HealthResult r;

        for (const HealthCode *c = health_codes; c->code; c++)
                for (const HealthCode *d = c + 1; d->code; d++)
                        ck_assert_str_ne(c->code, d->code);
        health_result_set(&r, HEALTH_FAIL, "mount-missing", "x");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_REBOOT);
        health_result_set(&r, HEALTH_FAIL, "memory-total-low", "x");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_CONTACT_SUPPORT);
        health_result_set(&r, HEALTH_FAIL, "disk_free-low", "x");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_NONE);
        health_result_set(&r, HEALTH_FAIL, "site-own", "x");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_NONE);
        health_result_set(&r, HEALTH_PASS, "ok", "x");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_NONE);
        health_result_set(&r, HEALTH_UNKNOWN, "mount-missing", "x");
        ck_assert_int_eq(r.remedy, HEALTH_REMEDY_NONE);
        ck_assert_ptr_eq(health_code_find("ib-input-bad"), health_code_find("*-input-bad"));
        ck_assert_ptr_null(health_code_find("-input-bad"));
        ck_assert_ptr_null(health_code_find(NULL));
        for (int i = 0; i < _HEALTH_REMEDY_MAX; i++)
                ck_assert_int_eq(
                        health_code_remedy_from_string(health_code_remedy_to_string((HealthRemedy) i)), i);
        ck_assert_int_eq(health_code_remedy_from_string("drain"), -EINVAL);
        ck_assert_int_eq(health_code_remedy_from_string(NULL), -EINVAL);
}
END_TEST

START_TEST(test_mount) {
        mountinfo("");
        assert_run("mount", "path: /scratch\n", HEALTH_PASS, "ok", "'/scratch' is mounted (lustre, rw)");
        assert_run("mount", "path: /scratch\nfs_type: lustre\n", HEALTH_PASS, "ok", "lustre");
        assert_run("mount", "path: //scratch/./\n", HEALTH_PASS, "ok", "mounted");
        assert_run("mount", "path: /\nfs_type: ext4\n", HEALTH_PASS, "ok", "'/' is mounted (ext4, rw)");
        assert_run("mount", "path: /scratch\nfs_type: nfs\n", HEALTH_FAIL, "mount-fstype",
                   "'/scratch' is lustre, not nfs");
        assert_run("mount", "path: /data\n", HEALTH_FAIL, "mount-readonly",
                   "'/data' (xfs) is mounted read-only");
        assert_run("mount", "path: /data\nrw: false\n", HEALTH_PASS, "ok", "(xfs, ro)");
        /* the super block went read-only (errors=remount-ro), the mount still says rw */
        assert_run("mount", "path: /logs\n", HEALTH_FAIL, "mount-readonly",
                   "its file system went read-only");
        assert_run("mount", "path: \"/mnt/with space\\ttab\"\n", HEALTH_PASS, "ok", "nfs4");
        assert_run("mount", "path: /mnt/with\\040space\\011tab\n", HEALTH_FAIL, "mount-missing",
                   "not mounted");
        assert_run("mount", "path: /scratch/sub\n", HEALTH_FAIL, "mount-missing",
                   "'/scratch/sub' is not mounted");
        assert_run("mount", "path: /missing\n", HEALTH_FAIL, "mount-missing", "'/missing' is not mounted");
        /* never creates what it looks for (NHC makes missing mount points) */
        ck_assert(!exists("/missing"));
        ck_assert(!exists("/scratch"));
}
END_TEST

START_TEST(test_mount_stacked) {
        /* /stack: xfs (40), nfs on top of it (41, parent 40), listed in mount order */
        mountinfo("40 22 8:4 / /stack rw - xfs /dev/sdd rw\n41 40 0:50 / /stack ro - nfs srv:/s ro\n");
        assert_run("mount", "path: /stack\n", HEALTH_FAIL, "mount-readonly", "(nfs) is mounted read-only");
        /* the same mounts listed the other way round: the parent decides, not the order */
        mountinfo("41 40 0:50 / /stack ro - nfs srv:/s ro\n40 22 8:4 / /stack rw - xfs /dev/sdd rw\n");
        assert_run("mount", "path: /stack\nrw: false\n", HEALTH_PASS, "ok", "(nfs, ro)");
        /* 40 mounts stacked (a hostile table): the last ones are told apart */
        {
                _cleanup_free_ char *lines = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&lines, &size);

                ck_assert_ptr_nonnull(f);
                fputs(MI_ROOT, f);
                for (unsigned i = 0; i < 40; i++)
                        fprintf(f, "%u %u 0:%u / /stack rw - fs%u x rw\n", 100 + i, i == 0 ? 22 : 99 + i, i,
                                i);
                fclose(f);
                put("/proc/self/mountinfo", "%s", lines);
                assert_run("mount", "path: /stack\n", HEALTH_PASS, "ok", "(fs39, rw)");
        }
}
END_TEST

START_TEST(test_mount_bad_input) {
        static const char bad_lines[] = "30 22 0:40 / /scratch rw\n"
                                        "30 22 0:40 / /scratch rw shared:1 lustre x rw\n"
                                        "x 22 0:40 / /scratch rw - lustre x rw\n"
                                        "30 22 0:40 / /scratch rw - lustre x rw extra\n"
                                        "30 22 0:40 / /scr\0tch rw - lustre x rw\n" MI_ROOT;
        char garbage[4096];
        _cleanup_free_ char *p = NULL;

        /* no mountinfo under the root: unknown, not a failure */
        assert_run("mount", "path: /scratch\n", HEALTH_UNKNOWN, "mount-input-missing",
                   "/proc/self/mountinfo' is missing");
        /* binary garbage */
        for (size_t i = 0; i < sizeof(garbage); i++)
                garbage[i] = (char) (i * 7919 % 251);
        put_bytes("/proc/self/mountinfo", garbage, sizeof(garbage));
        assert_run("mount", "path: /scratch\n", HEALTH_UNKNOWN, "mount-input-bad", "holds no mount entries");
        put("/proc/self/mountinfo", "%s", "");
        assert_run("mount", "path: /\n", HEALTH_UNKNOWN, "mount-input-bad", "holds no mount entries");
        /* lines short of fields, without the separator, with bad ids, with a NUL:
         * skipped and counted; the good lines still count */
        put_bytes("/proc/self/mountinfo", bad_lines, sizeof(bad_lines) - 1);
        assert_run("mount", "path: /scratch\n", HEALTH_FAIL, "mount-missing",
                   "is not mounted (5 malformed lines of ");
        assert_run("mount", "path: /\n", HEALTH_PASS, "ok", "ext4");
        /* a FIFO or a directory in its place: a clear unknown, never a hang */
        p = at("/proc/self/mountinfo");
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(mkfifo(p, 0600), 0);
        assert_run("mount", "path: /\n", HEALTH_UNKNOWN, "mount-input-bad", "not a regular file");
        ck_assert_int_eq(unlink(p), 0);
        ck_assert_int_eq(mkdir(p, 0700), 0);
        assert_run("mount", "path: /\n", HEALTH_UNKNOWN, "mount-input-bad", "mountinfo");
}
END_TEST

START_TEST(test_mount_oversized) {
        _cleanup_free_ char *p = at("/proc/self/mountinfo"), *line = malloc(1024 * 1024);
        FILE *f;
        int fd;

        /* a 1 MiB line (no newline for 1 MiB) between good ones is skipped */
        ck_assert_ptr_nonnull(line);
        memset(line, 'x', 1024 * 1024);
        ck_assert_int_eq(fileio_mkdir_parents(p, 0755), 0);
        ck_assert_ptr_nonnull(f = fopen(p, "we"));
        fputs(MI_ROOT, f);
        fwrite(line, 1, 1024 * 1024, f);
        fputs("\n" MI_SCRATCH, f);
        ck_assert_int_eq(fclose(f), 0);
        assert_run("mount", "path: /scratch\n", HEALTH_PASS, "ok", "lustre");
        assert_run("mount", "path: /nope\n", HEALTH_FAIL, "mount-missing", "(1 malformed lines");
        /* one line of exactly the buffer's size, no newline: counted all the same */
        put_bytes("/proc/self/mountinfo", line, 64 * 1024);
        assert_run("mount", "path: /\n", HEALTH_UNKNOWN, "mount-input-bad",
                   "holds no mount entries (1 malformed lines)");
        put_bytes("/proc/self/mountinfo", line, 64 * 1024 + 1);
        assert_run("mount", "path: /\n", HEALTH_UNKNOWN, "mount-input-bad",
                   "holds no mount entries (1 malformed lines)");
        /* 10 MB of mounts (a node with a hundred thousand): the last one is found */
        ck_assert_ptr_nonnull(f = fopen(p, "we"));
        fputs(MI_ROOT, f);
        for (unsigned i = 0; i < 100000; i++)
                fprintf(f,
                        "%u 22 0:%u / /var/lib/kubelet/pods/%08u/volumes/kubernetes.io~projected/kube-api "
                        "rw - tmpfs tmpfs rw\n",
                        1000 + i, i, i);
        fputs(MI_SCRATCH, f);
        ck_assert_int_gt(ftell(f), 10 * 1000 * 1000);
        ck_assert_int_eq(fclose(f), 0);
        assert_run("mount", "path: /scratch\nfs_type: lustre\n", HEALTH_PASS, "ok", "lustre");
        assert_run("mount",
                   "path: /var/lib/kubelet/pods/00099999/volumes/kubernetes.io~projected/kube-api\n",
                   HEALTH_PASS, "ok", "tmpfs");
        assert_run("mount", "path: /nope\n", HEALTH_FAIL, "mount-missing", "'/nope' is not mounted");
        /* past 64 MiB (a sparse file of NUL bytes): malformed, read no further */
        fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, 65 * 1024 * 1024), 0);
        close(fd);
        assert_run("mount", "path: /\n", HEALTH_UNKNOWN, "mount-input-bad",
                   "is too large for what the kernel writes there");
}
END_TEST

START_TEST(test_mount_config) {
        assert_refused("mount", "", "key 'path'");
        assert_refused("mount", "path: scratch\n", "not an absolute path");
        assert_refused("mount", "path: /x\nfs_type: \"lus tre\"\n",
                       "key 'fs_type': 'lus tre' is not a file system type");
        assert_refused("mount", "path: /x\nfs_type: \"\"\n", "key 'fs_type'");
        assert_refused("mount", "path: /x\nrw: maybe\n", "key 'rw'");
        assert_refused("mount", "path: /x\nsize: 1G\n", "size");
}
END_TEST

/* ---- disk_free, inodes_free ------------------------------------------- */

/* df's share free of the file system under @path, rounded down. */
static unsigned pct_free(const char *path, bool inodes) {
        struct statvfs st;
        unsigned long long avail, total;

        ck_assert_int_eq(statvfs(path, &st), 0);
        avail = inodes ? st.f_favail : st.f_bavail;
        total = inodes ? st.f_files - st.f_ffree + st.f_favail : st.f_blocks - st.f_bfree + st.f_bavail;
        return (unsigned) (avail * 100 / total);
}

/* The keys of a check of /scratch for @pct % free. */
static char *pct_body(unsigned pct) {
        char *s;

        ck_assert_int_ge(asprintf(&s, "path: /scratch\nmin_free_pct: %u\n", pct), 0);
        return s;
}

START_TEST(test_disk_free) {
        _cleanup_free_ char *loop = at("/loop"), *dir = at("/scratch"), *lo = NULL, *hi = NULL;
        unsigned pct;

        mkdirs("/scratch");
        put("/file", "x");
        ck_assert_int_eq(symlink("loop", loop), 0);
        pct = pct_free(dir, false);
        ck_assert_uint_ge(pct, 3);
        ck_assert_uint_le(pct, 97);
        assert_run("disk_free", "path: /scratch\nmin_free: 1\n", HEALTH_PASS, "ok", "'/scratch': ");
        assert_run("disk_free", "path: /scratch\nmin_free: 1000000T\n", HEALTH_FAIL, "disk_free-low",
                   "free, want at least 976.5P");
        /* a margin of a point either way: the disk is shared with whatever else runs */
        lo = pct_body(pct - 1);
        hi = pct_body(pct + 2);
        assert_run("disk_free", lo, HEALTH_PASS, "ok", " free (");
        assert_run("disk_free", hi, HEALTH_FAIL, "disk_free-low", "% free (");
        assert_run("disk_free", "path: /scratch\nmin_free_pct: 100\nmin_free: 1\n", HEALTH_FAIL,
                   "disk_free-low", "want at least 100%");
        /* a path that is not there is the mount check's to fail */
        assert_run("disk_free", "path: /nope\nmin_free: 1\n", HEALTH_UNKNOWN, "disk_free-input-missing",
                   "/nope' is missing");
        assert_run("disk_free", "path: /file/x\nmin_free: 1\n", HEALTH_UNKNOWN, "disk_free-input-missing",
                   "is missing");
        /* any other error is the fault itself */
        assert_run("disk_free", "path: /loop\nmin_free: 1\n", HEALTH_FAIL, "disk_free-error",
                   "'/loop': Too many levels of symbolic links");
        assert_refused("disk_free", "path: /scratch\n",
                       "key 'min_free': a disk_free check needs min_free, min_free_pct");
        assert_refused("disk_free", "path: /scratch\nmin_free_pct: 0\n", "key 'min_free_pct'");
        assert_refused("disk_free", "path: /scratch\nmin_free_pct: 101\n", "key 'min_free_pct'");
        assert_refused("disk_free", "path: /scratch\nmin_free: lots\n", "key 'min_free'");
        assert_refused("disk_free", "min_free: 1\n", "key 'path'");
}
END_TEST

START_TEST(test_inodes_free) {
        _cleanup_free_ char *dir = at("/scratch"), *lo = NULL, *hi = NULL;
        unsigned pct;

        mkdirs("/scratch");
        pct = pct_free(dir, true);
        ck_assert_uint_ge(pct, 3);
        ck_assert_uint_le(pct, 97);
        assert_run("inodes_free", "path: /scratch\nmin_free: 1\n", HEALTH_PASS, "ok", "inodes free (");
        assert_run("inodes_free", "path: /scratch\nmin_free: 9223372036854775807\n", HEALTH_FAIL,
                   "inodes_free-low", "want at least 9223372036854775807");
        lo = pct_body(pct - 1);
        hi = pct_body(pct + 2);
        assert_run("inodes_free", lo, HEALTH_PASS, "ok", "inodes free");
        assert_run("inodes_free", hi, HEALTH_FAIL, "inodes_free-low", "% of inodes free (");
        assert_run("inodes_free", "path: /nope\nmin_free: 1\n", HEALTH_UNKNOWN, "inodes_free-input-missing",
                   "is missing");
        assert_refused("inodes_free", "path: /scratch\n", "key 'min_free': an inodes_free check needs");
        assert_refused("inodes_free", "path: /scratch\nmin_free: -1\n", "key 'min_free'");
        assert_refused("inodes_free", "path: /scratch\nmin_free: 10G\n", "key 'min_free'");
}
END_TEST

/* ---- memory ----------------------------------------------------------- */

#define MEMINFO                                                                                             \
        "MemTotal:       16318076 kB\nMemFree:         1230000 kB\nMemAvailable:    8000000 kB\nBuffers:  " \
        "10 kB\n"

START_TEST(test_memory) {
        put("/proc/meminfo", "%s", MEMINFO);
        assert_run("memory", "min_total: 15G\n", HEALTH_PASS, "ok", "MemTotal 15.5G");
        assert_run("memory", "min_total: 15G\nmin_available: 7G\n", HEALTH_PASS, "ok",
                   "MemTotal 15.5G, MemAvailable 7.6G");
        assert_run("memory", "min_total: 16G\n", HEALTH_FAIL, "memory-total-low",
                   "MemTotal 15.5G, want at least 16.0G");
        assert_run("memory", "min_available: 8G\n", HEALTH_FAIL, "memory-available-low",
                   "MemAvailable 7.6G, want at least 8.0G");
        /* exact: 16318076 kB is enough for a minimum of 16318076K, not one byte more */
        assert_run("memory", "min_total: 16318076K\n", HEALTH_PASS, "ok", "MemTotal");
        assert_run("memory", "min_total: 16709709825\n", HEALTH_FAIL, "memory-total-low", "MemTotal");
        assert_refused("memory", "",
                       "key 'min_total': a memory check needs min_total, min_available or both");
        assert_refused("memory", "min_total: 1Q\n", "key 'min_total'");
}
END_TEST

START_TEST(test_memory_bad_input) {
        static const char *const bad[] = {
                "MemTotal:       -5 kB\n",
                "MemTotal:       abc kB\n",
                "MemTotal:       16318076\n",
                "MemTotal:       16318076 MB\n",
                "MemTotal:       16318076 kB trailing\n",
                "MemTotal:       99999999999999999999999 kB\n",
                "MemTotal:       18014398509481984 kB\n", /* 2^54 kB: over 2^64 bytes */
                "MemTotal:\n",
        };
        _cleanup_free_ char *big = malloc(128 * 1024);

        assert_run("memory", "min_total: 1G\n", HEALTH_UNKNOWN, "memory-input-missing",
                   "/proc/meminfo' is missing");
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                put("/proc/meminfo", "%s", bad[i]);
                assert_run("memory", "min_total: 1G\n", HEALTH_UNKNOWN, "memory-input-bad",
                           "MemTotal does not read \"MemTotal: <n> kB\"");
        }
        /* a kernel before 3.14 has no MemAvailable */
        put("/proc/meminfo", "MemTotal: 100 kB\nMemFree: 50 kB\n");
        assert_run("memory", "min_available: 1K\n", HEALTH_UNKNOWN, "memory-input-bad",
                   "has no MemAvailable");
        assert_run("memory", "min_total: 100K\n", HEALTH_PASS, "ok", "MemTotal 100.0K");
        /* a line that only starts like the field is not it */
        put("/proc/meminfo", "MemTotalX: 100 kB\nXMemTotal: 100 kB\n");
        assert_run("memory", "min_total: 1K\n", HEALTH_UNKNOWN, "memory-input-bad", "has no MemTotal");
        put_bytes("/proc/meminfo", "MemTotal: 1\0 kB\n", 16);
        assert_run("memory", "min_total: 1K\n", HEALTH_UNKNOWN, "memory-input-bad", "holds a NUL byte");
        ck_assert_ptr_nonnull(big);
        memset(big, 'M', 128 * 1024);
        put_bytes("/proc/meminfo", big, 128 * 1024);
        assert_run("memory", "min_total: 1K\n", HEALTH_UNKNOWN, "memory-input-bad", "is too large");
}
END_TEST

/* ---- process ---------------------------------------------------------- */

static void proc(unsigned pid, const char *comm, const char *state, const char *uid) {
        char rel[64];

        snprintf(rel, sizeof(rel), "/proc/%u/comm", pid);
        put(rel, "%s\n", comm);
        snprintf(rel, sizeof(rel), "/proc/%u/status", pid);
        put(rel,
            "Name:\t%s\nUmask:\t0022\nState:\t%s\nTgid:\t%u\nPid:\t%u\nPPid:\t1\nUid:\t%s\nGid:"
            "\t0\t0\t0\t0\n",
            comm, state, pid, pid, uid);
}

START_TEST(test_process) {
        proc(100, "munged", "S (sleeping)", "104\t104\t104\t104");
        proc(200, "slurmd", "S (sleeping)", "0\t0\t0\t0");
        proc(201, "slurmd", "R (running)", "0\t0\t0\t0");
        proc(300, "defunct", "Z (zombie)", "0\t0\t0\t0");
        proc(400, "setuid", "S (sleeping)", "1000\t0\t0\t0"); /* real 1000, effective root */
        proc(500, "nvidia-persiste", "S (sleeping)", "0\t0\t0\t0");
        mkdirs("/proc/self");
        mkdirs("/proc/sys");
        assert_run("process", "process: munged\n", HEALTH_PASS, "ok", "1 'munged' process running");
        assert_run("process", "process: slurmd\n", HEALTH_PASS, "ok", "2 'slurmd' processes running");
        assert_run("process", "process: munged\nuser: 104\n", HEALTH_PASS, "ok", "of uid 104 running");
        assert_run("process", "process: munged\nuser: 105\n", HEALTH_FAIL, "process-missing",
                   "no 'munged' process of uid 105 running (1 of other users)");
        assert_run("process", "process: slurmd\nuser: root\n", HEALTH_PASS, "ok", "of user 'root' (uid 0)");
        assert_run("process", "process: setuid\nuser: 0\n", HEALTH_PASS, "ok", "of uid 0");
        assert_run("process", "process: setuid\nuser: 1000\n", HEALTH_FAIL, "process-missing",
                   "other users");
        assert_run("process", "process: defunct\n", HEALTH_FAIL, "process-missing", "(zombies only)");
        assert_run("process", "process: sshd\n", HEALTH_FAIL, "process-missing",
                   "no 'sshd' process running");
        /* the kernel keeps 15 bytes of a name: nvidia-persistenced is found by them */
        assert_run("process", "process: nvidia-persiste\n", HEALTH_PASS, "ok", "1 'nvidia-persiste'");
        assert_refused("process", "process: nvidia-persistenced\n",
                       "key 'process': 'nvidia-persistenced' is not a process name");
        assert_refused("process", "process: \"\"\n", "key 'process'");
        assert_refused("process", "process: a/b\n", "key 'process'");
        assert_refused("process", "", "key 'process'");
        assert_refused("process", "process: x\nuser: no-such-user-sunkd\n",
                       "key 'user': no user 'no-such-user-sunkd'");
        assert_refused("process", "process: x\nuser: 4294967295\n", "key 'user'");
        /* an empty name, in the words process_limit and user_processes use */
        assert_refused("process", "process: x\nuser: \"\"\n", "key 'user': an empty user name");
}
END_TEST

START_TEST(test_process_real) {
        _cleanup_free_ char *comm = NULL, *body = NULL;
        size_t len;

        /* this very process, in the real /proc */
        ck_assert_int_eq(fileio_read("/proc/self/comm", 64, &comm, &len), 0);
        comm[strcspn(comm, "\n")] = 0;
        ck_assert_int_ge(asprintf(&body, "process: %s\nuser: %u\n", comm, (unsigned) geteuid()), 0);
        assert_result(run_in("/", "process", body), HEALTH_PASS, "ok", comm);
        assert_result(run_in(NULL, "process", body), HEALTH_PASS, "ok", comm);
}
END_TEST

START_TEST(test_process_bad_input) {
        char big[8192];

        assert_run("process", "process: munged\n", HEALTH_UNKNOWN, "process-input-missing",
                   "/proc' is missing");
        proc(100, "munged", "S (sleeping)", "104\t104\t104\t104");
        /* hostile neighbours: no newline, oversized, binary, no status, status without Uid or State */
        put("/proc/101/comm", "munged");
        put("/proc/101/status", "State:\tS\nUid:\t1\t1\t1\t1\n");
        memset(big, 'm', sizeof(big));
        put_bytes("/proc/102/comm", big, sizeof(big));
        put_bytes("/proc/103/comm", "mun\0ged\n", 8);
        put("/proc/104/comm", "munged\n");
        put("/proc/105/comm", "munged\n");
        put("/proc/105/status", "Name: munged\n");
        put("/proc/106/comm", "munged\n");
        put("/proc/106/status", "State:\tS\nUid:\t-1\t-1\t-1\t-1\n");
        put("/proc/107/comm", "munged\n");
        put("/proc/107/status", "State:\tS\nUid:\t99999999999\t99999999999\n");
        put("/proc/108/comm", "munged\n");
        put("/proc/108/status", "State:\tS\nUid:\t\t5\n");
        mkdirs("/proc/109/comm");
        put("/proc/0123/comm", "munged\n");
        assert_run("process", "process: munged\n", HEALTH_PASS, "ok", "2 'munged' processes running");
        assert_run("process", "process: munged\nuser: 1\n", HEALTH_PASS, "ok",
                   "1 'munged' process of uid 1");
        assert_run("process", "process: munged\nuser: 5\n", HEALTH_FAIL, "process-missing",
                   "(2 of other users)");
}
END_TEST

/* ---- file ------------------------------------------------------------- */

START_TEST(test_file) {
        static const char elf[] = "\x7f"
                                  "ELF\2\1\1\0\0\0\0\0\0\0\0\0\3\0>\0version=550.54\0\0\0";
        _cleanup_free_ char *fifo = at("/fifo"), *big = malloc(2 * 1024 * 1024);

        put("/etc/node-state", "# written by the provisioner\nstate: ok\nepoch: 12\n");
        mkdirs("/dir");
        assert_run("file", "path: /etc/node-state\n", HEALTH_PASS, "ok", "'/etc/node-state' exists");
        assert_run("file", "path: /dir\n", HEALTH_PASS, "ok", "exists");
        assert_run("file", "path: /etc/missing\n", HEALTH_FAIL, "file-missing", "'/etc/missing' is missing");
        assert_run("file", "path: /etc/node-state/x\n", HEALTH_FAIL, "file-missing", "is missing");
        /* ^ and $ at each line */
        assert_run("file", "path: /etc/node-state\nmatch: \"^state: ok$\"\n", HEALTH_PASS, "ok", "matches");
        assert_run("file", "path: /etc/node-state\nmatch: \"^epoch: [0-9]+$\"\n", HEALTH_PASS, "ok",
                   "matches");
        assert_run("file", "path: /etc/node-state\nmatch: \"^state: (bad|drain)$\"\n", HEALTH_FAIL,
                   "file-mismatch", "'/etc/node-state' does not match '^state: (bad|drain)$'");
        assert_run("file", "path: /etc/node-state\nmatch: \"^ok\"\n", HEALTH_FAIL, "file-mismatch", "match");
        assert_run("file", "path: /etc/missing\nmatch: x\n", HEALTH_FAIL, "file-missing", "is missing");
        assert_run("file", "path: /dir\nmatch: x\n", HEALTH_FAIL, "file-unreadable", "not a regular file");
        /* a FIFO is never waited on */
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        assert_run("file", "path: /fifo\nmatch: x\n", HEALTH_FAIL, "file-unreadable", "not a regular file");
        /* binary: text after NUL bytes is searched too */
        put_bytes("/bin", elf, sizeof(elf) - 1);
        assert_run("file", "path: /bin\nmatch: \"^version=550\\\\.\"\n", HEALTH_PASS, "ok", "matches");
        assert_run("file", "path: /bin\nmatch: \"^$\"\n", HEALTH_PASS, "ok", "matches");
        assert_run("file", "path: /bin\nmatch: \"version=535\"\n", HEALTH_FAIL, "file-mismatch", "535");
        /* only the first MiB is read */
        ck_assert_ptr_nonnull(big);
        memset(big, '.', 2 * 1024 * 1024);
        memcpy(big + 1024 * 1024 - 10, "\nneedle-1\n", 10);
        memcpy(big + 1024 * 1024 + 100, "\nneedle-2\n", 10);
        put_bytes("/big", big, 2 * 1024 * 1024);
        assert_run("file", "path: /big\nmatch: \"^needle-1\"\n", HEALTH_PASS, "ok", "matches");
        assert_run("file", "path: /big\nmatch: \"^needle-2\"\n", HEALTH_FAIL, "file-mismatch",
                   "does not match '^needle-2' in its first MiB");
        /* a MiB of NUL bytes: one empty piece, not a million matches */
        memset(big, 0, 2 * 1024 * 1024);
        put_bytes("/zeros", big, 2 * 1024 * 1024);
        assert_run("file", "path: /zeros\nmatch: x\n", HEALTH_FAIL, "file-mismatch", "first MiB");
        put_bytes("/empty", "", 0);
        assert_run("file", "path: /empty\nmatch: \"^$\"\n", HEALTH_PASS, "ok", "matches");
}
END_TEST

START_TEST(test_file_config) {
        assert_refused("file", "path: /x\nmatch: \"a(b\"\n",
                       "key 'match': 'a(b' is not a POSIX extended regular expression: ");
        assert_refused("file", "path: /x\nmatch: \"[z-a]\"\n", "key 'match'");
        assert_refused("file", "path: /x\nmatch: \"*\\\\\"\n", "key 'match'");
        assert_refused("file", "match: x\n", "key 'path'");
        assert_refused("file", "path: x/y\n", "key 'path'");
}
END_TEST

/* ---- load ------------------------------------------------------------- */

START_TEST(test_load) {
        put("/proc/loadavg", "3.50 10.00 20.00 2/300 1234\n");
        put("/sys/devices/system/cpu/online", "0-3\n");
        /* the default is the 5-minute average; at the limit is not over it */
        assert_run("load", "max_per_core: 2.5\n", HEALTH_PASS, "ok",
                   "5-minute load 10 is 2.5 per CPU over 4 CPUs");
        assert_run("load", "max_per_core: \"2.499\"\n", HEALTH_FAIL, "load-high",
                   "5-minute load 10 is 2.5 per CPU over 4 CPUs, above 2.499");
        assert_run("load", "max_per_core: 2.5\nminutes: 15\n", HEALTH_FAIL, "load-high",
                   "15-minute load 20 is 5 per CPU over 4 CPUs, above 2.5");
        assert_run("load", "max_per_core: 1\nminutes: 1\n", HEALTH_PASS, "ok",
                   "1-minute load 3.5 is 0.875 per CPU");
        put("/sys/devices/system/cpu/online", "0-3,8-11,16\n");
        assert_run("load", "max_per_core: 2.5\nminutes: 15\n", HEALTH_PASS, "ok", "over 9 CPUs");
        put("/sys/devices/system/cpu/online", "0\n");
        assert_run("load", "max_per_core: 3.5\nminutes: 1\n", HEALTH_PASS, "ok", "over 1 CPUs");
        assert_refused("load", "", "key 'max_per_core'");
        assert_refused("load", "max_per_core: abc\n",
                       "key 'max_per_core': 'abc' is not a load per core such as 2.5");
        assert_refused("load", "max_per_core: 0\n", "key 'max_per_core'");
        assert_refused("load", "max_per_core: 0.0001\n", "key 'max_per_core'");
        assert_refused("load", "max_per_core: -1\n", "key 'max_per_core'");
        assert_refused("load", "max_per_core: \"1,5\"\n", "key 'max_per_core'");
        assert_refused("load", "max_per_core: 2.5.1\n", "key 'max_per_core'");
        assert_refused("load", "max_per_core: \"2.\"\n", "key 'max_per_core'");
        assert_refused("load", "max_per_core: 1000001\n", "key 'max_per_core'");
        assert_refused("load", "max_per_core: 1\nminutes: 2\n", "key 'minutes': 2 is not 1, 5 or 15");
        assert_refused("load", "max_per_core: 1\nminutes: 30\n", "key 'minutes'");
}
END_TEST

START_TEST(test_load_bad_input) {
        static const char *const bad_avg[] = { "", "1.0 2.0\n", "a b c 1/2 3\n", "1.0  2.0 3.0 1/2 3\n",
                                               "-1 2 3 1/1 1\n" };
        static const char *const bad_cpus[] = { "",       "\n",     "3-1\n",           "0-",         "a\n",
                                                "0,,1\n", "0-3 \n", "0-99999999999\n", "0-1048576\n" };

        assert_run("load", "max_per_core: 1\n", HEALTH_UNKNOWN, "load-input-missing",
                   "/proc/loadavg' is missing");
        put("/proc/loadavg", "1.00 1.00 1.00 1/1 1\n");
        assert_run("load", "max_per_core: 1\n", HEALTH_UNKNOWN, "load-input-missing",
                   "/sys/devices/system/cpu/online' is missing");
        put("/sys/devices/system/cpu/online", "0-1\n");
        for (size_t i = 0; i < ELEMENTSOF(bad_avg); i++) {
                put("/proc/loadavg", "%s", bad_avg[i]);
                assert_run("load", "max_per_core: 1\nminutes: 15\n", HEALTH_UNKNOWN, "load-input-bad",
                           "does not read \"<1m> <5m> <15m> ...\"");
        }
        put("/proc/loadavg", "1.00 1.00 1.00 1/1 1\n");
        for (size_t i = 0; i < ELEMENTSOF(bad_cpus); i++) {
                put("/sys/devices/system/cpu/online", "%s", bad_cpus[i]);
                assert_run("load", "max_per_core: 1\n", HEALTH_UNKNOWN, "load-input-bad",
                           "is not a CPU list");
        }
        put_bytes("/sys/devices/system/cpu/online", "0-1\0\n", 5);
        assert_run("load", "max_per_core: 1\n", HEALTH_UNKNOWN, "load-input-bad", "is not a CPU list");
        put("/sys/devices/system/cpu/online", "0-1048575\n");
        assert_run("load", "max_per_core: 1\n", HEALTH_PASS, "ok", "over 1048576 CPUs");
}
END_TEST

/* ---- ib --------------------------------------------------------------- */

static void ib_port(const char *dev, unsigned port, const char *state, const char *rate, const char *layer) {
        char rel[256];

        snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/ports/%u/state", dev, port);
        put(rel, "%s\n", state);
        snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/ports/%u/rate", dev, port);
        put(rel, "%s\n", rate);
        snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/ports/%u/link_layer", dev, port);
        if (layer)
                put(rel, "%s\n", layer);
}

START_TEST(test_ib) {
        ib_port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        ib_port("mlx5_1", 1, "4: ACTIVE", "200 Gb/sec (4X HDR)", NULL);
        ib_port("mlx5_2", 1, "1: DOWN", "100 Gb/sec (2X HDR)", "Ethernet"); /* RoCE, not named: skipped */
        assert_run("ib", "min_rate: 200\n", HEALTH_PASS, "ok",
                   "2 InfiniBand ports ACTIVE at 200 Gb/s or more");
        assert_run("ib", "min_rate: 400\n", HEALTH_FAIL, "ib-rate",
                   "mlx5_1 port 1 runs at 200 Gb/s, want at least 400");
        assert_run("ib", "device: mlx5_0\nmin_rate: 400\n", HEALTH_PASS, "ok",
                   "mlx5_0 port 1 ACTIVE at 400 Gb/s");
        assert_run("ib", "device: mlx5_0\nport: 1\n", HEALTH_PASS, "ok", "mlx5_0 port 1 ACTIVE");
        assert_run("ib", "device: mlx5_2\n", HEALTH_FAIL, "ib-port-state",
                   "mlx5_2 port 1 is DOWN, not ACTIVE");
        assert_run("ib", "device: mlx5_9\n", HEALTH_FAIL, "ib-missing", "device mlx5_9: not found");
        assert_run("ib", "device: mlx5_0\nport: 2\n", HEALTH_FAIL, "ib-missing", "mlx5_0 has no port 2");
        assert_run("ib", "port: 2\n", HEALTH_FAIL, "ib-missing", "no InfiniBand device has port 2");
        ib_port("mlx5_3", 1, "2: INIT", "2.5 Gb/sec (1X SDR)", "InfiniBand");
        ib_port("mlx5_3", 2, "1: DOWN", "10 Gb/sec (4X SDR)", "InfiniBand");
        assert_run("ib", "", HEALTH_FAIL, "ib-port-state",
                   "mlx5_3 port 1 is INIT, not ACTIVE (2 ports failing)");
        assert_run("ib", "device: mlx5_3\nport: 2\n", HEALTH_FAIL, "ib-port-state", "mlx5_3 port 2 is DOWN");
        assert_refused("ib", "device: ../x\n", "key 'device': '../x' is not a device name");
        assert_refused("ib", "device: ..\n", "key 'device'");
        assert_refused("ib", "port: 0\n", "key 'port'");
        assert_refused("ib", "min_rate: fast\n", "key 'min_rate'");
}
END_TEST

START_TEST(test_ib_bad_input) {
        static const char *const bad_state[] = { "ACTIVE", ": ACTIVE", "4:", "x4: ACTIVE", "" };
        static const char *const bad_rate[] = { "fast", "400", "400 Mb/sec", "-5 Gb/sec", "" };
        char big[8192];

        /* no HCA, no driver: unknown */
        assert_run("ib", "", HEALTH_UNKNOWN, "ib-input-missing", "/sys/class/infiniband' is missing");
        assert_run("ib", "device: mlx5_0\n", HEALTH_FAIL, "ib-missing", "device mlx5_0: not found");
        mkdirs("/sys/class/infiniband");
        assert_run("ib", "min_rate: 100\n", HEALTH_UNKNOWN, "ib-input-missing", "no InfiniBand port under");
        ib_port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "Ethernet");
        assert_run("ib", "", HEALTH_UNKNOWN, "ib-input-missing", "no InfiniBand port");
        for (size_t i = 0; i < ELEMENTSOF(bad_state); i++) {
                ib_port("mlx5_1", 1, bad_state[i], "400 Gb/sec (4X NDR)", "InfiniBand");
                assert_run("ib", "", HEALTH_UNKNOWN, "ib-input-bad", "does not read '<n>: <STATE>'");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_rate); i++) {
                ib_port("mlx5_1", 1, "4: ACTIVE", bad_rate[i], "InfiniBand");
                assert_run("ib", "", HEALTH_UNKNOWN, "ib-input-bad", "does not read '<n> Gb/sec'");
        }
        memset(big, 'A', sizeof(big));
        put_bytes("/sys/class/infiniband/mlx5_1/ports/1/state", big, sizeof(big));
        assert_run("ib", "", HEALTH_UNKNOWN, "ib-input-bad", "mlx5_1 port 1: state does not read");
        put_bytes("/sys/class/infiniband/mlx5_1/ports/1/state", "4: ACT\0IVE\n", 11);
        assert_run("ib", "", HEALTH_UNKNOWN, "ib-input-bad", "state does not read");
        /* a failure outranks a port that does not read */
        ib_port("mlx5_2", 1, "1: DOWN", "400 Gb/sec (4X NDR)", "InfiniBand");
        assert_run("ib", "", HEALTH_FAIL, "ib-port-state", "mlx5_2 port 1 is DOWN");
        /* a state that cannot be read at all is the port's failure */
        ib_port("mlx5_1", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        ib_port("mlx5_2", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        {
                _cleanup_free_ char *state = at("/sys/class/infiniband/mlx5_2/ports/1/state");

                ck_assert_int_eq(unlink(state), 0);
                assert_run("ib", "", HEALTH_FAIL, "ib-port-state", "mlx5_2 port 1: state: No such file");
        }
        /* not-a-port entries and stray files are passed over */
        put("/sys/class/infiniband/mlx5_1/ports/README", "x");
        put("/sys/class/infiniband/stray", "x");
        assert_run("ib", "device: mlx5_1\n", HEALTH_PASS, "ok", "mlx5_1 port 1 ACTIVE at 400 Gb/s");
}
END_TEST

static void ib_counter(const char *dev, unsigned port, const char *name, const char *value) {
        char rel[256];

        snprintf(rel, sizeof(rel), "/sys/class/infiniband/%s/ports/%u/counters/%s", dev, port, name);
        put(rel, "%s\n", value);
}

/* Each counter file at 0 for a port. */
static void ib_counters_zero(const char *dev, unsigned port) {
        static const char *const names[] = { "link_downed",
                                             "link_error_recovery",
                                             "symbol_error",
                                             "port_rcv_errors",
                                             "port_rcv_remote_physical_errors",
                                             "port_rcv_switch_relay_errors",
                                             "port_xmit_discards",
                                             "port_xmit_constraint_errors",
                                             "port_rcv_constraint_errors",
                                             "local_link_integrity_errors",
                                             "excessive_buffer_overrun_errors",
                                             "VL15_dropped" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                ib_counter(dev, port, names[i], "0");
}

START_TEST(test_ib_counters) {
        static const char *const all =
                "max_link_downed: 0\nmax_link_error_recovery: 0\nmax_symbol_error: 0\nmax_port_rcv_errors: "
                "0\n"
                "max_port_rcv_remote_physical_errors: 0\nmax_port_rcv_switch_relay_errors: 0\n"
                "max_port_xmit_discards: 0\nmax_port_xmit_constraint_errors: 0\n"
                "max_port_rcv_constraint_errors: 0\nmax_local_link_integrity_errors: 0\n"
                "max_excessive_buffer_overrun_errors: 0\nmax_vl15_dropped: 0\n";

        ib_port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        ib_port("mlx5_1", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        ib_counters_zero("mlx5_0", 1);
        ib_counters_zero("mlx5_1", 1);
        /* every counter at 0, every max 0: passes */
        assert_run("ib", all, HEALTH_PASS, "ok",
                   "2 InfiniBand ports ACTIVE, error counters within their max");
        /* flaps: link_downed over its max */
        ib_counter("mlx5_1", 1, "link_downed", "3");
        assert_run("ib", "max_link_downed: 3\n", HEALTH_PASS, "ok", "error counters within");
        assert_run("ib", "max_link_downed: 2\n", HEALTH_FAIL, "ib-link-flaps",
                   "mlx5_1 port 1: link_downed 3, max 2");
        /* no max set: the counters are not read, as before */
        assert_run("ib", "", HEALTH_PASS, "ok", "2 InfiniBand ports ACTIVE");
        /* errors: each counter with a max of its own */
        ib_counter("mlx5_0", 1, "symbol_error", "120");
        assert_run("ib", "max_symbol_error: 100\n", HEALTH_FAIL, "ib-errors",
                   "mlx5_0 port 1: symbol_error 120, max 100");
        assert_run("ib", "max_symbol_error: 120\n", HEALTH_PASS, "ok", "within their max");
        ib_counter("mlx5_0", 1, "excessive_buffer_overrun_errors", "7");
        assert_run("ib", "max_excessive_buffer_overrun_errors: 6\n", HEALTH_FAIL, "ib-errors",
                   "excessive_buffer_overrun_errors 7, max 6");
        ib_counter("mlx5_0", 1, "VL15_dropped", "1");
        assert_run("ib", "max_vl15_dropped: 0\n", HEALTH_FAIL, "ib-errors", "VL15_dropped 1, max 0");
        /* both ports failing: the first, and how many */
        assert_run("ib", "max_link_downed: 0\nmax_symbol_error: 0\n", HEALTH_FAIL, "ib-errors",
                   "mlx5_0 port 1: symbol_error 120, max 0 (2 ports failing)");
        /* one port named */
        assert_run("ib", "device: mlx5_1\nmax_symbol_error: 0\n", HEALTH_PASS, "ok", "mlx5_1 port 1 ACTIVE");
        /* a flap outranks errors on the same port */
        ib_counter("mlx5_1", 1, "symbol_error", "5");
        assert_run("ib", "device: mlx5_1\nmax_symbol_error: 0\nmax_link_downed: 0\n", HEALTH_FAIL,
                   "ib-link-flaps", "link_downed 3, max 0");
        /* saturated counters (8, 16, 32 and 64 bits) fail whatever the max */
        ib_counter("mlx5_1", 1, "link_downed", "255");
        assert_run("ib", "device: mlx5_1\nmax_link_downed: 1000\n", HEALTH_FAIL, "ib-link-flaps",
                   "link_downed 255 is saturated (stopped counting), max 1000");
        ib_counter("mlx5_1", 1, "symbol_error", "65535");
        assert_run("ib", "device: mlx5_1\nmax_symbol_error: 100000\n", HEALTH_FAIL, "ib-errors",
                   "symbol_error 65535 is saturated");
        ib_counter("mlx5_1", 1, "symbol_error", "4294967295");
        assert_run("ib", "device: mlx5_1\nmax_symbol_error: 100000\n", HEALTH_FAIL, "ib-errors",
                   "symbol_error 4294967295 is saturated");
        ib_counter("mlx5_1", 1, "symbol_error", "18446744073709551615");
        assert_run("ib", "device: mlx5_1\nmax_symbol_error: 100000\n", HEALTH_FAIL, "ib-errors",
                   "symbol_error 18446744073709551615 is saturated");
        /* a 64-bit count that is not all ones counts as it is */
        ib_counter("mlx5_1", 1, "symbol_error", "4294967296");
        assert_run("ib", "device: mlx5_1\nmax_symbol_error: 4294967296\n", HEALTH_PASS, "ok",
                   "mlx5_1 port 1");
        /* the keys */
        assert_refused("ib", "max_symbol_error: -1\n", "key 'max_symbol_error'");
        assert_refused("ib", "max_link_downed: many\n", "key 'max_link_downed'");
        assert_refused("ib", "max_link_flaps: 1\n", "max_link_flaps");
}
END_TEST

START_TEST(test_ib_counters_bad_input) {
        static const char *const bad[] = { "-1", "1e3", "12 ", "0x10", "abc", "" };

        ib_port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        ib_counters_zero("mlx5_0", 1);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                ib_counter("mlx5_0", 1, "symbol_error", bad[i]);
                assert_run("ib", "max_symbol_error: 10\n", HEALTH_UNKNOWN, "ib-input-bad",
                           "counters/symbol_error");
                assert_run("ib", "max_symbol_error: 10\n", HEALTH_UNKNOWN, "ib-input-bad", "not a count");
        }
        /* past 2^64 */
        ib_counter("mlx5_0", 1, "symbol_error", "18446744073709551616");
        assert_run("ib", "max_symbol_error: 10\n", HEALTH_UNKNOWN, "ib-input-bad", "past 2^64");
        ib_counter("mlx5_0", 1, "symbol_error", "99999999999999999999999999");
        assert_run("ib", "max_symbol_error: 10\n", HEALTH_UNKNOWN, "ib-input-bad", "past 2^64");
        /* a NUL byte inside */
        put_bytes("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error", "1\0002\n", 4);
        assert_run("ib", "max_symbol_error: 10\n", HEALTH_UNKNOWN, "ib-input-bad",
                   "does not read as a count");
        /* a counter file missing (an HCA that has not got it) */
        {
                _cleanup_free_ char *p = at("/sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error");

                ck_assert_int_eq(unlink(p), 0);
        }
        assert_run("ib", "max_symbol_error: 10\n", HEALTH_UNKNOWN, "ib-input-missing",
                   "mlx5_0 port 1: counters/symbol_error is missing");
        /* ... read only when a max asks for it */
        assert_run("ib", "max_port_rcv_errors: 10\n", HEALTH_PASS, "ok", "mlx5_0 port 1");
        /* a failure on another port outranks one that does not read */
        ib_port("mlx5_1", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        ib_counters_zero("mlx5_1", 1);
        ib_counter("mlx5_1", 1, "symbol_error", "11");
        assert_run("ib", "max_symbol_error: 10\n", HEALTH_FAIL, "ib-errors",
                   "mlx5_1 port 1: symbol_error 11, max 10");
}
END_TEST

/* genconf: an entry per InfiniBand port ACTIVE now, at its rate, which
 * passes when run. */
START_TEST(test_ib_genconf) {
        const HealthCheckType *t = health_check_type_find("ib");
        HealthEnv env = { .root = root };
        HealthGenconf g = {};

        ck_assert_ptr_nonnull(t->genconf);
        /* no /sys/class/infiniband: nothing, no error */
        ck_assert_int_eq(t->genconf(&env, &g), 0);
        ck_assert_uint_eq(g.n, 0);
        ib_port("mlx5_0", 1, "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand");
        ib_port("mlx5_1", 1, "4: ACTIVE", "2.5 Gb/sec (1X SDR)", NULL);
        ib_port("mlx5_2", 1, "1: DOWN", "400 Gb/sec (4X NDR)", "InfiniBand"); /* down now: left out */
        ib_port("mlx5_3", 1, "4: ACTIVE", "100 Gb/sec (4X EDR)", "Ethernet"); /* RoCE: left out */
        ib_port("mlx5_4", 1, "4: ACTIVE", "fast", "InfiniBand");              /* unreadable rate */
        ib_port("a_device_name_longer_than_the_check_names", 2, "4: ACTIVE", "200 Gb/sec (4X HDR)", NULL);
        ck_assert_int_eq(t->genconf(&env, &g), 0);
        ck_assert_uint_eq(g.n, 3);
        ck_assert_str_eq(
                g.entries[0],
                "{name: ib-1, type: ib, device: \"a_device_name_longer_than_the_check_names\", port: 2, "
                "min_rate: 200}");
        ck_assert_str_eq(g.entries[1],
                         "{name: ib-mlx5_0-1, type: ib, device: \"mlx5_0\", port: 1, min_rate: 400}");
        ck_assert_str_eq(g.entries[2],
                         "{name: ib-mlx5_1-1, type: ib, device: \"mlx5_1\", port: 1, min_rate: 2}");
        /* each passes when loaded and run as --check-config would load it */
        assert_run("ib", "device: \"mlx5_0\"\nport: 1\nmin_rate: 400\n", HEALTH_PASS, "ok",
                   "mlx5_0 port 1 ACTIVE at 400 Gb/s");
        assert_run("ib", "device: \"mlx5_1\"\nport: 1\nmin_rate: 2\n", HEALTH_PASS, "ok",
                   "mlx5_1 port 1 ACTIVE at 2.5 Gb/s");
        health_genconf_clear(&g);
}
END_TEST

/* ---- gpu -------------------------------------------------------------- */

/* The gpu check's limits: each key into the judge's limits, off when left
 * out, and refused at its key when wrong. */
START_TEST(test_gpu_limits_keys) {
        HealthGpuLimits lim;
        char *e = NULL;
        Loaded l;

        ck_assert_msg(load("gpu", "", &l, &e) == 0, "%s", e);
        health_gpu_limits_from_conf(l.conf, &lim);
        ck_assert_int_eq(lim.max_temperature, -1);
        ck_assert_int_eq(lim.min_power_limit, -1);
        ck_assert_uint_eq(lim.fail_clocks_events, 0);
        ck_assert(!lim.persistence_mode && !lim.nvlink_up);
        for (int c = 0; c < _HEALTH_GPU_NVLINK_COUNTER_MAX; c++)
                ck_assert_int_eq(lim.max_nvlink_errors[c], -1);
        unload(&l);
        ck_assert_msg(
                load("gpu",
                     "max_temperature: 85\nfail_clocks_events: [hw_slowdown, hw_power_brake_slowdown]\n"
                     "persistence_mode: true\nnvlink_up: true\nmax_nvlink_replay_errors: 0\n"
                     "max_nvlink_recovery_errors: 1\nmax_nvlink_crc_flit_errors: 100\n"
                     "max_nvlink_crc_data_errors: 10\nmin_power_limit: 700\n",
                     &l, &e) == 0,
                "%s", e);
        health_gpu_limits_from_conf(l.conf, &lim);
        ck_assert_int_eq(lim.max_temperature, 85);
        ck_assert_int_eq(lim.min_power_limit, 700);
        ck_assert_uint_eq(lim.fail_clocks_events, 0x88);
        ck_assert(lim.persistence_mode && lim.nvlink_up);
        ck_assert_int_eq(lim.max_nvlink_errors[HEALTH_GPU_NVLINK_REPLAY], 0);
        ck_assert_int_eq(lim.max_nvlink_errors[HEALTH_GPU_NVLINK_RECOVERY], 1);
        ck_assert_int_eq(lim.max_nvlink_errors[HEALTH_GPU_NVLINK_CRC_FLIT], 100);
        ck_assert_int_eq(lim.max_nvlink_errors[HEALTH_GPU_NVLINK_CRC_DATA], 10);
        unload(&l);
        assert_refused("gpu", "max_temperature: 0\n", "key 'max_temperature'");
        assert_refused("gpu", "max_temperature: 201\n", "key 'max_temperature'");
        assert_refused("gpu", "max_temperature: hot\n", "key 'max_temperature'");
        assert_refused("gpu", "fail_clocks_events: [hw_slowdown, overheating]\n",
                       "key 'fail_clocks_events': 'overheating' is not a reason NVML gives");
        assert_refused("gpu", "fail_clocks_events: hw_slowdown\n", "fail_clocks_events");
        assert_refused("gpu", "persistence_mode: sometimes\n", "key 'persistence_mode'");
        assert_refused("gpu", "nvlink_up: 2\n", "key 'nvlink_up'");
        assert_refused("gpu", "max_nvlink_crc_flit_errors: -1\n", "key 'max_nvlink_crc_flit_errors'");
        assert_refused("gpu", "min_power_limit: 0\n", "key 'min_power_limit'");
        assert_refused("gpu", "max_nvlink_errors: 1\n", "max_nvlink_errors");
}
END_TEST

/* ---- main ------------------------------------------------------------- */

static Suite *suite(void) {
        Suite *s = suite_create("health-checks");
        TCase *tc = tcase_create("checks");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_types_table);
        tcase_add_test(tc, test_result_set);
        tcase_add_test(tc, test_codes);
        tcase_add_test(tc, test_mount);
        tcase_add_test(tc, test_mount_stacked);
        tcase_add_test(tc, test_mount_bad_input);
        tcase_add_test(tc, test_mount_oversized);
        tcase_add_test(tc, test_mount_config);
        tcase_add_test(tc, test_disk_free);
        tcase_add_test(tc, test_inodes_free);
        tcase_add_test(tc, test_memory);
        tcase_add_test(tc, test_memory_bad_input);
        tcase_add_test(tc, test_process);
        tcase_add_test(tc, test_process_real);
        tcase_add_test(tc, test_process_bad_input);
        tcase_add_test(tc, test_file);
        tcase_add_test(tc, test_file_config);
        tcase_add_test(tc, test_load);
        tcase_add_test(tc, test_load_bad_input);
        tcase_add_test(tc, test_ib);
        tcase_add_test(tc, test_ib_bad_input);
        tcase_add_test(tc, test_ib_counters);
        tcase_add_test(tc, test_ib_counters_bad_input);
        tcase_add_test(tc, test_ib_genconf);
        tcase_add_test(tc, test_gpu_limits_keys);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
