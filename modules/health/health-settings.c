/* The module's section of sunkd.yaml: the top keys, the scontrol map and
 * the list of checks, each refused with its line.  A changed section
 * restarts the module (there is no in-place reload): what must survive it,
 * the hysteresis and the reason we set, is kept in state_dir. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "transport/health-jwt.h"
#include "health-state.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strv.h"

static const sunkd_cfg_key conf_keys[] = {
        { "interval", SUNKD_CFG_DURATION, offsetof(Conf, interval_usec), 0, 0, 0 },
        { "node_name", SUNKD_CFG_STRING, offsetof(Conf, node_name), 0, 0, 0 },
        { "reason_prefix", SUNKD_CFG_STRING, offsetof(Conf, reason_prefix), 0, 0, 0 },
        { "transport", SUNKD_CFG_STRING, offsetof(Conf, transport), 0, 0, 0 },
        { "fail_after", SUNKD_CFG_INT, offsetof(Conf, fail_after), 0, 1, 1000 },
        { "pass_after", SUNKD_CFG_INT, offsetof(Conf, pass_after), 0, 1, 1000 },
        { "max_drained_pct", SUNKD_CFG_INT, offsetof(Conf, max_drained_pct), 0, 0, 100 },
        { "root", SUNKD_CFG_PATH, offsetof(Conf, root), 0, 0, 0 },
        { "slurm_conf", SUNKD_CFG_PATH, offsetof(Conf, slurm_conf), 0, 0, 0 },
        { "scontrol", SUNKD_CFG_MAP, offsetof(Conf, scontrol), 0, 0, 0 },
        { "slurmrestd", SUNKD_CFG_MAP, offsetof(Conf, slurmrestd), 0, 0, 0 },
        { "xid_policy", SUNKD_CFG_MAP, offsetof(Conf, xid_policy), 0, 0, 0 },
        { "memory_policy", SUNKD_CFG_MAP, offsetof(Conf, memory_policy), 0, 0, 0 },
        { "checks", SUNKD_CFG_SEQUENCE, offsetof(Conf, checks), 0, 0, 0 },
        { "actions", SUNKD_CFG_SEQUENCE, offsetof(Conf, actions), 0, 0, 0 },
        { "repair", SUNKD_CFG_MAP, offsetof(Conf, repair), 0, 0, 0 },
        { "debounce", SUNKD_CFG_MAP, offsetof(Conf, debounce), 0, 0, 0 },
        { "reason_words", SUNKD_CFG_MAP, offsetof(Conf, reason_words), 0, 0, 0 },
        { "undrain_foreign_token", SUNKD_CFG_STRING, offsetof(Conf, undrain_foreign_token), 0, 0, 0 },
};

static const sunkd_cfg_key scontrol_keys[] = {
        { "path", SUNKD_CFG_PATH, offsetof(ScontrolConf, path), 0, 0, 0 },
        { "user", SUNKD_CFG_STRING, offsetof(ScontrolConf, user), 0, 0, 0 },
        { "token_file", SUNKD_CFG_PATH, offsetof(ScontrolConf, token_file), 0, 0, 0 },
        { "jwt_key_file", SUNKD_CFG_PATH, offsetof(ScontrolConf, jwt_key_file), 0, 0, 0 },
        { "jwt_lifetime", SUNKD_CFG_DURATION, offsetof(ScontrolConf, jwt_lifetime_usec), 0, 0, 0 },
};

static const sunkd_cfg_key rest_keys[] = {
        { "url", SUNKD_CFG_STRING, offsetof(RestConf, url), SUNKD_CFG_REQUIRED, 0, 0 },
        { "version", SUNKD_CFG_STRING, offsetof(RestConf, version), 0, 0, 0 },
        { "user", SUNKD_CFG_STRING, offsetof(RestConf, user), 0, 0, 0 },
        { "token_file", SUNKD_CFG_PATH, offsetof(RestConf, token_file), 0, 0, 0 },
        { "jwt_key_file", SUNKD_CFG_PATH, offsetof(RestConf, jwt_key_file), 0, 0, 0 },
        { "jwt_lifetime", SUNKD_CFG_DURATION, offsetof(RestConf, jwt_lifetime_usec), 0, 0, 0 },
        { "ca_file", SUNKD_CFG_PATH, offsetof(RestConf, ca_file), 0, 0, 0 },
        { "timeout", SUNKD_CFG_DURATION, offsetof(RestConf, timeout_usec), 0, 0, 0 },
};

/* Job names beside health.<check>: a check may not take them. */
static const char *const reserved_names[] = { "signal", "idle", "genconf", NULL };

