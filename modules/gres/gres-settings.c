/* The module's section of sunkd.yaml (not gres.conf: that is gres-conf.c):
 * its keys, their check, and a reload that keeps what the new section does
 * not change. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gres-conf.h"
#include "gres-state.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/macro.h"

static const sunkd_cfg_key conf_keys[] = {
        { "backend", SUNKD_CFG_STRING, offsetof(Conf, backend), 0, 0, 0 },
        { "nvml_library", SUNKD_CFG_PATH, offsetof(Conf, nvml_library), 0, 0, 0 },
        { "root", SUNKD_CFG_PATH, offsetof(Conf, root), 0, 0, 0 },
        { "interval", SUNKD_CFG_DURATION, offsetof(Conf, interval_usec), 0, 0, 0 },
        { "timeout", SUNKD_CFG_DURATION, offsetof(Conf, timeout_usec), 0, 0, 0 },
        { "gres_conf", SUNKD_CFG_PATH, offsetof(Conf, gres_conf), SUNKD_CFG_WRITE_PATH, 0, 0 },
        { "type_alias", SUNKD_CFG_MAP, offsetof(Conf, type_alias), 0, 0, 0 },
        { "slurm_conf", SUNKD_CFG_PATH, offsetof(Conf, slurm_conf), 0, 0, 0 },
        { "node_name", SUNKD_CFG_STRING, offsetof(Conf, node_name), 0, 0, 0 },
        { "xid_events", SUNKD_CFG_BOOL, offsetof(Conf, xid_events), 0, 0, 0 },
        { "xid_window", SUNKD_CFG_DURATION, offsetof(Conf, xid_window_usec), 0, 0, 0 },
        { "kmsg", SUNKD_CFG_PATH, offsetof(Conf, kmsg), 0, 0, 0 },
        { "xid_hold", SUNKD_CFG_DURATION, offsetof(Conf, xid_hold_usec), 0, 0, 0 },
        { "xid_critical", SUNKD_CFG_LIST, offsetof(Conf, xid_critical), 0, 0, 0 },
};
#define N_KEYS (sizeof(conf_keys) / sizeof(conf_keys[0]))

void gres_settings_clear(State *s) {
        s->ctx->api->cfg_clear(conf_keys, N_KEYS, &s->conf);
        for (size_t i = 0; i < s->n_aliases; i++) {
                free((char *) s->aliases[i].from);
                free((char *) s->aliases[i].to);
        }
        s->n_aliases = 0;
}

static int conf_error(sunkd_ctx *c, const sunkd_cfg *node, const char *what) {
        _cleanup_free_ char *where = NULL;

        (void) c->api->cfg_where(node, &where);
        return sunkd_log_error_errno(c, -EINVAL, "%s: %s", where ?: "sunkd.yaml", what);
}

static int parse_aliases(State *s) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *child;
        const char *key;

        for (size_t i = 0; (child = api->cfg_child(s->conf.type_alias, i, &key)); i++) {
                const char *to = api->cfg_scalar(child);
                _cleanup_free_ char *from = NULL;

                if (!key || !to || !*to || strpbrk(to, ",:= \t\n"))
                        return conf_error(s->ctx, child,
                                          "key 'type_alias': a GPU type and a short name without ',:= '");
                if (s->n_aliases >= ALIASES_MAX)
                        return conf_error(s->ctx, child, "key 'type_alias': more than 64 entries");
                from = gres_type_normalise(key);
                s->aliases[s->n_aliases].from = TAKE_PTR(from);
                s->aliases[s->n_aliases].to = strdup(to);
                if (!s->aliases[s->n_aliases].from || !s->aliases[s->n_aliases].to)
                        return -ENOMEM;
                s->n_aliases++;
        }
        return 0;
}

/* The XID policy is the health module's: gres's keys for it are kept only
 * to say so, where they are set, instead of failing a configuration that
 * worked before.  Their values are still parsed as they were, and unused. */
