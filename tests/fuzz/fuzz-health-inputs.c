/* Fuzz target: the files the health module's built-in checks read, from
 * untrusted bytes.  The first byte picks a row of the table below (a check
 * type, its keys, the file under the root the rest of the bytes become,
 * and one fixed file beside it, if the row needs one); the check runs
 * against that temporary root.  Whatever the bytes, the result is pass,
 * fail or unknown, with a code and one printable line of detail, never a
 * crash or a leak; an unknown's code is the type's own or out-of-memory.
 * A type that makes a baseline (genconf) makes it of the same root, and
 * each entry it gives must be accepted and pass there.  Add a row for each
 * check type that reads a file. */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf-keys.h"
#include "conf-tree.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#include "modules/health/checks/health-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct InputRow {
        const char *type;
        const char *keys; /* YAML beside name and type */
        const char *path; /* the fuzzed file, under the root */
        const char *fixed_path, *fixed_text;
} InputRow;

static const InputRow rows[] = {
        { "cpu", "sockets: 2\ncores: 8\nthreads: 16\n", "/proc/cpuinfo", NULL, NULL },
        { "memory", "min_total: 1G\nmin_available: 1M\n", "/proc/meminfo", NULL, NULL },
        { "memory", "min_total: 1G\nmax_total: 64G\ntolerance: 5%\nmax_swap: 0\n", "/proc/meminfo", NULL,
          NULL },
        { "memory", "min_free: 1M\nmin_swap_free: 1K\nmin_free_with_swap: 1M\nmax_with_swap: 1T\n",
          "/proc/meminfo", NULL, NULL },
        { "dmi", "field: bios_version\nmatch: \"^2\\\\.[0-9]+\"\n", "/sys/class/dmi/id/bios_version", NULL,
          NULL },
        { "dmi", "field: product_name\nvalue: x\nnegate: true\n", "/sys/class/dmi/id/product_name", NULL,
          NULL },
        { "edac", "max_ce: 10\n", "/sys/devices/system/edac/mc/mc0/ce_count",
          "/sys/devices/system/edac/mc/mc0/ue_count", "0\n" },
        { "edac", "per_dimm: true\n", "/sys/devices/system/edac/mc/mc0/dimm0/dimm_ue_count",
          "/sys/devices/system/edac/mc/mc0/dimm0/dimm_ce_count", "3\n" },
        { "edac", "per_dimm: true\n", "/sys/devices/system/edac/mc/mc0/dimm0/dimm_label",
          "/sys/devices/system/edac/mc/mc0/dimm0/dimm_ue_count", "1\n" },
        { "mce", "max_exceptions: 1\n", "/proc/interrupts", NULL, NULL },
        { "ethernet", "interface: eth0\n", "/sys/class/net/eth0/operstate", "/sys/class/net/eth0/carrier",
          "1\n" },
        { "ethernet", "interface: eth0\nmin_speed: 1000\n", "/sys/class/net/eth0/speed",
          "/sys/class/net/eth0/operstate", "up\n" },
        { "mount", "path: /scratch\nro: true\n", "/proc/self/mountinfo", NULL, NULL },
        { "mount", "path: /\nfs_type: ext4\n", "/proc/self/mountinfo", NULL, NULL },
        { "load", "max_per_core: 2.5\n", "/proc/loadavg", "/sys/devices/system/cpu/online", "0-3\n" },
        { "load", "max_per_core: 1\nminutes: 15\n", "/sys/devices/system/cpu/online", "/proc/loadavg",
          "1.00 2.00 3.00 1/100 42\n" },
        { "ib", "min_rate: 100\n", "/sys/class/infiniband/mlx5_0/ports/1/state",
          "/sys/class/infiniband/mlx5_0/ports/1/rate", "400 Gb/sec (4X NDR)\n" },
        { "ib", "device: mlx5_0\nport: 1\nmin_rate: 100\n", "/sys/class/infiniband/mlx5_0/ports/1/rate",
          "/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n" },
        { "file", "path: /etc/node-state\nmatch: \"^state: ok$\"\nmode: \"0644\"\n", "/etc/node-state", NULL,
          NULL },
};

static char root[64];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        (void) remove(path);
        return 0;
}