const char *check_name(const Check *k) {
        return ((const HealthCheckCommon *) k->conf)->name;
}

static int located(sunkd_ctx *c, const sunkd_cfg *node, const char *fmt, ...) _printf_(3, 4);
static int located(sunkd_ctx *c, const sunkd_cfg *node, const char *fmt, ...) {
        _cleanup_free_ char *where = NULL;
        char what[512];
        va_list ap;

        (void) c->api->cfg_where(node, &where);
        va_start(ap, fmt);
        (void) vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return sunkd_log_error_errno(c, -EINVAL, "%s: %s", where ?: "sunkd.yaml", what);
}

static void check_clear(sunkd_ctx *c, Check *k) {
        if (!k->conf)
                return;
        if (k->type && k->type->release)
                k->type->release(k->conf);
        c->api->cfg_clear(k->keys, k->n_keys, k->conf);
        free(k->conf);
        k->conf = NULL;
}

void settings_clear(State *s) {
        for (size_t i = 0; i < s->n_checks; i++)
                check_clear(s->ctx, &s->checks[i]);
        s->n_checks = 0;
        health_repair_clear(s);
        s->ctx->api->cfg_clear(conf_keys, ELEMENTSOF(conf_keys), &s->conf);
        s->ctx->api->cfg_clear(scontrol_keys, ELEMENTSOF(scontrol_keys), &s->sc);
        s->ctx->api->cfg_clear(rest_keys, ELEMENTSOF(rest_keys), &s->rest);
        free(s->node_name);
        s->node_name = NULL;
}

static bool name_is_valid(const char *n) {
        size_t len = strlen(n);

        if (len == 0 || len > CHECK_NAME_MAX || strv_contains((char **) reserved_names, n))
                return false;
        for (const char *p = n; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      *p == '_' || *p == '-'))
                        return false;
        return true;
}

/* The row of the check type @type names, and its key table. */
static int check_kind(const char *type, Check *k) {
        static const CheckKind kinds[] = {
                [HEALTH_RUNNER_BUILTIN] = CHECK_BUILTIN,
                [HEALTH_RUNNER_SCRIPT] = CHECK_SCRIPT,
                [HEALTH_RUNNER_GPU] = CHECK_GPU,
        };
        const HealthCheckType *t = health_check_type_find(type);

        if (!t)
                return -ENOENT;
        *k = (Check){ .kind = kinds[t->runner], .type = t, .keys = t->keys, .n_keys = t->n_keys };
        k->conf = calloc(1, t->conf_size);
        if (k->conf && t->defaults)
                t->defaults(k->conf);
        return k->conf ? 0 : -ENOMEM;
}

static int type_list(char *buf, size_t len) {
        size_t n = 0;

        buf[0] = '\0';
        for (const HealthCheckType *const *t = health_check_types; *t; t++)
                n += (size_t) snprintf(buf + MIN(n, len), len - MIN(n, len), "%s%s", n ? ", " : "",
                                       (*t)->name);
        return 0;
}

static int parse_action(sunkd_ctx *c, const sunkd_cfg *item, Check *k) {
        const char *a = ((HealthCheckCommon *) k->conf)->action;

        if (!a || streq(a, "drain"))
                k->action = HEALTH_ACTION_DRAIN;
        else if (streq(a, "report"))
                k->action = HEALTH_ACTION_REPORT;
        else
                return located(c, c->api->cfg_get(item, "action"),
                               "key 'action': '%s' is not drain or report", a);
        return 0;
}

