/* The settings of a run, and the file that carries them to the client. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "prolog-settings.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/trusted-path.h"

#define SETTINGS_FILE_MAX (16 * 1024)

int prolog_settings_default(PrologSettings *s) {
        *s = (PrologSettings){
                .prolog_dir = strdup(SUNKD_SYSCONFDIR "/sunkd/prolog.d"),
                .epilog_dir = strdup(SUNKD_SYSCONFDIR "/sunkd/epilog.d"),
                .script_timeout_usec = PROLOG_SCRIPT_TIMEOUT_DEFAULT,
                .total_timeout_usec = PROLOG_TOTAL_TIMEOUT_DEFAULT,
                .kill_grace_usec = PROLOG_KILL_GRACE_DEFAULT,
                .output_limit = PROLOG_OUTPUT_LIMIT_DEFAULT,
        };
        if (!s->prolog_dir || !s->epilog_dir) {
                prolog_settings_done(s);
                return -ENOMEM;
        }
        return 0;
}

void prolog_settings_done(PrologSettings *s) {
        free(s->prolog_dir);
        free(s->epilog_dir);
        free(s->order);
        free(s->names);
        s->prolog_dir = s->epilog_dir = s->order = s->names = NULL;
        prolog_select_done(&s->select);
}

int prolog_settings_select(PrologSettings *s, const char **ret_key, char **ret_error) {
        int r;

        *ret_key = "order";
        r = prolog_select_set_order(&s->select, s->order, ret_error);
        if (r < 0)
                return r;
        *ret_key = "names";
        return prolog_select_set_names(&s->select, s->names, ret_error);
}

const char *prolog_settings_dir(const PrologSettings *s, PrologKind kind) {
        return kind == PROLOG_KIND_EPILOG ? s->epilog_dir : s->prolog_dir;
}

uint64_t prolog_script_timeout(const PrologSettings *s, uint64_t elapsed_usec) {
        uint64_t left;

        if (s->total_timeout_usec == 0)
                return s->script_timeout_usec;
        left = elapsed_usec < s->total_timeout_usec ? s->total_timeout_usec - elapsed_usec : 0;
        return s->script_timeout_usec ? MIN(s->script_timeout_usec, left) : left;
}

int prolog_settings_format(const PrologSettings *s, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        const char *text;

        if (!o)
                return -ENOMEM;
        json_object_object_add(o, "prolog_dir", json_object_new_string(s->prolog_dir));
        json_object_object_add(o, "epilog_dir", json_object_new_string(s->epilog_dir));
        json_object_object_add(o, "script_timeout_usec",
                               json_object_new_int64((int64_t) s->script_timeout_usec));
        json_object_object_add(o, "total_timeout_usec",
                               json_object_new_int64((int64_t) s->total_timeout_usec));
        json_object_object_add(o, "kill_grace_usec", json_object_new_int64((int64_t) s->kill_grace_usec));
        json_object_object_add(o, "output_limit", json_object_new_int64((int64_t) s->output_limit));
        json_object_object_add(o, "on_daemon_unreachable",
                               json_object_new_string(s->unreachable_fail ? "fail" : "run"));
        json_object_object_add(o, "order", json_object_new_string(prolog_select_order_name(&s->select)));
        json_object_object_add(o, "names", json_object_new_string(prolog_select_names_name(&s->select)));
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
        *ret = text ? strdup(text) : NULL;
        return *ret ? 0 : -ENOMEM;
}

static int bad(char **ret_error, const char *path, const char *field, const char *want) {
        return errmsg_set(ret_error, -EBADMSG, "%s: '%s' must be %s", path, field, want);
}

static int take_dir(json_object *o, const char *path, const char *field, char **dst, char **ret_error) {
        const char *v = json_member_string(o, field);
        char *copy;

        if (!json_object_object_get_ex(o, field, NULL))
                return 0;
        if (!v || v[0] != '/' || strstr(v, "/../") || strlen(v) >= 4096)
                return bad(ret_error, path, field, "an absolute path");
        copy = strdup(v);
        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

static int take_number(json_object *o, const char *path, const char *field, uint64_t max, uint64_t *dst,
                       char **ret_error) {
        json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(o, field, &v))
                return 0;
        if (!json_object_is_type(v, json_type_int) || (n = json_object_get_int64(v)) < 0 ||
            (uint64_t) n > max)
                return bad(ret_error, path, field, "a whole number within range");
        *dst = (uint64_t) n;
        return 0;
}

/* order and names: the words the module wrote, compiled as it did. */
static int take_select(json_object *o, const char *path, PrologSettings *s, char **ret_error) {
        _cleanup_free_ char *why = NULL;
        const char *key;
        int r;

        for (size_t i = 0; i < 2; i++) {
                const char *field = i == 0 ? "order" : "names";
                char **dst = i == 0 ? &s->order : &s->names;

                if (!json_object_object_get_ex(o, field, NULL))
                        continue;
                if (!json_member_string(o, field))
                        return bad(ret_error, path, field, "a string");
                free(*dst);
                *dst = strdup(json_member_string(o, field));
                if (!*dst)
                        return -ENOMEM;
        }
        r = prolog_settings_select(s, &key, &why);
        if (r == -EINVAL)
                return errmsg_set(ret_error, -EBADMSG, "%s: '%s': %s", path, key, why ?: "invalid");
        return r;
}

