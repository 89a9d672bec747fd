/* gres: the node's GPUs, as Slurm wants them described.
 *
 * One job, gres.discover, runs its work in a forked child (SUNKD_JOB_CHILD):
 * NVML, loaded with dlopen(), may hang in the driver or crash, and a child
 * can be killed at the timeout where a thread cannot.  The child discovers
 * (NVML, else /proc and /sys), renders gres.conf and the Gres= value, writes
 * gres_conf: when its content changed, reads this node's Gres= from
 * slurm.conf, and hands all of it back as JSON.  `done`, on the loop, keeps
 * it for io.sunkd.Gres.List, logs GPUs lost or added, compares with
 * slurm.conf, and publishes the fact gres.gpus for the health module.
 * A List call that comes before the first result waits for it (gres-wait.h).
 *
 * With backend auto, an NVML that fails is logged and /proc is used; one
 * that hangs past the timeout makes the next run (started at once) use /proc.
 *
 * A second job, gres.events, watches for XID errors through NVML's event
 * API, also in a child: one window at a time (xid_window), ended early by
 * the first event so it is logged at once, the next window 100 ms later.
 * NVML only delivers what happens while a set is registered, so an XID in
 * the gap between two windows is missed; the gap is the child's start and
 * nvmlInit.  The events are kept in a bounded log (gres-xid.h), saved by
 * the child in the state directory so a restart or reload keeps them, and
 * laid over each GPU's health where the List, the fact and the metrics
 * show it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "gres-check.h"
#include "gres-conf.h"
#include "gres-nvml.h"
#include "gres-proc.h"
#include "gres-topo.h"
#include "gres-wait.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

#define ALIASES_MAX 64
#define GRES_CONF_MAX (1024 * 1024)
#define XID_RUN_MAX 64          /* events one window hands back; a storm takes several */
#define XID_FIRST_WINDOW_USEC ((uint64_t) SUNKD_USEC_PER_SEC)
#define XID_LOGGED_PER_RUN 8    /* each logged up to this, then one line for the rest */
#define XID_FILE "xid-events.json"
#define XID_FILE_MAX (256 * 1024)
#define LIST_WAITING_MAX 64     /* io.sunkd.Gres.List calls waiting for the first discovery */

typedef struct Conf {
        char *backend;
        char *nvml_library;
        char *root;
        uint64_t interval_usec;
        uint64_t timeout_usec;
        char *gres_conf;
        const sunkd_cfg *type_alias; /* borrowed during init only */
        char *slurm_conf;
        char *node_name;
        bool xid_events;
        uint64_t xid_window_usec;
        uint64_t xid_hold_usec;
        char **xid_critical;
} Conf;

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
        { "xid_hold", SUNKD_CFG_DURATION, offsetof(Conf, xid_hold_usec), 0, 0, 0 },
        { "xid_critical", SUNKD_CFG_LIST, offsetof(Conf, xid_critical), 0, 0, 0 },
};
#define N_KEYS (sizeof(conf_keys) / sizeof(conf_keys[0]))

typedef enum Backend { BACKEND_AUTO, BACKEND_NVML, BACKEND_PROC } Backend;

typedef struct Known {
        char *type, *uuid, *bus_id;
} Known;

typedef struct State {
        sunkd_ctx *ctx;
        Conf conf;
        Backend backend;
        GresTypeAlias aliases[ALIASES_MAX];
        size_t n_aliases;
        sunkd_job *job;
        bool use_proc;          /* NVML hung in the last run */
        bool topology_warned;   /* the CPU topology could not be read, and that was logged */
        char *block_error;      /* the GPUs' NVLink domains disagree: logged when it changes */
        json_object *last;      /* the last discovery's result */
        uint64_t last_usec;
        GresWaitList waiting;   /* List calls that came before there was a result */
        char *unavailable;      /* why there is none although a discovery has ended; NULL: the first is to come */
        Known *known;           /* the GPUs of the discovery that found the most */
        size_t n_known;
        int check;              /* 1 match, 0 mismatch, -1 unknown */
        char *check_message;
        uint64_t runs, failures, changes;
        sunkd_metric *m_gpus, *m_memory, *m_failures, *m_changes, *m_check;
        sunkd_metric *m_healthy, *m_ecc, *m_recovery;
        /* XID events */
        sunkd_job *events_job;
        GresXidLog *xids;
        char *xid_path;         /* where the log is kept; NULL without a state directory */
        uint64_t critical[GRES_XID_CRITICAL_MAX];
        size_t n_critical;
        size_t xid_active;      /* critical events within the hold, as last shown */
        int watching;           /* 1 watching, 0 not (watch_error says why), -1 not yet known */
        char *watch_error;
        unsigned xid_watched;
        json_object *xid_unwatched;
        sunkd_metric *m_xid, *m_last_xid;
} State;

/* ---- The child ---------------------------------------------------------- */

static char *gpu_type(const State *s, const char *name) {
        char *t = gres_type_normalise(name ?: "");

        for (size_t i = 0; t && i < s->n_aliases; i++)
                if (strcmp(t, s->aliases[i].from) == 0) {
                        free(t);
                        return strdup(s->aliases[i].to);
                }
        return t;
}

static json_object *gpu_json(const State *s, const GresGpu *g) {
        _cleanup_free_ char *type = gpu_type(s, g->name), *file = NULL;
        json_object *o = json_object_new_object();
        size_t links = 0;

        if (!o || !type || (g->files ? !(file = strdup(g->files)) : asprintf(&file, "/dev/nvidia%u", g->minor) < 0)) {
                json_object_put(o);
                return NULL;
        }
        for (; g->peers && g->peers[links]; links++)
                ;
        json_object_object_add(o, "index", json_object_new_int64(g->index));
        json_object_object_add(o, "minor", json_object_new_int64(g->minor));
        json_object_object_add(o, "name", json_object_new_string(g->name ?: ""));
        json_object_object_add(o, "type", json_object_new_string(type));
        json_object_object_add(o, "uuid", json_object_new_string(g->uuid ?: ""));
        json_object_object_add(o, "bus_id", json_object_new_string(g->bus_id ?: ""));
        json_object_object_add(o, "memory", json_object_new_int64((int64_t) g->memory));
        json_object_object_add(o, "file", json_object_new_string(file));
        if (g->cpus)
                json_object_object_add(o, "cpus", json_object_new_string(g->cpus));
        if (g->cores)
                json_object_object_add(o, "cores", json_object_new_string(g->cores));
        json_object_object_add(o, "nvlinks", json_object_new_int64((int64_t) links));
        if (g->mig)
                json_object_object_add(o, "mig", json_object_new_int64(g->mig - 1));
        if (g->fabric) {
                json_object_object_add(o, "fabric", json_object_new_string(g->fabric));
                json_object_object_add(o, "clique", json_object_new_int64(g->clique));
        }
        if (g->health.read)
                json_object_object_add(o, "health", gres_health_json(&g->health));
        return o;
}

