/* Repairs: what a finding does beside draining (`actions:`), within the
 * limits of `repair:`.  A repair is taken only in a round that finds the
 * node IDLE and drained by us for that finding (health-signal.c's rule), and
 * under both limits: the node's own (max_per_hour) and the fleet's (max_pct
 * of the nodes in its partitions under repair, counted from their reasons,
 * "<prefix>repair <action>: ..."); past one it is reported instead.  A
 * reboot is asked of slurmctld (`scontrol reboot ASAP reason=...`, the
 * reason outliving the reboot); reset-gpu and script run as a killable
 * child under the host's reaper.  Then the checks decide: the finding gone,
 * the node is resumed as for any passing round; still there after
 * verify_within, the node stays drained, sticky, for "repair failed".  What
 * was taken is kept in state.json: after a reboot the module knows it asked
 * for it (the boot id changed since). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "health-state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/strv.h"
#include "util/time-util.h"

#define HOUR_USEC (3600 * SUNKD_USEC_PER_SEC)
#define REPAIR_OUTPUT_MAX (16 * 1024)
#define REPAIR_IDLE_POLL_USEC (30 * SUNKD_USEC_PER_SEC)

static const sunkd_cfg_key action_keys[] = {
        { "code", SUNKD_CFG_STRING, offsetof(ActionRule, code), 0, 0, 0 },
        { "check", SUNKD_CFG_STRING, offsetof(ActionRule, check), 0, 0, 0 },
        { "action", SUNKD_CFG_STRING, offsetof(ActionRule, action), SUNKD_CFG_REQUIRED, 0, 0 },
        { "path", SUNKD_CFG_PATH, offsetof(ActionRule, path), 0, 0, 0 },
        { "args", SUNKD_CFG_LIST, offsetof(ActionRule, args), 0, 0, 0 },
};

static const sunkd_cfg_key repair_keys[] = {
        { "max_per_hour", SUNKD_CFG_INT, offsetof(RepairConf, max_per_hour), 0, 0, REPAIR_HISTORY_MAX },
        { "max_pct", SUNKD_CFG_INT, offsetof(RepairConf, max_pct), 0, 0, 100 },
        { "verify_within", SUNKD_CFG_DURATION, offsetof(RepairConf, verify_within_usec), 0, 0, 0 },
        { "timeout", SUNKD_CFG_DURATION, offsetof(RepairConf, timeout_usec), 0, 0, 0 },
        { "reset_gpu_command", SUNKD_CFG_LIST, offsetof(RepairConf, reset_gpu_command), 0, 0, 0 },
};

static int located(State *s, const sunkd_cfg *node, const char *fmt, ...) _printf_(3, 4);
static int located(State *s, const sunkd_cfg *node, const char *fmt, ...) {
        _cleanup_free_ char *where = NULL;
        char what[512];
        va_list ap;

        (void) s->ctx->api->cfg_where(node, &where);
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return sunkd_log_error_errno(s->ctx, -EINVAL, "%s: %s", where ?: "sunkd.yaml", what);
}

void health_repair_clear(State *s) {
        for (size_t i = 0; i < s->n_actions; i++)
                s->ctx->api->cfg_clear(action_keys, ELEMENTSOF(action_keys), &s->actions[i]);
        s->n_actions = 0;
        s->ctx->api->cfg_clear(repair_keys, ELEMENTSOF(repair_keys), &s->repair_conf);
}

/* A program a repair runs as root: the rule of every file sunkd executes. */
static int trusted(State *s, const sunkd_cfg *at, const char *key, const char *path) {
        _cleanup_free_ char *why = NULL;
        int r = health_check_jobs_script_trusted(path, &why);

        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return located(s, at, "key '%s': %s", key, why ?: strerror(-r));
        return 0;
}

