/* Lines of a files-cache map back into entries (see map-file.h).
 *
 * Each line is split into its fields, the entry rendered again through
 * cache-format.c, and the line kept only if that gives the same bytes:
 * one rule for every spelling the writer never uses, instead of a list
 * of them.  The sshkey list is read as the Python literals repr() writes
 * ('...' or "...", backslash escapes \\ \' \" \t \n \r \xhh \uhhhh
 * \Uhhhhhhhh); what it decodes to is checked by the mapper.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/cache-format.h"
#include "map-file.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"
#include "modutil/py-escape.h"
#include "util/strbuf.h"
#include "util/strv.h"

#define FIELDS_MAX 9

/* Splits @line at ':' into exactly @n fields (in place).  Return: whether there were @n. */
static bool split_fields(char *line, char *f[static FIELDS_MAX], size_t n) {
        size_t k = 0;

        f[k++] = line;
        for (char *p = line; *p; p++)
                if (*p == ':') {
                        if (k == n)
                                return false;
                        *p = 0;
                        f[k++] = p + 1;
                }
        return k == n;
}

static bool parse_u32(const char *s, uint32_t *ret) {
        uint64_t v = 0;
        size_t n = strlen(s);

        if (n == 0 || n > 10)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (uint64_t) (s[i] - '0');
        }
        if (v > UINT32_MAX)
                return false;
        *ret = (uint32_t) v;
        return true;
}

/* A shadow number: empty is -1 (as nsscache's None). */
static bool parse_shadow_num(const char *s, int64_t *ret) {
        int64_t v = 0;
        size_t n = strlen(s);

        if (n > 18)
                return false;
        for (size_t i = 0; i < n; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return false;
                v = v * 10 + (s[i] - '0');
        }
        *ret = n == 0 ? -1 : v;
        return true;
}

/* A list grown by doubling: a hostile line of a million members or keys
 * must not cost a million copies of the list. */
typedef struct List {
        char **v;
        size_t n, cap;
} List;

static int list_push(List *l, char *s) {
        if (!s)
                return -ENOMEM;
        if (l->n + 2 > l->cap) {
                size_t cap = MAX(l->cap * 2, (size_t) 8);
                char **v = reallocarray(l->v, cap, sizeof(char *));

                if (!v) {
                        free(s);
                        return -ENOMEM;
                }
                l->v = v;
                l->cap = cap;
        }
        l->v[l->n++] = s;
        l->v[l->n] = NULL;
        return 0;
}

/* "a,b" (@sep ',') into a list, empty members kept (the writer refuses them). */
static int split_members_by(const char *s, char sep, char ***ret) {
        List l = {};

        for (;;) {
                size_t n = strcspn(s, (char[]){ sep, 0 });
                int r = list_push(&l, strndup(s, n));

                if (r < 0) {
                        strv_free(l.v);
                        return r;
                }
                if (!s[n])
                        break;
                s += n + 1;
        }
        *ret = l.v;
        return 0;
}

/* The escape after a backslash at *p; advances *p past it. */
static bool py_escape(const char **p, StrBuf *b) {
        char u[4];
        uint32_t cp;
        size_t n;

        /* NUL would end the C string */
        if (py_escape_decode(*p, strnlen(*p, 9), &cp, &n) < 0 || cp == 0)
                return false;
        *p += n;
        strbuf_append(b, u, utf8_encode(cp, u));
        return true;
}

/* One Python string literal at *p into a new string; advances *p past it. */
static char *py_string(const char **p) {
        StrBuf b = {};
        const char *s = *p;
        char quote = *s++;

        if (quote != '\'' && quote != '"')
                return NULL;
        while (*s != quote) {
                if (!*s)
                        goto fail;
                if (*s == '\\') {
                        s++;
                        if (!*s || !py_escape(&s, &b))
                                goto fail;
                        continue;
                }
                strbuf_putc(&b, *s++);
        }
        strbuf_putc(&b, 0);
        if (b.oom)
                goto fail;
        *p = s + 1;
        return strbuf_steal(&b, NULL);
fail:
        strbuf_done(&b);
        return NULL;
}

/* "['k1', 'k2']" into a list; "" is no keys.  Return: 0, -EINVAL, -ENOMEM. */
static int py_list(const char *s, char ***ret) {
        List l = {};
        const char *p = s;
        int r = 0;

        *ret = NULL;
        if (!*s)
                return 0;
        if (*p++ != '[')
                return -EINVAL;
        while (*p != ']' && r >= 0) {
                char *k;

                if (l.n > 0 && (p[0] != ',' || p[1] != ' ' || !*(p += 2))) {
                        r = -EINVAL;
                        break;
                }
                k = py_string(&p);
                r = k ? list_push(&l, k) : -EINVAL;
        }
        if (r >= 0 && p[1])
                r = -EINVAL;
        if (r < 0) {
                strv_free(l.v);
                return r;
        }
        *ret = l.v;
        return 0;
}

typedef struct Parsed {
        NssMapType type;
        union {
                NssPasswd passwd;
                NssShadow shadow;
                NssGroup group;
                NssSshkey sshkey;
                NssNetgroup netgroup;
        };
        char **list; /* members or keys, owned */
} Parsed;

