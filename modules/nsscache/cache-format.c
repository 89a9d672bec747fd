/* Rendering the maps in nsscache's `files` cache format.
 *
 * The bytes must be what nsscache (nss_cache/caches/files.py) writes for the
 * same entries, so that a node can switch between nsscache and sunkd without
 * libnss-cache, sshd's AuthorizedKeysCommand or anything else reading these
 * files noticing.  The facts this file relies on:
 *
 *   passwd  '%s:%s:%d:%d:%s:%s:%s' % (name, passwd, uid, gid, gecos, dir, shell)
 *   group   '%s:%s:%d:%s' % (name, passwd, gid, ','.join(members))
 *   shadow  '%s:%s:%s:%s:%s:%s:%s:%s:%s' % (name, passwd, lstchg or '', min or '',
 *           max or '', warn or '', inact or '', expire or '', flag or '')
 *           so a 0 is written as an empty field, like an absent one;
 *   sshkey  '%s:%s' % (name, sshkey) where sshkey is a Python list of the
 *           user's keys, i.e. its repr(): name:['k1', 'k2'].  nsscache's own
 *           authorized-keys-command.py reads it back with ast.literal_eval.
 *
 * Each line ends in '\n'; lines appear in the order the source returned the
 * entries (Map.PopItem() pops its insertion-ordered index), not sorted, and
 * the index files carry the sorting.  Text is UTF-8.
 *
 * repr() of a str: quote with ' unless the string contains ' and no ", then
 * escape backslash and the chosen quote with a backslash, \t \n \r by name,
 * other C0 controls and DEL as \xhh, and non-ASCII code points that
 * str.isprintable() rejects as \xhh, \uhhhh or \Uhhhhhhhh (lowercase hex).
 * The printable table is generated from Python 3.11, the Python nsscache runs
 * on in Debian 12 (gen-pyprintable.py).
 *
 * Unlike nsscache, fields that would corrupt the line format (':' or '\n'
 * anywhere, ',' in a member) are refused, not written: a broken line would
 * shift every later entry for libnss-cache and glibc's parsers alike.  An
 * sshkey entry with no keys writes no line (nsscache's SCIM source makes no
 * entry for a user without keys).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"

#include "cache-format-unicode.h"
#include "cache-format.h"

static int utf8_next(const unsigned char *s, uint32_t *ret_cp) {
        uint32_t cp;
        size_t n;

        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        }
        if ((s[0] & 0xE0) == 0xC0) {
                cp = s[0] & 0x1F;
                n = 2;
        } else if ((s[0] & 0xF0) == 0xE0) {
                cp = s[0] & 0x0F;
                n = 3;
        } else if ((s[0] & 0xF8) == 0xF0) {
                cp = s[0] & 0x07;
                n = 4;
        } else
                return -EILSEQ;

        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xC0) != 0x80) /* also stops at the NUL */
                        return -EILSEQ;
                cp = (cp << 6) | (s[i] & 0x3F);
        }
        /* Overlong forms, UTF-16 surrogates and values past U+10FFFF are not UTF-8. */
        if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
            (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return -EILSEQ;
        *ret_cp = cp;
        return (int) n;
}

static bool py_printable(uint32_t cp) {
        size_t lo = 0, hi = ELEMENTSOF(pyrepr_unprintable);

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (cp < pyrepr_unprintable[mid][0])
                        hi = mid;
                else if (cp > pyrepr_unprintable[mid][1])
                        lo = mid + 1;
                else
                        return false;
        }
        return true;
}

