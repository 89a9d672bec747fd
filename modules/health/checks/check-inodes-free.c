/* The `inodes_free` check: the inodes an unprivileged user may still
 * create under a path, as a count, as a share of the file system's, or
 * both.  A file system that makes inodes as it needs them (btrfs) reports
 * none: UNKNOWN, not a failure.  A path that is not there is UNKNOWN too. */
#include <inttypes.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "util/macro.h"

#include "check-genconf.h"
#include "check-util.h"

typedef struct InodesFreeConf {
        HealthCheckCommon common;
        char *path;
        int64_t min_free;
        int64_t min_free_pct;
} InodesFreeConf;

static const sunkd_cfg_key inodes_free_keys[] = {
        HEALTH_COMMON_KEYS,
        { "path", SUNKD_CFG_PATH, offsetof(InodesFreeConf, path), SUNKD_CFG_REQUIRED, 0, 0 },
        { "min_free", SUNKD_CFG_INT, offsetof(InodesFreeConf, min_free), 0, 1, INT64_MAX },
        { "min_free_pct", SUNKD_CFG_INT, offsetof(InodesFreeConf, min_free_pct), 0, 1, 100 },
};

static int inodes_free_validate(void *conf, char **ret_error) {
        InodesFreeConf *c = conf;

        check_path_normalise(c->path);
        if (c->min_free == 0 && c->min_free_pct == 0)
                return check_invalid(ret_error, "min_free",
                                     "an inodes_free check needs min_free, min_free_pct or both");
        return 0;
}

static int inodes_free_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const InodesFreeConf *c = conf;
        struct statvfs st;
        unsigned __int128 avail, total;
        unsigned pct;

        if (!check_statvfs(env, "inodes_free", c->path, &st, ret))
                return 0;
        if (st.f_files == 0)
                return check_input_bad(ret, "inodes_free",
                                       "'%s' counts no inodes (a file system that makes them as needed)",
                                       c->path);
        avail = st.f_favail;
        total = (unsigned __int128) st.f_files - MIN(st.f_ffree, st.f_files) + st.f_favail;
        pct = total > 0 ? (unsigned) (avail * 100 / total) : 0;
        if (c->min_free > 0 && avail < (uint64_t) c->min_free)
                health_result_set(ret, HEALTH_FAIL, "inodes_free-low",
                                  "'%s': %" PRIu64 " inodes free, want at least %" PRIi64, c->path,
                                  (uint64_t) st.f_favail, c->min_free);
        else if (c->min_free_pct > 0 && avail * 100 < (unsigned __int128) c->min_free_pct * total)
                health_result_set(ret, HEALTH_FAIL, "inodes_free-low",
                                  "'%s': %u%% of inodes free (%" PRIu64 "), want at least %" PRIi64 "%%",
                                  c->path, pct, (uint64_t) st.f_favail, c->min_free_pct);
        else
                health_result_set(ret, HEALTH_PASS, "ok", "'%s': %" PRIu64 " inodes free (%u%%)", c->path,
                                  (uint64_t) st.f_favail, pct);
        return 0;
}

const HealthCheckType health_check_inodes_free = {
        .name = "inodes_free",
        .keys = inodes_free_keys,
        .n_keys = ELEMENTSOF(inodes_free_keys),
        .conf_size = sizeof(InodesFreeConf),
        .validate = inodes_free_validate,
        .run = inodes_free_run,
        .genconf = check_genconf_fs_inodes_free,
        .child = true,
};
