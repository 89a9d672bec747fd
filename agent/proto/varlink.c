/* Varlink message codec.
 *
 * A frame is one JSON object; the NUL that ends it on the wire is the
 * caller's business (ipc.c and client.c split the stream).  Parsing is done
 * by json-c, but json-c is a lenient parser even with JSON_TOKENER_STRICT:
 * it accepts single-quoted strings, NaN and Infinity, raw control characters
 * inside strings, lone UTF-16 surrogate escapes (turned into U+FFFD), and its
 * UTF-8 check lets overlong forms, encoded surrogates and code points above
 * U+10FFFF through.  Worst of all, an object with a repeated key silently
 * keeps the last value, so two parties reading the same bytes could disagree
 * about what was asked.
 *
 * So a frame goes through three gates, cheapest first:
 *   1. size, embedded NUL and a strict UTF-8 check (Unicode 15, table 3-7);
 *   2. json-c with a depth limit, which builds the tree;
 *   3. a walk of the raw text in step with that tree, which enforces the
 *      RFC 8259 grammar json-c relaxes and finds duplicate keys.
 * The duplicate check needs no key decoding of its own: json-c keeps one
 * member per distinct key and keeps members in first-insertion order, so an
 * object whose raw text has more members than its json-c object has a
 * repeated key, with exactly json-c's idea of key equality ("a" and "\u0061"
 * are one key).  As long as no key repeats, the raw members and the tree's
 * members pair up one to one, which is how the walk descends; once they stop
 * pairing up, a key has repeated somewhere above, and the walk says so.
 *
 * Nothing here logs; errors are negative errno values as documented in the
 * header, and the caller turns them into a reason for the peer.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/text-escape.h"
#include "proto/varlink.h"

/* Well-formed UTF-8 only (no overlong forms, no surrogates, nothing above
 * U+10FFFF): the one definition, text-escape.c's, that every reply's text
 * was made to meet. */
static bool utf8_is_valid(const char *s, size_t len) {
        return text_escape_utf8_valid(s, len);
}

/* ---- The strict walk ---------------------------------------------------- */

typedef struct Walk {
        const char *p;
        const char *end;
        unsigned depth;
        unsigned max_depth;
} Walk;

static void walk_space(Walk *w) {
        while (w->p < w->end && (*w->p == ' ' || *w->p == '\t' || *w->p == '\n' || *w->p == '\r'))
                w->p++;
}

static bool walk_char(Walk *w, char c) {
        walk_space(w);
        if (w->p >= w->end || *w->p != c)
                return false;
        w->p++;
        return true;
}

static int walk_hex4(Walk *w, unsigned *ret) {
        unsigned v = 0;

        if (w->end - w->p < 4)
                return -EBADMSG;
        for (int i = 0; i < 4; i++) {
                char c = *w->p++;
                int d;

                if (c >= '0' && c <= '9')
                        d = c - '0';
                else if (c >= 'a' && c <= 'f')
                        d = c - 'a' + 10;
                else if (c >= 'A' && c <= 'F')
                        d = c - 'A' + 10;
                else
                        return -EBADMSG;
                v = v * 16 + (unsigned) d;
        }
        *ret = v;
        return 0;
}

/* A string token starting at the opening quote.  Escapes must be RFC 8259's;
 * \u0000 is refused because keys and values become C strings downstream, and
 * surrogate escapes must come in proper pairs. */
