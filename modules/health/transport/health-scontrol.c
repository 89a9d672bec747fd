/* The scontrol transport: a round of health.signal as a chain of spawns on
 * the loop (SUNKD_JOB_ASYNC), each killable: `scontrol show node NAME`,
 * then, before a drain, `scontrol show node` for the fleet guard, then
 * `scontrol update`.  SLURM_CONF and a token (SLURM_JWT, read from
 * token_file or minted from jwt_key_file at each use) are passed in the
 * environment, nothing else. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "health-jwt.h"
#include "health-node.h"
#include "health-state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

#define SHOW_OUTPUT_MAX (64u << 20) /* a 10k-node cluster prints about 10 MB */
#define UPDATE_OUTPUT_MAX 4096
#define SCONTROL_TIMEOUT_USEC (20 * SUNKD_USEC_PER_SEC)
#define TOKEN_MAX 8192

static void step(State *s);

static void round_end(State *s) {
        HealthSignal *sig = s->signal;
        int r;

        s->signal = NULL;
        s->node_busy = sig->busy;
        health_judge_apply_outcome(s, sig);
        r = health_judge_result(sig);
        (void) s->ctx->api->job_set_message(s->signal_job, sig->message);
        free(sig);
        (void) s->ctx->api->job_complete(s->signal_job, r);
}

/* The first line of what scontrol said, for a message. */
static void first_line(const sunkd_spawn_result *res, char *buf, size_t len) {
        const char *t = res->err_output && *res->err_output ? res->err_output : res->output;

        (void) snprintf(buf, len, "%.*s", (int) strcspn(t ?: "", "\n"), t ?: "");
        if (!*buf)
                (void) snprintf(buf, len, "scontrol exited with status %d", res->exit_code);
}

static int run_failed(int r, const sunkd_spawn_result *res, char *buf, size_t len) {
        if (r < 0)
                return snprintf(buf, len, "cannot run scontrol: %s", strerror(-r)), -EIO;
        if (res->timed_out)
                return snprintf(buf, len, "scontrol gave no answer within %us",
                                (unsigned) (SCONTROL_TIMEOUT_USEC / SUNKD_USEC_PER_SEC)),
                       -EIO;
        if (res->signal)
                return snprintf(buf, len, "scontrol killed by signal %d", res->signal), -EIO;
        if (res->exit_code != 0)
                return first_line(res, buf, len), -EIO;
        return 0;
}

static void on_show_node(void *userdata, int r, const sunkd_spawn_result *res) {
        State *s = userdata;
        HealthNode *nodes = NULL;
        size_t n = 0;
        char err[256];

        s->signal_child = NULL;
        if (r >= 0 && !res->timed_out && res->signal == 0 && res->exit_code != 0 &&
            strstr(res->output, " not found")) {
                health_signal_node(s->signal, NULL);
                return step(s);
        }
        if (run_failed(r, res, err, sizeof(err)) < 0) {
                health_signal_failed(s->signal, -EIO, err);
                return step(s);
        }
        r = health_nodes_parse(res->output, &nodes, &n);
        if (r < 0) {
                health_signal_failed(s->signal, r, "cannot read what scontrol show node printed");
                return step(s);
        }
        health_signal_node(s->signal, health_nodes_find(nodes, n, s->node_name));
        health_nodes_free(nodes, n);
        step(s);
}

static void on_show_fleet(void *userdata, int r, const sunkd_spawn_result *res) {
        State *s = userdata;
        HealthNode *nodes = NULL;
        const HealthNode *self;
        size_t n = 0, total, ours;
        char err[256];

        s->signal_child = NULL;
        if (run_failed(r, res, err, sizeof(err)) < 0) {
                health_signal_failed(s->signal, -EIO, err);
                return step(s);
        }
        r = health_nodes_parse(res->output, &nodes, &n);
        self = r >= 0 ? health_nodes_find(nodes, n, s->node_name) : NULL;
        if (!self) {
                health_signal_failed(s->signal, -EBADMSG, "the node list scontrol printed lacks this node");
                health_nodes_free(nodes, n);
                return step(s);
        }
        health_signal_fleet_count(nodes, n, self, s->signal->fleet_prefix, &total, &ours);
        health_nodes_free(nodes, n);
        health_signal_fleet(s->signal, total, ours);
        step(s);
}

static void on_update(void *userdata, int r, const sunkd_spawn_result *res) {
        State *s = userdata;
        char err[256];

        s->signal_child = NULL;
        r = run_failed(r, res, err, sizeof(err));
        /* resuming a node that is not drained: it is resumed already */
        if (r < 0 && s->signal->step == HEALTH_STEP_RESUME && strstr(err, "Invalid node state specified"))
                r = 0;
        health_signal_updated(s->signal, r, err);
        step(s);
}

/* SLURM_JWT minted from jwt_key_file, for a short while, at each round. */
static int minted_env(State *s, char **ret) {
        _cleanup_free_ char *tok = NULL, *why = NULL;
        int r;

        r = health_jwt_mint(s->sc.jwt_key_file, (uid_t) -1, s->sc.user, (uint64_t) time(NULL),
                            s->sc.jwt_lifetime_usec / SUNKD_USEC_PER_SEC, &tok, &why);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "Cannot mint a Slurm token: %s",
                                             why ?: strerror(-r));
        r = asprintf(ret, "SLURM_JWT=%s", tok) < 0 ? -ENOMEM : 0;
        explicit_bzero(tok, strlen(tok));
        return r;
}