/* gres_conf: written only when its content changes. */
static void write_gres_conf(const char *path, const char *text, json_object *out) {
        _cleanup_free_ char *old = NULL;
        size_t len;
        int r;

        r = fileio_read(path, GRES_CONF_MAX, &old, &len);
        if (r >= 0 && len == strlen(text) && memcmp(old, text, len) == 0) {
                json_object_object_add(out, "gres_conf_written", json_object_new_boolean(false));
                return;
        }
        r = fileio_write_atomic(path, text, strlen(text), 0644, (uid_t) -1, (gid_t) -1);
        if (r < 0) {
                json_object_object_add(out, "gres_conf_error", json_object_new_string(strerror(-r)));
                return;
        }
        json_object_object_add(out, "gres_conf_written", json_object_new_boolean(true));
}

static bool printable(const char *t) {
        for (; *t; t++)
                if (*t < 0x20 || *t >= 0x7f)
                        return false;
        return true;
}

static void read_slurm_conf(const State *s, json_object *out) {
        _cleanup_free_ char *gres = NULL, *error = NULL;
        int r;

        r = gres_slurm_conf_node_gres(s->conf.slurm_conf, s->conf.node_name, &gres, &error);
        /* It reaches the answers and the log, which take UTF-8 only; a Gres= is ASCII. */
        if (r >= 0 && gres && !printable(gres)) {
                r = -EBADMSG;
                if (asprintf(&error, "%s: the Gres= of %s has bytes that are not printable ASCII",
                             s->conf.slurm_conf, s->conf.node_name) < 0)
                        error = NULL;
        }
        if (r < 0)
                json_object_object_add(out, "configured_error",
                                       json_object_new_string(error ?: strerror(-r)));
        else
                json_object_object_add(out, "configured", json_object_new_string(gres ?: ""));
}

static int discover(const State *s, bool use_proc, json_object *out, GresGpu **g, size_t *n) {
        _cleanup_free_ char *error = NULL;
        int r;

        if (s->backend != BACKEND_PROC && !use_proc) {
                r = gres_nvml_discover(s->conf.nvml_library, s->conf.root ?: "/", g, n, &error);
                if (r >= 0) {
                        json_object_object_add(out, "source", json_object_new_string("nvml"));
                        return 0;
                }
                json_object_object_add(out, "nvml_error", json_object_new_string(error ?: strerror(-r)));
                if (s->backend == BACKEND_NVML)
                        return r;
        }
        r = gres_proc_discover(s->conf.root ?: "/", g, n);
        if (r < 0) {
                json_object_object_add(out, "proc_error", json_object_new_string(strerror(-r)));
                return r;
        }
        json_object_object_add(out, "source", json_object_new_string("proc"));
        return 0;
}

/* The topology/block line of a node in a multi-node NVLink domain, or why there is none. */
static int block_json(const State *s, const GresGpu *g, size_t n, json_object *out) {
        _cleanup_free_ char *block = NULL, *error = NULL;
        int r;

        r = gres_conf_block(g, n, s->conf.node_name, &block, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                json_object_object_add(out, "topology_block_error", json_object_new_string(error ?: "?"));
        else if (block)
                json_object_object_add(out, "topology_block", json_object_new_string(block));
        return 0;
}

static int discover_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        State *s = state;
        json_object *out = json_object_new_object(), *gpus = json_object_new_array();
        _cleanup_free_ char *conf = NULL, *gres = NULL;
        GresGpu *g = NULL;
        size_t n = 0;
        int r;

        if (!out || !gpus) {
                json_object_put(out);
                json_object_put(gpus);
                return -ENOMEM;
        }
        *ret_result = out;
        json_object_object_add(out, "gpus", gpus);
        r = discover(s, input != NULL, out, &g, &n);
        if (r < 0)
                return r;
        r = gres_topo_map_gpus(s->conf.root ?: "/", g, n);
        if (r == -ENOMEM) {
                gres_gpus_free(g, n);
                return r;
        }
        if (r < 0)
                json_object_object_add(out, "topology_error", json_object_new_string(strerror(-r)));
        r = gres_conf_render(g, n, s->aliases, s->n_aliases, &conf);
        if (r >= 0)
                r = gres_conf_gres_value(g, n, s->aliases, s->n_aliases, &gres);
        if (r >= 0)
                r = block_json(s, g, n, out);
        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_object *o = gpu_json(s, g + i);
                r = o ? json_object_array_add(gpus, o) : -ENOMEM;
        }
        gres_gpus_free(g, n);
        if (r < 0)
                return r;
        json_object_object_add(out, "gres", json_object_new_string(gres));
        json_object_object_add(out, "gres_conf", json_object_new_string(conf));
        if (s->conf.gres_conf)
                write_gres_conf(s->conf.gres_conf, conf, out);
        read_slurm_conf(s, out);
        return 0;
}

/* ---- Back on the loop ------------------------------------------------------ */

static const char *jstr(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
                json_object_get_string(v) : NULL;
}

static json_object *find_gpu(json_object *gpus, const char *uuid) {
        for (size_t i = 0; gpus && i < json_object_array_length(gpus); i++)
                if (strcmp(jstr(json_object_array_get_idx(gpus, i), "uuid") ?: "", uuid) == 0)
                        return json_object_array_get_idx(gpus, i);
        return NULL;
}

static bool has_gpu(json_object *gpus, const char *uuid) {
        return find_gpu(gpus, uuid) != NULL;
}

/* The "problems" of a GPU's health as one string, "" when healthy or unknown. */
static char *problems_text(json_object *gpu) {
        json_object *h, *p;
        _cleanup_free_ char *t = NULL;
        size_t len = 0;
        FILE *f;

        f = open_memstream(&t, &len);
        if (!f)
                return NULL;
        if (json_object_object_get_ex(gpu, "health", &h) && json_object_object_get_ex(h, "problems", &p))
                for (size_t i = 0; i < json_object_array_length(p); i++)
                        fprintf(f, "%s%s", i ? "; " : "", json_object_get_string(json_object_array_get_idx(p, i)));
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(t);
}

/* Each GPU whose health findings changed since the last discovery, logged
 * once: a warning when it has findings, a notice when they are gone. */
