/* The `memory` check: MemTotal (a DIMM lost at boot shows here) and
 * MemAvailable (what can be had without swapping) of <root>/proc/meminfo
 * against minimums.  A meminfo without the field asked for is UNKNOWN.
 *
 * With LBNL NHC's memory checks beside them, in their meaning:
 *   min_total/max_total          MemTotal             check_hw_physmem
 *   min_swap/max_swap            SwapTotal            check_hw_swap
 *   min_with_swap/max_with_swap  MemTotal+SwapTotal   check_hw_mem
 *   min_free                     MemFree+Buffers+Cached   check_hw_physmem_free
 *   min_swap_free                SwapFree             check_hw_swap_free
 *   min_free_with_swap           the two above summed check_hw_mem_free
 * and `tolerance` as NHC's third argument: a size, or a percentage of the
 * total found ("5%"), by which a total may fall short of its minimum or
 * pass its maximum.  One tolerance holds for each total limited here,
 * where NHC gives one per call.  A maximum of 0 is one ("max_swap: 0": no
 * swap), so the maximums are unset by default, not 0.  NHC takes 1 MiB of
 * RAM and none of swap when meminfo is missing; sunkd says UNKNOWN. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "util/time-util.h"

#include "check-util.h"

typedef struct MemoryConf {
        HealthCheckCommon common;
        uint64_t min_total;
        uint64_t min_available;
        uint64_t max_total;
        uint64_t min_swap, max_swap;
        uint64_t min_with_swap, max_with_swap;
        uint64_t min_free, min_swap_free, min_free_with_swap;
        char *tolerance;
        /* from validate: tolerance as bytes, or as a percentage */
        uint64_t tolerance_bytes;
        unsigned tolerance_pct;
} MemoryConf;

#define MEMORY_UNSET UINT64_MAX

static const sunkd_cfg_key memory_keys[] = {
        HEALTH_COMMON_KEYS,
        { "min_total", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_total), 0, 0, 0 },
        { "min_available", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_available), 0, 0, 0 },
        { "max_total", SUNKD_CFG_SIZE, offsetof(MemoryConf, max_total), 0, 0, 0 },
        { "min_swap", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_swap), 0, 0, 0 },
        { "max_swap", SUNKD_CFG_SIZE, offsetof(MemoryConf, max_swap), 0, 0, 0 },
        { "min_with_swap", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_with_swap), 0, 0, 0 },
        { "max_with_swap", SUNKD_CFG_SIZE, offsetof(MemoryConf, max_with_swap), 0, 0, 0 },
        { "min_free", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_free), 0, 0, 0 },
        { "min_swap_free", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_swap_free), 0, 0, 0 },
        { "min_free_with_swap", SUNKD_CFG_SIZE, offsetof(MemoryConf, min_free_with_swap), 0, 0, 0 },
        { "tolerance", SUNKD_CFG_STRING, offsetof(MemoryConf, tolerance), 0, 0, 0 },
};

/* A total limited below and above, NHC's way: in bounds when
 * total + tolerance >= min and total - tolerance <= max. */
typedef struct MemoryRange {
        const char *what; /* "MemTotal" */
        const char *fields[3];
        const char *min_key;
        size_t min, max; /* offsets in MemoryConf */
        const char *code_low, *code_high;
} MemoryRange;

/* The fields a value sums (NULL-terminated), and what a minimum of it is. */
typedef struct MemoryFloor {
        const char *what;
        const char *fields[4];
        size_t min;
        const char *code;
} MemoryFloor;

static const MemoryRange memory_ranges[] = {
        { "MemTotal",
          { "MemTotal" },
          "min_total",
          offsetof(MemoryConf, min_total),
          offsetof(MemoryConf, max_total),
          "memory-total-low",
          "memory-total-high" },
        { "SwapTotal",
          { "SwapTotal" },
          "min_swap",
          offsetof(MemoryConf, min_swap),
          offsetof(MemoryConf, max_swap),
          "memory-swap-low",
          "memory-swap-high" },
        { "MemTotal+SwapTotal",
          { "MemTotal", "SwapTotal" },
          "min_with_swap",
          offsetof(MemoryConf, min_with_swap),
          offsetof(MemoryConf, max_with_swap),
          "memory-with-swap-low",
          "memory-with-swap-high" },
};

