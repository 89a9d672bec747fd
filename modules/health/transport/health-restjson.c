/* slurmrestd's answers into HealthNode, its errors[] into a line, and the
 * body of a node update (see health-restjson.h).  An answer is held to
 * the shape data_parser writes: what a HealthNode needs must be there and
 * of its type, everything else is ignored.  Text that reaches our
 * messages is made printable here, once. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "health-node.h"
#include "health-restjson.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "util/strv.h"

#define JSON_DEPTH_MAX 64
#define STATE_WORD_MAX 32

/* One JSON value and nothing after it but blanks; NULL otherwise.  A raw
 * NUL cannot be in JSON text (an escaped one can). */
static json_object *json_parse_all(const char *body, size_t len) {
        _cleanup_tokener_ json_tokener *tok = NULL;
        json_object *o;

        if (!body || len == 0 || len > INT_MAX || memchr(body, 0, len))
                return NULL;
        tok = json_tokener_new_ex(JSON_DEPTH_MAX);
        if (!tok)
                return NULL;
        o = json_tokener_parse_ex(tok, body, (int) len);
        if (!o || json_tokener_get_error(tok) != json_tokener_success) {
                json_object_put(o);
                return NULL;
        }
        for (size_t i = json_tokener_get_parse_end(tok); i < len; i++)
                if (!strchr(" \t\r\n", body[i]))
                        return json_object_put(o), NULL;
        return o;
}

/* A copy of the string @v, every control byte (NUL too) made '?'. */
static char *clean_dup(json_object *v) {
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);
        char *d = malloc(n + 1);

        if (!d)
                return NULL;
        for (size_t i = 0; i < n; i++)
                d[i] = (unsigned char) s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
        d[n] = '\0';
        return d;
}

static bool state_word_is_valid(json_object *v) {
        const char *s = json_object_get_string(v);
        size_t n = (size_t) json_object_get_string_len(v);

        if (!json_object_is_type(v, json_type_string) || n == 0 || n > STATE_WORD_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
                        return false;
        return true;
}

/* ["IDLE","DRAIN"] as "IDLE+DRAIN"; -EBADMSG for anything else. */
static int state_join(json_object *a, char **ret) {
        StrBuf b = {};
        size_t n;

        if (!json_object_is_type(a, json_type_array) || (n = json_object_array_length(a)) == 0)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                json_object *w = json_object_array_get_idx(a, i);

                if (!state_word_is_valid(w)) {
                        strbuf_done(&b);
                        return -EBADMSG;
                }
                if (i > 0)
                        strbuf_putc(&b, '+');
                strbuf_puts(&b, json_object_get_string(w));
        }
        if (b.oom) {
                strbuf_done(&b);
                return -ENOMEM;
        }
        *ret = strbuf_steal(&b, NULL);
        return 0;
}

static int partition_push(char ***l, const char *name, size_t len) {
        char *p;

        if (len == 0)
                return 0;
        p = strndup(name, len);
        if (!p || strv_push(l, p) < 0) {
                free(p);
                return -ENOMEM;
        }
        return 0;
}

/* ["a","b"] or "a,b" (both seen, by version) into a list of names. */
static int partitions_parse(json_object *v, char ***ret) {
        _cleanup_free_ char *s = NULL;

        if (!v)
                return 0;
        if (json_object_is_type(v, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        json_object *e = json_object_array_get_idx(v, i);
                        _cleanup_free_ char *p = NULL;

                        if (!json_object_is_type(e, json_type_string))
                                return -EBADMSG;
                        if (!(p = clean_dup(e)) || partition_push(ret, p, strlen(p)) < 0)
                                return -ENOMEM;
                }
                return 0;
        }
        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        if (!(s = clean_dup(v)))
                return -ENOMEM;
        for (const char *p = s; *p;) {
                size_t w = strcspn(p, ",");

                if (partition_push(ret, p, w) < 0)
                        return -ENOMEM;
                p += w;
                p += *p == ',';
        }
        return 0;
}

