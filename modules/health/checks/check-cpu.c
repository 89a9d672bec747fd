/* The `cpu` check: the node's CPU topology, as <root>/proc/cpuinfo says,
 * counted the way LBNL NHC's check_hw_cpuinfo counts it: sockets are the
 * distinct "physical id" values; cores are sockets times the "cpu cores"
 * of the last processor listed, threads sockets times its "siblings"; a
 * cpuinfo without "physical id" (arm64, many VMs) counts every processor
 * line as a socket, a core and a thread.  Each of `sockets`, `cores` and
 * `threads` given must equal the count, as in NHC.
 *
 * Where sunkd differs: NHC takes 1 socket, 1 core, 1 thread when cpuinfo
 * is missing, lists no processor, or gives "physical id" without "cpu
 * cores" (and 0 threads without "siblings"); sunkd judges no made-up
 * number: such a cpuinfo is UNKNOWN "cpu-input-bad" (missing:
 * "cpu-input-missing") for the counts it cannot make.  cpuinfo lists the
 * online CPUs only: a CPU taken offline counts as gone, as in NHC. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-sysfs.h"

#define CPUINFO "/proc/cpuinfo"
/* Distinct physical ids told apart; more is not a machine. */
#define CPU_SOCKETS_MAX 1024
#define CPU_COUNT_MAX 1000000

typedef struct CpuConf {
        HealthCheckCommon common;
        int64_t sockets, cores, threads;
} CpuConf;

static const sunkd_cfg_key cpu_keys[] = {
        HEALTH_COMMON_KEYS,
        { "sockets", SUNKD_CFG_INT, offsetof(CpuConf, sockets), 0, 1, CPU_SOCKETS_MAX },
        { "cores", SUNKD_CFG_INT, offsetof(CpuConf, cores), 0, 1, CPU_COUNT_MAX },
        { "threads", SUNKD_CFG_INT, offsetof(CpuConf, threads), 0, 1, CPU_COUNT_MAX },
};

/* What cpuinfo came to; 0 is "cannot be counted". */
typedef struct CpuCount {
        uint64_t sockets, cores, threads;
} CpuCount;

typedef struct CpuScan {
        uint64_t processors, ids[CPU_SOCKETS_MAX], n_ids, siblings, cpu_cores;
        bool have_siblings, have_cores, bad;
        char why[128];
} CpuScan;

static int cpu_validate(void *conf, char **ret_error) {
        const CpuConf *c = conf;

        if (c->sockets == 0 && c->cores == 0 && c->threads == 0)
                return check_invalid(ret_error, "sockets",
                                     "a cpu check needs sockets, cores, threads or several");
        if (c->cores > 0 && c->threads > 0 && c->threads < c->cores)
                return check_invalid(ret_error, "threads",
                                     "%" PRIi64 " threads are fewer than the %" PRIi64 " cores", c->threads,
                                     c->cores);
        return 0;
}

/* "name<spaces or tabs>: value" -> value, when the line's key is @key. */
static const char *field(const char *line, const char *key) {
        size_t n = strlen(key);
        const char *p;

        if (strncmp(line, key, n) != 0)
                return NULL;
        p = line + n + strspn(line + n, " \t");
        if (*p != ':')
                return NULL;
        return p + 1 + strspn(p + 1, " \t");
}

/* The first thing that does not read as the kernel writes it, kept. */
static void scan_bad(CpuScan *s, const char *key, const char *v) {
        if (!s->bad && key)
                snprintf(s->why, sizeof(s->why), "%s '%.32s' is not a number", key, v);
        else if (!s->bad)
                snprintf(s->why, sizeof(s->why), "more than %d physical ids", CPU_SOCKETS_MAX);
        s->bad = true;
}

/* A "physical id" counts once however many processors name it. */
static void add_socket(CpuScan *s, const char *v) {
        uint64_t n;

        if (check_parse_u64(v, &n) < 0) {
                scan_bad(s, "physical id", v);
                return;
        }
        for (uint64_t i = 0; i < s->n_ids; i++)
                if (s->ids[i] == n)
                        return;
        if (s->n_ids == CPU_SOCKETS_MAX)
                scan_bad(s, NULL, NULL);
        else
                s->ids[s->n_ids++] = n;
}

/* The per-socket counts NHC takes from the last processor listed. */
static const struct {
        const char *key;
        size_t value, have; /* offsets in CpuScan */
} cpu_counts[] = {
        { "siblings", offsetof(CpuScan, siblings), offsetof(CpuScan, have_siblings) },
        { "cpu cores", offsetof(CpuScan, cpu_cores), offsetof(CpuScan, have_cores) },
};

static void scan_line(CpuScan *s, const char *line) {
        const char *v;

        if (field(line, "processor")) {
                s->processors++;
                return;
        }
        if ((v = field(line, "physical id"))) {
                add_socket(s, v);
                return;
        }
        for (size_t i = 0; i < ELEMENTSOF(cpu_counts); i++) {
                uint64_t *value = (uint64_t *) ((char *) s + cpu_counts[i].value);

                if (!(v = field(line, cpu_counts[i].key)))
                        continue;
                if (check_parse_u64(v, value) < 0 || *value > CPU_COUNT_MAX)
                        scan_bad(s, cpu_counts[i].key, v);
                else
                        *(bool *) ((char *) s + cpu_counts[i].have) = true;
                return;
        }
}