static void remove_root(void) {
        (void) nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void make_root(void) {
        if (root[0])
                return;
        snprintf(root, sizeof(root), "%s", "/tmp/fuzz-health-inputs-XXXXXX");
        if (!mkdtemp(root))
                __builtin_trap();
        atexit(remove_root);
}

static void put(const char *rel, const void *data, size_t len) {
        char p[4096];

        snprintf(p, sizeof(p), "%s%s", root, rel);
        if (fileio_mkdir_parents(p, 0755) < 0 ||
            fileio_write_atomic(p, data, len, 0644, (uid_t) -1, (gid_t) -1) < 0)
                __builtin_trap();
}

static void drop(const char *rel) {
        char p[4096];

        snprintf(p, sizeof(p), "%s%s", root, rel);
        (void) unlink(p);
}

/* A conf of @t from the YAML @yaml, validated: NULL when refused. */
static void *load(const HealthCheckType *t, const char *yaml) {
        _cleanup_free_ char *error = NULL;
        ConfTree *tree = NULL;
        void *conf;
        int r;

        if (conf_tree_parse("fuzz.yaml", yaml, strlen(yaml), &tree, &error) < 0)
                return NULL;
        conf = calloc(1, t->conf_size);
        if (!conf)
                __builtin_trap();
        if (t->defaults)
                t->defaults(conf);
        r = conf_keys_parse(tree->root, t->keys, t->n_keys, conf, &error);
        conf_tree_free(tree);
        if (r >= 0 && t->validate)
                r = t->validate(conf, &error);
        if (r < 0) {
                if (t->release)
                        t->release(conf);
                conf_keys_clear(t->keys, t->n_keys, conf);
                free(conf);
                return NULL;
        }
        return conf;
}

static void unload(const HealthCheckType *t, void *conf) {
        if (t->release)
                t->release(conf);
        conf_keys_clear(t->keys, t->n_keys, conf);
        free(conf);
}

static void check_result(const HealthCheckType *t, const HealthResult *res) {
        char own[HEALTH_CODE_MAX];

        if (res->status != HEALTH_PASS && res->status != HEALTH_FAIL && res->status != HEALTH_UNKNOWN)
                __builtin_trap();
        if (!res->code[0] || !res->detail[0] ||
            strnlen(res->detail, sizeof(res->detail)) >= sizeof(res->detail))
                __builtin_trap();
        for (const char *p = res->detail; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        __builtin_trap();
        snprintf(own, sizeof(own), "%s-input-", t->name);
        if (res->status == HEALTH_UNKNOWN && strncmp(res->code, own, strlen(own)) != 0 &&
            !streq(res->code, "out-of-memory"))
                __builtin_trap();
        if (res->status == HEALTH_FAIL && !health_code_find(res->code))
                __builtin_trap(); /* every failing code is in the catalogue */
}

/* Each baseline entry of @t for the root is accepted and passes there. */
static void check_genconf(const HealthCheckType *t, const HealthEnv *env) {
        HealthGenconf g = {};

        if (!t->genconf)
                return;
        (void) t->genconf(env, &g);
        for (size_t i = 0; i < g.n; i++) {
                HealthResult res = {};
                void *conf = load(t, g.entries[i]);

                if (!conf)
                        __builtin_trap(); /* a baseline --check-config refuses */
                if (t->run(conf, env, &res) < 0 || res.status != HEALTH_PASS)
                        __builtin_trap(); /* a baseline that fails where it was made */
                unload(t, conf);
        }
        health_genconf_clear(&g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const InputRow *row;
        const HealthCheckType *t;
        HealthEnv env;
        HealthResult res = {};
        _cleanup_free_ char *yaml = NULL;
        void *conf;

        if (size < 1)
                return 0;
        make_root();
        env.root = root;
        row = &rows[data[0] % ELEMENTSOF(rows)];
        t = health_check_type_find(row->type);
        if (!t || !t->run || asprintf(&yaml, "name: fuzz\ntype: %s\n%s", row->type, row->keys) < 0)
                __builtin_trap();
        conf = load(t, yaml);
        if (!conf)
                __builtin_trap(); /* the table's keys are valid */
        if (row->fixed_path)
                put(row->fixed_path, row->fixed_text, strlen(row->fixed_text));
        put(row->path, data + 1, size - 1);
        if (t->run(conf, &env, &res) < 0 && res.status != HEALTH_UNKNOWN)
                __builtin_trap();
        check_result(t, &res);
        check_genconf(t, &env);
        unload(t, conf);
        drop(row->path);
        if (row->fixed_path)
                drop(row->fixed_path);
        return 0;
}
