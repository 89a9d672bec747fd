/* The `memory` check: MemTotal (a DIMM lost at boot shows here) and
 * MemAvailable (what can be had without swapping) of <root>/proc/meminfo
 * against minimums.  A meminfo without the field asked for is UNKNOWN. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-util.h"

typedef struct MemoryConf {
        HealthCheckCommon common;
        uint64_t min_total;
        uint64_t min_available;
} MemoryConf;

static const sunkd_cfg_key memory_keys[] = {
        HEALTH_COMMON_KEYS,
        { "min_total", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_total), 0, 0, 0 },
        { "min_available", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_available), 0, 0, 0 },
};

#define MEMINFO_MAX (64 * 1024)

static int memory_validate(void *conf, char **ret_error) {
        const MemoryConf *c = conf;

        if (c->min_total == 0 && c->min_available == 0)
                return check_invalid(ret_error, "min_total",
                                     "a memory check needs min_total, min_available or both");
        return 0;
}

/* "MemTotal:       16318076 kB" in bytes: -ENOENT without the line, -EBADMSG for one that does not read so.
 */
static int meminfo_field(const char *text, const char *name, uint64_t *ret) {
        size_t n = strlen(name);

        for (const char *l = text; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] ? 1 : 0)) {
                uint64_t kib = 0;
                const char *p;

                if (strncmp(l, name, n) != 0 || l[n] != ':')
                        continue;
                p = l + n + 1 + strspn(l + n + 1, " \t");
                if (*p < '0' || *p > '9')
                        return -EBADMSG;
                for (; *p >= '0' && *p <= '9'; p++) {
                        if (kib > (UINT64_MAX / 1024 - 9) / 10)
                                return -EBADMSG;
                        kib = kib * 10 + (uint64_t) (*p - '0');
                }
                if (strncmp(p, " kB", 3) != 0 || (p[3] != '\n' && p[3] != 0))
                        return -EBADMSG;
                *ret = kib * 1024;
                return 0;
        }
        return -ENOENT;
}

static int field_or_result(const char *text, const char *file, const char *name, uint64_t *v,
                           HealthResult *ret) {
        int r = meminfo_field(text, name, v);

        if (r == -ENOENT)
                check_input_bad(ret, "memory", "'%s' has no %s", file, name);
        else if (r < 0)
                check_input_bad(ret, "memory", "'%s': %s does not read \"%s: <n> kB\"", file, name, name);
        return r;
}

static int memory_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const MemoryConf *c = conf;
        _cleanup_free_ char *text = NULL;
        char file[CHECK_PATH_MAX], have[32], want[32];
        uint64_t total = 0, avail = 0;
        size_t len;
        int r;

        r = check_read(env, "memory", "/proc/meminfo", MEMINFO_MAX, &text, &len, ret);
        if (r < 0 || !text)
                return r;
        (void) check_path(file, env, "/proc/meminfo");
        if (strlen(text) != len)
                return check_input_bad(ret, "memory", "'%s' holds a NUL byte", file);
        if ((c->min_total > 0 && field_or_result(text, file, "MemTotal", &total, ret) < 0) ||
            (c->min_available > 0 && field_or_result(text, file, "MemAvailable", &avail, ret) < 0))
                return 0;
        if (c->min_total > 0 && total < c->min_total)
                health_result_set(ret, HEALTH_FAIL, "memory-total-low", "MemTotal %s, want at least %s",
                                  check_format_size(total, have), check_format_size(c->min_total, want));
        else if (c->min_available > 0 && avail < c->min_available)
                health_result_set(ret, HEALTH_FAIL, "memory-available-low",
                                  "MemAvailable %s, want at least %s", check_format_size(avail, have),
                                  check_format_size(c->min_available, want));
        else if (c->min_total > 0 && c->min_available > 0)
                health_result_set(ret, HEALTH_PASS, "ok", "MemTotal %s, MemAvailable %s",
                                  check_format_size(total, have), check_format_size(avail, want));
        else
                health_result_set(ret, HEALTH_PASS, "ok", "%s %s",
                                  c->min_total > 0 ? "MemTotal" : "MemAvailable",
                                  check_format_size(c->min_total > 0 ? total : avail, have));
        return 0;
}

static int memory_genconf(const HealthEnv *env, HealthGenconf *out);

const HealthCheckType health_check_memory = {
        .name = "memory",
        .keys = memory_keys,
        .n_keys = ELEMENTSOF(memory_keys),
        .conf_size = sizeof(MemoryConf),
        .validate = memory_validate,
        .run = memory_run,
        .genconf = memory_genconf,
        .child = false,
};

/* The baseline: MemTotal less NHC's tolerance of 3% (nhc-genconf's
 * check_hw_physmem), in MiB: a DIMM lost at boot shows, what the kernel
 * keeps for itself from one boot to the next does not. */
#define MEMORY_TOLERANCE_PCT 3

static int memory_genconf(const HealthEnv *env, HealthGenconf *out) {
        _cleanup_free_ char *text = NULL;
        HealthResult res;
        uint64_t total = 0, mib;
        size_t len;
        int r;

        r = check_read(env, "memory", "/proc/meminfo", MEMINFO_MAX, &text, &len, &res);
        if (r < 0)
                return r;
        if (!text) /* the result says why */
                return streq(res.code, "memory-input-missing") ? -ENOENT : -EIO;
        if (strlen(text) != len)
                return -EBADMSG;
        r = meminfo_field(text, "MemTotal", &total);
        if (r < 0)
                return r;
        mib = total / 100 * (100 - MEMORY_TOLERANCE_PCT) / (UINT64_C(1) << 20);
        if (mib == 0)
                return 0;
        return health_genconf_add(
                out, "{name: %s, type: memory, min_total: %" PRIu64 "M}",
                health_genconf_name(out, "memory", NULL, (char[HEALTH_GENCONF_NAME_MAX + 1]){}), mib);
}