static int walk_string(Walk *w) {
        if (w->p >= w->end || *w->p != '"')
                return -EBADMSG;
        w->p++;

        while (w->p < w->end) {
                unsigned char c = (unsigned char) *w->p++;
                unsigned u, u2;
                int r;

                if (c == '"')
                        return 0;
                if (c < 0x20)
                        return -EBADMSG;
                if (c != '\\')
                        continue;
                if (w->p >= w->end)
                        return -EBADMSG;
                c = (unsigned char) *w->p++;
                if (strchr("\"\\/bfnrt", c) && c != 0)
                        continue;
                if (c != 'u')
                        return -EBADMSG;
                r = walk_hex4(w, &u);
                if (r < 0)
                        return r;
                if (u == 0)
                        return -EILSEQ;
                if (u >= 0xdc00 && u <= 0xdfff)
                        return -EILSEQ;
                if (u >= 0xd800 && u <= 0xdbff) {
                        if (w->end - w->p < 2 || w->p[0] != '\\' || w->p[1] != 'u')
                                return -EILSEQ;
                        w->p += 2;
                        r = walk_hex4(w, &u2);
                        if (r < 0)
                                return r;
                        if (u2 < 0xdc00 || u2 > 0xdfff)
                                return -EILSEQ;
                }
        }
        return -EBADMSG;
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

static int walk_number(Walk *w) {
        if (w->p < w->end && *w->p == '-')
                w->p++;
        if (w->p >= w->end || !is_digit(*w->p))
                return -EBADMSG;
        if (*w->p == '0')
                w->p++;
        else
                while (w->p < w->end && is_digit(*w->p))
                        w->p++;
        if (w->p < w->end && *w->p == '.') {
                w->p++;
                if (w->p >= w->end || !is_digit(*w->p))
                        return -EBADMSG;
                while (w->p < w->end && is_digit(*w->p))
                        w->p++;
        }
        if (w->p < w->end && (*w->p == 'e' || *w->p == 'E')) {
                w->p++;
                if (w->p < w->end && (*w->p == '+' || *w->p == '-'))
                        w->p++;
                if (w->p >= w->end || !is_digit(*w->p))
                        return -EBADMSG;
                while (w->p < w->end && is_digit(*w->p))
                        w->p++;
        }
        return 0;
}

static int walk_literal(Walk *w, const char *lit, json_type type, json_object *o) {
        size_t n = strlen(lit);

        if ((size_t) (w->end - w->p) < n || memcmp(w->p, lit, n) != 0)
                return -EBADMSG;
        w->p += n;
        /* The tree and the text disagree only after a repeated key. */
        return json_object_get_type(o) == type ? 0 : -ENOTUNIQ;
}

static int walk_value(Walk *w, json_object *o);

static int walk_object(Walk *w, json_object *o) {
        struct json_object_iterator it, end;
        int r;

        if (!json_object_is_type(o, json_type_object))
                return -ENOTUNIQ;
        it = json_object_iter_begin(o);
        end = json_object_iter_end(o);

        w->p++; /* '{' */
        if (walk_char(w, '}'))
                return json_object_iter_equal(&it, &end) ? 0 : -ENOTUNIQ;
        for (;;) {
                walk_space(w);
                r = walk_string(w);
                if (r < 0)
                        return r;
                if (!walk_char(w, ':'))
                        return -EBADMSG;
                /* More members in the text than in the tree: a repeated key. */
                if (json_object_iter_equal(&it, &end))
                        return -ENOTUNIQ;
                r = walk_value(w, json_object_iter_peek_value(&it));
                if (r < 0)
                        return r;
                json_object_iter_next(&it);
                if (walk_char(w, '}'))
                        return json_object_iter_equal(&it, &end) ? 0 : -ENOTUNIQ;
                if (!walk_char(w, ','))
                        return -EBADMSG;
        }
}

static int walk_array(Walk *w, json_object *o) {
        size_t i = 0, n;
        int r;

        if (!json_object_is_type(o, json_type_array))
                return -ENOTUNIQ;
        n = json_object_array_length(o);

        w->p++; /* '[' */
        if (walk_char(w, ']'))
                return n == 0 ? 0 : -ENOTUNIQ;
        for (;;) {
                if (i >= n)
                        return -ENOTUNIQ;
                r = walk_value(w, json_object_array_get_idx(o, i++));
                if (r < 0)
                        return r;
                if (walk_char(w, ']'))
                        return i == n ? 0 : -ENOTUNIQ;
                if (!walk_char(w, ','))
                        return -EBADMSG;
        }
}

static int walk_value(Walk *w, json_object *o) {
        int r;

        walk_space(w);
        if (w->p >= w->end)
                return -EBADMSG;

        switch (*w->p) {
        case '{':
        case '[':
                if (w->depth >= w->max_depth)
                        return -ELOOP;
                w->depth++;
                r = *w->p == '{' ? walk_object(w, o) : walk_array(w, o);
                w->depth--;
                return r;
        case '"':
                r = walk_string(w);
                if (r < 0)
                        return r;
                return json_object_is_type(o, json_type_string) ? 0 : -ENOTUNIQ;
        case 't':
                return walk_literal(w, "true", json_type_boolean, o);
        case 'f':
                return walk_literal(w, "false", json_type_boolean, o);
        case 'n':
                return walk_literal(w, "null", json_type_null, o);
        default:
                r = walk_number(w);
                if (r < 0)
                        return r;
                return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double)
                               ? 0
                               : -ENOTUNIQ;
        }
}