/* NHC's counting of a scan; 0 for a count it would make up. */
static CpuCount count_of(const CpuScan *s) {
        if (s->n_ids == 0)
                return (CpuCount){ s->processors, s->processors, s->processors };
        if (!s->have_cores)
                return (CpuCount){ s->n_ids, 0, 0 };
        return (CpuCount){ s->n_ids, s->n_ids * s->cpu_cores,
                           s->have_siblings ? s->n_ids * s->siblings : 0 };
}

/* Reads cpuinfo into *ret.  1 with it counted; 0 with the result set. */
static int cpu_count(const HealthEnv *env, CpuCount *ret, HealthResult *res) {
        _cleanup_free_ CpuScan *s = calloc(1, sizeof(CpuScan));
        CheckLines l = CHECK_LINES_INIT;
        char file[CHECK_PATH_MAX], *line;
        size_t len;
        bool nul = false;
        int r;

        if (!s) {
                health_result_set(res, HEALTH_UNKNOWN, "out-of-memory", "out of memory");
                return -ENOMEM;
        }
        r = check_path(file, env, CPUINFO);
        if (r >= 0)
                r = check_lines_open(&l, file);
        while (r >= 0 && (r = check_lines_next(&l, &line, &len)) > 0) {
                nul = nul || strlen(line) != len;
                scan_line(s, line);
        }
        check_lines_close(&l);
        if (r == -ENOMEM) {
                health_result_set(res, HEALTH_UNKNOWN, "out-of-memory", "out of memory reading '%s'", file);
                return r;
        }
        if (r < 0)
                return check_input_error(res, "cpu", file, r);
        if (nul)
                return check_input_bad(res, "cpu", "'%s' holds a NUL byte", file);
        if (s->bad)
                return check_input_bad(res, "cpu", "'%s': %s", file, s->why);
        if (s->processors == 0)
                return check_input_bad(res, "cpu", "'%s' lists no processor", file);
        *ret = count_of(s);
        return 1;
}

typedef struct CpuRule {
        const char *what, *code;
        size_t conf, count;
} CpuRule;

static const CpuRule cpu_rules[] = {
        { "sockets", "cpu-sockets", offsetof(CpuConf, sockets), offsetof(CpuCount, sockets) },
        { "cores", "cpu-cores", offsetof(CpuConf, cores), offsetof(CpuCount, cores) },
        { "threads", "cpu-threads", offsetof(CpuConf, threads), offsetof(CpuCount, threads) },
};

static int cpu_run(const void *conf, const HealthEnv *env, HealthResult *ret) {
        const CpuConf *c = conf;
        CpuCount n = {};
        int r;

        r = cpu_count(env, &n, ret);
        if (r <= 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(cpu_rules); i++) {
                int64_t want = *(const int64_t *) ((const char *) c + cpu_rules[i].conf);
                uint64_t have = *(const uint64_t *) ((const char *) &n + cpu_rules[i].count);

                if (want == 0)
                        continue;
                if (have == 0)
                        return check_input_bad(
                                ret, "cpu", "'%s' gives no %s count (no \"%s\" line beside \"physical id\")",
                                CPUINFO, cpu_rules[i].what, i == 2 ? "siblings" : "cpu cores");
                if (have != (uint64_t) want) {
                        health_result_set(ret, HEALTH_FAIL, cpu_rules[i].code,
                                          "%" PRIu64 " CPU %s, want %" PRIi64, have, cpu_rules[i].what,
                                          want);
                        return 0;
                }
        }
        health_result_set(ret, HEALTH_PASS, "ok",
                          "%" PRIu64 " sockets, %" PRIu64 " cores, %" PRIu64 " threads", n.sockets, n.cores,
                          n.threads);
        return 0;
}

/* The counts this node gives, those it cannot make left out. */
static int cpu_genconf(const HealthEnv *env, HealthGenconf *out) {
        HealthResult res;
        CpuCount n = {};
        char cores[48] = "", threads[48] = "";
        int r;

        r = cpu_count(env, &n, &res);
        if (r < 0)
                return r;
        if (r == 0)
                return strstr(res.code, "-input-missing") ? 0 : -EBADMSG;
        if (n.cores > 0)
                snprintf(cores, sizeof(cores), ", cores: %" PRIu64, n.cores);
        /* fewer threads than cores is no machine: a baseline leaves out what validate refuses */
        if (n.threads > 0 && n.threads >= n.cores)
                snprintf(threads, sizeof(threads), ", threads: %" PRIu64, n.threads);
        return health_genconf_add(out, "{name: cpu, type: cpu, sockets: %" PRIu64 "%s%s}", n.sockets, cores,
                                  threads);
}

const HealthCheckType health_check_cpu = {
        .name = "cpu",
        .keys = cpu_keys,
        .n_keys = ELEMENTSOF(cpu_keys),
        .conf_size = sizeof(CpuConf),
        .validate = cpu_validate,
        .run = cpu_run,
        .genconf = cpu_genconf,
        .child = false,
};
