/* The `load` check: the 1, 5 or 15 minute load average of
 * <root>/proc/loadavg over the CPUs online (<root>/sys/devices/system/cpu/
 * online; a hardware thread counts as one, as it does in the load average)
 * against `max_per_core`, a decimal such as "2.5".  Numbers are
 * read as thousandths, never through strtod(): a locale with a decimal
 * comma must not change what "2.5" means. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-util.h"

#define LOAD_MAX_PER_CORE_MILLI UINT64_C(1000000)
#define CPU_ID_MAX (1u << 20)

typedef struct LoadConf {
        HealthCheckCommon common;
        char *max_per_core;
        int64_t minutes;
        /* from validate */
        uint64_t max_milli;
} LoadConf;

static const sunkd_cfg_key load_keys[] = {
        HEALTH_COMMON_KEYS,
        { "max_per_core", SUNKD_CFG_STRING, offsetof(LoadConf, max_per_core), SUNKD_CFG_REQUIRED, 0, 0 },
        { "minutes", SUNKD_CFG_INT, offsetof(LoadConf, minutes), 0, 1, 15 },
};

static void load_defaults(void *conf) {
        ((LoadConf *) conf)->minutes = 5;
}

static int load_validate(void *conf, char **ret_error) {
        LoadConf *c = conf;

        if (check_parse_milli(c->max_per_core, NULL, &c->max_milli) < 0 || c->max_milli == 0 ||
            c->max_milli > LOAD_MAX_PER_CORE_MILLI)
                return check_invalid(ret_error, "max_per_core",
                                     "'%s' is not a load per core such as 2.5 (above 0, at most %" PRIu64
                                     ")",
                                     c->max_per_core, LOAD_MAX_PER_CORE_MILLI / 1000);
        if (c->minutes != 1 && c->minutes != 5 && c->minutes != 15)
                return check_invalid(ret_error, "minutes", "%" PRIi64 " is not 1, 5 or 15", c->minutes);
        return 0;
}

/* The CPUs a list such as "0-7,16-23\n" names; -EBADMSG for anything else. */
static int cpulist_count(const char *s, unsigned *ret) {
        unsigned n = 0;

        for (const char *p = s;;) {
                unsigned long a, b;
                char *end;

                if (*p < '0' || *p > '9')
                        return -EBADMSG;
                a = b = strtoul(p, &end, 10);
                p = end;
                if (*p == '-') {
                        if (p[1] < '0' || p[1] > '9')
                                return -EBADMSG;
                        b = strtoul(p + 1, &end, 10);
                        p = end;
                }
                if (a > b || b >= CPU_ID_MAX || n + (b - a + 1) > CPU_ID_MAX)
                        return -EBADMSG;
                n += (unsigned) (b - a + 1);
                if (*p == ',')
                        p++;
                else if ((*p == '\n' && p[1] == 0) || *p == 0)
                        break;
                else
                        return -EBADMSG;
        }
        *ret = n;
        return 0;
}

/* Field @i (0, 1, 2) of "0.52 0.58 0.59 1/467 12345\n" in thousandths. */
static int loadavg_field(const char *text, unsigned i, uint64_t *ret) {
        const char *p = text, *end;
        uint64_t v;

        for (unsigned f = 0; f <= i; f++) {
                if (check_parse_milli(p, &end, &v) < 0 || (*end != ' ' && !(f == 2 && *end == '\n')))
                        return -EBADMSG;
                p = end + 1;
        }
        *ret = v;
        return 0;
}

static int load_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const LoadConf *c = conf;
        _cleanup_free_ char *avg = NULL, *online = NULL;
        char file[CHECK_PATH_MAX], have[32], per[32], limit[32];
        uint64_t load;
        unsigned cpus;
        size_t len;
        int r;

        r = check_read(env, "load", "/proc/loadavg", 4096, &avg, &len, ret);
        if (r < 0 || !avg)
                return r;
        r = check_read(env, "load", "/sys/devices/system/cpu/online", 64 * 1024, &online, &len, ret);
        if (r < 0 || !online)
                return r;
        if (loadavg_field(avg, c->minutes == 1 ? 0 : c->minutes == 5 ? 1 : 2, &load) < 0) {
                (void) check_path(file, env, "/proc/loadavg");
                return check_input_bad(ret, "load", "'%s' does not read \"<1m> <5m> <15m> ...\"", file);
        }
        if (strlen(online) != len || cpulist_count(online, &cpus) < 0 || cpus == 0) {
                (void) check_path(file, env, "/sys/devices/system/cpu/online");
                return check_input_bad(ret, "load", "'%s' is not a CPU list such as 0-7,16-23", file);
        }
        check_format_milli(load, have);
        check_format_milli(load / cpus, per);
        if (load > c->max_milli * cpus)
                health_result_set(ret, HEALTH_FAIL, "load-high",
                                  "%" PRIi64 "-minute load %s is %s per CPU over %u CPUs, above %s",
                                  c->minutes, have, per, cpus, check_format_milli(c->max_milli, limit));
        else
                health_result_set(ret, HEALTH_PASS, "ok",
                                  "%" PRIi64 "-minute load %s is %s per CPU over %u CPUs", c->minutes, have,
                                  per, cpus);
        return 0;
}

const HealthCheckType health_check_load = {
        .name = "load",
        .keys = load_keys,
        .n_keys = ELEMENTSOF(load_keys),
        .conf_size = sizeof(LoadConf),
        .defaults = load_defaults,
        .validate = load_validate,
        .run = load_run,
        .child = false,
};