/* ---- Public ------------------------------------------------------------ */

static int tokener_error_to_errno(enum json_tokener_error e) {
        if (e == json_tokener_error_depth)
                return -ELOOP;
        if (e == json_tokener_error_parse_utf8_string)
                return -EILSEQ;
        return -EBADMSG;
}

int varlink_parse(const char *buf, size_t len, size_t max_size, unsigned max_depth, json_object **ret) {
        _cleanup_tokener_ json_tokener *tok = NULL;
        _cleanup_json_ json_object *o = NULL;
        Walk w;
        int r;

        if (!buf || !ret || max_depth == 0)
                return -EINVAL;
        if (len > max_size || len > INT_MAX)
                return -EMSGSIZE;
        if (memchr(buf, 0, len))
                return -EILSEQ;
        if (!utf8_is_valid(buf, len))
                return -EILSEQ;

        /* json-c counts a scalar inside an array as one more level; the walk
         * below enforces the exact container depth. */
        tok = json_tokener_new_ex((int) MIN(max_depth, (unsigned) INT_MAX - 1) + 1);
        if (!tok)
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);

        o = json_tokener_parse_ex(tok, buf, (int) len);
        if (!o) {
                enum json_tokener_error e = json_tokener_get_error(tok);

                /* A JSON null parses to NULL with success: not an object. */
                return e == json_tokener_success ? -EBADMSG : tokener_error_to_errno(e);
        }
        if (json_tokener_get_error(tok) != json_tokener_success)
                return -EBADMSG;
        if (!json_object_is_type(o, json_type_object))
                return -EBADMSG;

        w = (Walk){ .p = buf, .end = buf + len, .max_depth = max_depth };
        r = walk_value(&w, o);
        if (r < 0)
                return r;
        walk_space(&w);
        if (w.p != w.end)
                return -EBADMSG;

        *ret = TAKE_PTR(o);
        return 0;
}

/* Varlink method names are "<reverse.domain.interface>.<Method>"; the set is
 * kept narrow because names end up in logs and error replies. */
bool varlink_method_name_is_valid(const char *s, size_t len) {
        bool dot = false;

        if (len == 0 || len > 255)
                return false;
        if (s[0] == '.' || s[len - 1] == '.')
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];

                if (c == '.') {
                        if (s[i + 1] == '.')
                                return false;
                        dot = true;
                } else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '-' ||
                             c == '_'))
                        return false;
        }
        return dot;
}

typedef struct CallKey {
        const char *name;
        json_type type;
} CallKey;

static const CallKey call_keys[] = {
        { "method", json_type_string }, { "parameters", json_type_object }, { "oneway", json_type_boolean },
        { "more", json_type_boolean },  { "upgrade", json_type_boolean },
};

int varlink_parse_call(json_object *msg, const char **ret_method, json_object **ret_params) {
        json_object *method = NULL, *params = NULL;

        if (!msg || !ret_method || !ret_params)
                return -EINVAL;
        if (!json_object_is_type(msg, json_type_object))
                return -EBADMSG;

        json_object_object_foreach(msg, key, value) {
                const CallKey *k = NULL;

                for (size_t i = 0; i < ELEMENTSOF(call_keys); i++)
                        if (streq(call_keys[i].name, key)) {
                                k = &call_keys[i];
                                break;
                        }
                if (!k || !json_object_is_type(value, k->type))
                        return -EBADMSG;
        }

        if (!json_object_object_get_ex(msg, "method", &method))
                return -EBADMSG;
        if (!varlink_method_name_is_valid(json_object_get_string(method),
                                          (size_t) json_object_get_string_len(method)))
                return -EBADMSG;

        if (!json_object_object_get_ex(msg, "parameters", &params)) {
                params = json_object_new_object();
                if (!params)
                        return -ENOMEM;
                if (json_object_object_add(msg, "parameters", params) < 0) {
                        json_object_put(params);
                        return -ENOMEM;
                }
        }

        *ret_method = json_object_get_string(method);
        *ret_params = params;
        return 0;
}

