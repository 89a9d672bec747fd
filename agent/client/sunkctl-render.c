/* sunkctl's generic renderer.  The answer of any method shows without code
 * of its own: scalars as "key: value", arrays of flat objects as tables.  A
 * module's reply is not trusted to be printable: control bytes are escaped,
 * so an answer cannot drive the terminal. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sunkctl-render.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/time-util.h"

#define INDENT 2
#define TIME_MIN_USEC INT64_C(1000000000000000) /* 2001-09-09 */

const char *render_ago(char *buf, size_t len, int64_t when_usec) {
        char d[FORMAT_DURATION_MAX];
        int64_t now = (int64_t) now_usec(CLOCK_REALTIME);

        if (when_usec <= 0)
                return "-";
        if (llabs(when_usec - now) < (int64_t) USEC_PER_SEC)
                snprintf(buf, len, "just now");
        else if (when_usec <= now)
                snprintf(buf, len, "%s ago",
                         format_duration(d, sizeof(d),
                                         (uint64_t) (now - when_usec) / USEC_PER_SEC * USEC_PER_SEC));
        else
                snprintf(buf, len, "in %s",
                         format_duration(d, sizeof(d),
                                         (uint64_t) (when_usec - now) / USEC_PER_SEC * USEC_PER_SEC));
        return buf;
}

const char *render_duration(char *buf, size_t len, int64_t usec) {
        if (usec < 0)
                return "-";
        if (usec < (int64_t) USEC_PER_MSEC)
                return "<1ms";
        /* Milliseconds are enough for a human. */
        return format_duration(buf, len, (uint64_t) usec / USEC_PER_MSEC * USEC_PER_MSEC);
}

static bool has_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);
        return n >= k && streq(s + n - k, suffix);
}

static bool is_scalar(json_object *v) {
        return !json_object_is_type(v, json_type_object) && !json_object_is_type(v, json_type_array);
}

/* @s with every control byte as \xHH, malloc'd. */
static char *escape_controls(const char *s) {
        size_t n = 0;
        char *out, *p;

        for (const char *q = s; *q; q++)
                n += (unsigned char) *q < 0x20 || *q == 0x7f ? 4 : 1;
        out = malloc(n + 1);
        if (!out)
                return NULL;
        p = out;
        for (const char *q = s; *q; q++) {
                if ((unsigned char) *q < 0x20 || *q == 0x7f)
                        p += sprintf(p, "\\x%02x", (unsigned char) *q);
                else
                        *p++ = *q;
        }
        *p = '\0';
        return out;
}

char *render_scalar(const char *key, json_object *v) {
        char buf[FORMAT_DURATION_MAX + 8];

        if (!v)
                return strdup("-");
        if (json_object_is_type(v, json_type_int) && key && has_suffix(key, "_usec")) {
                int64_t usec = json_object_get_int64(v);

                /* A time before 2001 is no time: the sender meant a
                 * duration (interval_usec, uptime_usec). */
                return strdup(has_suffix(key, "duration_usec") || (usec > 0 && usec < TIME_MIN_USEC)
                                      ? render_duration(buf, sizeof(buf), usec)
                                      : render_ago(buf, sizeof(buf), usec));
        }
        if (json_object_is_type(v, json_type_string))
                return escape_controls(json_object_get_string(v));
        /* json-c escapes control bytes in strings inside objects and arrays */
        return strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
}

/* Terminal columns of UTF-8 text, near enough: one per code point. */
static size_t columns(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char) *s & 0xc0) != 0x80;
        return n;
}

static void pad(FILE *f, size_t n) {
        fprintf(f, "%*s", (int) MIN(n, (size_t) INT32_MAX), "");
}

/* An array whose items are all objects with scalar members only, at least one. */
static bool is_table(json_object *a) {
        size_t n = json_object_array_length(a);

        if (n == 0)
                return false;
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(a, i);

                if (!json_object_is_type(o, json_type_object))
                        return false;
                json_object_object_foreach(o, k, v) {
                        (void) k;
                        if (!is_scalar(v))
                                return false;
                }
        }
        return true;
}

/* The union of the items' member names, in the order first seen. */
static int table_columns(json_object *a, json_object **ret) {
        _cleanup_json_ json_object *cols = json_object_new_object();

        if (!cols)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object_object_foreach(json_object_array_get_idx(a, i), k, v) {
                        (void) v;
                        _cleanup_free_ char *t = NULL;

                        if (json_object_object_get_ex(cols, k, NULL))
                                continue;
                        t = escape_controls(k);
                        if (!t ||
                            json_object_object_add(cols, k, json_object_new_int64((int64_t) columns(t))) < 0)
                                return -ENOMEM;
                }
        }
        *ret = TAKE_PTR(cols);
        return 0;
}