static const MemoryFloor memory_floors[] = {
        { "MemAvailable", { "MemAvailable" }, offsetof(MemoryConf, min_available), "memory-available-low" },
        { "MemFree+Buffers+Cached",
          { "MemFree", "Buffers", "Cached" },
          offsetof(MemoryConf, min_free),
          "memory-free-low" },
        { "SwapFree", { "SwapFree" }, offsetof(MemoryConf, min_swap_free), "memory-swap-free-low" },
        { "MemFree+Buffers+Cached+SwapFree",
          { "MemFree", "Buffers", "Cached", "SwapFree" },
          offsetof(MemoryConf, min_free_with_swap),
          "memory-free-with-swap-low" },
};

#define CONF_U64(c, off) (*(const uint64_t *) ((const char *) (c) + (off)))

static void memory_defaults(void *conf) {
        MemoryConf *c = conf;

        c->max_total = c->max_swap = c->max_with_swap = MEMORY_UNSET;
}

#define MEMINFO_MAX (64 * 1024)

static bool memory_any(const MemoryConf *c) {
        for (size_t i = 0; i < ELEMENTSOF(memory_ranges); i++)
                if (CONF_U64(c, memory_ranges[i].min) > 0 ||
                    CONF_U64(c, memory_ranges[i].max) != MEMORY_UNSET)
                        return true;
        for (size_t i = 0; i < ELEMENTSOF(memory_floors); i++)
                if (CONF_U64(c, memory_floors[i].min) > 0)
                        return true;
        return false;
}