/* SLURM_JWT from token_file, read at each use: a rotated token is taken. */
static int token_env(State *s, char **ret) {
        _cleanup_free_ char *tok = NULL;
        size_t len = 0;
        int r;

        *ret = NULL;
        if (s->sc.jwt_key_file)
                return minted_env(s, ret);
        if (!s->sc.token_file)
                return 0;
        r = fileio_read(s->sc.token_file, TOKEN_MAX, &tok, &len);
        if (r < 0)
                return r;
        while (len > 0 && (tok[len - 1] == '\n' || tok[len - 1] == '\r' || tok[len - 1] == ' '))
                tok[--len] = '\0';
        if (len == 0 || strpbrk(tok, "\n\r \t"))
                return -EBADMSG;
        if (asprintf(ret, "SLURM_JWT=%s", tok) < 0)
                return -ENOMEM;
        explicit_bzero(tok, len);
        return 0;
}

static int spawn_scontrol(State *s, const char *const *args, size_t output_max, sunkd_spawn_cb cb) {
        _cleanup_free_ char *conf_env = NULL, *jwt_env = NULL;
        const char *argv[8], *envp[4];
        size_t n = 0, e = 0;
        int r;

        argv[n++] = s->sc.path;
        for (const char *const *a = args; *a && n < ELEMENTSOF(argv) - 1; a++)
                argv[n++] = *a;
        argv[n] = NULL;
        envp[e++] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
        if (s->conf.slurm_conf) {
                if (asprintf(&conf_env, "SLURM_CONF=%s", s->conf.slurm_conf) < 0)
                        return -ENOMEM;
                envp[e++] = conf_env;
        }
        r = token_env(s, &jwt_env);
        if (r < 0 && !s->sc.jwt_key_file)
                return sunkd_log_error_errno(s->ctx, r, "Cannot read the Slurm token from '%s': %m",
                                             s->sc.token_file);
        if (r < 0)
                return r;
        if (jwt_env)
                envp[e++] = jwt_env;
        envp[e] = NULL;
        sunkd_spawn_spec spec = {
                .size = sizeof(spec),
                .argv = argv,
                .envp = envp,
                .timeout_usec = SCONTROL_TIMEOUT_USEC,
                .output_max = output_max,
                .uid = (uid_t) -1,
                .gid = (gid_t) -1,
                .kill_grace_usec = 2 * SUNKD_USEC_PER_SEC,
        };
        r = s->ctx->api->spawn_start(s->ctx, &spec, cb, s, &s->signal_child);
        if (jwt_env)
                explicit_bzero(jwt_env, strlen(jwt_env));
        return r;
}

static void step(State *s) {
        HealthSignal *sig = s->signal;
        _cleanup_free_ char *node = NULL, *reason = NULL;
        int r = 0;

        if (asprintf(&node, "nodename=%s", s->node_name) < 0)
                r = -ENOMEM;
        else
                switch (sig->step) {
                case HEALTH_STEP_QUERY_NODE:
                        r = spawn_scontrol(s, (const char *[]){ "show", "node", s->node_name, NULL },
                                           SHOW_OUTPUT_MAX, on_show_node);
                        break;
                case HEALTH_STEP_QUERY_FLEET:
                        r = spawn_scontrol(s, (const char *[]){ "show", "node", NULL }, SHOW_OUTPUT_MAX,
                                           on_show_fleet);
                        break;
                case HEALTH_STEP_DRAIN:
                        if (asprintf(&reason, "reason=%s", sig->reason) < 0)
                                r = -ENOMEM;
                        else
                                r = spawn_scontrol(
                                        s, (const char *[]){ "update", node, "state=drain", reason, NULL },
                                        UPDATE_OUTPUT_MAX, on_update);
                        break;
                case HEALTH_STEP_RESUME:
                        r = spawn_scontrol(s, (const char *[]){ "update", node, "state=resume", NULL },
                                           UPDATE_OUTPUT_MAX, on_update);
                        break;
                case HEALTH_STEP_REBOOT:
                        /* no nextstate: the node carries our reason (and
                         * slurmctld's " : reboot issued" after it), so a
                         * round resumes it once the checks pass */
                        if (asprintf(&reason, "reason=%s", sig->reason) < 0)
                                r = -ENOMEM;
                        else
                                r = spawn_scontrol(
                                        s, (const char *[]){ "reboot", "ASAP", reason, s->node_name, NULL },
                                        UPDATE_OUTPUT_MAX, on_update);
                        break;
                case HEALTH_STEP_DONE:
                        return round_end(s);
                }
        if (r < 0) {
                health_signal_failed(sig, r, NULL);
                round_end(s);
        }
}

int scontrol_start(State *s) {
        s->signal->step = HEALTH_STEP_QUERY_NODE;
        step(s);
        return 0;
}

void scontrol_cancel(State *s) {
        if (s->signal_child)
                (void) s->ctx->api->child_kill(s->signal_child);
}