static void warn_moved(sunkd_ctx *c, const sunkd_cfg *cfg) {
        static const char *const moved[] = { "xid_critical", "xid_hold" };

        for (size_t i = 0; i < ELEMENTSOF(moved); i++) {
                const sunkd_cfg *node = c->api->cfg_get(cfg, moved[i]);
                _cleanup_free_ char *where = NULL;

                if (!node)
                        continue;
                (void) c->api->cfg_where(node, &where);
                sunkd_log_warning(
                        c,
                        "%s: key '%s' is ignored: gres no longer judges XID errors; the health module "
                        "does, as modules.health.xid_policy says (see sunkd.yaml(5)).",
                        where ?: "sunkd.yaml", moved[i]);
        }
}

/* The kernel log under the root, unless the section names another (a stand-in). */
static int default_kmsg(State *s) {
        const char *root = s->conf.root && strcmp(s->conf.root, "/") != 0 ? s->conf.root : "";

        if (s->conf.kmsg)
                return 0;
        return asprintf(&s->conf.kmsg, "%s/dev/kmsg", root) < 0 ? (s->conf.kmsg = NULL, -ENOMEM) : 0;
}

/* Past the first error, to the last: one round shows every one.  Only
 * running out of memory stops. */
int gres_settings_load(sunkd_ctx *c, const sunkd_cfg *cfg, State *s) {
        _cleanup_free_ char *error = NULL;
        char host[256];
        int first, r;

        s->ctx = c;
        s->conf = (Conf){ .interval_usec = 5 * 60 * SUNKD_USEC_PER_SEC,
                          .timeout_usec = 30 * SUNKD_USEC_PER_SEC,
                          .xid_events = true,
                          .xid_window_usec = 5 * 60 * SUNKD_USEC_PER_SEC,
                          .xid_hold_usec = 60 * 60 * SUNKD_USEC_PER_SEC };
        first = c->api->cfg_parse(cfg, conf_keys, N_KEYS, &s->conf, &error);
        if (first < 0)
                (void) sunkd_log_error_errno(c, first, "%s", error ?: "invalid configuration");
        if (first == -ENOMEM)
                return first;
        if (!s->conf.backend || strcmp(s->conf.backend, "auto") == 0)
                s->backend = BACKEND_AUTO;
        else if (strcmp(s->conf.backend, "nvml") == 0)
                s->backend = BACKEND_NVML;
        else if (strcmp(s->conf.backend, "proc") == 0)
                s->backend = BACKEND_PROC;
        else {
                r = conf_error(c, c->api->cfg_get(cfg, "backend"), "key 'backend': auto, nvml or proc");
                first = first ?: r;
        }
        if (s->conf.interval_usec < SUNKD_USEC_PER_SEC || s->conf.timeout_usec < SUNKD_USEC_PER_SEC) {
                r = conf_error(c, cfg, "keys 'interval' and 'timeout': at least 1s");
                first = first ?: r;
        }
        /* nvmlEventSetWait_v2 takes the window in milliseconds as an unsigned int */
        if (s->conf.xid_window_usec < SUNKD_USEC_PER_SEC ||
            s->conf.xid_window_usec > 24 * 3600 * SUNKD_USEC_PER_SEC) {
                r = conf_error(c, c->api->cfg_get(cfg, "xid_window"), "key 'xid_window': from 1s to 1d");
                first = first ?: r;
        }
        r = default_kmsg(s);
        if (r < 0)
                return r;
        if (!s->conf.slurm_conf && !(s->conf.slurm_conf = strdup(SUNKD_SYSCONFDIR "/slurm/slurm.conf")))
                return -ENOMEM;
        if (!s->conf.node_name) {
                if (gethostname(host, sizeof(host)) < 0)
                        return sunkd_log_error_errno(c, -errno, "Failed to get the host name: %m");
                host[sizeof(host) - 1] = '\0';
                host[strcspn(host, ".")] = '\0'; /* Slurm's NodeName is the short name */
                if (!(s->conf.node_name = strdup(host)))
                        return -ENOMEM;
        }
        r = parse_aliases(s);
        s->conf.type_alias = NULL; /* borrowed: gone after init */
        return first ?: r;
}