static int memory_validate(void *conf, char **ret_error) {
        MemoryConf *c = conf;
        char *end = NULL;

        if (!memory_any(c))
                return check_invalid(
                        ret_error, "min_total",
                        "a memory check needs min_total, min_available or both, or another of its "
                        "limits (max_total, min_swap, max_swap, min_with_swap, max_with_swap, "
                        "min_free, min_swap_free, min_free_with_swap)");
        for (size_t i = 0; i < ELEMENTSOF(memory_ranges); i++) {
                const MemoryRange *m = &memory_ranges[i];

                if (CONF_U64(c, m->max) != MEMORY_UNSET && CONF_U64(c, m->min) > CONF_U64(c, m->max))
                        return check_invalid(ret_error, m->min_key, "the minimum of %s is over its maximum",
                                             m->what);
        }
        if (!c->tolerance)
                return 0;
        if (c->tolerance[0] >= '0' && c->tolerance[0] <= '9' &&
            c->tolerance[strlen(c->tolerance) - 1] == '%') {
                unsigned long v;

                errno = 0;
                v = strtoul(c->tolerance, &end, 10);
                if (errno == 0 && *end == '%' && end[1] == 0 && v <= 100) {
                        c->tolerance_pct = (unsigned) v;
                        return 0;
                }
        } else if (parse_size(c->tolerance, &c->tolerance_bytes) >= 0)
                return 0;
        return check_invalid(ret_error, "tolerance",
                             "'%s' is neither a size (\"512M\") nor a percentage (\"5%%\")", c->tolerance);
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

/* The sum of @fields (NULL-terminated); on an error the result is set. */
static int sum_fields(const char *text, const char *file, const char *const *fields, size_t max,
                      uint64_t *ret, HealthResult *res) {
        uint64_t sum = 0;

        for (size_t i = 0; i < max && fields[i]; i++) {
                uint64_t v = 0;
                int r = field_or_result(text, file, fields[i], &v, res);

                if (r < 0)
                        return r;
                sum += v; /* each under 2^64 / 1024: four cannot wrap */
        }
        *ret = sum;
        return 0;
}

/* " (tolerance 5%)" or "" */
static const char *tolerance_note(const MemoryConf *c, char buf[static 64]) {
        if (!c->tolerance)
                return "";
        snprintf(buf, 64, " (tolerance %s)", c->tolerance);
        return buf;
}

/* Appends "@what @value" to the pass detail. */
static void note(char *pass, size_t size, const char *what, uint64_t v) {
        char have[32];
        size_t n = strlen(pass);

        snprintf(pass + n, size - n, "%s%s %s", n > 0 ? ", " : "", what, check_format_size(v, have));
}

/* 1 when a range failed (result set), 0 in bounds, -errno with the result set. */
static int judge_range(const MemoryConf *c, const MemoryRange *m, const char *text, const char *file,
                       char *pass, size_t size, HealthResult *ret) {
        uint64_t min = CONF_U64(c, m->min), max = CONF_U64(c, m->max), v, tol;
        char have[32], want[32], tn[64];
        int r;

        if (min == 0 && max == MEMORY_UNSET)
                return 0;
        r = sum_fields(text, file, m->fields, ELEMENTSOF(m->fields), &v, ret);
        if (r < 0)
                return r;
        tol = c->tolerance_pct > 0 ? v / 100 * c->tolerance_pct + v % 100 * c->tolerance_pct / 100
                                   : c->tolerance_bytes;
        if (min > 0 && (v > UINT64_MAX - tol ? UINT64_MAX : v + tol) < min)
                health_result_set(ret, HEALTH_FAIL, m->code_low, "%s %s, want at least %s%s", m->what,
                                  check_format_size(v, have), check_format_size(min, want),
                                  tolerance_note(c, tn));
        else if (max != MEMORY_UNSET && (v < tol ? 0 : v - tol) > max)
                health_result_set(ret, HEALTH_FAIL, m->code_high, "%s %s, want at most %s%s", m->what,
                                  check_format_size(v, have), check_format_size(max, want),
                                  tolerance_note(c, tn));
        else {
                note(pass, size, m->what, v);
                return 0;
        }
        return 1;
}

static int judge_floor(const MemoryConf *c, const MemoryFloor *f, const char *text, const char *file,
                       char *pass, size_t size, HealthResult *ret) {
        uint64_t min = CONF_U64(c, f->min), v;
        char have[32], want[32];
        int r;

        if (min == 0)
                return 0;
        r = sum_fields(text, file, f->fields, ELEMENTSOF(f->fields), &v, ret);
        if (r < 0)
                return r;
        if (v >= min) {
                note(pass, size, f->what, v);
                return 0;
        }
        health_result_set(ret, HEALTH_FAIL, f->code, "%s %s, want at least %s", f->what,
                          check_format_size(v, have), check_format_size(min, want));
        return 1;
}

static int memory_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const MemoryConf *c = conf;
        _cleanup_free_ char *text = NULL;
        char file[CHECK_PATH_MAX], pass[HEALTH_DETAIL_MAX] = "";
        size_t len;
        int r;

        r = check_read(env, "memory", "/proc/meminfo", MEMINFO_MAX, &text, &len, ret);
        if (r < 0 || !text)
                return r;
        (void) check_path(file, env, "/proc/meminfo");
        if (strlen(text) != len)
                return check_input_bad(ret, "memory", "'%s' holds a NUL byte", file);
        /* the order of old: MemTotal first, then MemAvailable */
        r = judge_range(c, &memory_ranges[0], text, file, pass, sizeof(pass), ret);
        for (size_t i = 0; r == 0 && i < ELEMENTSOF(memory_floors); i++)
                r = judge_floor(c, &memory_floors[i], text, file, pass, sizeof(pass), ret);
        for (size_t i = 1; r == 0 && i < ELEMENTSOF(memory_ranges); i++)
                r = judge_range(c, &memory_ranges[i], text, file, pass, sizeof(pass), ret);
        if (r == 0)
                health_result_set(ret, HEALTH_PASS, "ok", "%s", pass);
        return 0;
}

static int memory_genconf(const HealthEnv *env, HealthGenconf *out);

const HealthCheckType health_check_memory = {
        .name = "memory",
        .keys = memory_keys,
        .n_keys = ELEMENTSOF(memory_keys),
        .conf_size = sizeof(MemoryConf),
        .defaults = memory_defaults,
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