int cache_format_pyrepr(FILE *f, const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        char quote = '\'';

        /* Validate first: a half-written repr must not reach the buffer. */
        for (const unsigned char *q = p; *q;) {
                uint32_t cp;
                int k = utf8_next(q, &cp);
                if (k < 0)
                        return k;
                q += k;
        }
        if (strchr(s, '\'') && !strchr(s, '"'))
                quote = '"';

        fputc(quote, f);
        while (*p) {
                uint32_t cp;
                int k = utf8_next(p, &cp);

                if (cp == (uint32_t) quote || cp == '\\')
                        fprintf(f, "\\%c", (char) cp);
                else if (cp == '\t')
                        fputs("\\t", f);
                else if (cp == '\n')
                        fputs("\\n", f);
                else if (cp == '\r')
                        fputs("\\r", f);
                else if (cp < ' ' || cp == 0x7F)
                        fprintf(f, "\\x%02" PRIx32, cp);
                else if (cp < 0x80 || py_printable(cp))
                        fwrite(p, 1, (size_t) k, f);
                else if (cp <= 0xFF)
                        fprintf(f, "\\x%02" PRIx32, cp);
                else if (cp <= 0xFFFF)
                        fprintf(f, "\\u%04" PRIx32, cp);
                else
                        fprintf(f, "\\U%08" PRIx32, cp);
                p += k;
        }
        fputc(quote, f);
        return ferror(f) ? -EIO : 0;
}

int cache_format_pylist(FILE *f, char *const *l) {
        int r;

        fputc('[', f);
        for (size_t i = 0; l && l[i]; i++) {
                if (i > 0)
                        fputs(", ", f);
                r = cache_format_pyrepr(f, l[i]);
                if (r < 0)
                        return r;
        }
        fputc(']', f);
        return ferror(f) ? -EIO : 0;
}

typedef struct Field {
        const char *label;
        const char *value;
        const char *forbidden; /* characters that may not appear */
        bool nonempty;
} Field;

_printf_(4, 5) static int entry_error(char **ret_error, NssMapType t, size_t i, const char *fmt, ...) {
        _cleanup_free_ char *what = NULL;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&what, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        if (ret_error && asprintf(ret_error, "%s entry %zu: %s", nss_map_to_string(t), i, what) < 0)
                return -ENOMEM;
        return -EINVAL;
}

static int check_fields(const Field *fields, size_t n, NssMapType t, size_t i, char **ret_error) {
        for (size_t j = 0; j < n; j++) {
                const char *v = fields[j].value, *bad;

                if (fields[j].nonempty && isempty(v))
                        return entry_error(ret_error, t, i, "field %s is empty", fields[j].label);
                bad = v ? strpbrk(v, fields[j].forbidden) : NULL;
                if (bad)
                        return entry_error(ret_error, t, i, "'%s': field %s contains %s",
                                           fields[0].value, fields[j].label,
                                           *bad == '\n' ? "a newline" :
                                           *bad == ':'  ? "':'" :
                                                          "','");
        }
        return 0;
}

static const char *or_default(const char *s, const char *def) {
        return s ? s : def;
}

static int render_passwd(FILE *f, const NssMaps *m, size_t *n, char **ret_error) {
        for (size_t i = 0; i < m->n_passwd; i++) {
                const NssPasswd *e = m->passwd + i;
                const Field fields[] = {
                        { "name", e->name, ":\n", true },
                        { "passwd", or_default(e->passwd, "x"), ":\n", false },
                        { "gecos", e->gecos, ":\n", false },
                        { "dir", e->dir, ":\n", false },
                        { "shell", e->shell, ":\n", false },
                };
                int r = check_fields(fields, ELEMENTSOF(fields), NSS_MAP_PASSWD, i, ret_error);
                if (r < 0)
                        return r;

                fprintf(f, "%s:%s:%" PRIu32 ":%" PRIu32 ":%s:%s:%s\n", e->name,
                        or_default(e->passwd, "x"), e->uid, e->gid, or_default(e->gecos, ""),
                        or_default(e->dir, ""), or_default(e->shell, ""));
                (*n)++;
        }
        return 0;
}

/* Python's `x or ''`: 0 and None (our -1, or any negative) print nothing. */
static void shadow_num(FILE *f, int64_t v) {
        fputc(':', f);
        if (v > 0)
                fprintf(f, "%" PRIi64, v);
}

