/* The libslurm transport: a round of health.signal in a forked child
 * (SUNKD_JOB_CHILD).  libslurm keeps process-wide state behind locks, so it
 * is only ever called in a child that does nothing else: a fork must never
 * find one of its locks held by a thread of the daemon.  The child runs
 * the whole round (load the node, maybe the fleet, maybe update) through
 * the rules of health-signal.c and hands back what came of it.  Which
 * fields update_node_msg_t and node_info_t have is configure's finding
 * (Slurm changed them between releases), not a guess from the version. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include "health-libslurm.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"

/* libslurm's error of the call that failed: slurm_get_errno() where there
 * is one (configure's finding: 22.05 has it, 24.11 not), else errno, which
 * libslurm sets. */
static int last_errno(void) {
#if HAVE_DECL_SLURM_GET_ERRNO
        return slurm_get_errno();
#else
        return errno;
#endif
}

/* The state as scontrol prints it: base state, then the flags we read. */
static char *state_string(uint32_t st) {
        static const char *const base[] = { "UNKNOWN", "DOWN",  "IDLE",  "ALLOCATED",
                                            "ERROR",   "MIXED", "FUTURE" };
        static const struct {
                uint32_t bit;
                const char *name;
        } flags[] = {
                { NODE_STATE_DRAIN, "DRAIN" },
                { NODE_STATE_COMPLETING, "COMPLETING" },
                { NODE_STATE_NO_RESPOND, "NOT_RESPONDING" },
                { NODE_STATE_POWERED_DOWN, "POWERED_DOWN" },
                { NODE_STATE_FAIL, "FAIL" },
        };
        uint32_t b = st & NODE_STATE_BASE;
        char buf[256];
        size_t n;

        n = (size_t) snprintf(buf, sizeof(buf), "%s", b < ELEMENTSOF(base) ? base[b] : "UNKNOWN");
        for (size_t i = 0; i < ELEMENTSOF(flags); i++)
                if (st & flags[i].bit)
                        n += (size_t) snprintf(buf + n, sizeof(buf) - n, "+%s", flags[i].name);
        return strdup(buf);
}

static int node_from_info(const node_info_t *ni, HealthNode *ret) {
        *ret = (HealthNode){
                .name = strdup(ni->name ?: ""),
                .state = state_string(ni->node_state),
                .reason = ni->reason && *ni->reason ? strdup(ni->reason) : NULL,
        };
#ifdef HAVE_NODE_INFO_T_PARTITIONS
        for (const char *p = ni->partitions ?: ""; *p;) {
                size_t w = strcspn(p, ",");
                if (w > 0) {
                        char *s = strndup(p, w);
                        if (!s || strv_push(&ret->partitions, s) < 0) {
                                free(s);
                                return -ENOMEM;
                        }
                }
                p += w;
                p += *p == ',';
        }
#endif
        return ret->name && ret->state ? 0 : -ENOMEM;
}

static void query_node(HealthSignal *sig, const char *name) {
        node_info_msg_t *msg = NULL;
        HealthNode node = {};

        if (slurm_load_node_single(&msg, (char *) name, SHOW_ALL) != SLURM_SUCCESS)
                return health_signal_failed(sig, -EIO, slurm_strerror(last_errno()));
        /* an unknown node is a reply with no record, not an error */
        if (msg->record_count == 0 || !msg->node_array[0].name)
                health_signal_node(sig, NULL);
        else if (node_from_info(&msg->node_array[0], &node) < 0)
                health_signal_failed(sig, -ENOMEM, NULL);
        else
                health_signal_node(sig, &node);
        health_node_clear(&node);
        slurm_free_node_info_msg(msg);
}

static void query_fleet(HealthSignal *sig, const char *name) {
        node_info_msg_t *msg = NULL;
        HealthNode *nodes;
        const HealthNode *self;
        size_t n = 0, total, ours;

        if (slurm_load_node(0, &msg, SHOW_ALL) != SLURM_SUCCESS)
                return health_signal_failed(sig, -EIO, slurm_strerror(last_errno()));
        nodes = calloc(MAX(msg->record_count, 1u), sizeof(*nodes));
        for (uint32_t i = 0; nodes && i < msg->record_count; i++)
                if (msg->node_array[i].name && node_from_info(&msg->node_array[i], &nodes[n++]) < 0)
                        break;
        slurm_free_node_info_msg(msg);
        self = nodes ? health_nodes_find(nodes, n, name) : NULL;
        if (!self)
                health_signal_failed(sig, -EBADMSG, "slurmctld's node list lacks this node");
        else {
                health_signal_fleet_count(nodes, n, self, sig->fleet_prefix, &total, &ours);
                health_signal_fleet(sig, total, ours);
        }
        health_nodes_free(nodes, n);
}

static void update(HealthSignal *sig, const char *name) {
        update_node_msg_t u;
        int r = 0, e;

        slurm_init_update_node_msg(&u);
        u.node_names = (char *) name;
        if (sig->step == HEALTH_STEP_DRAIN) {
                u.node_state = NODE_STATE_DRAIN;
                u.reason = sig->reason;
#ifdef HAVE_UPDATE_NODE_MSG_T_REASON_UID
                u.reason_uid = getuid();
#endif
        } else
                u.node_state = NODE_RESUME;
        if (slurm_update_node(&u) != SLURM_SUCCESS) {
                e = last_errno();
                /* resuming a node that is not drained: resumed already */
                if (!(sig->step == HEALTH_STEP_RESUME && e == ESLURM_INVALID_NODE_STATE))
                        r = -EIO;
                return health_signal_updated(sig, r, slurm_strerror(e));
        }
        health_signal_updated(sig, 0, NULL);
}

/* Slurm's plugins (auth/munge, hash/k12) find libslurm's symbols in the
 * global scope, where a program linked with -lslurm has them; sunkd loads
 * this module RTLD_LOCAL, so this child makes libslurm global first. */
static int libslurm_global(void) {
        Dl_info info;

        if (!dladdr((void *) slurm_init, &info) || !info.dli_fname)
                return -ENOENT;
        return dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) ? 0 : -ELIBACC;
}

void libslurm_round(HealthSignal *sig, const char *slurm_conf, const char *node_name) {
        if (libslurm_global() < 0)
                return health_signal_failed(sig, -ELIBACC,
                                            "cannot make libslurm's symbols visible to its plugins");
        slurm_init(slurm_conf);
        sig->step = HEALTH_STEP_QUERY_NODE;
        while (sig->step != HEALTH_STEP_DONE)
                switch (sig->step) {
                case HEALTH_STEP_QUERY_NODE:
                        query_node(sig, node_name);
                        break;
                case HEALTH_STEP_QUERY_FLEET:
                        query_fleet(sig, node_name);
                        break;
                case HEALTH_STEP_DRAIN:
                case HEALTH_STEP_RESUME:
                        update(sig, node_name);
                        break;
                case HEALTH_STEP_REBOOT: /* refused at the config: no reboot in libslurm's API */
                        health_signal_updated(sig, -EOPNOTSUPP, "libslurm's API has no node reboot");
                        break;
                case HEALTH_STEP_DONE:
                        break;
                }
        slurm_fini();
}
