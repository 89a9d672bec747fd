/* What must outlive a restart, in <state_dir>/health/state.json: the reason
 * we set (so a restart never resumes a node drained for a real fault, and
 * knows a drain an admin lifted meanwhile), the sticky one, and each
 * check's hysteresis and last result.  A file that does not parse is
 * logged and ignored: the checks then start from nothing, which is safe
 * (nothing is resumed that the node's reason does not say is ours). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "health-state.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/text-escape.h"

#define STORE_FILE "state.json"
#define STORE_MAX (256 * 1024)

static char *store_path(State *s) {
        char *p = NULL;

        return asprintf(&p, "%s/%s", s->ctx->api->state_dir(s->ctx), STORE_FILE) < 0 ? NULL : p;
}

static void copy_member(json_object *o, const char *key, char *dst, size_t len) {
        const char *v = json_member_string(o, key);

        if (v && strlen(v) < len) {
                memcpy(dst, v, strlen(v) + 1);
                /* a file of an older version may hold what is not UTF-8 */
                text_escape_buf(dst, len, TEXT_ESCAPE_LINE);
        }
}

static void load_check(Check *k, json_object *o) {
        const char *st = json_member_string(o, "status");
        int64_t fails = json_member_int64(o, "fails", 0), passes = json_member_int64(o, "passes", 0);
        json_object *f;
        int r;

        if (!json_object_object_get_ex(o, "failing", &f) || !json_object_is_type(f, json_type_boolean))
                return;
        k->count.failing = json_object_get_boolean(f);
        k->count.fails = (unsigned) CLAMP(fails, 0, 1000000);
        k->count.passes = (unsigned) CLAMP(passes, 0, 1000000);
        if (!st)
                return;
        k->have_result = true;
        k->last.status = streq(st, "pass") ? HEALTH_PASS : streq(st, "fail") ? HEALTH_FAIL : HEALTH_UNKNOWN;
        copy_member(o, "code", k->last.code, sizeof(k->last.code));
        copy_member(o, "detail", k->last.detail, sizeof(k->last.detail));
        copy_member(o, "target", k->last.target, sizeof(k->last.target));
        r = health_code_remedy_from_string(json_member_string(o, "remedy"));
        k->last.remedy = r >= 0                          ? (HealthRemedy) r
                         : k->last.status == HEALTH_FAIL ? health_code_remedy(k->last.code)
                                                         : HEALTH_REMEDY_NONE;
}

/* The state file as a JSON object, or NULL (missing, or logged as unreadable). */
static json_object *store_read(State *s) {
        _cleanup_free_ char *path = store_path(s), *text = NULL;
        json_object *o = NULL;
        size_t len;
        int r;

        if (!path)
                return NULL;
        r = fileio_read(path, STORE_MAX, &text, &len);
        if (r == -ENOENT)
                return NULL;
        if (r >= 0 && !(o = json_tokener_parse(text)))
                r = -EBADMSG;
        if (r >= 0 && !json_object_is_type(o, json_type_object))
                r = -EBADMSG;
        if (r < 0) {
                json_object_put(o);
                sunkd_log_warning_errno(s->ctx, r, "Ignoring '%s', which cannot be read: %m", path);
                return NULL;
        }
        return o;
}

/* The gpu judge's memory: what it counted and holds survives a restart. */
void store_load_gpu(State *s) {
        _cleanup_json_ json_object *o = store_read(s);
        json_object *g;
        int r;

        if (!o || !s->gpu || !json_object_object_get_ex(o, "gpu", &g))
                return;
        r = health_gpu_state_from_json(s->gpu, g);
        if (r < 0)
                sunkd_log_warning_errno(s->ctx, r, "Ignoring the saved state of the gpu check: %m");
}

void store_load(State *s) {
        _cleanup_json_ json_object *o = store_read(s);
        json_object *checks, *c;

        if (!o)
                return;
        copy_member(o, "set_reason", s->set_reason, sizeof(s->set_reason));
        copy_member(o, "sticky_reason", s->sticky_reason, sizeof(s->sticky_reason));
        copy_member(o, "lifted_check", s->lifted_check, sizeof(s->lifted_check));
        copy_member(o, "lifted_reason", s->lifted_reason, sizeof(s->lifted_reason));
        if (json_object_is_type(json_object_object_get(o, "repair"), json_type_object))
                health_repair_from_json(s, json_object_object_get(o, "repair"));
        if (!json_object_object_get_ex(o, "checks", &checks) ||
            !json_object_is_type(checks, json_type_object))
                return;
        for (size_t i = 0; i < s->n_checks; i++)
                if (json_object_object_get_ex(checks, check_name(&s->checks[i]), &c) &&
                    json_object_is_type(c, json_type_object))
                        load_check(&s->checks[i], c);
}

/* Counts beyond the thresholds change nothing after a restart: kept capped,
 * a check that keeps passing (or failing) does not rewrite the file. */
static json_object *check_to_json(const Check *k, unsigned fail_after, unsigned pass_after) {
        static const char *const names[] = { "pass", "fail", "unknown" };
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "failing", json_object_new_boolean(k->count.failing));
        json_object_object_add(o, "fails", json_object_new_int64(MIN(k->count.fails, fail_after)));
        json_object_object_add(o, "passes", json_object_new_int64(MIN(k->count.passes, pass_after)));
        /* what the reason is made of, needed only while the check is failing */
        if (k->count.failing) {
                json_object_object_add(o, "status", json_object_new_string(names[k->last.status]));
                json_object_object_add(o, "code", json_object_new_string(k->last.code));
                json_object_object_add(o, "remedy",
                                       json_object_new_string(health_code_remedy_to_string(k->last.remedy)));
                json_object_object_add(o, "detail", json_object_new_string(k->last.detail));
                json_object_object_add(o, "target", json_object_new_string(k->last.target));
        }
        return o;
}

void store_save(State *s) {
        _cleanup_free_ char *path = store_path(s);
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *checks = json_object_new_object();
        const char *text;
        int r;

        if (!path || !o || !checks) {
                json_object_put(checks);
                return (void) sunkd_log_error_errno(s->ctx, -ENOMEM, "Cannot save the health state: %m");
        }
        json_object_object_add(o, "set_reason", json_object_new_string(s->set_reason));
        json_object_object_add(o, "sticky_reason", json_object_new_string(s->sticky_reason));
        json_object_object_add(o, "lifted_check", json_object_new_string(s->lifted_check));
        json_object_object_add(o, "lifted_reason", json_object_new_string(s->lifted_reason));
        for (size_t i = 0; i < s->n_checks; i++)
                json_object_object_add(checks, check_name(&s->checks[i]),
                                       check_to_json(&s->checks[i], (unsigned) s->conf.fail_after,
                                                     (unsigned) s->conf.pass_after));
        json_object_object_add(o, "checks", checks);
        if (s->gpu)
                json_object_object_add(o, "gpu", health_gpu_state_to_json(s->gpu));
        if (s->repair.phase != REPAIR_IDLE || s->repair.n_history > 0)
                json_object_object_add(o, "repair", health_repair_to_json(s));
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
        if (s->saved && streq(s->saved, text))
                return;
        free(s->saved);
        s->saved = strdup(text);
        r = fileio_write_atomic(path, text, strlen(text), 0600, (uid_t) -1, (gid_t) -1);
        if (r < 0)
                sunkd_log_error_errno(s->ctx, r, "Cannot save the health state to '%s': %m", path);
}