static void log_health(State *s, json_object *gpus) {
        json_object *old = NULL;

        if (s->last)
                (void) json_object_object_get_ex(s->last, "gpus", &old);
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i), *was = find_gpu(old, jstr(o, "uuid") ?: "");
                _cleanup_free_ char *now = problems_text(o), *before = was ? problems_text(was) : strdup("");

                if (!now || !before || strcmp(now, before) == 0)
                        continue;
                if (*now)
                        sunkd_log_warning(s->ctx, "GPU %s at %s is unhealthy: %s.", jstr(o, "uuid"), jstr(o, "bus_id"),
                                          now);
                else
                        sunkd_log_notice(s->ctx, "GPU %s at %s is healthy again.", jstr(o, "uuid"), jstr(o, "bus_id"));
        }
}

/* 1 healthy, 0 not, -1 not known (discovered through /proc). */
static int gpu_healthy(json_object *gpu) {
        json_object *h, *v;

        if (!json_object_object_get_ex(gpu, "health", &h) || !json_object_object_get_ex(h, "healthy", &v))
                return -1;
        return json_object_get_boolean(v);
}

/* A GPU's metric labels: its UUID and bus id. */
static void gpu_labels(json_object *gpu, const char *labels[static 3]) {
        labels[0] = jstr(gpu, "uuid") ?: "";
        labels[1] = jstr(gpu, "bus_id") ?: "";
        labels[2] = NULL;
}

/* A GPU that is gone takes its series along: none lingers with its last value. */
static void forget_gpu_metrics(State *s, json_object *gpu) {
        sunkd_metric *per_gpu[] = { s->m_memory, s->m_healthy, s->m_ecc, s->m_recovery, s->m_xid, s->m_last_xid };
        const char *labels[3];

        gpu_labels(gpu, labels);
        for (size_t i = 0; i < ELEMENTSOF(per_gpu); i++)
                (void) s->ctx->api->metric_remove(per_gpu[i], labels);
}

/* GPUs lost since the last discovery, and new ones, each logged. */
static void log_changes(State *s, json_object *gpus) {
        json_object *old = NULL;
        unsigned changed = 0;

        if (!s->last || !json_object_object_get_ex(s->last, "gpus", &old))
                return;
        for (size_t i = 0; i < json_object_array_length(old); i++) {
                json_object *o = json_object_array_get_idx(old, i);
                if (!has_gpu(gpus, jstr(o, "uuid") ?: "")) {
                        sunkd_log_warning(s->ctx, "GPU %s (%s) at %s is gone.", jstr(o, "uuid"), jstr(o, "type"),
                                          jstr(o, "bus_id"));
                        forget_gpu_metrics(s, o);
                        changed++;
                }
        }
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i);
                if (!has_gpu(old, jstr(o, "uuid") ?: "")) {
                        sunkd_log_notice(s->ctx, "GPU %s (%s) at %s appeared.", jstr(o, "uuid"), jstr(o, "type"),
                                         jstr(o, "bus_id"));
                        changed++;
                }
        }
        s->changes += changed;
        if (changed)
                (void) s->ctx->api->metric_add_value(s->m_changes, changed, NULL);
}

static void known_free(State *s) {
        for (size_t i = 0; i < s->n_known; i++) {
                free(s->known[i].type);
                free(s->known[i].uuid);
                free(s->known[i].bus_id);
        }
        free(s->known);
        s->known = NULL;
        s->n_known = 0;
}

/* The largest set of GPUs seen names the ones missing later. */
static void remember(State *s, json_object *gpus) {
        size_t n = json_object_array_length(gpus);
        Known *k;

        if (n < s->n_known || n == 0)
                return;
        k = calloc(n, sizeof(*k));
        if (!k)
                return;
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(gpus, i);
                k[i] = (Known){ strdup(jstr(o, "type") ?: ""), strdup(jstr(o, "uuid") ?: ""),
                                strdup(jstr(o, "bus_id") ?: "") };
        }
        known_free(s);
        s->known = k;
        s->n_known = n;
}

static void run_check(State *s, json_object *res, json_object *gpus) {
        const char *configured = jstr(res, "configured"), *error = jstr(res, "configured_error");
        size_t n = json_object_array_length(gpus);
        _cleanup_free_ GresCheckGpu *found = calloc(n + 1, sizeof(GresCheckGpu));
        _cleanup_free_ GresCheckGpu *known = calloc(s->n_known + 1, sizeof(GresCheckGpu));
        _cleanup_free_ char *msg = NULL;
        int r, before = s->check;

        if (!found || !known)
                return;

        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(gpus, i);
                found[i] = (GresCheckGpu){ jstr(o, "type") ?: "", jstr(o, "uuid"), jstr(o, "bus_id") };
        }
        for (size_t i = 0; i < s->n_known; i++)
                known[i] = (GresCheckGpu){ s->known[i].type, s->known[i].uuid, s->known[i].bus_id };
        if (!configured) {
                r = -1;
                msg = strdup(error ?: "no slurm.conf");
        } else {
                r = gres_check_compare(configured, found, n, known, s->n_known, &msg);
                if (r < 0 && r != -ENOMEM)
                        r = -1;
        }
        s->check = r < 0 ? -1 : r;
        free(s->check_message);
        s->check_message = TAKE_PTR(msg);
        (void) s->ctx->api->metric_set(s->m_check, s->check, NULL);
        if (s->check == 0 && (before != 0 || s->runs == 1))
                sunkd_log_warning(s->ctx, "GPUs found differ from Gres=%s in %s for %s: %s.", configured,
                                  s->conf.slurm_conf, s->conf.node_name, s->check_message ?: "?");
        else if (s->check == 1 && before == 0)
                sunkd_log_notice(s->ctx, "GPUs found match Gres=%s again.", configured);
}

/* gres.gpus: what the health module's gpu check reads. */
static void publish_fact(State *s, json_object *gpus) {
        json_object *f = json_object_new_object(), *list = json_object_new_array(), *h;
        bool healthy = true;

        if (!f || !list) {
                json_object_put(f);
                json_object_put(list);
                return;
        }
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i), *e = json_object_new_object();
                if (!e)
                        break;
                json_object_object_add(e, "uuid", json_object_new_string(jstr(o, "uuid") ?: ""));
                json_object_object_add(e, "bus_id", json_object_new_string(jstr(o, "bus_id") ?: ""));
                json_object_object_add(e, "type", json_object_new_string(jstr(o, "type") ?: ""));
                if (json_object_object_get_ex(o, "health", &h))
                        json_object_object_add(e, "health", json_object_get(h));
                if (gpu_healthy(o) == 0)
                        healthy = false;
                json_object_array_add(list, e);
        }
        json_object_object_add(f, "found", json_object_new_int64((int64_t) json_object_array_length(gpus)));
        json_object_object_add(f, "expected", json_object_new_int64((int64_t) s->n_known));
        json_object_object_add(f, "check", s->check < 0 ? NULL : json_object_new_boolean(s->check == 1));
        json_object_object_add(f, "gpus", list);
        /* every GPU that NVML could judge is healthy; the count is the check's */
        json_object_object_add(f, "healthy", json_object_new_boolean(healthy));
        if (s->last && jstr(s->last, "topology_block"))
                json_object_object_add(f, "topology_block", json_object_new_string(jstr(s->last, "topology_block")));
        (void) s->ctx->api->fact_publish(s->ctx, "gres.gpus", f);
}

