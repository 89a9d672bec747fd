/* The module's section of sunkd.yaml, and the copy of its settings the
 * client reads when it must run the scripts itself (prolog-settings.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "prolog-state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"

static const sunkd_cfg_key conf_keys[] = {
        { "prolog_dir", SUNKD_CFG_PATH, offsetof(Conf, set.prolog_dir), 0, 0, 0 },
        { "epilog_dir", SUNKD_CFG_PATH, offsetof(Conf, set.epilog_dir), 0, 0, 0 },
        { "script_timeout", SUNKD_CFG_DURATION, offsetof(Conf, set.script_timeout_usec), 0, 0, 0 },
        { "total_timeout", SUNKD_CFG_DURATION, offsetof(Conf, set.total_timeout_usec), 0, 0, 0 },
        { "kill_grace", SUNKD_CFG_DURATION, offsetof(Conf, set.kill_grace_usec), 0, 0, 0 },
        { "output_limit", SUNKD_CFG_SIZE, offsetof(Conf, set.output_limit), 0, 0, PROLOG_OUTPUT_LIMIT_MAX },
        { "on_daemon_unreachable", SUNKD_CFG_STRING, offsetof(Conf, on_daemon_unreachable), 0, 0, 0 },
        { "keep_runs", SUNKD_CFG_INT, offsetof(Conf, keep_runs), 0, 0, PROLOG_KEEP_RUNS_MAX },
        { "missing_dir", SUNKD_CFG_STRING, offsetof(Conf, missing_dir), 0, 0, 0 },
        { "order", SUNKD_CFG_STRING, offsetof(Conf, set.order), 0, 0, 0 },
        { "names", SUNKD_CFG_STRING, offsetof(Conf, set.names), 0, 0, 0 },
};

static int conf_error(sunkd_ctx *c, const sunkd_cfg *cfg, const char *key, const char *what) {
        const sunkd_cfg *node = c->api->cfg_get(cfg, key);
        _cleanup_free_ char *where = NULL;

        (void) c->api->cfg_where(node ?: cfg, &where);
        return sunkd_log_error_errno(c, -EINVAL, "%s: key '%s': %s", where ?: "sunkd.yaml", key, what);
}

void conf_clear(sunkd_ctx *c, Conf *conf) {
        c->api->cfg_clear(conf_keys, ELEMENTSOF(conf_keys), conf);
        prolog_select_done(&conf->set.select);
}

/* order and names, compiled here: a regex that does not compile is refused
 * at its line, never at a job's prolog. */
static int conf_select(sunkd_ctx *c, const sunkd_cfg *cfg, Conf *conf) {
        _cleanup_free_ char *why = NULL;
        const char *key = "names";
        int r;

        r = prolog_settings_select(&conf->set, &key, &why);
        if (r == -EINVAL)
                return conf_error(c, cfg, key, why ?: "invalid");
        return r;
}

/* What cfg_parse cannot say: the bounds between keys, and the choices.
 * Each is logged; the first error is returned. */
static int conf_validate(sunkd_ctx *c, const sunkd_cfg *cfg, Conf *conf) {
        const uint64_t ms = SUNKD_USEC_PER_MSEC, day = 86400 * SUNKD_USEC_PER_SEC;
        const char *u = conf->on_daemon_unreachable ?: "run";
        const struct {
                bool bad;
                const char *key, *want;
        } rules[] = {
                { conf->set.script_timeout_usec < ms || conf->set.script_timeout_usec > day,
                  "script_timeout", "from 1ms to 1d" },
                { conf->set.total_timeout_usec < ms || conf->set.total_timeout_usec > day, "total_timeout",
                  "from 1ms to 1d" },
                { conf->set.kill_grace_usec < ms || conf->set.kill_grace_usec > 10 * 60 * SUNKD_USEC_PER_SEC,
                  "kill_grace", "from 1ms to 10m" },
                { conf->set.output_limit < 256, "output_limit", "at least 256 bytes" },
                { streq(conf->set.prolog_dir, conf->set.epilog_dir), "epilog_dir",
                  "the same directory as prolog_dir" },
                { !streq(u, "run") && !streq(u, "fail"), "on_daemon_unreachable", "run or fail" },
                { conf->missing_dir && !streq(conf->missing_dir, "fail") &&
                          !streq(conf->missing_dir, "later"),
                  "missing_dir", "fail or later" },
        };
        int first = 0, r;

        /* every rule, past the first broken: one round shows them all */
        for (size_t i = 0; i < ELEMENTSOF(rules); i++)
                if (rules[i].bad) {
                        r = conf_error(c, cfg, rules[i].key, rules[i].want);
                        first = first ?: r;
                }
        conf->set.unreachable_fail = streq(u, "fail");
        r = conf_select(c, cfg, conf);
        if (r == -ENOMEM)
                return r;
        return first ?: r;
}

/* Every script of a listing refused, each an error of @key: one round
 * shows them all.  The first error is returned. */
static int conf_refused(sunkd_ctx *c, const sunkd_cfg *cfg, const char *key, const PrologScript *sc,
                        size_t n) {
        int r = 0;

        for (size_t i = 0; i < n; i++)
                if (sc[i].error < 0) {
                        int k = conf_error(c, cfg, key, sc[i].why);
                        r = r ?: k;
                }
        return r;
}

/* Each partition's directory (a plain-named subdirectory), listed as a job
 * of that partition would list it. */