/* A column's title: the member name in capitals, a *_usec suffix dropped. */
static int put_title(FILE *f, const char *key, size_t width, bool last) {
        _cleanup_free_ char *upper = strdup(key), *t = NULL;

        if (!upper)
                return -ENOMEM;
        if (has_suffix(upper, "_usec") && strlen(upper) > 5)
                upper[strlen(upper) - 5] = '\0';
        for (char *p = upper; *p; p++)
                if (*p >= 'a' && *p <= 'z')
                        *p = (char) (*p - 'a' + 'A');
        t = escape_controls(upper);
        if (!t)
                return -ENOMEM;
        fputs(t, f);
        if (!last)
                pad(f, width - MIN(columns(t), width) + 2);
        return 0;
}

static int render_table(FILE *f, json_object *a, size_t indent) {
        _cleanup_json_ json_object *cols = NULL;
        size_t n = json_object_array_length(a), n_cols, c;
        int r;

        r = table_columns(a, &cols);
        if (r < 0)
                return r;
        n_cols = (size_t) json_object_object_length(cols);
        /* widths: the longest cell of each column, titles included */
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(a, i);
                json_object_object_foreach(cols, k, w) {
                        _cleanup_free_ char *t = render_scalar(k, json_object_object_get(o, k));
                        if (!t)
                                return -ENOMEM;
                        if ((int64_t) columns(t) > json_object_get_int64(w))
                                json_object_set_int64(w, (int64_t) columns(t));
                }
        }
        pad(f, indent);
        c = 0;
        json_object_object_foreach(cols, title, tw) {
                r = put_title(f, title, (size_t) json_object_get_int64(tw), ++c == n_cols);
                if (r < 0)
                        return r;
        }
        fputc('\n', f);
        for (size_t i = 0; i < n; i++) {
                json_object *o = json_object_array_get_idx(a, i);

                pad(f, indent);
                c = 0;
                json_object_object_foreach(cols, k, w) {
                        _cleanup_free_ char *t = render_scalar(k, json_object_object_get(o, k));
                        if (!t)
                                return -ENOMEM;
                        fputs(t, f);
                        if (++c < n_cols)
                                pad(f, (size_t) json_object_get_int64(w) - columns(t) + 2);
                }
                fputc('\n', f);
        }
        return 0;
}

static int render_object(FILE *f, json_object *o, size_t indent);

/* An array: a table, or one item a line. */
static int render_array(FILE *f, json_object *a, size_t indent) {
        if (is_table(a))
                return render_table(f, a, indent);
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                _cleanup_free_ char *t = render_scalar(NULL, json_object_array_get_idx(a, i));
                if (!t)
                        return -ENOMEM;
                pad(f, indent);
                fprintf(f, "%s\n", t);
        }
        return 0;
}

static bool is_empty(json_object *v) {
        return (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0) ||
               (json_object_is_type(v, json_type_object) && json_object_object_length(v) == 0);
}

static int render_object(FILE *f, json_object *o, size_t indent) {
        size_t width = 0;
        int r;

        json_object_object_foreach(o, k0, v0) {
                _cleanup_free_ char *name = escape_controls(k0);

                (void) v0;
                if (!name)
                        return -ENOMEM;
                width = MAX(width, columns(name) + 1);
        }
        json_object_object_foreach(o, k, v) {
                _cleanup_free_ char *name = escape_controls(k);

                if (!name)
                        return -ENOMEM;
                pad(f, indent);
                fprintf(f, "%s:", name);
                if (is_scalar(v) || is_empty(v)) {
                        _cleanup_free_ char *t = is_scalar(v) ? render_scalar(k, v) : strdup("(none)");
                        if (!t)
                                return -ENOMEM;
                        if (*t)
                                pad(f, width - columns(name));
                        fprintf(f, "%s\n", t);
                        continue;
                }
                fputc('\n', f);
                r = json_object_is_type(v, json_type_array) ? render_array(f, v, indent + INDENT)
                                                            : render_object(f, v, indent + INDENT);
                if (r < 0)
                        return r;
        }
        return 0;
}

int render_reply(FILE *f, json_object *reply) {
        if (!json_object_is_type(reply, json_type_object))
                return 0;
        return render_object(f, reply, 0);
}