static void update_metrics(State *s, json_object *gpus) {
        const sunkd_host_api *api = s->ctx->api;

        (void) api->metric_set(s->m_gpus, (double) json_object_array_length(gpus), NULL);
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i), *m, *h;
                const char *labels[3];
                int healthy = gpu_healthy(o);

                gpu_labels(o, labels);

                if (json_object_object_get_ex(o, "memory", &m))
                        (void) api->metric_set(s->m_memory, (double) json_object_get_int64(m), labels);
                if (healthy >= 0)
                        (void) api->metric_set(s->m_healthy, healthy, labels);
                if (json_object_object_get_ex(o, "health", &h) &&
                    json_object_object_get_ex(h, "ecc_uncorrected_volatile", &m))
                        (void) api->metric_set(s->m_ecc, (double) json_object_get_int64(m), labels);
                if (json_object_object_get_ex(o, "health", &h) && json_object_object_get_ex(h, "recovery_action", &m))
                        (void) api->metric_set(s->m_recovery, (double) json_object_get_int64(m), labels);
        }
}

/* What the XID log says, laid over each GPU of @gpus (a copy the caller owns). */
static int apply_xids(State *s, json_object *gpus) {
        uint64_t now = now_usec(CLOCK_REALTIME);
        int r = 0;

        for (size_t i = 0; r >= 0 && i < json_object_array_length(gpus); i++)
                r = gres_xid_apply(s->xids, json_object_array_get_idx(gpus, i), s->critical, s->n_critical, now,
                                   s->conf.xid_hold_usec);
        return r;
}

/* The metrics and the fact, from the last discovery and the XID log. */
static void show_gpus(State *s) {
        _cleanup_json_ json_object *view = NULL;
        json_object *gpus;

        s->xid_active = gres_xid_active(s->xids, s->critical, s->n_critical, now_usec(CLOCK_REALTIME), s->conf.xid_hold_usec);
        if (!s->last || !json_object_object_get_ex(s->last, "gpus", &gpus))
                return;
        if (json_object_deep_copy(gpus, &view, NULL) < 0 || apply_xids(s, view) < 0) {
                sunkd_log_error_errno(s->ctx, -ENOMEM, "Cannot show the GPUs' XID events: out of memory.");
                return;
        }
        update_metrics(s, view);
        publish_fact(s, view);
}

/* Once when it starts failing and once when it recovers: discovery repeats every few minutes. */
static void log_topology(State *s, const char *error) {
        if (error && !s->topology_warned)
                sunkd_log_warning(s->ctx, "Cannot read the CPU topology under '%s/sys/devices/system/cpu' (%s): "
                                  "gres.conf has no Cores=, so Slurm lets any core use the GPUs.",
                                  s->conf.root && strcmp(s->conf.root, "/") != 0 ? s->conf.root : "", error);
        else if (!error && s->topology_warned)
                sunkd_log_notice(s->ctx, "The CPU topology is readable again; gres.conf has Cores= again.");
        s->topology_warned = error != NULL;
}

static void log_block(State *s, const char *error) {
        if (error && (!s->block_error || strcmp(error, s->block_error) != 0))
                sunkd_log_warning(s->ctx, "The GPUs are not in one NVLink domain (%s): no topology/block line.", error);
        else if (!error && s->block_error)
                sunkd_log_notice(s->ctx, "The GPUs no longer disagree about their NVLink domain.");
        free(s->block_error);
        s->block_error = error ? strdup(error) : NULL;
}

static void no_result(State *s, int r, const char *why);
static void answer_waiting(sunkd_call *call, void *userdata);

static int discover_done(void *state, int r, void *input, void *result) {
        State *s = state;
        json_object *res = result, *gpus = NULL;
        const char *nvml_error = jstr(res, "nvml_error");

        if (r == -ECANCELED) { /* the module is stopping; the core says so */
                json_object_put(res);
                return r;
        }
        s->runs++;
        /* With backend nvml the failure below names the NVML error itself. */
        if (nvml_error && s->backend == BACKEND_AUTO)
                sunkd_log_warning(s->ctx, "NVML: %s%s", nvml_error, r >= 0 ? "; found the GPUs through /proc instead." : ".");
        if (r == -ETIMEDOUT && s->backend == BACKEND_AUTO && !input) {
                sunkd_log_warning(s->ctx, "NVML did not answer within %llu s; discovering through /proc from now on.",
                                  (unsigned long long) (s->conf.timeout_usec / SUNKD_USEC_PER_SEC));
                s->use_proc = true;
                (void) s->ctx->api->job_trigger(s->job, "NVML hung");
        }
        if (r < 0 || !json_object_object_get_ex(res, "gpus", &gpus)) {
                s->failures++;
                (void) s->ctx->api->metric_add_value(s->m_failures, 1, NULL);
                if (r >= 0)
                        r = -EBADMSG;
                if (r != -ETIMEDOUT)
                        sunkd_log_error_errno(s->ctx, r, "GPU discovery failed: %s",
                                              jstr(res, "proc_error") ?: nvml_error ?: strerror(-r));
                /* Unless /proc is tried at once, nothing better is coming soon. */
                if (!s->use_proc || input)
                        no_result(s, r, jstr(res, "proc_error") ?: nvml_error);
                json_object_put(res);
                return r;
        }
        if (jstr(res, "gres_conf_error"))
                sunkd_log_error(s->ctx, "Failed to write '%s': %s.", s->conf.gres_conf, jstr(res, "gres_conf_error"));
        else if (s->conf.gres_conf && json_object_get_boolean(json_object_object_get(res, "gres_conf_written")))
                sunkd_log_notice(s->ctx, "Wrote '%s': %zu GPU(s), Gres=%s.", s->conf.gres_conf,
                                 json_object_array_length(gpus), jstr(res, "gres"));
        log_topology(s, jstr(res, "topology_error"));
        log_block(s, jstr(res, "topology_block_error"));
        log_changes(s, gpus);
        log_health(s, gpus);
        remember(s, gpus);
        json_object_put(s->last);
        s->last = res;
        s->last_usec = now_usec(CLOCK_REALTIME);
        run_check(s, res, gpus);
        show_gpus(s);
        s->unavailable = mfree(s->unavailable);
        gres_wait_answer(&s->waiting, answer_waiting, s);
        return 0;
}