int varlink_format(json_object *msg, char **ret, size_t *ret_len) {
        const char *s;
        size_t len;
        char *b;

        if (!msg || !ret || !ret_len)
                return -EINVAL;
        if (!json_object_is_type(msg, json_type_object))
                return -EINVAL;

        s = json_object_to_json_string_length(msg, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                              &len);
        if (!s)
                return -ENOMEM;
        /* Whatever we send, our own parser must accept: a string from a
         * handler that is not UTF-8 is caught here, not by the peer. */
        if (memchr(s, 0, len) || !utf8_is_valid(s, len))
                return -EILSEQ;

        b = malloc(len + 1);
        if (!b)
                return -ENOMEM;
        memcpy(b, s, len);
        b[len] = 0;

        *ret = b;
        *ret_len = len + 1;
        return 0;
}

/* ---- Repair ------------------------------------------------------------- */

static bool string_is_valid(const char *s, size_t len) {
        return !memchr(s, 0, len) && text_escape_utf8_valid(s, len);
}

static json_object *escaped_string(const char *s, size_t len) {
        _cleanup_free_ char *e = text_escape(s, len, 0, 0);

        return e ? json_object_new_string(e) : NULL;
}

int varlink_repair_utf8(json_object *o) {
        int n = 0, r;

        if (json_object_is_type(o, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(o); i++) {
                        json_object *v = json_object_array_get_idx(o, i), *e;

                        if (json_object_is_type(v, json_type_string) &&
                            !string_is_valid(json_object_get_string(v),
                                             (size_t) json_object_get_string_len(v))) {
                                e = escaped_string(json_object_get_string(v),
                                                   (size_t) json_object_get_string_len(v));
                                if (!e || json_object_array_put_idx(o, i, e) < 0) {
                                        json_object_put(e);
                                        return -ENOMEM;
                                }
                                n++;
                        } else if ((r = varlink_repair_utf8(v)) < 0)
                                return r;
                        else
                                n += r;
                }
                return n;
        }
        if (!json_object_is_type(o, json_type_object))
                return 0;
        for (;;) {
                const char *bad = NULL;

                /* A key that is not UTF-8: the member moves to its escaped
                 * key, and the walk starts again (the object changed). */
                json_object_object_foreach(o, key, value) {
                        if (!string_is_valid(key, strlen(key))) {
                                bad = key;
                                break;
                        }
                        (void) value;
                }
                if (!bad)
                        break;
                _cleanup_free_ char *k = text_escape(bad, strlen(bad), 0, 0);
                json_object *v = json_object_get(json_object_object_get(o, bad));

                if (!k) {
                        json_object_put(v);
                        return -ENOMEM;
                }
                json_object_object_del(o, bad);
                if (json_object_object_add(o, k, v) < 0) {
                        json_object_put(v);
                        return -ENOMEM;
                }
                n++;
        }
        json_object_object_foreach(o, key, value) {
                if (json_object_is_type(value, json_type_string) &&
                    !string_is_valid(json_object_get_string(value),
                                     (size_t) json_object_get_string_len(value))) {
                        json_object *e = escaped_string(json_object_get_string(value),
                                                        (size_t) json_object_get_string_len(value));

                        if (!e || json_object_object_add(o, key, e) < 0) {
                                json_object_put(e);
                                return -ENOMEM;
                        }
                        n++;
                } else if ((r = varlink_repair_utf8(value)) < 0)
                        return r;
                else
                        n += r;
        }
        return n;
}