static int parse_rule(State *s, const sunkd_cfg *item, ActionRule *a) {
        const sunkd_host_api *api = s->ctx->api;
        _cleanup_free_ char *error = NULL;
        int r;

        r = api->cfg_parse(item, action_keys, ELEMENTSOF(action_keys), a, &error);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "%s", error ?: "invalid action");
        if (!!a->code == !!a->check)
                return located(s, item, "key 'actions': each names a code or a check, one of the two");
        r = health_signal_repair_from_string(a->action);
        if (r < 0)
                return located(s, api->cfg_get(item, "action"),
                               "key 'action': '%s' is not drain, reboot, reset-gpu or script", a->action);
        a->repair = (HealthRepair) r;
        if (a->repair == HEALTH_REPAIR_SCRIPT && !a->path)
                return located(s, item, "key 'path': required for action script");
        if (a->repair != HEALTH_REPAIR_SCRIPT && (a->path || a->args))
                return located(s, api->cfg_get(item, a->path ? "path" : "args"),
                               "key '%s': only action script runs a program", a->path ? "path" : "args");
        if (a->repair == HEALTH_REPAIR_SCRIPT)
                return trusted(s, api->cfg_get(item, "path"), "path", a->path);
        if (a->repair == HEALTH_REPAIR_REBOOT && s->transport != TRANSPORT_SCONTROL &&
            s->transport != TRANSPORT_NONE)
                return located(s, api->cfg_get(item, "action"),
                               "key 'action': reboot is asked through transport scontrol (scontrol reboot "
                               "ASAP); libslurm's API and slurmrestd have no node reboot");
        return 0;
}

int health_repair_parse(State *s, const sunkd_cfg *cfg) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *item;
        _cleanup_free_ char *error = NULL;
        bool reset = false;
        int r;

        s->repair_conf = (RepairConf){ .max_per_hour = 1,
                                       .max_pct = 10,
                                       .verify_within_usec = 15 * 60 * SUNKD_USEC_PER_SEC,
                                       .timeout_usec = 5 * 60 * SUNKD_USEC_PER_SEC };
        if (s->conf.repair) {
                r = api->cfg_parse(s->conf.repair, repair_keys, ELEMENTSOF(repair_keys), &s->repair_conf,
                                   &error);
                if (r < 0)
                        return sunkd_log_error_errno(s->ctx, r, "%s", error ?: "invalid repair section");
        }
        if (s->repair_conf.verify_within_usec < SUNKD_USEC_PER_SEC)
                return located(s, api->cfg_get(s->conf.repair, "verify_within"),
                               "key 'verify_within': at least 1s");
        if (s->repair_conf.timeout_usec < SUNKD_USEC_PER_SEC)
                return located(s, api->cfg_get(s->conf.repair, "timeout"), "key 'timeout': at least 1s");
        if (!s->repair_conf.reset_gpu_command &&
            (strv_extend(&s->repair_conf.reset_gpu_command, "/usr/bin/nvidia-smi") < 0 ||
             strv_extend(&s->repair_conf.reset_gpu_command, "--gpu-reset") < 0 ||
             strv_extend(&s->repair_conf.reset_gpu_command, "-i") < 0))
                return -ENOMEM;
        for (size_t i = 0; s->conf.actions && (item = api->cfg_child(s->conf.actions, i, NULL)); i++) {
                if (s->n_actions >= ACTIONS_MAX)
                        return located(s, item, "key 'actions': more than %d", ACTIONS_MAX);
                r = parse_rule(s, item, &s->actions[s->n_actions++]);
                if (r < 0)
                        return r;
                reset = reset || s->actions[s->n_actions - 1].repair == HEALTH_REPAIR_RESET_GPU;
        }
        if (reset && s->repair_conf.reset_gpu_command[0])
                return trusted(s, api->cfg_get(s->conf.repair, "reset_gpu_command") ?: s->conf.actions,
                               "reset_gpu_command", s->repair_conf.reset_gpu_command[0]);
        if (reset)
                return located(s, api->cfg_get(s->conf.repair, "reset_gpu_command"),
                               "key 'reset_gpu_command': empty");
        return 0;
}