static int node_parse(json_object *o, size_t i, HealthNode *ret, char **ret_error) {
        json_object *name, *state, *reason = NULL, *parts = NULL;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return errmsg_set(ret_error, -EBADMSG, "nodes[%zu] is not an object", i);
        if (!json_object_object_get_ex(o, "name", &name) || !json_object_is_type(name, json_type_string) ||
            json_object_get_string_len(name) == 0)
                return errmsg_set(ret_error, -EBADMSG, "nodes[%zu] has no name", i);
        if (!(ret->name = clean_dup(name)))
                return -ENOMEM;
        if (!json_object_object_get_ex(o, "state", &state))
                return errmsg_set(ret_error, -EBADMSG, "node %s has no state", ret->name);
        r = state_join(state, &ret->state);
        if (r == -EBADMSG)
                return errmsg_set(ret_error, r,
                                  "node %s: its state is not an array of words such as \"IDLE\" and "
                                  "\"DRAIN\" (data_parser v0.0.39 and later)",
                                  ret->name);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(o, "reason", &reason) &&
            !json_object_is_type(reason, json_type_null)) {
                if (!json_object_is_type(reason, json_type_string))
                        return errmsg_set(ret_error, -EBADMSG, "node %s: its reason is not a string",
                                          ret->name);
                if (json_object_get_string_len(reason) > 0 && !(ret->reason = clean_dup(reason)))
                        return -ENOMEM;
        }
        (void) json_object_object_get_ex(o, "partitions", &parts);
        r = partitions_parse(parts, &ret->partitions);
        if (r == -EBADMSG)
                return errmsg_set(ret_error, r, "node %s: its partitions are not a list of names",
                                  ret->name);
        return r;
}

int health_rest_nodes_parse(const char *body, size_t len, HealthNode **ret, size_t *ret_n,
                            char **ret_error) {
        _cleanup_json_ json_object *o = json_parse_all(body, len);
        json_object *a;
        HealthNode *nodes;
        size_t n;
        int r = 0;

        if (!json_object_is_type(o, json_type_object))
                return errmsg_set(ret_error, -EBADMSG, "the answer is not a JSON object");
        if (!json_object_object_get_ex(o, "nodes", &a) || !json_object_is_type(a, json_type_array))
                return errmsg_set(ret_error, -EBADMSG, "the answer has no \"nodes\" array");
        n = json_object_array_length(a);
        if (n > HEALTH_REST_NODES_MAX)
                return errmsg_set(ret_error, -E2BIG, "the answer lists %zu nodes, more than %d", n,
                                  HEALTH_REST_NODES_MAX);
        nodes = calloc(MAX(n, (size_t) 1), sizeof(*nodes));
        if (!nodes)
                return -ENOMEM;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = node_parse(json_object_array_get_idx(a, i), i, &nodes[i], ret_error);
        if (r < 0) {
                health_nodes_free(nodes, n);
                return r;
        }
        *ret = nodes;
        *ret_n = n;
        return 0;
}

static void append_clean(StrBuf *b, json_object *v) {
        _cleanup_free_ char *s = v && json_object_is_type(v, json_type_string) ? clean_dup(v) : NULL;

        if (!isempty(s))
                strbuf_puts(b, s);
}

bool health_rest_errors(const char *body, size_t len, char *buf, size_t size) {
        _cleanup_json_ json_object *o = json_parse_all(body, len);
        json_object *a, *e, *v;
        StrBuf b = {};

        buf[0] = '\0';
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "errors", &a) ||
            !json_object_is_type(a, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(a) && b.len < size; i++) {
                size_t start;

                e = json_object_array_get_idx(a, i);
                if (!json_object_is_type(e, json_type_object))
                        continue;
                if (b.len > 0)
                        strbuf_puts(&b, "; ");
                start = b.len;
                append_clean(&b, json_object_object_get_ex(e, "error", &v) ? v : NULL);
                if (json_object_object_get_ex(e, "description", &v) && json_object_get_string_len(v) > 0) {
                        if (b.len > start)
                                strbuf_puts(&b, ": ");
                        append_clean(&b, v);
                }
                if (b.len == start && start > 0)
                        strbuf_truncate(&b, start - 2);
        }
        if (b.data)
                (void) snprintf(buf, size, "%s", b.data);
        strbuf_done(&b);
        return buf[0] != '\0';
}

int health_rest_update_body(bool drain, const char *reason, char **ret) {
        _cleanup_json_ json_object *o = json_object_new_object();
        json_object *state = json_object_new_array(),
                    *word = json_object_new_string(drain ? "DRAIN" : "RESUME");
        const char *text;

        if (!o || !state || !word || json_object_array_add(state, word) < 0) {
                json_object_put(word);
                json_object_put(state);
                return -ENOMEM;
        }
        if (json_object_object_add(o, "state", state) < 0) {
                json_object_put(state);
                return -ENOMEM;
        }
        if (drain) {
                json_object *r = json_object_new_string(reason ?: "");

                if (!r || json_object_object_add(o, "reason", r) < 0) {
                        json_object_put(r);
                        return -ENOMEM;
                }
        }
        text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!text || !(*ret = strdup(text)))
                return -ENOMEM;
        return 0;
}
