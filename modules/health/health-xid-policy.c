/* The XID policy: NVIDIA's catalogue as the default, the site's overrides
 * over it, parsed from modules.health.xid_policy with every error located. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-xid-policy.h"
#include "util/cleanup.h"
#include "util/macro.h"

static const char *const action_names[_HEALTH_XID_ACTION_MAX] = {
        [HEALTH_XID_IGNORE] = "ignore",
        [HEALTH_XID_RESET] = "reset",
        [HEALTH_XID_REBOOT] = "reboot",
        [HEALTH_XID_DRAIN] = "drain",
};

const char *health_xid_action_to_string(HealthXidAction a) {
        return a >= 0 && a < _HEALTH_XID_ACTION_MAX ? action_names[a] : "?";
}

int health_xid_action_from_string(const char *s) {
        for (int i = 0; s && i < _HEALTH_XID_ACTION_MAX; i++)
                if (streq(action_names[i], s))
                        return i;
        return -EINVAL;
}

/* NVIDIA's XID catalogue: the XIDs whose resolution is a GPU reset, the one
 * that needs a reboot, and those an application causes (or the cleanup after
 * a job killed for one), which never drain a node by themselves. */
static const struct {
        uint32_t xid;
        HealthXidAction action;
} catalogue[] = {
        { 13, HEALTH_XID_IGNORE }, { 31, HEALTH_XID_IGNORE }, { 43, HEALTH_XID_IGNORE },
        { 45, HEALTH_XID_IGNORE }, { 46, HEALTH_XID_RESET },  { 62, HEALTH_XID_RESET },
        { 64, HEALTH_XID_RESET },  { 79, HEALTH_XID_REBOOT }, { 95, HEALTH_XID_RESET },
        { 109, HEALTH_XID_RESET }, { 110, HEALTH_XID_RESET }, { 119, HEALTH_XID_RESET },
        { 120, HEALTH_XID_RESET }, { 136, HEALTH_XID_RESET }, { 140, HEALTH_XID_RESET },
        { 143, HEALTH_XID_RESET }, { 155, HEALTH_XID_RESET }, { 156, HEALTH_XID_RESET },
        { 158, HEALTH_XID_RESET },
};

void health_xid_policy_defaults(HealthXidPolicy *p) {
        p->fallback = HEALTH_XID_IGNORE;
        p->n_overrides = 0;
}

HealthXidRule health_xid_rule(const HealthXidPolicy *p, uint64_t xid) {
        HealthXidRule r = { .xid = (uint32_t) MIN(xid, (uint64_t) UINT32_MAX),
                            .count = 1,
                            .action = p->fallback };

        for (size_t i = 0; i < p->n_overrides; i++)
                if (p->overrides[i].xid == xid)
                        return p->overrides[i];
        for (size_t i = 0; i < ELEMENTSOF(catalogue); i++)
                if (catalogue[i].xid == xid)
                        r.action = catalogue[i].action;
        return r;
}

/* "file:line:column: key 'xid_policy': what" at @node. */
_printf_(4, 5) static int located(const sunkd_host_api *api, const sunkd_cfg *node, char **ret_error,
                                  const char *fmt, ...) {
        _cleanup_free_ char *where = NULL, *what = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (r < 0 || api->cfg_where(node, &where) < 0 ||
            asprintf(ret_error, "%s: key 'xid_policy': %s", where, what) < 0)
                return -ENOMEM;
        return -EINVAL;
}

/* A scalar YAML leaves empty: "key:", "key: ~", "key: null". */
static bool empty_scalar(const sunkd_host_api *api, const sunkd_cfg *node) {
        const char *v = api->cfg_scalar(node);

        return v && (!*v || streq(v, "~") || streq(v, "null"));
}

typedef struct OverrideConf {
        int64_t xid;
        int64_t count;
        uint64_t window_usec;
        char *action;
} OverrideConf;

static const sunkd_cfg_key override_keys[] = {
        { "xid", SUNKD_CFG_INT, offsetof(OverrideConf, xid), SUNKD_CFG_REQUIRED, 0, UINT32_MAX },
        { "count", SUNKD_CFG_INT, offsetof(OverrideConf, count), 0, 1, 1000000000 },
        { "window", SUNKD_CFG_DURATION, offsetof(OverrideConf, window_usec), 0, 0, 0 },
        { "action", SUNKD_CFG_STRING, offsetof(OverrideConf, action), SUNKD_CFG_REQUIRED, 0, 0 },
};