static int parse_check(State *s, const sunkd_cfg *item, Check *k) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *tn = api->cfg_get(item, "type");
        const char *type = tn ? api->cfg_scalar(tn) : NULL;
        _cleanup_free_ char *error = NULL;
        HealthCheckCommon *common;
        char types[512];
        int r;

        if (!api->cfg_get(item, "name") && !api->cfg_child(item, 0, NULL))
                return located(s->ctx, item, "key 'checks': each check is a mapping with name and type");
        if (!type) {
                type_list(types, sizeof(types));
                return located(s->ctx, tn ?: item, "key 'type': required, one of %s", types);
        }
        r = check_kind(type, k);
        if (r == -ENOENT) {
                char msg[640];
                type_list(types, sizeof(types));
                (void) snprintf(msg, sizeof(msg), "key 'type': no check type '%.64s'; there are: %s", type,
                                types);
                return located(s->ctx, tn, "%s", msg);
        }
        if (r < 0)
                return r;
        k->s = s;
        r = api->cfg_parse(item, k->keys, k->n_keys, k->conf, &error);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "%s", error ?: "invalid check");
        common = k->conf;
        if (!name_is_valid(common->name))
                return located(s->ctx, api->cfg_get(item, "name"),
                               "key 'name': '%.40s' is not a check name (letters, digits, '_' and '-', at "
                               "most 32; not signal or idle)",
                               common->name);
        if (k->kind == CHECK_SCRIPT) {
                _cleanup_free_ char *why = NULL;
                r = health_check_jobs_script_trusted(((ScriptConf *) k->conf)->path, &why);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return located(s->ctx, api->cfg_get(item, "path"), "key 'path': %s",
                                       why ?: strerror(-r));
        }
        if (k->type && k->type->validate) {
                _cleanup_free_ char *why = NULL;
                r = k->type->validate(k->conf, &why);
                if (r < 0)
                        return located(s->ctx, item, "%s", why ?: "invalid check");
        }
        return parse_action(s->ctx, item, k);
}

static bool settings_stop(int *first, int r);

static int parse_checks(State *s) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *item;
        int first = 0;

        for (size_t i = 0; (item = api->cfg_child(s->conf.checks, i, NULL)); i++) {
                Check *k;
                int r;

                if (s->n_checks >= CHECKS_MAX)
                        return located(s->ctx, item, "key 'checks': more than %d checks", CHECKS_MAX);
                k = &s->checks[s->n_checks];
                r = parse_check(s, item, k);
                if (k->conf)
                        s->n_checks++; /* settings_clear frees it, parsed or not */
                if (settings_stop(&first, r))
                        return r;
                if (r < 0) /* the next check is read still: one round shows every error */
                        continue;
                for (size_t j = 0; j + 1 < s->n_checks; j++) {
                        if (streq(check_name(&s->checks[j]), check_name(k))) {
                                (void) settings_stop(&first, located(s->ctx, api->cfg_get(item, "name"),
                                                                     "key 'name': a second check named '%s'",
                                                                     check_name(k)));
                                break;
                        }
                        /* one judge holds what the GPUs did: two would count each XID twice */
                        if (k->kind == CHECK_GPU && s->checks[j].kind == CHECK_GPU) {
                                (void) settings_stop(&first,
                                                     located(s->ctx, api->cfg_get(item, "type"),
                                                             "key 'type': a second check of type gpu"));
                                break;
                        }
                }
        }
        return first;
}

static int parse_transport(State *s, const sunkd_cfg *cfg) {
        static const struct {
                const char *name;
                Transport t;
        } table[] = {
                { "scontrol", TRANSPORT_SCONTROL },
                { "libslurm", TRANSPORT_LIBSLURM },
                { "slurmrestd", TRANSPORT_SLURMRESTD },
                { "none", TRANSPORT_NONE },
        };
        const char *t = s->conf.transport ?: "scontrol";

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (streq(table[i].name, t)) {
                        s->transport = table[i].t;
                        return 0;
                }
        return located(s->ctx, s->ctx->api->cfg_get(cfg, "transport"),
                       "key 'transport': '%s' is not scontrol, libslurm, slurmrestd or none", t);
}

/* The short hostname: what slurmd calls the node unless told otherwise. */
static int default_node_name(char **ret) {
        char host[256];

        if (gethostname(host, sizeof(host) - 1) < 0)
                return -errno;
        host[sizeof(host) - 1] = '\0';
        host[strcspn(host, ".")] = '\0';
        *ret = strdup(host);
        return *ret ? 0 : -ENOMEM;
}