static int discover_prepare(void *state, void **ret_input) {
        State *s = state;

        /* A non-NULL input tells the child to skip NVML. */
        *ret_input = s->use_proc ? (void *) s : NULL;
        return 0;
}

/* ---- XID events ----------------------------------------------------------- */

static int events_prepare(void *state, void **ret_input) {
        State *s = state;

        *ret_input = NULL;
        if (!s->use_proc)
                return 0;
        (void) s->ctx->api->job_set_message(s->events_job, "NVML hung during discovery: XID errors are not watched");
        return -EOPNOTSUPP;
}

/* In the child: the log with this window's events (take_events() added
 * them to the child's own copy of the state), written where the next start
 * reads it. */
static void save_xids(State *s, json_object *out) {
        _cleanup_json_ json_object *log = gres_xid_log_to_json(s->xids);
        const char *text = log ? json_object_to_json_string_ext(log, JSON_C_TO_STRING_PLAIN) : NULL;
        int r;

        r = text ? fileio_write_atomic(s->xid_path, text, strlen(text), 0600, (uid_t) -1, (gid_t) -1) : -ENOMEM;
        if (r < 0)
                json_object_object_add(out, "log_error", json_object_new_string(strerror(-r)));
}

/* Each event as the parent and the next start will read it: one the driver
 * reports in a form they would refuse (a UUID with a space, say) is dropped
 * here, so it can neither differ between the two nor spoil the saved log. */
static size_t take_events(State *s, const GresXidWatch *w, json_object *events) {
        size_t taken = 0;

        for (size_t i = 0; i < w->n; i++) {
                json_object *o = gres_xid_event_to_json(&w->events[i]);
                GresXidEvent e;

                if (!o || gres_xid_event_from_json(o, &e) < 0 || json_object_array_add(events, o) < 0) {
                        json_object_put(o);
                        continue;
                }
                gres_xid_log_add(s->xids, &e);
                taken++;
        }
        return taken;
}

static int events_work(void *state, void *input, const sunkd_cancel *cancel, void **ret_result) {
        State *s = state;
        _cleanup_free_ char *error = NULL;
        json_object *out = json_object_new_object(), *events = json_object_new_array(),
                    *unwatched = json_object_new_array();
        GresXidWatch w;
        int r;

        if (!out || !events || !unwatched) {
                json_object_put(out);
                json_object_put(events);
                json_object_put(unwatched);
                return -ENOMEM;
        }
        *ret_result = out;
        json_object_object_add(out, "events", events);
        json_object_object_add(out, "unwatched", unwatched);
        /* Until a window has shown that the watch works (at start, after a
         * failure), a short one: status and the log say so within a second,
         * not after xid_window. */
        r = gres_nvml_watch_xids(s->conf.nvml_library, s->watching == 1 ? s->conf.xid_window_usec :
                                 MIN(s->conf.xid_window_usec, XID_FIRST_WINDOW_USEC), XID_RUN_MAX, &w, &error);
        if (r < 0) {
                json_object_object_add(out, "error", json_object_new_string(error ?: strerror(-r)));
                return r;
        }
        json_object_object_add(out, "watched", json_object_new_int64(w.watched));
        for (char **u = w.unwatched; u && *u; u++)
                json_object_array_add(unwatched, json_object_new_string(*u));
        if (take_events(s, &w, events) > 0 && s->xid_path)
                save_xids(s, out);
        if (json_object_array_length(events) < w.n)
                json_object_object_add(out, "dropped", json_object_new_int64((int64_t) (w.n - json_object_array_length(events))));
        gres_xid_watch_done(&w);
        return 0;
}

static void log_xid(State *s, const GresXidEvent *e) {
        bool critical = gres_xid_is_critical(e->xid, s->critical, s->n_critical);
        char mig[64] = "";

        if (e->gpu_instance != GRES_XID_NONE)
                snprintf(mig, sizeof(mig), " (GPU instance %u)", e->gpu_instance);

        sunkd_log(s->ctx, critical ? SUNKD_LOG_WARNING : SUNKD_LOG_NOTICE, 0, "GPU %s at %s%s: XID %llu (%s)%s.", e->uuid,
                  e->bus_id, mig, (unsigned long long) e->xid, gres_xid_describe(e->xid) ?: "not in the catalogue",
                  critical ? "; the GPU counts as unhealthy for xid_hold" : "");
}

/* Logged when whether and what is watched changes, not at every window. */
static void set_watching(State *s, json_object *res, int r) {
        const char *error = jstr(res, "error");
        json_object *unwatched = NULL, *w;
        unsigned watched = 0;

        if (r < 0) {
                _cleanup_free_ char *why = NULL;

                if (r == -ETIMEDOUT && asprintf(&why, "NVML did not answer within %llu s", (unsigned long long)
                                                ((s->conf.xid_window_usec + s->conf.timeout_usec) / SUNKD_USEC_PER_SEC)) < 0)
                        why = NULL;
                if (s->watching != 0 || strcmp(s->watch_error ?: "", why ?: error ?: strerror(-r)) != 0)
                        sunkd_log_warning(s->ctx, "Not watching for XID errors: %s.", why ?: error ?: strerror(-r));
                free(s->watch_error);
                s->watch_error = strdup(why ?: error ?: strerror(-r));
                s->watching = 0;
                (void) s->ctx->api->job_set_message(s->events_job, s->watch_error);
                return;
        }
        if (json_object_object_get_ex(res, "watched", &w))
                watched = (unsigned) json_object_get_int64(w);
        (void) json_object_object_get_ex(res, "unwatched", &unwatched);
        if (s->watching != 1 || watched != s->xid_watched)
                sunkd_log_notice(s->ctx, "Watching %u GPU(s) for XID errors%s%s.", watched,
                                 json_object_array_length(unwatched) ? "; cannot watch " : "",
                                 json_object_array_length(unwatched) ?
                                 json_object_to_json_string_ext(unwatched, JSON_C_TO_STRING_PLAIN) : "");
        s->watching = 1;
        s->watch_error = mfree(s->watch_error);
        s->xid_watched = watched;
        json_object_put(s->xid_unwatched);
        s->xid_unwatched = unwatched && json_object_is_type(unwatched, json_type_array) ? json_object_get(unwatched) : NULL;
}