/* The rule for @k's finding: by check first, then by code. */
static const ActionRule *rule_for(const State *s, const Check *k) {
        for (size_t i = 0; i < s->n_actions; i++)
                if (s->actions[i].check && streq(s->actions[i].check, check_name(k)))
                        return &s->actions[i];
        for (size_t i = 0; i < s->n_actions; i++)
                if (s->actions[i].code && streq(s->actions[i].code, k->last.code))
                        return &s->actions[i];
        return NULL;
}

static const Check *check_find(const State *s, const char *name) {
        for (size_t i = 0; i < s->n_checks; i++)
                if (streq(check_name(&s->checks[i]), name))
                        return &s->checks[i];
        return NULL;
}

static size_t recent(const State *s, uint64_t now) {
        size_t n = 0;

        for (size_t i = 0; i < s->repair.n_history; i++)
                if (s->repair.history[i] + HOUR_USEC > now)
                        n++;
        return n;
}

static void boot_id(const State *s, char out[static 40]) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t len = 0;

        out[0] = '\0';
        if (asprintf(&path, "%s/proc/sys/kernel/random/boot_id",
                     streq(s->conf.root, "/") ? "" : s->conf.root) < 0 ||
            fileio_read(path, 64, &text, &len) < 0)
                return;
        (void) snprintf(out, 40, "%.*s", (int) strcspn(text, "\n"), text);
}

static void count(State *s, HealthRepair a, const char *what) {
        (void) s->ctx->api->metric_add_value(
                s->m_repairs, 1, (const char *[]){ health_signal_repair_to_string(a), what, NULL });
}

void health_repair_fill(State *s, const Check *k, HealthSignal *sig) {
        const ActionRule *a;
        uint64_t now = now_usec(CLOCK_REALTIME);

        if (s->repair.phase != REPAIR_IDLE) {
                /* the node carries the repair's reason until the checks decide */
                if (streq(s->repair.check, check_name(k)))
                        memcpy(sig->reason, s->repair.reason, sizeof(sig->reason));
                return;
        }
        a = rule_for(s, k);
        if (!a || a->repair == HEALTH_REPAIR_NONE || s->transport == TRANSPORT_NONE)
                return;
        sig->repair = a->repair;
        sig->max_repair_pct = (unsigned) s->repair_conf.max_pct;
        sig->repair_allowed = recent(s, now) < (size_t) s->repair_conf.max_per_hour;
        if (!sig->repair_allowed)
                (void) snprintf(sig->repair_held, sizeof(sig->repair_held),
                                "%zu repair(s) of this node within the hour (max_per_hour %" PRIi64 ")",
                                recent(s, now), s->repair_conf.max_per_hour);
        if (a->repair == HEALTH_REPAIR_RESET_GPU && !*k->last.target) {
                sig->repair_allowed = false;
                (void) snprintf(sig->repair_held, sizeof(sig->repair_held),
                                "the finding names no GPU to reset");
        }
}

static void trigger_checks(State *s, const char *why) {
        for (size_t i = 0; i < s->n_checks; i++)
                if (s->checks[i].job)
                        (void) s->ctx->api->job_trigger(s->checks[i].job, why);
}