/* token_file or jwt_key_file, not both, and jwt_lifetime: as the scontrol
 * and slurmrestd maps take them.  A key file that mints tokens for anyone
 * is refused when the config is read, not at the first drain. */
static int parse_token_keys(State *s, const sunkd_cfg *map, const char *token_file, const char *jwt_key_file,
                            uint64_t jwt_lifetime_usec) {
        const sunkd_host_api *api = s->ctx->api;
        int r;

        if (token_file && jwt_key_file)
                return located(s->ctx, api->cfg_get(map, "jwt_key_file"),
                               "key 'jwt_key_file': give token_file or jwt_key_file, not both");
        if (jwt_key_file) {
                _cleanup_free_ char *why = NULL;
                r = health_jwt_key_check(jwt_key_file, (uid_t) -1, &why);
                if (r < 0)
                        return located(s->ctx, api->cfg_get(map, "jwt_key_file"), "key 'jwt_key_file': %s",
                                       why ?: strerror(-r));
        }
        if (jwt_lifetime_usec < SUNKD_USEC_PER_SEC)
                return located(s->ctx, api->cfg_get(map, "jwt_lifetime"), "key 'jwt_lifetime': at least 1s");
        return 0;
}

/* The program the scontrol transport runs is there, or the section is
 * refused: found at the first drain, it would leave the node undrained. */
static int scontrol_present(State *s, const sunkd_cfg *cfg) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *path = s->conf.scontrol ? api->cfg_get(s->conf.scontrol, "path") : NULL;
        struct stat st;
        const char *why;

        if (s->transport != TRANSPORT_SCONTROL)
                return 0;
        if (stat(s->sc.path, &st) < 0)
                why = strerror(errno);
        else if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111))
                why = "not an executable file";
        else
                return 0;
        if (path)
                return located(s->ctx, path, "key 'path': '%s': %s: the scontrol transport runs it",
                               s->sc.path, why);
        return located(
                s->ctx, api->cfg_get(cfg, "transport") ?: cfg,
                "key 'transport': scontrol runs '%s': %s: install Slurm's scontrol (Debian: slurm-client), "
                "name it in scontrol: path:, or choose transport: libslurm or slurmrestd",
                s->sc.path, why);
}

static int parse_scontrol(State *s, const sunkd_cfg *cfg) {
        _cleanup_free_ char *error = NULL;
        int r;

        s->sc = (ScontrolConf){ .jwt_lifetime_usec = 10 * 60 * SUNKD_USEC_PER_SEC };
        if (s->conf.scontrol) {
                r = s->ctx->api->cfg_parse(s->conf.scontrol, scontrol_keys, ELEMENTSOF(scontrol_keys),
                                           &s->sc, &error);
                if (r < 0)
                        return sunkd_log_error_errno(s->ctx, r, "%s", error ?: "invalid scontrol section");
        }
        r = parse_token_keys(s, s->conf.scontrol, s->sc.token_file, s->sc.jwt_key_file,
                             s->sc.jwt_lifetime_usec);
        if (r < 0)
                return r;
        if (!s->sc.user && !(s->sc.user = strdup("root")))
                return -ENOMEM;
        if (!s->sc.path && !(s->sc.path = strdup("/usr/bin/scontrol")))
                return -ENOMEM;
        return scontrol_present(s, cfg);
}

/* What is wrong with slurmrestd's @url, or NULL: http(s)://host[:port][/path]
 * and nothing a request could be steered or a secret logged with. */
static const char *url_problem(const char *url) {
        const char *host;
        size_t len;

        if (strncmp(url, "https://", 8) == 0)
                host = url + 8;
        else if (strncmp(url, "http://", 7) == 0)
                host = url + 7;
        else
                return "not an http:// or https:// URL";
        if (strlen(url) > 1024)
                return "longer than 1024 bytes";
        for (const char *p = url; *p; p++)
                if (*p <= ' ' || *p >= 0x7f)
                        return "it holds a blank, a control byte or a byte beyond ASCII";
        if (strpbrk(url, "?#"))
                return "a query or fragment has no place in it";
        len = strcspn(host, "/");
        if (len == 0)
                return "it names no host";
        if (memchr(host, '@', len))
                return "credentials have no place in it (use token_file or jwt_key_file)";
        return NULL;
}

