/* The `command` check, NHC's check_cmd_output and check_cmd_status: a
 * program run as a `script` is (health-check-jobs.c: the host's spawn under
 * its reaper, refused unless the file is root's alone through every link),
 * whose exit status must be `status` (0 unless given, NHC's -r) and whose
 * output must hold, for each of `match`, a line matching that extended
 * regular expression, or with a leading '!' no such line (NHC's -m, its
 * negation the same).  As NHC: a negated match that hits fails first (the
 * line named), then an exit status that differs, then a pattern that
 * matched nothing; without `match` only the status counts
 * (check_cmd_status).  NHC's default timeout, 5 s, is the default here too.
 * Where sunkd differs: NHC runs its command through a shell and matches
 * globs unless a pattern is /slashed/; sunkd runs `path` with `args` and
 * no shell, and every pattern is a regular expression.  Only stdout is
 * matched, as NHC's $(...) reads, and only its last COMMAND_OUTPUT_MAX
 * bytes are kept (the host's spawn drops the front of a longer one). */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "check-util.h"

typedef struct CommandConf {
        ScriptConf script; /* path and args, run as a script's */
        char **match;
        int64_t status;
        /* from validate */
        regex_t *re;
        size_t n_re;
} CommandConf;

static const sunkd_cfg_key command_keys[] = {
        HEALTH_COMMON_KEYS,
        { "path", SUNKD_CFG_PATH, offsetof(CommandConf, script.path), SUNKD_CFG_REQUIRED, 0, 0 },
        { "args", SUNKD_CFG_LIST, offsetof(CommandConf, script.args), 0, 0, 0 },
        { "match", SUNKD_CFG_LIST, offsetof(CommandConf, match), 0, 0, 0 },
        { "status", SUNKD_CFG_INT, offsetof(CommandConf, status), 0, 0, 255 },
};

#define COMMAND_TIMEOUT_DEFAULT_USEC (5 * SUNKD_USEC_PER_SEC)

static void command_defaults(void *conf) {
        ((CommandConf *) conf)->script.common.timeout_usec = COMMAND_TIMEOUT_DEFAULT_USEC;
}

static bool negated(const char *m) {
        return m[0] == '!';
}

static int command_validate(void *conf, char **ret_error) {
        CommandConf *c = conf;
        size_t n = 0;

        while (c->match && c->match[n])
                n++;
        c->re = calloc(MAX(n, 1u), sizeof(regex_t));
        if (!c->re)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *m = c->match[i] + negated(c->match[i]);
                int r = check_regcomp(&c->re[i], "match", m, REG_NOSUB, ret_error);

                if (r < 0)
                        return r;
                c->n_re++;
        }
        return 0;
}

static void command_release(void *conf) {
        CommandConf *c = conf;

        for (size_t i = 0; i < c->n_re; i++)
                regfree(&c->re[i]);
        c->re = mfree(c->re);
        c->n_re = 0;
}

static void command_judge(const void *conf, const sunkd_spawn_result *res, HealthResult *ret) {
        const CommandConf *c = conf;
        const char *path = c->script.path;
        _cleanup_free_ char *out = NULL;
        _cleanup_free_ bool *matched = NULL;
        size_t n_matched = 0, n_neg = 0;
        unsigned lineno = 0;
        char last[HEALTH_DETAIL_MAX] = "";

        out = malloc(res->output_len + 1);
        matched = calloc(MAX(c->n_re, 1u), sizeof(bool));
        if (!out || !matched) {
                health_result_set(ret, HEALTH_FAIL, "check-error", "out of memory judging %s's output",
                                  path);
                return;
        }
        memcpy(out, res->output, res->output_len);
        out[res->output_len] = 0;
        for (size_t i = 0; i < c->n_re; i++)
                n_neg += negated(c->match[i]);
        /* each line, a NUL byte in it ending what is matched */
        for (char *l = out; l < out + res->output_len;) {
                char *nl = memchr(l, '\n', (size_t) (out + res->output_len - l));

                if (nl)
                        *nl = 0;
                lineno++;
                for (size_t i = 0; i < c->n_re; i++) {
                        if (negated(c->match[i])) {
                                if (regexec(&c->re[i], l, 0, NULL, 0) == 0) {
                                        health_result_set(ret, HEALTH_FAIL, "command-match",
                                                          "'%s' matched line %u of %s: %s", c->match[i] + 1,
                                                          lineno, path, l);
                                        return;
                                }
                        } else if (!matched[i] && regexec(&c->re[i], l, 0, NULL, 0) == 0) {
                                matched[i] = true;
                                n_matched++;
                        }
                }
                if (*l)
                        snprintf(last, sizeof(last), "%s", l);
                if (!nl)
                        break;
                l = nl + 1;
        }
        if (res->exit_code != c->status) {
                health_result_set(ret, HEALTH_FAIL, "command-status",
                                  "%s exited %d (expected %" PRId64 ")%s%s", path, res->exit_code, c->status,
                                  *last ? ": " : "", last);
                return;
        }
        for (size_t i = 0; i < c->n_re; i++)
                if (!negated(c->match[i]) && !matched[i]) {
                        health_result_set(
                                ret, HEALTH_FAIL, "command-nomatch",
                                "'%s' matched no line of %s's output (%zu of %zu patterns failed%s)",
                                c->match[i], path, c->n_re - n_neg - n_matched, c->n_re,
                                res->output_truncated ? "; only the end of a long output was read" : "");
                        return;
                }
        health_result_set(ret, HEALTH_PASS, "ok", "%s exited %d%s%s", path, res->exit_code,
                          *last ? ": " : "", last);
}

const HealthCheckType health_check_command = {
        .name = "command",
        .keys = command_keys,
        .n_keys = ELEMENTSOF(command_keys),
        .conf_size = sizeof(CommandConf),
        .defaults = command_defaults,
        .validate = command_validate,
        .release = command_release,
        .judge = command_judge,
        .runner = HEALTH_RUNNER_SCRIPT,
};
