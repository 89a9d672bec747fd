/* The memory policy (health-gpu-memory.h): a default per counter, the
 * site's entries over it, parsed from modules.health.memory_policy with
 * every error located. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-gpu-memory.h"
#include "util/cleanup.h"
#include "util/macro.h"

static const struct {
        const char *key, *words;
        HealthGpuMemoryRule fallback;
} counters[_HEALTH_GPU_MEMORY_COUNTER_MAX] = {
        [HEALTH_GPU_MEMORY_ECC_VOLATILE] = { "ecc_uncorrected_volatile",
                                             "uncorrectable ECC errors since the driver loaded",
                                             { HEALTH_GPU_MEMORY_DRAIN, 1 } },
        [HEALTH_GPU_MEMORY_ECC_AGGREGATE] = { "ecc_uncorrected_aggregate",
                                              "uncorrectable ECC errors over its life",
                                              { HEALTH_GPU_MEMORY_IGNORE, 1 } },
        [HEALTH_GPU_MEMORY_RETIRED_PENDING] = { "retired_pages_pending",
                                                "a page retirement waits for a GPU reset",
                                                { HEALTH_GPU_MEMORY_DRAIN, 1 } },
        [HEALTH_GPU_MEMORY_REMAPPED_UNCORRECTABLE] = { "remapped_rows_uncorrectable",
                                                       "rows remapped for uncorrectable errors",
                                                       { HEALTH_GPU_MEMORY_IGNORE, 1 } },
        [HEALTH_GPU_MEMORY_REMAP_PENDING] = { "remap_pending",
                                              "a row remapping waits for a GPU reset",
                                              { HEALTH_GPU_MEMORY_DRAIN, 1 } },
        [HEALTH_GPU_MEMORY_REMAP_FAILURE] = { "remap_failure",
                                              "a row remapping failed, the GPU needs service",
                                              { HEALTH_GPU_MEMORY_DRAIN, 1 } },
};

static const char *const action_names[_HEALTH_GPU_MEMORY_ACTION_MAX] = {
        [HEALTH_GPU_MEMORY_IGNORE] = "ignore",
        [HEALTH_GPU_MEMORY_DRAIN] = "drain",
};

const char *health_gpu_memory_counter_key(HealthGpuMemoryCounter c) {
        return c >= 0 && c < _HEALTH_GPU_MEMORY_COUNTER_MAX ? counters[c].key : "?";
}

const char *health_gpu_memory_counter_words(HealthGpuMemoryCounter c) {
        return c >= 0 && c < _HEALTH_GPU_MEMORY_COUNTER_MAX ? counters[c].words : "?";
}

void health_gpu_memory_policy_defaults(HealthGpuMemoryPolicy *p) {
        for (size_t i = 0; i < _HEALTH_GPU_MEMORY_COUNTER_MAX; i++)
                p->rules[i] = counters[i].fallback;
}

/* "file:line:column: key 'memory_policy': what" at @node. */
static int located(const sunkd_host_api *api, const sunkd_cfg *node, char **ret_error, const char *fmt, ...)
        _printf_(4, 5);
static int located(const sunkd_host_api *api, const sunkd_cfg *node, char **ret_error, const char *fmt,
                   ...) {
        _cleanup_free_ char *where = NULL, *what = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (r < 0 || api->cfg_where(node, &where) < 0 ||
            asprintf(ret_error, "%s: key 'memory_policy': %s", where, what) < 0)
                return -ENOMEM;
        return -EINVAL;
}

/* A scalar YAML leaves empty: "key:", "key: ~", "key: null". */
static bool empty_scalar(const sunkd_host_api *api, const sunkd_cfg *node) {
        const char *v = api->cfg_scalar(node);

        return v && (!*v || streq(v, "~") || streq(v, "null"));
}

static int counter_from_key(const char *key) {
        for (int i = 0; key && i < _HEALTH_GPU_MEMORY_COUNTER_MAX; i++)
                if (streq(counters[i].key, key))
                        return i;
        return -EINVAL;
}

typedef struct RuleConf {
        char *action;
        int64_t threshold;
} RuleConf;

static const sunkd_cfg_key rule_keys[] = {
        { "action", SUNKD_CFG_STRING, offsetof(RuleConf, action), SUNKD_CFG_REQUIRED, 0, 0 },
        { "threshold", SUNKD_CFG_INT, offsetof(RuleConf, threshold), 0, 1, 1000000000000LL },
};

static int parse_rule(const sunkd_host_api *api, const sunkd_cfg *item, const char *key,
                      HealthGpuMemoryRule *ret, char **ret_error) {
        RuleConf c = { .threshold = 1 };
        int r, a = -EINVAL;

        if (api->cfg_scalar(item))
                return located(api, item, ret_error, "%s: a mapping with 'action' and 'threshold'", key);
        r = api->cfg_parse(item, rule_keys, ELEMENTSOF(rule_keys), &c, ret_error);
        for (int i = 0; r >= 0 && c.action && i < _HEALTH_GPU_MEMORY_ACTION_MAX; i++)
                if (streq(action_names[i], c.action))
                        a = i;
        if (r >= 0 && a < 0)
                r = located(api, api->cfg_get(item, "action"), ret_error, "%s: action '%s': ignore or drain",
                            key, c.action);
        api->cfg_clear(rule_keys, ELEMENTSOF(rule_keys), &c);
        if (r < 0)
                return r;
        *ret = (HealthGpuMemoryRule){ .action = (HealthGpuMemoryAction) a,
                                      .threshold = (uint64_t) c.threshold };
        return 0;
}

int health_gpu_memory_policy_parse(const sunkd_host_api *api, const sunkd_cfg *node,
                                   HealthGpuMemoryPolicy *ret, char **ret_error) {
        HealthGpuMemoryPolicy p;
        const sunkd_cfg *child;
        const char *key;

        health_gpu_memory_policy_defaults(&p);
        if (node && !empty_scalar(api, node)) {
                if (api->cfg_scalar(node) || (api->cfg_child(node, 0, &key) && !key))
                        return located(api, node, ret_error,
                                       "a mapping of counters, each with 'action' and 'threshold'");
                for (size_t i = 0; (child = api->cfg_child(node, i, &key)); i++) {
                        int c = counter_from_key(key), r;

                        if (c < 0)
                                return located(
                                        api, child, ret_error,
                                        "unknown counter '%s' (ecc_uncorrected_volatile, "
                                        "ecc_uncorrected_aggregate, "
                                        "retired_pages_pending, remapped_rows_uncorrectable, remap_pending, "
                                        "remap_failure)",
                                        key);
                        r = parse_rule(api, child, key, &p.rules[c], ret_error);
                        if (r < 0)
                                return r;
                }
        }
        *ret = p;
        return 0;
}