/* "vN.N.N", at least v0.0.39: the first with a node update. */
static const char *version_problem(const char *v) {
        unsigned n[3] = {};
        size_t i = 0;

        if (v[0] != 'v')
                return "not of the form vN.N.N";
        for (const char *p = v + 1;; p++) {
                size_t digits = strspn(p, "0123456789");

                if (digits == 0 || digits > 3)
                        return "not of the form vN.N.N";
                n[i] = (unsigned) strtoul(p, NULL, 10);
                p += digits;
                if (++i == 3) {
                        if (*p)
                                return "not of the form vN.N.N";
                        break;
                }
                if (*p != '.')
                        return "not of the form vN.N.N";
        }
        if (n[0] == 0 && n[1] == 0 && n[2] < 39)
                return "slurmrestd has no node update before v0.0.39 (Slurm 23.02)";
        return NULL;
}

static bool user_is_valid(const char *u) {
        if (isempty(u) || strlen(u) >= HEALTH_JWT_USER_MAX)
                return false;
        for (const char *p = u; *p; p++)
                if (*p <= ' ' || *p >= 0x7f)
                        return false;
        return true;
}

static int rest_defaults(RestConf *c) {
        if (!c->version && !(c->version = strdup("v0.0.40")))
                return -ENOMEM;
        if (!c->user && !(c->user = strdup("root")))
                return -ENOMEM;
        /* "<url>/slurm/...": one '/' between */
        for (size_t n = strlen(c->url); n > 0 && c->url[n - 1] == '/'; n--)
                c->url[n - 1] = '\0';
        return 0;
}

/* Each key of the slurmrestd map, checked whichever transport is chosen;
 * the slurmrestd transport needs the map. */
static int parse_slurmrestd(State *s, const sunkd_cfg *cfg) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *map = s->conf.slurmrestd;
        _cleanup_free_ char *error = NULL;
        RestConf *c = &s->rest;
        const char *why;
        int r;

        *c = (RestConf){ .jwt_lifetime_usec = 10 * 60 * SUNKD_USEC_PER_SEC,
                         .timeout_usec = 15 * SUNKD_USEC_PER_SEC };
        if (!map)
                return s->transport != TRANSPORT_SLURMRESTD
                               ? 0
                               : located(s->ctx, api->cfg_get(cfg, "transport"),
                                         "key 'transport': slurmrestd needs a slurmrestd: mapping with its "
                                         "url and a token");
        r = api->cfg_parse(map, rest_keys, ELEMENTSOF(rest_keys), c, &error);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "%s", error ?: "invalid slurmrestd section");
        if ((why = url_problem(c->url)))
                return located(s->ctx, api->cfg_get(map, "url"), "key 'url': %s", why);
        if (c->version && (why = version_problem(c->version)))
                return located(s->ctx, api->cfg_get(map, "version"), "key 'version': '%.32s': %s",
                               c->version, why);
        if (c->user && !user_is_valid(c->user))
                return located(s->ctx, api->cfg_get(map, "user"),
                               "key 'user': not a user name (1 to %d bytes, no blanks or control bytes)",
                               HEALTH_JWT_USER_MAX - 1);
        if (!c->token_file && !c->jwt_key_file)
                return located(s->ctx, map, "key 'slurmrestd': give token_file or jwt_key_file");
        r = parse_token_keys(s, map, c->token_file, c->jwt_key_file, c->jwt_lifetime_usec);
        if (r < 0)
                return r;
        /* a round's three requests fit in the minute its job is given */
        if (c->timeout_usec < SUNKD_USEC_PER_SEC || c->timeout_usec > 20 * SUNKD_USEC_PER_SEC)
                return located(s->ctx, api->cfg_get(map, "timeout"), "key 'timeout': 1s to 20s");
        if (c->ca_file && strncmp(c->url, "https://", 8) != 0)
                return located(s->ctx, api->cfg_get(map, "ca_file"),
                               "key 'ca_file': the url is not https://");
        if (c->ca_file && access(c->ca_file, R_OK) < 0)
                return located(s->ctx, api->cfg_get(map, "ca_file"), "key 'ca_file': '%s': %s", c->ca_file,
                               strerror(errno));
        return rest_defaults(c);
}