static void repair_done_cb(void *userdata, int r, const sunkd_spawn_result *res) {
        State *s = userdata;
        char line[160] = "";

        s->repair_child = NULL;
        if (r >= 0 && res->output)
                (void) snprintf(line, sizeof(line), "%.*s", (int) strcspn(res->output, "\n"), res->output);
        if (r < 0)
                sunkd_log_warning(s->ctx, "Repair %s for '%s' did not start: %s",
                                  health_signal_repair_to_string(s->repair.action), s->repair.check,
                                  strerror(-r));
        else if (res->timed_out || res->signal || res->exit_code != 0)
                sunkd_log_warning(s->ctx, "Repair %s for '%s' failed (%s%d)%s%s",
                                  health_signal_repair_to_string(s->repair.action), s->repair.check,
                                  res->timed_out ? "timed out, "
                                  : res->signal  ? "signal "
                                                 : "exit status ",
                                  res->signal ? res->signal : res->exit_code, *line ? ": " : "", line);
        else
                sunkd_log_notice(s->ctx, "Repair %s for '%s' done%s%s: the checks decide",
                                 health_signal_repair_to_string(s->repair.action), s->repair.check,
                                 *line ? ": " : "", line);
        s->repair.phase = REPAIR_VERIFYING;
        s->repair.ended_usec = now_usec(CLOCK_REALTIME);
        store_save(s);
        trigger_checks(s, "after a repair");
        health_judge_kick(s, "after a repair");
}

static int repair_spawn(State *s, const ActionRule *a) {
        _cleanup_free_ const char **argv = NULL;
        char node_env[128], gpu_env[128];
        const char *envp[] = { "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", node_env,
                               gpu_env, NULL };
        char **cmd = a->repair == HEALTH_REPAIR_RESET_GPU ? s->repair_conf.reset_gpu_command : a->args;
        size_t n = 0;
        _cleanup_free_ char *why = NULL;
        int r;

        /* held to the trust rule at each run, as a script check is */
        r = health_check_jobs_script_trusted(a->repair == HEALTH_REPAIR_SCRIPT ? a->path : cmd[0], &why);
        if (r < 0)
                return sunkd_log_warning_errno(s->ctx, r, "Repair %s refused: %s",
                                               health_signal_repair_to_string(a->repair),
                                               why ?: strerror(-r));
        argv = calloc(3 + strv_length(cmd), sizeof(char *));
        if (!argv)
                return -ENOMEM;
        if (a->repair == HEALTH_REPAIR_SCRIPT)
                argv[n++] = a->path;
        for (char **p = cmd; p && *p; p++)
                argv[n++] = *p;
        if (a->repair == HEALTH_REPAIR_RESET_GPU)
                argv[n++] = s->repair.target;
        (void) snprintf(node_env, sizeof(node_env), "SLURMD_NODENAME=%s", s->node_name);
        (void) snprintf(gpu_env, sizeof(gpu_env), "SUNKD_HEALTH_CODE=%s", s->repair.code);
        sunkd_spawn_spec spec = {
                .size = sizeof(spec),
                .argv = argv,
                .envp = envp,
                .timeout_usec = s->repair_conf.timeout_usec,
                .output_max = REPAIR_OUTPUT_MAX,
                .uid = (uid_t) -1,
                .gid = (gid_t) -1,
                .kill_grace_usec = 2 * SUNKD_USEC_PER_SEC,
                .flags = SUNKD_SPAWN_REAP,
        };
        return s->ctx->api->spawn_start(s->ctx, &spec, repair_done_cb, s, &s->repair_child);
}

static void history_add(Repair *p, uint64_t now) {
        if (p->n_history >= REPAIR_HISTORY_MAX)
                memmove(p->history, p->history + 1, --p->n_history * sizeof(p->history[0]));
        p->history[p->n_history++] = now;
}

