/* gres.discover: what GPUs the node has, and what is done with the answer.
 *
 * The job runs its work in a forked child (SUNKD_JOB_CHILD): NVML, loaded
 * with dlopen(), may hang in the driver or crash, and a child can be killed
 * at the timeout where a thread cannot.  The child discovers (NVML, else
 * /proc and /sys), renders gres.conf and the Gres= value, writes gres_conf:
 * when its content changed, reads this node's Gres= from slurm.conf, and
 * hands all of it back as JSON.  `done`, on the loop, keeps it for
 * io.sunkd.Gres.List, logs GPUs lost or added, compares with slurm.conf, and
 * shows the GPUs (gres-publish.c: the metrics and the fact gres.gpus).
 *
 * With backend auto, an NVML that fails is logged and /proc is used; one
 * that hangs past the timeout makes the next run (started at once) use /proc.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "gres-check.h"
#include "gres-conf.h"
#include "gres-nvml.h"
#include "gres-proc.h"
#include "gres-state.h"
#include "gres-topo.h"
#include "sunkd/module.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/time-util.h"

#define GRES_CONF_MAX (1024 * 1024)

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

        if (!o || !type ||
            (g->files ? !(file = strdup(g->files)) : asprintf(&file, "/dev/nvidia%u", g->minor) < 0)) {
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
        if (g->telemetry.read)
                json_object_object_add(o, "telemetry", gres_health_telemetry_json(&g->telemetry));
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
        /* A node without GPUs has nothing to say in gres.conf: one that is
         * there (an admin's, or the last GPUs found) is left as it is, and
         * none is made. */
        if (s->conf.gres_conf && json_object_array_length(gpus) > 0)
                write_gres_conf(s->conf.gres_conf, conf, out);
        read_slurm_conf(s, out);
        return 0;
}

/* ---- Back on the loop ------------------------------------------------------ */

/* The last discovery found none (said once, not at each). */
static bool no_gpus(json_object *last) {
        json_object *gpus;

        return last && json_object_object_get_ex(last, "gpus", &gpus) && json_object_array_length(gpus) == 0;
}

static json_object *find_gpu(json_object *gpus, const char *uuid) {
        for (size_t i = 0; gpus && i < json_object_array_length(gpus); i++)
                if (strcmp(json_member_string(json_object_array_get_idx(gpus, i), "uuid") ?: "", uuid) == 0)
                        return json_object_array_get_idx(gpus, i);
        return NULL;
}

static bool has_gpu(json_object *gpus, const char *uuid) {
        return find_gpu(gpus, uuid) != NULL;
}

/* What the driver reports of a GPU's memory, as one string: each counter
 * above zero ("remap_failure 1") and the recovery action it asks for; ""
 * when there is none or nothing is known. */
static char *observed_text(json_object *gpu) {
        json_object *h;
        _cleanup_free_ char *t = NULL;
        size_t len = 0, n = 0;
        FILE *f;

        f = open_memstream(&t, &len);
        if (!f)
                return NULL;
        if (json_object_object_get_ex(gpu, "health", &h) && json_object_is_type(h, json_type_object)) {
                json_object_object_foreach(h, key, v) if (json_object_is_type(v, json_type_int) &&
                                                          json_object_get_int64(v) > 0 &&
                                                          !streq(key, "recovery_action"))
                        fprintf(f, "%s%s %" PRId64, n++ ? ", " : "", key, json_object_get_int64(v));
                if (json_member_int64(h, "recovery_action", 0) > 0)
                        fprintf(f, "%sthe driver asks to %s", n++ ? "; " : "",
                                json_member_string(h, "recovery") ?: "recover it");
        }
        if (fclose(f) != 0)
                return NULL;
        return TAKE_PTR(t);
}

/* Each GPU whose memory counters changed since the last discovery, logged
 * once: what the driver reports, not a verdict (the health module's gpu
 * check judges them). */
static void log_health(State *s, json_object *gpus) {
        json_object *old = NULL;

        if (s->last)
                (void) json_object_object_get_ex(s->last, "gpus", &old);
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i),
                            *was = find_gpu(old, json_member_string(o, "uuid") ?: "");
                _cleanup_free_ char *now = observed_text(o), *before = was ? observed_text(was) : strdup("");

                if (!now || !before || strcmp(now, before) == 0)
                        continue;
                if (*now)
                        sunkd_log_warning(s->ctx, "GPU %s at %s: the driver reports %s.",
                                          json_member_string(o, "uuid"), json_member_string(o, "bus_id"),
                                          now);
                else
                        sunkd_log_notice(s->ctx,
                                         "GPU %s at %s: the driver reports no memory error any more.",
                                         json_member_string(o, "uuid"), json_member_string(o, "bus_id"));
        }
}

/* GPUs lost since the last discovery, and new ones, each logged. */
static void log_changes(State *s, json_object *gpus) {
        json_object *old = NULL;
        unsigned changed = 0;

        if (!s->last || !json_object_object_get_ex(s->last, "gpus", &old))
                return;
        for (size_t i = 0; i < json_object_array_length(old); i++) {
                json_object *o = json_object_array_get_idx(old, i);
                if (!has_gpu(gpus, json_member_string(o, "uuid") ?: "")) {
                        sunkd_log_warning(s->ctx, "GPU %s (%s) at %s is gone.",
                                          json_member_string(o, "uuid"), json_member_string(o, "type"),
                                          json_member_string(o, "bus_id"));
                        gres_forget_gpu_metrics(s, o);
                        changed++;
                }
        }
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i);
                if (!has_gpu(old, json_member_string(o, "uuid") ?: "")) {
                        sunkd_log_notice(s->ctx, "GPU %s (%s) at %s appeared.",
                                         json_member_string(o, "uuid"), json_member_string(o, "type"),
                                         json_member_string(o, "bus_id"));
                        changed++;
                }
        }
        s->changes += changed;
        if (changed)
                (void) s->ctx->api->metric_add_value(s->m_changes, changed, NULL);
}

