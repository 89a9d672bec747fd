/* The `disk_free` check: the space an unprivileged user may still write
 * under a path (df's "Avail": blocks above the reserve), in bytes, as a
 * share of the file system (df's Use%, reserve excluded), or both.  A path
 * that is not there is UNKNOWN: the `mount` check is the one to say it is
 * missing.  statvfs() on a dead NFS server hangs: a child runs this. */
#include <inttypes.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "util/macro.h"

#include "check-genconf.h"
#include "check-util.h"

typedef struct DiskFreeConf {
        HealthCheckCommon common;
        char *path;
        uint64_t min_free;
        int64_t min_free_pct;
} DiskFreeConf;

static const sunkd_cfg_key disk_free_keys[] = {
        HEALTH_COMMON_KEYS,
        { "path", SUNKD_CFG_PATH, offsetof(DiskFreeConf, path), SUNKD_CFG_REQUIRED, 0, 0 },
        { "min_free", SUNKD_CFG_SIZE, offsetof(DiskFreeConf, min_free), 0, 0, 0 },
        { "min_free_pct", SUNKD_CFG_INT, offsetof(DiskFreeConf, min_free_pct), 0, 1, 100 },
};

static int disk_free_validate(void *conf, char **ret_error) {
        DiskFreeConf *c = conf;

        check_path_normalise(c->path);
        if (c->min_free == 0 && c->min_free_pct == 0)
                return check_invalid(ret_error, "min_free",
                                     "a disk_free check needs min_free, min_free_pct or both");
        return 0;
}

static int disk_free_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const DiskFreeConf *c = conf;
        struct statvfs st;
        unsigned __int128 avail, total;
        char have[32], want[32];
        unsigned pct = 0;

        if (!check_statvfs(env, "disk_free", c->path, &st, ret))
                return 0;
        avail = (unsigned __int128) st.f_bavail * st.f_frsize;
        /* used + available, as df counts a file system's size for Use% */
        total = ((unsigned __int128) st.f_blocks - MIN(st.f_bfree, st.f_blocks) + st.f_bavail) * st.f_frsize;
        if (c->min_free_pct > 0 && total == 0)
                return check_input_bad(ret, "disk_free", "'%s' reports a size of 0 blocks", c->path);
        if (total > 0)
                pct = (unsigned) (avail * 100 / total);
        check_format_size(avail > UINT64_MAX ? UINT64_MAX : (uint64_t) avail, have);
        if (c->min_free > 0 && avail < c->min_free)
                health_result_set(ret, HEALTH_FAIL, "disk_free-low", "'%s': %s free, want at least %s",
                                  c->path, have, check_format_size(c->min_free, want));
        else if (c->min_free_pct > 0 && avail * 100 < (unsigned __int128) c->min_free_pct * total)
                health_result_set(ret, HEALTH_FAIL, "disk_free-low",
                                  "'%s': %u%% free (%s), want at least %" PRIi64 "%%", c->path, pct, have,
                                  c->min_free_pct);
        else
                health_result_set(ret, HEALTH_PASS, "ok", "'%s': %s free (%u%%)", c->path, have, pct);
        return 0;
}

const HealthCheckType health_check_disk_free = {
        .name = "disk_free",
        .keys = disk_free_keys,
        .n_keys = ELEMENTSOF(disk_free_keys),
        .conf_size = sizeof(DiskFreeConf),
        .validate = disk_free_validate,
        .run = disk_free_run,
        .genconf = check_genconf_fs_disk_free,
        .child = true,
};