/* A round's outcome: a repair to take now, or one held by a limit. */
void health_repair_outcome(State *s, const HealthSignal *sig) {
        const Check *k;
        const ActionRule *a;
        uint64_t now = now_usec(CLOCK_REALTIME);
        int r;

        /* a repair due on a node still busy: look again soon, not in an interval */
        s->repair_waits = sig->want == HEALTH_WANT_DRAIN && sig->repair != HEALTH_REPAIR_NONE &&
                          sig->outcome == HEALTH_OUTCOME_UNCHANGED;
        if (sig->outcome == HEALTH_OUTCOME_REPAIR_HELD) {
                count(s, sig->repair, "held");
                return;
        }
        if (sig->outcome != HEALTH_OUTCOME_REPAIR)
                return;
        /* the check the round drained for: the first failing one */
        k = NULL;
        for (size_t i = 0; i < s->n_checks && !k; i++)
                if (s->checks[i].count.failing && s->checks[i].action == HEALTH_ACTION_DRAIN)
                        k = &s->checks[i];
        a = k ? rule_for(s, k) : NULL;
        if (!k || !a || a->repair != sig->repair)
                return;
        Repair next = { .phase = REPAIR_RUNNING, .action = a->repair, .started_usec = now };

        memcpy(next.history, s->repair.history, sizeof(next.history));
        next.n_history = s->repair.n_history;
        s->repair = next;
        history_add(&s->repair, now);
        (void) snprintf(s->repair.check, sizeof(s->repair.check), "%s", check_name(k));
        (void) snprintf(s->repair.code, sizeof(s->repair.code), "%s", k->last.code);
        (void) snprintf(s->repair.target, sizeof(s->repair.target), "%s", k->last.target);
        (void) snprintf(s->repair.reason, sizeof(s->repair.reason), "%s", sig->reason);
        boot_id(s, s->repair.boot_id);
        count(s, a->repair, "taken");
        sunkd_log_notice(s->ctx, "Repair %s for check '%s' (%s)%s%s taken: %s",
                         health_signal_repair_to_string(a->repair), s->repair.check, s->repair.code,
                         *s->repair.target ? " of GPU " : "", s->repair.target, sig->message);
        if (a->repair != HEALTH_REPAIR_REBOOT) {
                r = repair_spawn(s, a);
                if (r < 0) {
                        s->repair.phase = REPAIR_VERIFYING; /* the bound decides */
                        s->repair.ended_usec = now;
                }
        }
        store_save(s);
}

static void repair_failed(State *s, const char *why) {
        char what[CHECK_NAME_MAX + HEALTH_CODE_MAX + 64];

        (void) snprintf(what, sizeof(what), "%s: %s repair failed (%s)", s->repair.check, s->repair.code,
                        health_signal_repair_to_string(s->repair.action));
        sunkd_log_warning(s->ctx,
                          "Repair %s for check '%s' did not help %s: the node stays drained until "
                          "an operator undrains it",
                          health_signal_repair_to_string(s->repair.action), s->repair.check, why);
        count(s, s->repair.action, "failed");
        health_signal_reason_format(s->forced_reason, s->conf.reason_prefix, what, NULL);
        s->forced = HEALTH_WANT_FORCE_DRAIN;
        s->forced_sticky = true;
        s->repair.phase = REPAIR_IDLE;
        store_save(s);
}

/* Before each round: has the repair helped, failed, or (a reboot) happened? */
void health_repair_check(State *s) {
        const Check *k;
        uint64_t now = now_usec(CLOCK_REALTIME);
        char boot[40];

        if (s->repair.phase == REPAIR_IDLE || s->repair_child)
                return;
        if (s->repair.phase == REPAIR_RUNNING && s->repair.action == HEALTH_REPAIR_REBOOT) {
                boot_id(s, boot);
                if (*boot && *s->repair.boot_id && !streq(boot, s->repair.boot_id)) {
                        sunkd_log_notice(s->ctx,
                                         "The node rebooted as asked for check '%s': the checks decide",
                                         s->repair.check);
                        s->repair.phase = REPAIR_VERIFYING;
                        s->repair.ended_usec = now;
                        store_save(s);
                }
        }
        k = check_find(s, s->repair.check);
        if (!k || (!k->count.failing && s->repair.phase == REPAIR_VERIFYING)) {
                sunkd_log_notice(s->ctx, "Repair %s for check '%s' helped: it passes",
                                 health_signal_repair_to_string(s->repair.action), s->repair.check);
                count(s, s->repair.action, "helped");
                s->repair.phase = REPAIR_IDLE;
                store_save(s);
                return;
        }
        if (now >= s->repair.started_usec + s->repair_conf.verify_within_usec)
                repair_failed(s, s->repair.phase == REPAIR_RUNNING ? "(it never ended)"
                                                                   : "within verify_within");
}