static int conf_check_partitions(sunkd_ctx *c, const sunkd_cfg *cfg, const Conf *conf, PrologKind kind) {
        const char *key = kind == PROLOG_KIND_EPILOG ? "epilog_dir" : "prolog_dir";
        const char *dir = prolog_settings_dir(&conf->set, kind);
        _cleanup_closedir_ DIR *d = opendir(dir);
        struct dirent *de;
        int r = 0;

        if (!d)
                return 0; /* listed just now: gone meanwhile is a run's to say */
        while (r >= 0 && (de = readdir(d))) {
                _cleanup_free_ char *error = NULL;
                PrologScript *sc = NULL;
                struct stat st;
                size_t n = 0;

                if (!prolog_select_partition_valid(de->d_name) ||
                    fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISDIR(st.st_mode))
                        continue;
                r = prolog_dir_select(dir, kind, &conf->set.select, de->d_name, &sc, &n, &error);
                if (r < 0)
                        r = r == -ENOMEM ? r : conf_error(c, cfg, key, error ?: strerror(-r));
                else
                        r = conf_refused(c, cfg, key, sc, n);
                prolog_scripts_free(sc, n);
        }
        return r;
}

/* A directory is listed as a run lists it, so what a run would refuse is
 * refused here, where the mistake was made: at --check-config, start and
 * reload.  Scripts skipped (not executable) are a run's to report. */
static int conf_check_dir(sunkd_ctx *c, const sunkd_cfg *cfg, const Conf *conf, PrologKind kind) {
        const char *key = kind == PROLOG_KIND_EPILOG ? "epilog_dir" : "prolog_dir";
        const char *dir = prolog_settings_dir(&conf->set, kind);
        _cleanup_free_ char *error = NULL;
        PrologScript *sc = NULL;
        size_t n = 0;
        int r;

        r = prolog_dir_select(dir, kind, &conf->set.select, NULL, &sc, &n, &error);
        if (r == -ENOENT && conf->missing_dir && streq(conf->missing_dir, "later")) {
                sunkd_log_notice(c,
                                 "%s directory %s does not exist yet: each %s fails until it appears "
                                 "(missing_dir: later).",
                                 prolog_kind_name(kind), dir, prolog_kind_name(kind));
                return 0;
        }
        if (r == -ENOENT) {
                _cleanup_free_ char *what = NULL;

                if (asprintf(&what,
                             "%s (create it, or set missing_dir: later for one mounted after sunkd starts)",
                             error ?: dir) < 0) {
                        what = NULL;
                        return -ENOMEM;
                }
                return conf_error(c, cfg, key, what);
        }
        if (r < 0)
                return r == -ENOMEM ? r : conf_error(c, cfg, key, error ?: strerror(-r));
        r = conf_refused(c, cfg, key, sc, n);
        prolog_scripts_free(sc, n);
        return r < 0 ? r : conf_check_partitions(c, cfg, conf, kind);
}

int conf_parse(sunkd_ctx *c, const sunkd_cfg *cfg, Conf *conf) {
        _cleanup_free_ char *error = NULL;
        PrologSettings def;
        int first, r;

        r = prolog_settings_default(&def);
        if (r < 0)
                return r;
        *conf = (Conf) {
                .set = {
                        .script_timeout_usec = def.script_timeout_usec,
                        .total_timeout_usec = def.total_timeout_usec,
                        .kill_grace_usec = def.kill_grace_usec,
                        .output_limit = def.output_limit,
                },
                .keep_runs = PROLOG_KEEP_RUNS_DEFAULT,
        };
        /* Past the first error, to the last: one round shows every one.
         * Only running out of memory stops. */
        first = c->api->cfg_parse(cfg, conf_keys, ELEMENTSOF(conf_keys), conf, &error);
        if (first < 0)
                (void) sunkd_log_error_errno(c, first, "%s", error ?: "invalid configuration");
        if (!conf->set.prolog_dir)
                conf->set.prolog_dir = TAKE_PTR(def.prolog_dir);
        if (!conf->set.epilog_dir)
                conf->set.epilog_dir = TAKE_PTR(def.epilog_dir);
        prolog_settings_done(&def);
        if (first == -ENOMEM)
                return first;
        r = conf_validate(c, cfg, conf);
        first = first ?: r;
        r = conf_check_dir(c, cfg, conf, PROLOG_KIND_PROLOG);
        if (r == -ENOMEM)
                return r;
        first = first ?: r;
        r = conf_check_dir(c, cfg, conf, PROLOG_KIND_EPILOG);
        if (r == -ENOMEM)
                return r;
        return first ?: r;
}

/* Written at each start and reload, so the client's fallback follows the
 * settings sunkd ran with last; a failure costs the fallback its settings
 * (it then fails rather than guess), so it is logged, not fatal. */
int conf_publish(State *s) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (!s->settings_path)
                return 0;
        r = prolog_settings_format(&s->conf.set, &text);
        if (r < 0)
                return r;
        r = fileio_write_atomic(s->settings_path, text, strlen(text), 0600, (uid_t) -1, (gid_t) -1);
        if (r < 0)
                return sunkd_log_warning_errno(s->ctx, r,
                                               "Cannot write %s, which the client's fallback reads (without "
                                               "it the fallback fails): %m",
                                               s->settings_path);
        return 0;
}