static int settings_parse(json_object *o, const char *path, PrologSettings *s, char **ret_error) {
        const uint64_t day = 86400 * UINT64_C(1000000);
        const char *unreachable;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return errmsg_set(ret_error, -EBADMSG, "%s: not a JSON object", path);
        if ((r = take_dir(o, path, "prolog_dir", &s->prolog_dir, ret_error)) < 0 ||
            (r = take_dir(o, path, "epilog_dir", &s->epilog_dir, ret_error)) < 0 ||
            (r = take_number(o, path, "script_timeout_usec", day, &s->script_timeout_usec, ret_error)) < 0 ||
            (r = take_number(o, path, "total_timeout_usec", day, &s->total_timeout_usec, ret_error)) < 0 ||
            (r = take_number(o, path, "kill_grace_usec", day, &s->kill_grace_usec, ret_error)) < 0 ||
            (r = take_number(o, path, "output_limit", PROLOG_OUTPUT_LIMIT_MAX, &s->output_limit,
                             ret_error)) < 0)
                return r;
        if (json_object_object_get_ex(o, "on_daemon_unreachable", NULL)) {
                unreachable = json_member_string(o, "on_daemon_unreachable");
                if (!unreachable || (!streq(unreachable, "run") && !streq(unreachable, "fail")))
                        return bad(ret_error, path, "on_daemon_unreachable", "\"run\" or \"fail\"");
                s->unreachable_fail = streq(unreachable, "fail");
        }
        return take_select(o, path, s, ret_error);
}

int prolog_settings_load(const char *path, PrologSettings *s, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        _cleanup_json_ json_object *o = NULL;
        size_t len;
        int r;

        r = prolog_settings_default(s);
        if (r < 0)
                return r;
        r = trusted_path_check(path, "prolog settings", 0, ret_error);
        if (r < 0)
                return r;
        r = fileio_read(path, SETTINGS_FILE_MAX, &text, &len);
        if (r == -EFBIG)
                return errmsg_set(ret_error, -EBADMSG, "%s: larger than %d bytes", path, SETTINGS_FILE_MAX);
        if (r < 0)
                return errmsg_set(ret_error, r, "%s: %s", path, strerror(-r));
        if (strlen(text) != len)
                return errmsg_set(ret_error, -EBADMSG, "%s: contains a NUL byte", path);
        o = json_tokener_parse(text);
        if (!o)
                return errmsg_set(ret_error, -EBADMSG, "%s: not valid JSON", path);
        return settings_parse(o, path, s, ret_error);
}