/* When the next round must run for the bound, 0 for none. */
uint64_t health_repair_next_usec(const State *s) {
        uint64_t now = now_usec(CLOCK_REALTIME), end;

        if (s->repair.phase == REPAIR_IDLE)
                return s->repair_waits ? REPAIR_IDLE_POLL_USEC : 0;
        end = s->repair.started_usec + s->repair_conf.verify_within_usec;
        return end > now ? end - now + SUNKD_USEC_PER_SEC / 10 : SUNKD_USEC_PER_SEC;
}

static const char *const phase_names[] = { "none", "running", "verifying" };

json_object *health_repair_to_json(const State *s) {
        const Repair *p = &s->repair;
        json_object *o = json_object_new_object(), *h = json_object_new_array();

        if (!o || !h) {
                json_object_put(o);
                json_object_put(h);
                return NULL;
        }
        json_object_object_add(o, "phase", json_object_new_string(phase_names[p->phase]));
        json_object_object_add(o, "action",
                               json_object_new_string(health_signal_repair_to_string(p->action)));
        json_object_object_add(o, "check", json_object_new_string(p->check));
        json_object_object_add(o, "code", json_object_new_string(p->code));
        json_object_object_add(o, "target", json_object_new_string(p->target));
        json_object_object_add(o, "boot_id", json_object_new_string(p->boot_id));
        json_object_object_add(o, "reason", json_object_new_string(p->reason));
        json_object_object_add(o, "started_usec", json_object_new_int64((int64_t) p->started_usec));
        json_object_object_add(o, "ended_usec", json_object_new_int64((int64_t) p->ended_usec));
        for (size_t i = 0; i < p->n_history; i++)
                json_object_array_add(h, json_object_new_int64((int64_t) p->history[i]));
        json_object_object_add(o, "history", h);
        return o;
}

static void copy(json_object *o, const char *key, char *buf, size_t size) {
        (void) snprintf(buf, size, "%s", json_member_string(o, key) ?: "");
}

/* A broken or hostile file restores nothing it cannot make sense of. */
void health_repair_from_json(State *s, json_object *o) {
        Repair *p = &s->repair;
        const char *phase = json_member_string(o, "phase");
        int a = health_signal_repair_from_string(json_member_string(o, "action"));
        json_object *h = json_object_object_get(o, "history");

        *p = (Repair){};
        if (!phase || a < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(phase_names); i++)
                if (streq(phase, phase_names[i]))
                        p->phase = (RepairPhase) i;
        p->action = (HealthRepair) a;
        copy(o, "check", p->check, sizeof(p->check));
        copy(o, "code", p->code, sizeof(p->code));
        copy(o, "target", p->target, sizeof(p->target));
        copy(o, "boot_id", p->boot_id, sizeof(p->boot_id));
        copy(o, "reason", p->reason, sizeof(p->reason));
        p->started_usec = (uint64_t) MAX(json_member_int64(o, "started_usec", 0), 0);
        p->ended_usec = (uint64_t) MAX(json_member_int64(o, "ended_usec", 0), 0);
        for (size_t i = 0; i < json_object_array_length(h) && p->n_history < REPAIR_HISTORY_MAX; i++)
                p->history[p->n_history++] =
                        (uint64_t) MAX(json_object_get_int64(json_object_array_get_idx(h, i)), 0);
        /* a child that ran when sunkd stopped ended with it: the checks decide */
        if (p->phase == REPAIR_RUNNING && p->action != HEALTH_REPAIR_REBOOT)
                p->phase = REPAIR_VERIFYING;
        if (p->phase != REPAIR_IDLE && !*p->check)
                p->phase = REPAIR_IDLE;
}

void health_repair_cancel(State *s) {
        if (s->repair_child)
                (void) s->ctx->api->child_kill(s->repair_child);
}