static size_t add_xids(State *s, json_object *events) {
        size_t added = 0, bad = 0;

        for (size_t i = 0; i < json_object_array_length(events); i++) {
                GresXidEvent e;
                const char *labels[3] = { NULL };

                if (gres_xid_event_from_json(json_object_array_get_idx(events, i), &e) < 0) {
                        bad++;
                        continue;
                }
                gres_xid_log_add(s->xids, &e);
                if (added++ < XID_LOGGED_PER_RUN)
                        log_xid(s, &e);
                labels[0] = e.uuid;
                labels[1] = e.bus_id;
                (void) s->ctx->api->metric_add_value(s->m_xid, 1, labels);
                (void) s->ctx->api->metric_set(s->m_last_xid, (double) e.xid, labels);
        }
        if (added > XID_LOGGED_PER_RUN)
                sunkd_log_warning(s->ctx, "%zu more XID errors in this window; io.sunkd.Gres.List shows the last of each GPU.",
                                  added - XID_LOGGED_PER_RUN);
        if (bad)
                sunkd_log_error(s->ctx, "The XID watcher handed back %zu malformed event(s); ignored.", bad);
        return added;
}

static int events_done(void *state, int r, void *input, void *result) {
        State *s = state;
        json_object *res = result, *events;
        size_t added = 0;

        if (r == -ECANCELED) {
                json_object_put(res);
                return r;
        }
        set_watching(s, res, r);
        if (r >= 0 && json_object_object_get_ex(res, "events", &events) && json_object_is_type(events, json_type_array))
                added = add_xids(s, events);
        if (r >= 0 && json_object_object_get_ex(res, "dropped", &events))
                sunkd_log_warning(s->ctx, "Dropped %" PRId64 " XID event(s) of a GPU whose bus id or UUID NVML reports in a "
                                  "form sunkd does not keep.", json_object_get_int64(events));
        if (jstr(res, "log_error"))
                sunkd_log_error(s->ctx, "Failed to save the XID log to '%s': %s.", s->xid_path, jstr(res, "log_error"));
        if (added || gres_xid_active(s->xids, s->critical, s->n_critical, now_usec(CLOCK_REALTIME), s->conf.xid_hold_usec) !=
                             s->xid_active)
                show_gpus(s);
        json_object_put(res);
        return r < 0 ? r : 0;
}

/* The log the last run saved; a file that is not one is logged and set aside. */
static int load_xids(State *s) {
        const char *dir = s->ctx->api->state_dir(s->ctx);
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *o = NULL;
        size_t len;
        int r;

        if (!dir)
                return 0;
        if (asprintf(&s->xid_path, "%s/" XID_FILE, dir) < 0) {
                s->xid_path = NULL;
                return -ENOMEM;
        }
        r = fileio_read(s->xid_path, XID_FILE_MAX, &text, &len);
        if (r == -ENOENT)
                return 0;
        if (r == -ENOMEM)
                return r;
        if (r >= 0 && strlen(text) == len)
                o = json_tokener_parse(text);
        if (r >= 0)
                r = o ? gres_xid_log_from_json(o, s->xids) : -EBADMSG;
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                sunkd_log_warning(s->ctx, "Cannot take the XID log from '%s' (%s); it starts empty and the file is "
                                  "replaced at the next event.", s->xid_path, r == -EBADMSG ? "not a valid log" : strerror(-r));
        return 0;
}

/* ---- io.sunkd.Gres.List ----------------------------------------------------- */

static int reply_unavailable(State *s, sunkd_call *call, const char *reason) {
        json_object *p = json_object_new_object();

        if (p)
                json_object_object_add(p, "reason", json_object_new_string(reason));
        return s->ctx->api->reply_error(call, "io.sunkd.Unavailable", p);
}

static int list_reply(State *s, sunkd_call *call) {
        json_object *reply, *check;

        if (json_object_deep_copy(s->last, &reply, NULL) < 0)
                return -ENOMEM;
        if (apply_xids(s, json_object_object_get(reply, "gpus")) < 0) {
                json_object_put(reply);
                return -ENOMEM;
        }
        check = json_object_new_object();
        if (check) {
                json_object_object_add(check, "result", json_object_new_string(s->check == 1 ? "match" :
                                                                               s->check == 0 ? "mismatch" : "unknown"));
                json_object_object_add(check, "message", json_object_new_string(s->check_message ?: ""));
                json_object_object_add(check, "slurm_conf", json_object_new_string(s->conf.slurm_conf));
                json_object_object_add(check, "node_name", json_object_new_string(s->conf.node_name));
                json_object_object_add(reply, "check", check);
        }
        json_object_object_add(reply, "discovered_usec", json_object_new_int64((int64_t) s->last_usec));
        return s->ctx->api->reply(call, reply);
}

/* Before the first result a call waits for it, as long as its caller does
 * (sunkctl's --timeout), the discovery's timeout and LIST_WAITING_MAX allow. */
static int method_list(sunkd_call *call, json_object *params, void *state) {
        State *s = state;
        int r;

        if (s->last)
                return list_reply(s, call);
        if (s->unavailable)
                return reply_unavailable(s, call, s->unavailable);
        r = gres_wait_add(&s->waiting, call, LIST_WAITING_MAX);
        if (r == -EBUSY)
                return reply_unavailable(s, call, "too many calls wait for the first discovery");
        return r;
}

static void answer_waiting(sunkd_call *call, void *userdata) {
        State *s = userdata;

        if ((s->last ? list_reply(s, call) : reply_unavailable(s, call, s->unavailable ?: "no discovery has finished yet")) < 0)
                (void) s->ctx->api->reply_error(call, "io.sunkd.InternalError", NULL);
}

/* A discovery ended without a result: calls waiting for one are told why,
 * and so are later ones until a discovery succeeds. */
static void no_result(State *s, int r, const char *why) {
        if (s->last)
                return;
        free(s->unavailable);
        if (asprintf(&s->unavailable, "GPU discovery failed: %s", why ?: strerror(-r)) < 0)
                s->unavailable = NULL;
        gres_wait_answer(&s->waiting, answer_waiting, s);
}

static const sunkd_method methods[] = {
        { "io.sunkd.Gres.List", SUNKD_METHOD_ANY_UID, method_list },
};

/* ---- Lifecycle ---------------------------------------------------------------- */