static int parse_override(const sunkd_host_api *api, const sunkd_cfg *item, const HealthXidPolicy *p,
                          HealthXidRule *ret, char **ret_error) {
        OverrideConf c = { .count = 1 };
        int r, a;

        r = api->cfg_parse(item, override_keys, ELEMENTSOF(override_keys), &c, ret_error);
        if (r < 0) {
                /* what it parsed before the error is freed too */
                api->cfg_clear(override_keys, ELEMENTSOF(override_keys), &c);
                return r;
        }
        a = health_xid_action_from_string(c.action);
        if (a < 0)
                r = located(api, api->cfg_get(item, "action"), ret_error,
                            "override of XID %" PRId64 ": action '%s': "
                            "ignore, reset, reboot or drain",
                            c.xid, c.action);
        else if (a == HEALTH_XID_DRAIN && c.window_usec == 0)
                r = located(api, item, ret_error, "override of XID %" PRId64 ": drain needs a window",
                            c.xid);
        for (size_t i = 0; r >= 0 && i < p->n_overrides; i++)
                if (p->overrides[i].xid == c.xid)
                        r = located(api, item, ret_error, "XID %" PRId64 " is overridden twice", c.xid);
        api->cfg_clear(override_keys, ELEMENTSOF(override_keys), &c);
        if (r < 0)
                return r;
        *ret = (HealthXidRule){ .xid = (uint32_t) c.xid,
                                .count = (uint64_t) c.count,
                                .window_usec = c.window_usec,
                                .action = (HealthXidAction) a };
        return 0;
}

static int parse_overrides(const sunkd_host_api *api, const sunkd_cfg *list, HealthXidPolicy *p,
                           char **ret_error) {
        const sunkd_cfg *item;
        const char *key = NULL;

        if (empty_scalar(api, list))
                return 0;
        if (api->cfg_scalar(list) || (api->cfg_child(list, 0, &key) && key))
                return located(api, list, ret_error, "overrides: a list of {xid, count, window, action}");
        for (size_t i = 0; (item = api->cfg_child(list, i, NULL)); i++) {
                int r;

                if (p->n_overrides == HEALTH_XID_OVERRIDES_MAX)
                        return located(api, item, ret_error, "overrides: more than %d",
                                       HEALTH_XID_OVERRIDES_MAX);
                r = parse_override(api, item, p, &p->overrides[p->n_overrides], ret_error);
                if (r < 0)
                        return r;
                p->n_overrides++;
        }
        return 0;
}

static int parse_into(const sunkd_host_api *api, const sunkd_cfg *node, HealthXidPolicy *p,
                      char **ret_error) {
        const sunkd_cfg *child;
        const char *key;

        if (!node || empty_scalar(api, node))
                return 0;
        if (api->cfg_scalar(node) || (api->cfg_child(node, 0, &key) && !key))
                return located(api, node, ret_error, "a mapping with 'default' and 'overrides'");
        for (size_t i = 0; (child = api->cfg_child(node, i, &key)); i++) {
                int r = 0, a;

                if (streq(key, "default")) {
                        a = health_xid_action_from_string(api->cfg_scalar(child));
                        if (a < 0 || a == HEALTH_XID_DRAIN)
                                r = located(api, child, ret_error, "default: ignore, reset or reboot");
                        else
                                p->fallback = (HealthXidAction) a;
                } else if (streq(key, "overrides"))
                        r = parse_overrides(api, child, p, ret_error);
                else
                        r = located(api, child, ret_error, "unknown key '%s'", key);
                if (r < 0)
                        return r;
        }
        return 0;
}

int health_xid_policy_parse(const sunkd_host_api *api, const sunkd_cfg *node, HealthXidPolicy *ret,
                            char **ret_error) {
        _cleanup_free_ HealthXidPolicy *p = malloc(sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        health_xid_policy_defaults(p);
        r = parse_into(api, node, p, ret_error);
        if (r < 0)
                return r;
        *ret = *p;
        return 0;
}
