/* The XID policy: what an XID error on a GPU does to the node.  The only one
 * in sunkd (gres observes XIDs, health judges them), from
 * modules.health.xid_policy:
 *
 *   xid_policy:
 *     default: ignore          # an XID neither the catalogue nor an override names
 *     overrides:
 *       - { xid: 31, count: 10, window: 1h, action: drain }
 *       - { xid: 48, action: reset }
 *
 * Actions: `ignore` (never drains by itself), `reset` (drains until the GPU
 * is reset), `reboot` (until the node reboots), `drain` (while `count` of
 * them fall within `window`).  A rule acts once `count` (default 1) of the
 * XID on one GPU fall within `window` (default 0: any time in this boot).
 *
 * Without an override, NVIDIA's XID catalogue decides: the XIDs it resolves
 * with a GPU reset (46, 62, 64, 95, 109, 110, 119, 120, 136, 140, 143, 155,
 * 156, 158) reset, 79 (fallen off the bus) reboot, and 13, 31, 43, 45 (an
 * application's fault, and the cleanup after a killed job) ignore. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sunkd/module.h"

typedef enum HealthXidAction {
        HEALTH_XID_IGNORE,
        HEALTH_XID_RESET,
        HEALTH_XID_REBOOT,
        HEALTH_XID_DRAIN,
        _HEALTH_XID_ACTION_MAX,
} HealthXidAction;

#define HEALTH_XID_OVERRIDES_MAX 256

typedef struct HealthXidRule {
        uint32_t xid;
        uint64_t count;       /* >= 1 */
        uint64_t window_usec; /* 0: any time in this boot */
        HealthXidAction action;
} HealthXidRule;

typedef struct HealthXidPolicy {
        HealthXidAction fallback; /* `default` */
        HealthXidRule overrides[HEALTH_XID_OVERRIDES_MAX];
        size_t n_overrides;
} HealthXidPolicy;

const char *health_xid_action_to_string(HealthXidAction a);
int health_xid_action_from_string(const char *s); /* -EINVAL for anything else */

/* health_xid_policy_parse() - @node (the value of xid_policy; NULL: the
 * defaults only) into @ret, through the host's config functions.  On
 * -EINVAL, *ret_error is "file:line:column: key 'xid_policy...': reason"
 * (malloc'd) and @ret is left as it was; -ENOMEM. */
int health_xid_policy_parse(const sunkd_host_api *api, const sunkd_cfg *node, HealthXidPolicy *ret,
                            char **ret_error);

/* health_xid_policy_defaults() - the catalogue's policy, no overrides. */
void health_xid_policy_defaults(HealthXidPolicy *p);

/* health_xid_rule() - the rule for @xid: its override, else the
 * catalogue's, else `default` with count 1 and no window. */
HealthXidRule health_xid_rule(const HealthXidPolicy *p, uint64_t xid);