/* A State that holds a section and nothing else: the one a check reads,
 * and the old or new settings of a reload. */
static void settings_free(State *s) {
        gres_settings_clear(s);
        free(s);
}

int gres_check(sunkd_ctx *c, const sunkd_cfg *cfg) {
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        r = gres_settings_load(c, cfg, s);
        settings_free(s);
        /* the host checks each section before it starts or reloads the
         * module, and for --check-config: said once each time */
        if (r >= 0)
                warn_moved(c, cfg);
        return r;
}

static void swap_conf(State *a, State *b) {
        Conf conf = a->conf;
        GresTypeAlias aliases[ALIASES_MAX];
        size_t n_aliases = a->n_aliases;
        Backend backend = a->backend;

        a->conf = b->conf;
        b->conf = conf;
        memcpy(aliases, a->aliases, sizeof(aliases));
        memcpy(a->aliases, b->aliases, sizeof(aliases));
        memcpy(b->aliases, aliases, sizeof(aliases));
        a->n_aliases = b->n_aliases;
        b->n_aliases = n_aliases;
        a->backend = b->backend;
        b->backend = backend;
}

/* Whether what discovery finds or how it shows it may differ under @n. */
static bool discovery_changed(const State *s, const State *n) {
        bool aliases = s->n_aliases != n->n_aliases;

        for (size_t i = 0; !aliases && i < s->n_aliases; i++)
                aliases = !streq(s->aliases[i].from, n->aliases[i].from) ||
                          !streq(s->aliases[i].to, n->aliases[i].to);
        return aliases || s->backend != n->backend ||
               !streq_ptr(s->conf.nvml_library, n->conf.nvml_library) ||
               !streq_ptr(s->conf.root, n->conf.root) || !streq_ptr(s->conf.gres_conf, n->conf.gres_conf) ||
               !streq_ptr(s->conf.slurm_conf, n->conf.slurm_conf) ||
               !streq_ptr(s->conf.node_name, n->conf.node_name);
}

/* The new section in place: what discovery found, the fact, the XID log,
 * the check and the calls waiting stay; new timing goes to the jobs,
 * anything that changes what discovery finds or writes to a discovery
 * started now.  Turning the XID watch on or off, or reading another kernel
 * log, adds or removes a job: a restart (the XID log is in the state
 * directory, so it stays too). */
int gres_reload(void *state, const sunkd_cfg *cfg) {
        State *s = state, *n = calloc(1, sizeof(*n));
        bool rediscover;
        int r;

        if (!n)
                return -ENOMEM;
        r = gres_settings_load(s->ctx, cfg, n);
        if (r >= 0 && (gres_watches_xids(n) != gres_watches_xids(s) ||
                       gres_reads_kmsg(n) != gres_reads_kmsg(s) || !streq(n->conf.kmsg, s->conf.kmsg))) {
                settings_free(n);
                return SUNKD_RELOAD_RESTART;
        }
        if (r >= 0) {
                const sunkd_job_spec d = gres_discover_spec(n), e = gres_events_spec(n),
                                     k = gres_kmsg_spec(n);
                r = s->ctx->api->job_update(s->job, &d);
                if (r >= 0 && s->events_job)
                        r = s->ctx->api->job_update(s->events_job, &e);
                if (r >= 0 && s->kmsg_job)
                        r = s->ctx->api->job_update(s->kmsg_job, &k);
        }
        if (r < 0) {
                settings_free(n);
                return r;
        }
        rediscover = discovery_changed(s, n);
        if (s->backend != n->backend || !streq_ptr(s->conf.nvml_library, n->conf.nvml_library))
                s->use_proc = false; /* another NVML may answer */
        /* The old settings go to @n, and are freed with it. */
        swap_conf(s, n);
        settings_free(n);
        if (rediscover)
                (void) s->ctx->api->job_trigger(s->job, "configuration changed");
        return 0;
}
