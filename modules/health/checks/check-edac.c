/* The `edac` check: the memory controllers' error counts, as the kernel's
 * EDAC driver keeps them in <root>/sys/devices/system/edac/mc/mc<N>/
 * {ce_count,ue_count}: corrected (ce) and uncorrected (ue) errors since
 * boot or since the counters were last reset.  Each controller over
 * `max_ue` (default 0: one uncorrected error fails) or over `max_ce`
 * (none unless given) fails.  With `per_dimm: true`, the limits hold for
 * each DIMM (dimm<N>/dimm_ce_count, dimm_ue_count; csrow<N>/ce_count,
 * ue_count on older kernels), and the failure names the DIMM's label.
 *
 * This stands for the memory half of LBNL NHC's check_hw_mcelog, which
 * asks mcelog's daemon for the errors of each DIMM in the last 24 hours
 * (default limits: 9 corrected, 0 uncorrected).  EDAC counts since boot,
 * not in a sliding day: a max_ce here is a total.  No EDAC driver loaded
 * (no mc<N>) is UNKNOWN "edac-input-missing": nothing was checked. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-sysfs.h"

#define EDAC_MC "/sys/devices/system/edac/mc"
#define EDAC_NAME_MAX 64
/* Controllers and DIMMs looked at; past that, a hostile tree. */
#define EDAC_ENTRIES_MAX 4096

typedef struct EdacConf {
        HealthCheckCommon common;
        int64_t max_ce, max_ue;
        bool per_dimm;
} EdacConf;

static const sunkd_cfg_key edac_keys[] = {
        HEALTH_COMMON_KEYS,
        { "max_ce", SUNKD_CFG_INT, offsetof(EdacConf, max_ce), 0, 0, INT64_C(1000000000000) },
        { "max_ue", SUNKD_CFG_INT, offsetof(EdacConf, max_ue), 0, 0, INT64_C(1000000000000) },
        { "per_dimm", SUNKD_CFG_BOOL, offsetof(EdacConf, per_dimm), 0, 0, 0 },
};

/* One counted unit: a controller, or a DIMM (a csrow) of one. */
typedef struct EdacUnit {
        const char *ce_file, *ue_file; /* relative to the unit's directory */
} EdacUnit;

static const EdacUnit edac_mc_unit = { "ce_count", "ue_count" };
static const struct {
        const char *prefix;
        EdacUnit unit;
        const char *label;
} edac_dimm_kinds[] = {
        { "dimm", { "dimm_ce_count", "dimm_ue_count" }, "dimm_label" },
        { "rank", { "dimm_ce_count", "dimm_ue_count" }, "dimm_label" },
        { "csrow", { "ce_count", "ue_count" }, "ch0_dimm_label" },
};

typedef struct EdacScan {
        unsigned units;
        uint64_t ce, ue, worst_ue;
        bool failed, bad;
        HealthResult first;
} EdacScan;

static void edac_defaults(void *conf) {
        ((EdacConf *) conf)->max_ce = -1;
}

static int name_filter(const struct dirent *de) {
        return de->d_name[0] != '.' && strlen(de->d_name) < EDAC_NAME_MAX;
}