/* @line (NUL-terminated copy, split in place) into *@e.  Return: 0, -EINVAL, -ENOMEM. */
static int parse_line(NssMapType t, char *line, Parsed *e) {
        char *f[FIELDS_MAX];
        uint32_t uid, gid;
        int r;

        *e = (Parsed){ .type = t };
        switch (t) {
        case NSS_MAP_PASSWD:
                if (!split_fields(line, f, 7) || !streq(f[1], "x") || !parse_u32(f[2], &uid) ||
                    !parse_u32(f[3], &gid))
                        return -EINVAL;
                e->passwd = (NssPasswd){ .name = f[0],
                                         .passwd = f[1],
                                         .uid = uid,
                                         .gid = gid,
                                         .gecos = f[4],
                                         .dir = f[5],
                                         .shell = f[6] };
                return 0;
        case NSS_MAP_SHADOW: {
                int64_t v[7];

                if (!split_fields(line, f, 9) || !*f[1])
                        return -EINVAL;
                for (size_t i = 0; i < ELEMENTSOF(v); i++)
                        if (!parse_shadow_num(f[2 + i], v + i))
                                return -EINVAL;
                e->shadow = (NssShadow){ .name = f[0],
                                         .passwd = f[1],
                                         .lstchg = v[0],
                                         .min = v[1],
                                         .max = v[2],
                                         .warn = v[3],
                                         .inact = v[4],
                                         .expire = v[5],
                                         .flag = v[6] };
                return 0;
        }
        case NSS_MAP_GROUP:
                if (!split_fields(line, f, 4) || !streq(f[1], "x") || !parse_u32(f[2], &gid))
                        return -EINVAL;
                if (*f[3]) {
                        r = split_members_by(f[3], ',', &e->list);
                        if (r < 0)
                                return r;
                }
                e->group = (NssGroup){ .name = f[0], .passwd = f[1], .gid = gid, .members = e->list };
                return 0;
        case NSS_MAP_SSHKEY: {
                char *colon = strchr(line, ':');

                if (!colon)
                        return -EINVAL;
                *colon = 0;
                r = py_list(colon + 1, &e->list);
                if (r < 0)
                        return r;
                e->sshkey = (NssSshkey){ .name = line, .keys = e->list };
                return 0;
        }
        case NSS_MAP_NETGROUP: /* "name member member ...", one blank apart (renders_as() holds it) */
                if (strchr(line, ' ')) {
                        char *blank = strchr(line, ' ');

                        r = split_members_by(blank + 1, ' ', &e->list);
                        if (r < 0)
                                return r;
                        *blank = 0;
                }
                e->netgroup = (NssNetgroup){ .name = line, .entries = e->list };
                return 0;
        default:
                return -EINVAL;
        }
}

/* Whether @e renders to exactly the @n bytes at @line and its newline. */
static int renders_as(CacheFormatted *out, const Parsed *e, const char *line, size_t n, bool *ret) {
        int r;

        strbuf_truncate(&out->buf, 0);
        r = cache_formatted_try_add(out, &e->passwd);
        if (r == -ENOMEM)
                return r;
        *ret = r >= 0 && out->buf.len == n + 1 && memcmp(out->buf.data, line, n) == 0 &&
               out->buf.data[n] == '\n';
        return 0;
}

/* One line (without its newline): an entry, or a bad line. */
static int one_line(CacheFormatted *out, NssMapType t, const char *line, size_t n, size_t lineno,
                    map_file_entry_fn on_entry, map_file_bad_fn on_bad, void *userdata) {
        _cleanup_free_ char *copy = strndup(line, n), *name = NULL;
        Parsed e = {};
        bool same = false;
        int r;

        if (!copy || !(name = strndup(line, strcspn(copy, t == NSS_MAP_NETGROUP ? " " : ":"))))
                return -ENOMEM;
        r = memchr(line, 0, n) ? -EINVAL : parse_line(t, copy, &e);
        if (r == -ENOMEM)
                return r;
        if (r >= 0)
                r = renders_as(out, &e, line, n, &same);
        if (r >= 0 && same)
                r = on_entry(userdata, t, &e.passwd);
        else if (r >= 0 || r == -EINVAL)
                r = on_bad(userdata, t, lineno, name);
        strv_free(e.list);
        return r;
}

int map_file_parse(NssMapType t, const char *data, size_t len, map_file_entry_fn on_entry,
                   map_file_bad_fn on_bad, void *userdata, char **ret_error) {
        CacheFormatted out;
        size_t lineno = 0;
        int r = 0;

        if (len > 0 && data[len - 1] != '\n') {
                size_t lines = 1;

                for (size_t i = 0; i < len; i++)
                        lines += data[i] == '\n';
                return errmsg_set(ret_error, -EBADMSG,
                                  "%s: line %zu: no newline at the end: the file was cut short",
                                  nss_map_to_string(t), lines);
        }
        cache_formatted_init(&out, t);
        for (size_t pos = 0; pos < len && r >= 0;) {
                const char *nl = memchr(data + pos, '\n', len - pos);
                size_t n = (size_t) (nl - (data + pos));

                r = one_line(&out, t, data + pos, n, ++lineno, on_entry, on_bad, userdata);
                pos += n + 1;
        }
        cache_formatted_done(&out);
        return r;
}
