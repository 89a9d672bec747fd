/* The `mce` check: machine-check exceptions the kernel has taken since
 * boot, the "MCE:" row of <root>/proc/interrupts summed over the CPUs
 * (x86), against `max_exceptions` (default 0).  A machine-check exception
 * is an uncorrected hardware error the node lived through (a recoverable
 * one: a poisoned page taken offline, a process killed).
 *
 * LBNL NHC's check_hw_mcelog asks the mcelog daemon (`mcelog --client`)
 * for each DIMM's errors in the last 24 hours, and passes when no mcelog
 * daemon answers.  sunkd talks to no mcelog: most distributions ship
 * rasdaemon instead, whose record is an SQLite database, and /dev/mcelog
 * is read destructively.  The kernel's own count is what is sound without
 * them; the corrected errors it does not count (those go only to the
 * log), and for memory the edac check counts both, per DIMM.  Where
 * mcelog's daemon runs, a `script` check running `mcelog --client` keeps
 * NHC's exact meaning.  A kernel without the row (not x86) is UNKNOWN
 * "mce-input-missing", never a pass that checked nothing. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/macro.h"

#include "check-sysfs.h"

#define INTERRUPTS "/proc/interrupts"

typedef struct MceConf {
        HealthCheckCommon common;
        int64_t max_exceptions;
} MceConf;

static const sunkd_cfg_key mce_keys[] = {
        HEALTH_COMMON_KEYS,
        { "max_exceptions", SUNKD_CFG_INT, offsetof(MceConf, max_exceptions), 0, 0, INT64_C(1000000000000) },
};

/* "MCE:  0  3  Machine check exceptions": 1 with the sum, 0 for another
 * row, -EBADMSG for an MCE row that does not read so. */
static int mce_row(const char *line, uint64_t *ret) {
        const char *p = line + strspn(line, " ");
        uint64_t sum = 0;
        unsigned cpus = 0;

        if (strncmp(p, "MCE:", 4) != 0)
                return 0;
        for (p += 4;;) {
                size_t d;
                uint64_t v = 0;

                p += strspn(p, " \t");
                d = strspn(p, "0123456789");
                if (d == 0 || (p[d] != ' ' && p[d] != '\t' && p[d] != 0))
                        break;
                if (d > 12)
                        return -EBADMSG;
                for (size_t i = 0; i < d; i++)
                        v = v * 10 + (uint64_t) (p[i] - '0');
                sum += v;
                cpus++;
                p += d;
        }
        if (cpus == 0)
                return -EBADMSG;
        *ret = sum;
        return 1;
}

/* The MCE row's sum: 1 with it, 0 with the result set. */
static int mce_count(const HealthEnv *env, uint64_t *ret, HealthResult *res) {
        CheckLines l = CHECK_LINES_INIT;
        char file[CHECK_PATH_MAX], *line;
        size_t len;
        int r, found = 0;

        r = check_path(file, env, INTERRUPTS);
        if (r >= 0)
                r = check_lines_open(&l, file);
        while (r >= 0 && found == 0 && (r = check_lines_next(&l, &line, &len)) > 0)
                found = strlen(line) != len ? -EBADMSG : mce_row(line, ret);
        check_lines_close(&l);
        if (r == -ENOMEM) {
                health_result_set(res, HEALTH_UNKNOWN, "out-of-memory", "out of memory reading '%s'", file);
                return r;
        }
        if (r < 0)
                return check_input_error(res, "mce", file, r);
        if (found < 0)
                return check_input_bad(res, "mce",
                                       "'%s': a line before or in the MCE row does not read "
                                       "\"MCE: <count per CPU> Machine check exceptions\"",
                                       file);
        if (found == 0 && l.overlong > 0)
                return check_input_bad(res, "mce", "'%s' has no MCE row (%u overlong lines skipped)", file,
                                       l.overlong);
        if (found == 0) {
                health_result_set(res, HEALTH_UNKNOWN, "mce-input-missing",
                                  "'%s' has no MCE row: this kernel counts no machine-check exceptions",
                                  file);
                return 0;
        }
        return 1;
}

static int mce_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const MceConf *c = conf;
        uint64_t sum = 0;
        int r;

        r = mce_count(env, &sum, ret);
        if (r <= 0)
                return r;
        if (sum > (uint64_t) c->max_exceptions)
                health_result_set(ret, HEALTH_FAIL, "mce-exceptions",
                                  "%" PRIu64 " machine-check exceptions since boot, at most %" PRIi64
                                  " allowed",
                                  sum, c->max_exceptions);
        else
                health_result_set(ret, HEALTH_PASS, "ok", "%" PRIu64 " machine-check exceptions since boot",
                                  sum);
        return 0;
}

/* Where the kernel counts them: no more than it has counted this boot. */
static int mce_genconf(const HealthEnv *env, HealthGenconf *out) {
        HealthResult res;
        uint64_t sum = 0;
        int r;

        r = mce_count(env, &sum, &res);
        if (r < 0)
                return r;
        if (r == 0)
                return strstr(res.code, "-input-missing") ? 0 : -EBADMSG;
        return health_genconf_add(out, "{name: mce, type: mce, max_exceptions: %" PRIu64 "}",
                                  MIN(sum, (uint64_t) INT64_C(1000000000000)));
}

const HealthCheckType health_check_mce = {
        .name = "mce",
        .keys = mce_keys,
        .n_keys = ELEMENTSOF(mce_keys),
        .conf_size = sizeof(MceConf),
        .run = mce_run,
        .genconf = mce_genconf,
        .child = false,
};