/* The node name as slurmctld knows it: one word, no control bytes. */
static bool node_name_is_valid(const char *n) {
        if (isempty(n) || strlen(n) > 64)
                return false;
        for (const char *p = n; *p; p++)
                if (*p <= ' ' || *p >= 0x7f || *p == '=' || *p == ',')
                        return false;
        return true;
}

static int parse_xid_policy(State *s) {
        _cleanup_free_ char *error = NULL;
        int r;

        health_xid_policy_defaults(&s->xid_policy);
        if (!s->conf.xid_policy)
                return 0;
        r = health_xid_policy_parse(s->ctx->api, s->conf.xid_policy, &s->xid_policy, &error);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "%s", error ?: "invalid xid_policy");
        return 0;
}

static int parse_memory_policy(State *s) {
        _cleanup_free_ char *error = NULL;
        int r;

        r = health_gpu_memory_policy_parse(s->ctx->api, s->conf.memory_policy, &s->memory_policy, &error);
        if (r < 0)
                return sunkd_log_error_errno(s->ctx, r, "%s", error ?: "invalid memory_policy");
        return 0;
}

/* Printable ASCII, no '=' or control bytes: what Slurm stores verbatim. */
static bool words_are_valid(const char *t, size_t max) {
        if (isempty(t) || strlen(t) > max)
                return false;
        for (const char *p = t; *p; p++)
                if (*p < ' ' || *p > '~')
                        return false;
        return true;
}

/* reason_words: keys a code of the catalogue (or a script's own, any
 * [a-z0-9_-]) or a remedy; values short printable text. */
static int parse_reason_words(State *s, const sunkd_cfg *cfg) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *v;
        const char *key, *text;

        s->n_words = 0;
        for (size_t i = 0; s->conf.reason_words && (v = api->cfg_child(s->conf.reason_words, i, &key));
             i++) {
                text = api->cfg_scalar(v);
                if (s->n_words >= WORDS_MAX)
                        return located(s->ctx, v, "key 'reason_words': more than %d", WORDS_MAX);
                if (!key || !*key || strlen(key) >= HEALTH_CODE_MAX ||
                    strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(key))
                        return located(s->ctx, v, "key 'reason_words': '%s' is not a code or a remedy",
                                       key ?: "");
                if (!text || !words_are_valid(text, WORDS_TEXT_MAX))
                        return located(s->ctx, v,
                                       "key 'reason_words': %s: 1 to %d printable characters, such as "
                                       "Action:Reboot",
                                       key, WORDS_TEXT_MAX);
                (void) snprintf(s->words[s->n_words].key, sizeof(s->words[0].key), "%s", key);
                (void) snprintf(s->words[s->n_words].text, sizeof(s->words[0].text), "%s", text);
                s->n_words++;
        }
        if (s->conf.undrain_foreign_token && (!words_are_valid(s->conf.undrain_foreign_token, 63) ||
                                              strlen(s->conf.undrain_foreign_token) < 4 ||
                                              strncmp(s->conf.undrain_foreign_token, s->conf.reason_prefix,
                                                      strlen(s->conf.reason_prefix)) == 0))
                return located(s->ctx, api->cfg_get(cfg, "undrain_foreign_token"),
                               "key 'undrain_foreign_token': 4 to 63 printable characters, not our prefix");
        return 0;
}