static void free_names(struct dirent **names, int n) {
        for (int i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

/* "<prefix><digits>" */
static bool numbered(const char *name, const char *prefix) {
        size_t n = strlen(prefix), d = strspn(name + MIN(n, strlen(name)), "0123456789");

        return strncmp(name, prefix, n) == 0 && d > 0 && name[n + d] == 0;
}

static int read_count(const HealthEnv *env, const char *dir, const char *file, uint64_t *ret,
                      HealthResult *res) {
        _cleanup_free_ char *v = NULL;
        char rel[CHECK_PATH_MAX];
        int r;

        if (snprintf(rel, sizeof(rel), "%s/%s", dir, file) >= (int) sizeof(rel))
                return check_input_bad(res, "edac", "'%s' is too long a path", dir);
        r = check_sysfs_read(env, "edac", rel, 64, &v, res);
        if (r <= 0)
                return r;
        if (check_parse_u64(v, ret) < 0)
                return check_input_bad(res, "edac", "'%s/%s' is '%.32s', not a count", dir, file, v);
        return 1;
}

/* The unit at @dir (relative to the root), judged; @label names it. */
static int edac_unit(EdacScan *s, const EdacConf *c, const HealthEnv *env, const char *dir,
                     const EdacUnit *u, const char *name) {
        uint64_t ce = 0, ue = 0;
        HealthResult res;
        int r;

        r = read_count(env, dir, u->ce_file, &ce, &res);
        if (r > 0)
                r = read_count(env, dir, u->ue_file, &ue, &res);
        if (r < 0)
                return r;
        if (r == 0) {
                if (!s->failed && !s->bad)
                        s->first = res;
                s->bad = true;
                return 0;
        }
        s->units++;
        s->ce += ce;
        s->ue += ue;
        s->worst_ue = MAX(s->worst_ue, ue);
        if (s->failed)
                return 0;
        if (ue > (uint64_t) c->max_ue)
                health_result_set(&s->first, HEALTH_FAIL, "edac-ue",
                                  "%s: %" PRIu64 " uncorrected memory errors, at most %" PRIi64 " allowed",
                                  name, ue, c->max_ue);
        else if (c->max_ce >= 0 && ce > (uint64_t) c->max_ce)
                health_result_set(&s->first, HEALTH_FAIL, "edac-ce",
                                  "%s: %" PRIu64 " corrected memory errors, at most %" PRIi64 " allowed",
                                  name, ce, c->max_ce);
        else
                return 0;
        s->failed = true;
        return 0;
}

/* The DIMMs of controller @mc, each a unit; a controller that lists none is one unit. */
static int edac_dimms(EdacScan *s, const EdacConf *c, const HealthEnv *env, const char *mc) {
        struct dirent **names = NULL;
        char rel[CHECK_PATH_MAX], p[CHECK_PATH_MAX];
        unsigned found = 0;
        int n, r = 0;

        snprintf(rel, sizeof(rel), EDAC_MC "/%.63s", mc);
        if (check_path(p, env, rel) < 0)
                return 0;
        n = scandir(p, &names, name_filter, versionsort);
        if (n < 0)
                return 0; /* gone since listed */
        for (size_t k = 0; k < ELEMENTSOF(edac_dimm_kinds) && found == 0; k++)
                for (int i = 0; i < n && r >= 0 && found < EDAC_ENTRIES_MAX; i++) {
                        _cleanup_free_ char *label = NULL;
                        char dir[CHECK_PATH_MAX], lrel[CHECK_PATH_MAX], name[192];

                        if (!numbered(names[i]->d_name, edac_dimm_kinds[k].prefix))
                                continue;
                        found++;
                        snprintf(dir, sizeof(dir), "%.300s/%.63s", rel, names[i]->d_name);
                        snprintf(lrel, sizeof(lrel), "%.400s/%.32s", dir, edac_dimm_kinds[k].label);
                        if (check_sysfs_value(env, lrel, 128, &label) >= 0 && !isempty(label))
                                snprintf(name, sizeof(name), "%.63s %.63s (%.60s)", mc, names[i]->d_name,
                                         label);
                        else
                                snprintf(name, sizeof(name), "%.63s %.63s", mc, names[i]->d_name);
                        r = edac_unit(s, c, env, dir, &edac_dimm_kinds[k].unit, name);
                }
        free_names(names, n);
        if (r >= 0 && found == 0)
                r = edac_unit(s, c, env, rel, &edac_mc_unit, mc);
        return r;
}

/* Scans every controller; 1 with @s filled, 0 with the result set. */
static int edac_scan(EdacScan *s, const EdacConf *c, const HealthEnv *env, HealthResult *ret) {
        struct dirent **mcs = NULL;
        char p[CHECK_PATH_MAX];
        unsigned n_mc = 0;
        int n, r = 0;

        r = check_path(p, env, EDAC_MC);
        if (r < 0)
                return check_input_error(ret, "edac", EDAC_MC, r);
        n = scandir(p, &mcs, name_filter, versionsort);
        if (n < 0)
                return check_input_error(ret, "edac", p, negative_errno());
        for (int i = 0; i < n && r >= 0 && n_mc < EDAC_ENTRIES_MAX; i++) {
                char rel[CHECK_PATH_MAX];

                if (!numbered(mcs[i]->d_name, "mc"))
                        continue;
                n_mc++;
                snprintf(rel, sizeof(rel), EDAC_MC "/%.63s", mcs[i]->d_name);
                r = c->per_dimm ? edac_dimms(s, c, env, mcs[i]->d_name)
                                : edac_unit(s, c, env, rel, &edac_mc_unit, mcs[i]->d_name);
        }
        free_names(mcs, n);
        if (r < 0) {
                health_result_set(ret, HEALTH_UNKNOWN, "out-of-memory", "out of memory");
                return r;
        }
        if (n_mc == 0) {
                health_result_set(ret, HEALTH_UNKNOWN, "edac-input-missing",
                                  "no memory controller under '%s' (no EDAC driver loaded)", p);
                return 0;
        }
        return 1;
}

static int edac_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const EdacConf *c = conf;
        EdacScan s = {};
        int r;

        r = edac_scan(&s, c, env, ret);
        if (r <= 0)
                return r;
        if (s.failed || s.bad)
                *ret = s.first;
        else
                health_result_set(ret, HEALTH_PASS, "ok",
                                  "%u %s: %" PRIu64 " corrected, %" PRIu64 " uncorrected memory errors",
                                  s.units, c->per_dimm ? "DIMMs" : "memory controllers", s.ce, s.ue);
        return 0;
}

/* Where EDAC runs: no uncorrected error more than a controller has had. */
static int edac_genconf(const HealthEnv *env, HealthGenconf *out) {
        EdacConf c = { .max_ce = -1, .max_ue = INT64_C(1000000000000) };
        EdacScan s = {};
        HealthResult res;
        int r;

        r = edac_scan(&s, &c, env, &res);
        if (r <= 0)
                return r;
        if (s.bad)
                return -EBADMSG;
        return health_genconf_add(out, "{name: edac, type: edac, max_ue: %" PRIu64 "}", s.worst_ue);
}

const HealthCheckType health_check_edac = {
        .name = "edac",
        .keys = edac_keys,
        .n_keys = ELEMENTSOF(edac_keys),
        .conf_size = sizeof(EdacConf),
        .defaults = edac_defaults,
        .run = edac_run,
        .genconf = edac_genconf,
        .child = false,
};