void gres_known_free(State *s) {
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
                k[i] = (Known){ strdup(json_member_string(o, "type") ?: ""),
                                strdup(json_member_string(o, "uuid") ?: ""),
                                strdup(json_member_string(o, "bus_id") ?: "") };
        }
        gres_known_free(s);
        s->known = k;
        s->n_known = n;
}

static void run_check(State *s, json_object *res, json_object *gpus) {
        const char *configured = json_member_string(res, "configured"),
                   *error = json_member_string(res, "configured_error");
        size_t n = json_object_array_length(gpus);
        _cleanup_free_ GresCheckGpu *found = calloc(n + 1, sizeof(GresCheckGpu));
        _cleanup_free_ GresCheckGpu *known = calloc(s->n_known + 1, sizeof(GresCheckGpu));
        _cleanup_free_ char *msg = NULL;
        int r, before = s->check;

        if (!found || !known)
                return;

        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(gpus, i);
                found[i] = (GresCheckGpu){ json_member_string(o, "type") ?: "",
                                           json_member_string(o, "uuid"), json_member_string(o, "bus_id") };
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

/* Once when it starts failing and once when it recovers: discovery repeats every few minutes. */
static void log_topology(State *s, const char *error) {
        if (error && !s->topology_warned)
                sunkd_log_warning(s->ctx,
                                  "Cannot read the CPU topology under '%s/sys/devices/system/cpu' (%s): "
                                  "gres.conf has no Cores=, so Slurm lets any core use the GPUs.",
                                  s->conf.root && strcmp(s->conf.root, "/") != 0 ? s->conf.root : "", error);
        else if (!error && s->topology_warned)
                sunkd_log_notice(s->ctx, "The CPU topology is readable again; gres.conf has Cores= again.");
        s->topology_warned = error != NULL;
}

static void log_block(State *s, const char *error) {
        if (error && (!s->block_error || strcmp(error, s->block_error) != 0))
                sunkd_log_warning(s->ctx,
                                  "The GPUs are not in one NVLink domain (%s): no topology/block line.",
                                  error);
        else if (!error && s->block_error)
                sunkd_log_notice(s->ctx, "The GPUs no longer disagree about their NVLink domain.");
        free(s->block_error);
        s->block_error = error ? strdup(error) : NULL;
}
static int discover_done(void *state, int r, void *input, void *result) {
        State *s = state;
        json_object *res = result, *gpus = NULL;
        const char *nvml_error = json_member_string(res, "nvml_error");

        if (r == -ECANCELED) { /* the module is stopping; the core says so */
                json_object_put(res);
                return r;
        }
        s->runs++;
        /* With backend nvml the failure below names the NVML error itself. */
        if (nvml_error && s->backend == BACKEND_AUTO)
                sunkd_log_warning(s->ctx, "NVML: %s%s", nvml_error,
                                  r >= 0 ? "; found the GPUs through /proc instead." : ".");
        if (r == -ETIMEDOUT && s->backend == BACKEND_AUTO && !input) {
                sunkd_log_warning(
                        s->ctx, "NVML did not answer within %llu s; discovering through /proc from now on.",
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
                                              json_member_string(res, "proc_error") ?: nvml_error ?: strerror(-r));
                /* Unless /proc is tried at once, nothing better is coming soon. */
                if (!s->use_proc || input)
                        gres_list_no_result(s, r, json_member_string(res, "proc_error") ?: nvml_error);
                json_object_put(res);
                return r;
        }
        if (json_member_string(res, "gres_conf_error"))
                sunkd_log_error(s->ctx, "Failed to write '%s': %s.", s->conf.gres_conf,
                                json_member_string(res, "gres_conf_error"));
        else if (s->conf.gres_conf &&
                 json_object_get_boolean(json_object_object_get(res, "gres_conf_written")))
                sunkd_log_notice(s->ctx, "Wrote '%s': %zu GPU(s), Gres=%s.", s->conf.gres_conf,
                                 json_object_array_length(gpus), json_member_string(res, "gres"));
        else if (s->conf.gres_conf && json_object_array_length(gpus) == 0 && !no_gpus(s->last))
                sunkd_log_notice(s->ctx, "Found no GPU: '%s' is left as it is.", s->conf.gres_conf);
        log_topology(s, json_member_string(res, "topology_error"));
        log_block(s, json_member_string(res, "topology_block_error"));
        log_changes(s, gpus);
        log_health(s, gpus);
        remember(s, gpus);
        json_object_put(s->last);
        s->last = res;
        s->last_usec = now_usec(CLOCK_REALTIME);
        s->read_usec = s->discover_started_usec;
        run_check(s, res, gpus);
        gres_show_gpus(s);
        gres_list_result(s);
        return 0;
}

static int discover_prepare(void *state, void **ret_input) {
        State *s = state;

        /* A non-NULL input tells the child to skip NVML. */
        *ret_input = s->use_proc ? (void *) s : NULL;
        s->discover_started_usec = now_usec(CLOCK_REALTIME);
        return 0;
}

/* The job's timing follows the configuration; the rest of it is fixed. */
sunkd_job_spec gres_discover_spec(const State *s) {
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