static int render_shadow(FILE *f, const NssMaps *m, size_t *n, char **ret_error) {
        for (size_t i = 0; i < m->n_shadow; i++) {
                const NssShadow *e = m->shadow + i;
                const Field fields[] = {
                        { "name", e->name, ":\n", true },
                        { "passwd", or_default(e->passwd, "!!"), ":\n", false },
                };
                int r = check_fields(fields, ELEMENTSOF(fields), NSS_MAP_SHADOW, i, ret_error);
                if (r < 0)
                        return r;

                fprintf(f, "%s:%s", e->name, or_default(e->passwd, "!!"));
                shadow_num(f, e->lstchg);
                shadow_num(f, e->min);
                shadow_num(f, e->max);
                shadow_num(f, e->warn);
                shadow_num(f, e->inact);
                shadow_num(f, e->expire);
                shadow_num(f, e->flag);
                fputc('\n', f);
                (*n)++;
        }
        return 0;
}

static int render_group(FILE *f, const NssMaps *m, size_t *n, char **ret_error) {
        for (size_t i = 0; i < m->n_group; i++) {
                const NssGroup *e = m->group + i;
                const Field fields[] = {
                        { "name", e->name, ":\n", true },
                        { "passwd", or_default(e->passwd, "x"), ":\n", false },
                };
                int r = check_fields(fields, ELEMENTSOF(fields), NSS_MAP_GROUP, i, ret_error);
                if (r < 0)
                        return r;
                for (size_t j = 0; e->members && e->members[j]; j++) {
                        const Field mf[] = {
                                { "name", e->name, "", true },
                                { "members", e->members[j], ":,\n", true },
                        };
                        r = check_fields(mf, ELEMENTSOF(mf), NSS_MAP_GROUP, i, ret_error);
                        if (r < 0)
                                return r;
                }

                fprintf(f, "%s:%s:%" PRIu32 ":", e->name, or_default(e->passwd, "x"), e->gid);
                for (size_t j = 0; e->members && e->members[j]; j++) {
                        if (j > 0)
                                fputc(',', f);
                        fputs(e->members[j], f);
                }
                fputc('\n', f);
                (*n)++;
        }
        return 0;
}

static int render_sshkey(FILE *f, const NssMaps *m, size_t *n, char **ret_error) {
        for (size_t i = 0; i < m->n_sshkey; i++) {
                const NssSshkey *e = m->sshkey + i;
                const Field fields[] = {
                        { "name", e->name, ":\n", true },
                };
                int r = check_fields(fields, ELEMENTSOF(fields), NSS_MAP_SSHKEY, i, ret_error);
                if (r < 0)
                        return r;
                if (!e->keys || !e->keys[0])
                        continue;

                fprintf(f, "%s:", e->name);
                r = cache_format_pylist(f, e->keys);
                if (r == -EILSEQ) {
                        if (ret_error &&
                            asprintf(ret_error, "sshkey entry %zu: '%s': a key is not valid UTF-8", i,
                                     e->name) < 0)
                                return -ENOMEM;
                        return r;
                }
                if (r < 0)
                        return r;
                fputc('\n', f);
                (*n)++;
        }
        return 0;
}

typedef int (*RenderFn)(FILE *f, const NssMaps *m, size_t *n, char **ret_error);

static const RenderFn renderers[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = render_passwd,
        [NSS_MAP_SHADOW] = render_shadow,
        [NSS_MAP_GROUP] = render_group,
        [NSS_MAP_SSHKEY] = render_sshkey,
};

int cache_format_render(const NssMaps *m, NssMapType t, char **ret_buf, size_t *ret_len,
                        size_t *ret_entries, char **ret_error) {
        /* buf before f: cleanup runs in reverse, and fclose() still writes to buf. */
        _cleanup_free_ char *buf = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        size_t len = 0, n = 0;
        int r;

        if (!m || (int) t < 0 || t >= _NSS_MAP_MAX || !ret_buf || !ret_len)
                return -EINVAL;

        f = open_memstream(&buf, &len);
        if (!f)
                return -ENOMEM;

        r = renderers[t](f, m, &n, ret_error);
        if (r < 0)
                return r;
        /* open_memstream reports allocation failures only through the stream's error state. */
        if (ferror(f) || fflush(f) != 0)
                return -ENOMEM;
        if (fclose(TAKE_PTR(f)) != 0)
                return -ENOMEM;

        *ret_buf = TAKE_PTR(buf);
        *ret_len = len;
        if (ret_entries)
                *ret_entries = n;
        return 0;
}