static void conf_done(State *s) {
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
                        return conf_error(s->ctx, child, "key 'type_alias': a GPU type and a short name without ',:= '");
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

/* xid_critical: each a number, as the admin lists them, instead of the default set. */
static int parse_critical(sunkd_ctx *c, const sunkd_cfg *cfg, State *s) {
        static const uint64_t defaults[] = GRES_XID_CRITICAL_DEFAULT;

        if (!s->conf.xid_critical) {
                memcpy(s->critical, defaults, sizeof(defaults));
                s->n_critical = sizeof(defaults) / sizeof(defaults[0]);
                return 0;
        }
        for (char **x = s->conf.xid_critical; *x; x++) {
                char *end;
                unsigned long long v;

                errno = 0;
                v = strtoull(*x, &end, 10);
                if (!**x || *end || errno || v > UINT32_MAX || !(**x >= '0' && **x <= '9'))
                        return conf_error(c, c->api->cfg_get(cfg, "xid_critical"), "key 'xid_critical': XID numbers");
                if (s->n_critical >= GRES_XID_CRITICAL_MAX)
                        return conf_error(c, c->api->cfg_get(cfg, "xid_critical"), "key 'xid_critical': more than 64 entries");
                s->critical[s->n_critical++] = v;
        }
        return 0;
}

static int load_conf(sunkd_ctx *c, const sunkd_cfg *cfg, State *s) {
        _cleanup_free_ char *error = NULL;
        char host[256];
        int r;

        s->ctx = c;
        s->conf = (Conf){ .interval_usec = 5 * 60 * SUNKD_USEC_PER_SEC, .timeout_usec = 30 * SUNKD_USEC_PER_SEC,
                          .xid_events = true, .xid_window_usec = 5 * 60 * SUNKD_USEC_PER_SEC,
                          .xid_hold_usec = 60 * 60 * SUNKD_USEC_PER_SEC };
        r = c->api->cfg_parse(cfg, conf_keys, N_KEYS, &s->conf, &error);
        if (r < 0)
                return sunkd_log_error_errno(c, r, "%s", error ?: "invalid configuration");
        if (!s->conf.backend || strcmp(s->conf.backend, "auto") == 0)
                s->backend = BACKEND_AUTO;
        else if (strcmp(s->conf.backend, "nvml") == 0)
                s->backend = BACKEND_NVML;
        else if (strcmp(s->conf.backend, "proc") == 0)
                s->backend = BACKEND_PROC;
        else
                return conf_error(c, c->api->cfg_get(cfg, "backend"), "key 'backend': auto, nvml or proc");
        if (s->conf.interval_usec < SUNKD_USEC_PER_SEC || s->conf.timeout_usec < SUNKD_USEC_PER_SEC)
                return conf_error(c, cfg, "keys 'interval' and 'timeout': at least 1s");
        /* nvmlEventSetWait_v2 takes the window in milliseconds as an unsigned int */
        if (s->conf.xid_window_usec < SUNKD_USEC_PER_SEC || s->conf.xid_window_usec > 24 * 3600 * SUNKD_USEC_PER_SEC)
                return conf_error(c, c->api->cfg_get(cfg, "xid_window"), "key 'xid_window': from 1s to 1d");
        r = parse_critical(c, cfg, s);
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
        return r;
}

static int add_metrics(State *s) {
        const sunkd_metric_def defs[] = {
                { { sizeof(sunkd_metric_spec), "gres_gpus", "GPUs found by the last discovery.", SUNKD_METRIC_GAUGE, { NULL } }, &s->m_gpus },
                { { sizeof(sunkd_metric_spec), "gres_gpu_memory_bytes", "Memory of each GPU.", SUNKD_METRIC_GAUGE, { "uuid", "bus_id" } }, &s->m_memory },
                { { sizeof(sunkd_metric_spec), "gres_discovery_failures_total", "Discoveries that failed.", SUNKD_METRIC_COUNTER, { NULL } }, &s->m_failures },
                { { sizeof(sunkd_metric_spec), "gres_gpu_changes_total", "GPUs lost or added between discoveries.", SUNKD_METRIC_COUNTER, { NULL } }, &s->m_changes },
                { { sizeof(sunkd_metric_spec), "gres_check", "1 if the GPUs match slurm.conf's Gres=, 0 if not, -1 unknown.", SUNKD_METRIC_GAUGE, { NULL } }, &s->m_check },
                { { sizeof(sunkd_metric_spec), "gres_gpu_healthy", "1 if NVML reports nothing wrong with the GPU, 0 if it does.", SUNKD_METRIC_GAUGE, { "uuid", "bus_id" } }, &s->m_healthy },
                { { sizeof(sunkd_metric_spec), "gres_gpu_ecc_uncorrected", "Uncorrectable ECC errors since the driver loaded.", SUNKD_METRIC_GAUGE, { "uuid", "bus_id" } }, &s->m_ecc },
                { { sizeof(sunkd_metric_spec), "gres_gpu_xid_errors_total", "XID errors NVML reported for the GPU.", SUNKD_METRIC_COUNTER, { "uuid", "bus_id" } }, &s->m_xid },
                { { sizeof(sunkd_metric_spec), "gres_gpu_last_xid", "The GPU's last XID error.", SUNKD_METRIC_GAUGE, { "uuid", "bus_id" } }, &s->m_last_xid },
                { { sizeof(sunkd_metric_spec), "gres_gpu_recovery_action", "NVML's GPU recovery action: 0 none, 1 reset, 2 reboot, 3 drain P2P, 4 drain and reset, 5 recover IMEX.", SUNKD_METRIC_GAUGE, { "uuid", "bus_id" } }, &s->m_recovery },
        };

        return sunkd_metrics_add(s->ctx, defs, sizeof(defs) / sizeof(defs[0]));
}

static void answer_stopping(sunkd_call *call, void *userdata) {
        (void) reply_unavailable(userdata, call, "the gres module is stopping");
}

static void state_free(State *s) {
        if (!s)
                return;
        gres_wait_answer(&s->waiting, answer_stopping, s);
        free(s->unavailable);
        conf_done(s);
        json_object_put(s->last);
        known_free(s);
        free(s->check_message);
        free(s->block_error);
        free(s->xids);
        free(s->xid_path);
        free(s->watch_error);
        json_object_put(s->xid_unwatched);
        free(s);
}

/* The jobs' timing follows the configuration; the rest of them is fixed. */
static sunkd_job_spec discover_spec(const State *s) {
        return (sunkd_job_spec){
                .size = sizeof(sunkd_job_spec),
                .name = "gres.discover",
                .interval_usec = s->conf.interval_usec,
                .jitter_pct = 5,
                .backoff_min_usec = 10 * SUNKD_USEC_PER_SEC,
                .backoff_max_usec = s->conf.interval_usec,
                .timeout_usec = s->conf.timeout_usec,
                .flags = SUNKD_JOB_READY_GATE | SUNKD_JOB_CHILD,
                .prepare = discover_prepare,
                .work = discover_work,
                .done = discover_done,
        };
}

static sunkd_job_spec events_spec(const State *s) {
        return (sunkd_job_spec){
                .size = sizeof(sunkd_job_spec),
                .name = "gres.events",
                .interval_usec = 100 * SUNKD_USEC_PER_MSEC,
                .backoff_min_usec = 10 * SUNKD_USEC_PER_SEC,
                .backoff_max_usec = s->conf.interval_usec,
                .timeout_usec = s->conf.xid_window_usec + s->conf.timeout_usec,
                .flags = SUNKD_JOB_CHILD,
                .prepare = events_prepare,
                .work = events_work,
                .done = events_done,
        };
}

static bool watches_xids(const State *s) {
        return s->conf.xid_events && s->backend != BACKEND_PROC;
}

static int gres_init(sunkd_ctx *c, const sunkd_cfg *cfg, void **ret_state) {
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->check = -1;
        s->watching = -1;
        s->waiting.ctx = c;
        s->xids = calloc(1, sizeof(*s->xids));
        r = s->xids ? load_conf(c, cfg, s) : -ENOMEM;
        if (r >= 0)
                r = add_metrics(s);
        if (r >= 0)
                r = load_xids(s);
        if (r >= 0) {
                const sunkd_job_spec spec = discover_spec(s);
                r = c->api->job_add(c, &spec, &s->job);
        }
        if (r >= 0 && watches_xids(s)) {
                const sunkd_job_spec spec = events_spec(s);
                r = c->api->job_add(c, &spec, &s->events_job);
        }
        if (r >= 0)
                r = c->api->methods_add(c, methods, sizeof(methods) / sizeof(methods[0]));
        if (r < 0) {
                state_free(s);
                return r;
        }
        *ret_state = s;
        return 0;
}

static int gres_check(sunkd_ctx *c, const sunkd_cfg *cfg) {
        State *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        r = load_conf(c, cfg, s);
        state_free(s);
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
        memcpy(a->critical, b->critical, sizeof(a->critical));
        a->n_critical = b->n_critical;
}

/* Whether what discovery finds or how it shows it may differ under @n. */
static bool discovery_changed(const State *s, const State *n) {
        bool aliases = s->n_aliases != n->n_aliases;

        for (size_t i = 0; !aliases && i < s->n_aliases; i++)
                aliases = !streq(s->aliases[i].from, n->aliases[i].from) || !streq(s->aliases[i].to, n->aliases[i].to);
        return aliases || s->backend != n->backend || !streq_ptr(s->conf.nvml_library, n->conf.nvml_library) ||
               !streq_ptr(s->conf.root, n->conf.root) || !streq_ptr(s->conf.gres_conf, n->conf.gres_conf) ||
               !streq_ptr(s->conf.slurm_conf, n->conf.slurm_conf) || !streq_ptr(s->conf.node_name, n->conf.node_name);
}

/* The new section in place: what discovery found, the fact, the XID log,
 * the check and the calls waiting stay; new timing goes to the jobs, a new
 * XID policy to the GPUs' health at once, anything that changes what
 * discovery finds or writes to a discovery started now.  Turning the XID
 * watch on or off adds or removes a job: a restart (the XID log is in the
 * state directory, so it stays too). */
static int gres_reload(void *state, const sunkd_cfg *cfg) {
        State *s = state, *n = calloc(1, sizeof(*n));
        bool rediscover, rejudge;
        int r;

        if (!n)
                return -ENOMEM;
        r = load_conf(s->ctx, cfg, n);
        if (r >= 0 && watches_xids(n) != watches_xids(s)) {
                state_free(n);
                return SUNKD_RELOAD_RESTART;
        }
        if (r >= 0) {
                const sunkd_job_spec d = discover_spec(n), e = events_spec(n);
                r = s->ctx->api->job_update(s->job, &d);
                if (r >= 0 && s->events_job)
                        r = s->ctx->api->job_update(s->events_job, &e);
        }
        if (r < 0) {
                state_free(n);
                return r;
        }
        rediscover = discovery_changed(s, n);
        rejudge = s->conf.xid_hold_usec != n->conf.xid_hold_usec || s->n_critical != n->n_critical ||
                  memcmp(s->critical, n->critical, s->n_critical * sizeof(s->critical[0])) != 0;
        if (s->backend != n->backend || !streq_ptr(s->conf.nvml_library, n->conf.nvml_library))
                s->use_proc = false; /* another NVML may answer */
        /* The old settings go to @n, and are freed with it. */
        swap_conf(s, n);
        state_free(n);
        if (rejudge) /* the fact's subscribers hear of it only when it changes */
                show_gpus(s);
        if (rediscover)
                (void) s->ctx->api->job_trigger(s->job, "configuration changed");
        return 0;
}

static void gres_fini(void *state) {
        state_free(state);
}

static int gres_status(void *state, struct json_object *out) {
        State *s = state;
        json_object *gpus = NULL;

        json_object_object_add(out, "node_name", json_object_new_string(s->conf.node_name));
        json_object_object_add(out, "runs", json_object_new_int64((int64_t) s->runs));
        json_object_object_add(out, "failures", json_object_new_int64((int64_t) s->failures));
        json_object_object_add(out, "changes", json_object_new_int64((int64_t) s->changes));
        if (s->last && json_object_object_get_ex(s->last, "gpus", &gpus)) {
                json_object_object_add(out, "source", json_object_new_string(jstr(s->last, "source") ?: ""));
                json_object_object_add(out, "gpus", json_object_new_int64((int64_t) json_object_array_length(gpus)));
                json_object_object_add(out, "gres", json_object_new_string(jstr(s->last, "gres") ?: ""));
                json_object_object_add(out, "discovered_usec", json_object_new_int64((int64_t) s->last_usec));
        }
        json_object_object_add(out, "list_waiting", json_object_new_int64((int64_t) s->waiting.n));
        json_object_object_add(out, "check", json_object_new_string(s->check == 1 ? "match" :
                                                                    s->check == 0 ? "mismatch" : "unknown"));
        if (s->check_message)
                json_object_object_add(out, "check_message", json_object_new_string(s->check_message));
        if (s->events_job) {
                json_object_object_add(out, "xid_watch", json_object_new_string(s->watching == 1 ? "watching" :
                                                                                s->watching == 0 ? "failed" : "starting"));
                if (s->watching == 1)
                        json_object_object_add(out, "xid_watched", json_object_new_int64(s->xid_watched));
                if (s->watch_error)
                        json_object_object_add(out, "xid_watch_error", json_object_new_string(s->watch_error));
                if (s->xid_unwatched && json_object_array_length(s->xid_unwatched))
                        json_object_object_add(out, "xid_unwatched", json_object_get(s->xid_unwatched));
        }
        json_object_object_add(out, "xid_events", json_object_new_int64((int64_t) s->xids->total));
        json_object_object_add(out, "xid_active", json_object_new_int64((int64_t) s->xid_active));
        return 0;
}

SUNKD_MODULE_DEFINE(.name = "gres", .version = PACKAGE_VERSION, .init = gres_init, .check = gres_check,
                    .reload = gres_reload, .fini = gres_fini, .status = gres_status);