/* debounce: code -> observations in a row at start-up (1 to 100). */
static int parse_debounce(State *s) {
        const sunkd_host_api *api = s->ctx->api;
        const sunkd_cfg *v;
        const char *key, *text;
        char *end;
        long n;

        s->n_debounce = 0;
        for (size_t i = 0; s->conf.debounce && (v = api->cfg_child(s->conf.debounce, i, &key)); i++) {
                text = api->cfg_scalar(v);
                if (s->n_debounce >= DEBOUNCE_MAX)
                        return located(s->ctx, v, "key 'debounce': more than %d", DEBOUNCE_MAX);
                if (!key || !*key || strlen(key) >= HEALTH_CODE_MAX ||
                    strspn(key, "abcdefghijklmnopqrstuvwxyz0123456789_-") != strlen(key))
                        return located(s->ctx, v, "key 'debounce': '%s' is not a code", key ?: "");
                errno = 0;
                n = text ? strtol(text, &end, 10) : 0;
                if (!text || errno != 0 || *end || end == text || n < 1 || n > 100)
                        return located(s->ctx, v, "key 'debounce': %s: a count from 1 to 100", key);
                (void) snprintf(s->debounce[s->n_debounce].code, sizeof(s->debounce[0].code), "%s", key);
                s->debounce[s->n_debounce++].need = (unsigned) n;
        }
        return 0;
}

/* The steps after the keys, in one shape for settings_parse()'s table. */
static int parse_transport_step(State *s, const sunkd_cfg *cfg) {
        return parse_transport(s, cfg);
}

static int parse_scontrol_step(State *s, const sunkd_cfg *cfg) {
        return parse_scontrol(s, cfg);
}

static int parse_xid_policy_step(State *s, const sunkd_cfg *cfg) {
        (void) cfg;
        return parse_xid_policy(s);
}

static int parse_memory_policy_step(State *s, const sunkd_cfg *cfg) {
        (void) cfg;
        return parse_memory_policy(s);
}

static int parse_checks_step(State *s, const sunkd_cfg *cfg) {
        (void) cfg;
        return parse_checks(s);
}

static int parse_debounce_step(State *s, const sunkd_cfg *cfg) {
        (void) cfg;
        return parse_debounce(s);
}

/* A step failed: remember the first error; only running out of memory
 * stops the reading, so that one round shows every error. */
static bool settings_stop(int *first, int r) {
        if (r < 0 && *first == 0)
                *first = r;
        return r == -ENOMEM;
}

int settings_parse(sunkd_ctx *c, const sunkd_cfg *cfg, State *s) {
        _cleanup_free_ char *error = NULL;
        int (*const steps[])(State * s, const sunkd_cfg *cfg) = {
                parse_transport_step,  parse_slurmrestd,         parse_scontrol_step,
                parse_xid_policy_step, parse_memory_policy_step, parse_checks_step,
                parse_debounce_step,   parse_reason_words,       health_repair_parse,
        };
        int first = 0, r;

        s->conf = (Conf){ .interval_usec = 60 * SUNKD_USEC_PER_SEC,
                          .fail_after = 2,
                          .pass_after = 1,
                          .max_drained_pct = 10 };
        r = c->api->cfg_parse(cfg, conf_keys, ELEMENTSOF(conf_keys), &s->conf, &error);
        if (r < 0)
                (void) sunkd_log_error_errno(c, r, "%s", error ?: "invalid health section");
        if (settings_stop(&first, r))
                return r;
        if (!s->conf.reason_prefix && !(s->conf.reason_prefix = strdup("sunkd: ")))
                return -ENOMEM;
        if (strlen(s->conf.reason_prefix) < 2 || strlen(s->conf.reason_prefix) > 32)
                (void) settings_stop(&first, located(c, c->api->cfg_get(cfg, "reason_prefix"),
                                                     "key 'reason_prefix': 2 to 32 characters, so our "
                                                     "reasons stay apart from everyone else's ('%s')",
                                                     s->conf.reason_prefix));
        if (!s->conf.root && !(s->conf.root = strdup("/")))
                return -ENOMEM;
        if (s->conf.node_name)
                s->node_name = strdup(s->conf.node_name);
        else if ((r = default_node_name(&s->node_name)) < 0)
                return sunkd_log_error_errno(c, r, "Cannot read the hostname for node_name: %m");
        if (!s->node_name)
                return -ENOMEM;
        if (!node_name_is_valid(s->node_name))
                (void) settings_stop(&first, located(c, c->api->cfg_get(cfg, "node_name") ?: cfg,
                                                     "key 'node_name': '%.64s' is not a Slurm node name",
                                                     s->node_name));
        for (size_t i = 0; i < ELEMENTSOF(steps); i++)
                if (settings_stop(&first, steps[i](s, cfg)))
                        return -ENOMEM;
        return first;
}
