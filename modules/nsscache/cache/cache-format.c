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
 * sshkey entry with no keys is written as "name:" (nsscache's SCIM source
 * "always create[s] an entry, even if no keys" with sshkey "", and
 * '%s:%s' % (name, '') is that line); its index lists the name too.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/strbuf.h"

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

/* Bytes that repr() copies as they are: printable ASCII but the quote and backslash. */
static size_t plain_run(const unsigned char *p, char quote) {
        size_t n = 0;

        while (p[n] >= ' ' && p[n] < 0x7F && p[n] != (unsigned char) quote && p[n] != '\\')
                n++;
        return n;
}

static void put_hex(StrBuf *b, const char *prefix, uint32_t cp, int digits) {
        static const char hex[] = "0123456789abcdef";
        char buf[8];

        strbuf_puts(b, prefix);
        for (int i = digits - 1; i >= 0; i--, cp >>= 4)
                buf[i] = hex[cp & 0xF];
        strbuf_append(b, buf, (size_t) digits);
}

/* One code point that is not in a plain run. */
static void repr_char(StrBuf *b, const unsigned char *p, int k, uint32_t cp) {
        if (cp == '\t')
                strbuf_append(b, "\\t", 2);
        else if (cp == '\n')
                strbuf_append(b, "\\n", 2);
        else if (cp == '\r')
                strbuf_append(b, "\\r", 2);
        else if (cp < ' ' || cp == 0x7F)
                put_hex(b, "\\x", cp, 2);
        else if (cp < 0x80 || py_printable(cp))
                strbuf_append(b, p, (size_t) k);
        else if (cp <= 0xFF)
                put_hex(b, "\\x", cp, 2);
        else if (cp <= 0xFFFF)
                put_hex(b, "\\u", cp, 4);
        else
                put_hex(b, "\\U", cp, 8);
}

int cache_format_utf8_len(const char *s) {
        uint32_t cp;

        return utf8_next((const unsigned char *) s, &cp);
}

bool cache_format_utf8_valid(const char *s) {
        for (const unsigned char *q = (const unsigned char *) s; *q;) {
                uint32_t cp;
                int k;

                if (*q < 0x80) {
                        q++;
                        continue;
                }
                k = utf8_next(q, &cp);
                if (k < 0)
                        return false;
                q += k;
        }
        return true;
}

static int pyrepr(StrBuf *b, const char *s) {
        const unsigned char *p = (const unsigned char *) s;
        char quote = '\'';

        /* Validate first: a half-written repr must not reach the buffer. */
        if (!cache_format_utf8_valid(s))
                return -EILSEQ;
        if (strchr(s, '\'') && !strchr(s, '"'))
                quote = '"';

        strbuf_putc(b, quote);
        while (*p) {
                size_t n = plain_run(p, quote);
                uint32_t cp;
                int k;

                strbuf_append(b, p, n);
                p += n;
                if (!*p)
                        break;
                k = utf8_next(p, &cp);
                if (cp == (uint32_t) quote || cp == '\\') {
                        strbuf_putc(b, '\\');
                        strbuf_putc(b, (char) cp);
                } else
                        repr_char(b, p, k, cp);
                p += k;
        }
        strbuf_putc(b, quote);
        return 0;
}

static int pylist(StrBuf *b, char *const *l) {
        int r;

        strbuf_putc(b, '[');
        for (size_t i = 0; l && l[i]; i++) {
                if (i > 0)
                        strbuf_append(b, ", ", 2);
                r = pyrepr(b, l[i]);
                if (r < 0)
                        return r;
        }
        strbuf_putc(b, ']');
        return 0;
}

/* The stdio face of pyrepr()/pylist(), for callers that write to a FILE. */
static int write_out(FILE *f, StrBuf *b, int r) {
        if (r >= 0 && b->oom)
                r = -ENOMEM;
        if (r >= 0 && b->len > 0 && fwrite(b->data, 1, b->len, f) != b->len)
                r = -EIO;
        strbuf_done(b);
        return r >= 0 && ferror(f) ? -EIO : r;
}

int cache_format_pyrepr(FILE *f, const char *s) {
        StrBuf b = {};

        return write_out(f, &b, pyrepr(&b, s));
}

int cache_format_pylist(FILE *f, char *const *l) {
        StrBuf b = {};

        return write_out(f, &b, pylist(&b, l));
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
                        return entry_error(ret_error, t, i, "'%s': field %s contains %s", fields[0].value,
                                           fields[j].label,
                                           *bad == '\n'  ? "a newline"
                                           : *bad == ':' ? "':'"
                                                         : "','");
        }
        return 0;
}

static const char *or_default(const char *s, const char *def) {
        return s ? s : def;
}

/* Appends "field:" for each string, the last one without the colon. */
static void put_fields(StrBuf *b, const char *const *v, size_t n) {
        for (size_t j = 0; j < n; j++) {
                if (j > 0)
                        strbuf_putc(b, ':');
                strbuf_puts(b, v[j]);
        }
}

static int render_passwd(StrBuf *b, const void *entry, size_t i, bool *ret_line, char **ret_error) {
        const NssPasswd *e = entry;
        const Field fields[] = {
                { "name", e->name, ":\n", true },    { "passwd", or_default(e->passwd, "x"), ":\n", false },
                { "gecos", e->gecos, ":\n", false }, { "dir", e->dir, ":\n", false },
                { "shell", e->shell, ":\n", false },
        };
        int r = check_fields(fields, ELEMENTSOF(fields), NSS_MAP_PASSWD, i, ret_error);

        if (r < 0)
                return r;
        put_fields(b, (const char *[]){ e->name, or_default(e->passwd, "x") }, 2);
        strbuf_putc(b, ':');
        strbuf_put_u64(b, e->uid);
        strbuf_putc(b, ':');
        strbuf_put_u64(b, e->gid);
        strbuf_putc(b, ':');
        put_fields(b,
                   (const char *[]){ or_default(e->gecos, ""), or_default(e->dir, ""),
                                     or_default(e->shell, "") },
                   3);
        strbuf_putc(b, '\n');
        *ret_line = true;
        return 0;
}

/* Python's `x or ''`: 0 and None (our -1, or any negative) print nothing. */
static void shadow_num(StrBuf *b, int64_t v) {
        strbuf_putc(b, ':');
        if (v > 0)
                strbuf_put_i64(b, v);
}

static int render_shadow(StrBuf *b, const void *entry, size_t i, bool *ret_line, char **ret_error) {
        const NssShadow *e = entry;
        const Field fields[] = {
                { "name", e->name, ":\n", true },
                { "passwd", or_default(e->passwd, "!!"), ":\n", false },
        };
        const int64_t nums[] = { e->lstchg, e->min, e->max, e->warn, e->inact, e->expire, e->flag };
        int r = check_fields(fields, ELEMENTSOF(fields), NSS_MAP_SHADOW, i, ret_error);

        if (r < 0)
                return r;
        put_fields(b, (const char *[]){ e->name, or_default(e->passwd, "!!") }, 2);
        for (size_t j = 0; j < ELEMENTSOF(nums); j++)
                shadow_num(b, nums[j]);
        strbuf_putc(b, '\n');
        *ret_line = true;
        return 0;
}

static int render_group(StrBuf *b, const void *entry, size_t i, bool *ret_line, char **ret_error) {
        const NssGroup *e = entry;
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

        put_fields(b, (const char *[]){ e->name, or_default(e->passwd, "x") }, 2);
        strbuf_putc(b, ':');
        strbuf_put_u64(b, e->gid);
        strbuf_putc(b, ':');
        for (size_t j = 0; e->members && e->members[j]; j++) {
                if (j > 0)
                        strbuf_putc(b, ',');
                strbuf_puts(b, e->members[j]);
        }
        strbuf_putc(b, '\n');
        *ret_line = true;
        return 0;
}

static int render_sshkey(StrBuf *b, const void *entry, size_t i, bool *ret_line, char **ret_error) {
        const NssSshkey *e = entry;
        const Field fields[] = {
                { "name", e->name, ":\n", true },
        };
        int r = check_fields(fields, ELEMENTSOF(fields), NSS_MAP_SSHKEY, i, ret_error);

        if (r < 0)
                return r;
        strbuf_puts(b, e->name);
        strbuf_putc(b, ':');
        if (!e->keys || !e->keys[0]) {
                strbuf_putc(b, '\n');
                *ret_line = true;
                return 0;
        }
        r = pylist(b, e->keys);
        if (r == -EILSEQ) {
                if (ret_error &&
                    asprintf(ret_error, "sshkey entry %zu: '%s': a key is not valid UTF-8", i, e->name) < 0)
                        return -ENOMEM;
                return r;
        }
        if (r < 0)
                return r;
        strbuf_putc(b, '\n');
        *ret_line = true;
        return 0;
}

/* "name" or "name member member ...": blanks separate the fields, so none
 * may hold one (nor a newline, which would end the entry). */
static int render_netgroup(StrBuf *b, const void *entry, size_t i, bool *ret_line, char **ret_error) {
        const NssNetgroup *e = entry;

        if (isempty(e->name))
                return entry_error(ret_error, NSS_MAP_NETGROUP, i, "field name is empty");
        if (strpbrk(e->name, " \t\n"))
                return entry_error(ret_error, NSS_MAP_NETGROUP, i,
                                   "field name contains a blank or a newline");
        for (size_t j = 0; e->entries && e->entries[j]; j++)
                if (isempty(e->entries[j]) || strpbrk(e->entries[j], " \t\n"))
                        return entry_error(ret_error, NSS_MAP_NETGROUP, i,
                                           "'%s': a member is empty or contains a blank or a newline",
                                           e->name);
        strbuf_puts(b, e->name);
        for (size_t j = 0; e->entries && e->entries[j]; j++) {
                strbuf_putc(b, ' ');
                strbuf_puts(b, e->entries[j]);
        }
        strbuf_putc(b, '\n');
        *ret_line = true;
        return 0;
}

bool cache_format_automount_file_ok(const char *name) {
        size_t n = name ? strlen(name) : 0;

        if (n <= 5 || n > CACHE_AUTOMOUNT_FILE_MAX || strncmp(name, "auto.", 5) != 0)
                return false;
        for (size_t i = 5; i < n; i++)
                if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", name[i]))
                        return false;
        return true;
}

/* A field of an automount line: autofs splits them at blanks. */
static bool automount_field_ok(const char *s) {
        return !isempty(s) && !strpbrk(s, " \t\n");
}

/* "FILE\tkey [options ]location": the files of the automount map in one
 * stream, each line led by the name of the file it goes to, which the
 * publisher takes off (cache-publish.c). */
static int render_automount(StrBuf *b, const void *entry, size_t i, bool *ret_line, char **ret_error) {
        const NssAutomount *e = entry;
        const char *file = e->map ?: NSS_AUTOMOUNT_MASTER;

        if (!cache_format_automount_file_ok(file))
                return entry_error(ret_error, NSS_MAP_AUTOMOUNT, i, "'%s': not a map file name", file);
        if (!automount_field_ok(e->key))
                return entry_error(ret_error, NSS_MAP_AUTOMOUNT, i, "%s: a key is empty or contains a blank",
                                   file);
        if ((e->options && !automount_field_ok(e->options)) || !automount_field_ok(e->location))
                return entry_error(ret_error, NSS_MAP_AUTOMOUNT, i,
                                   "%s: '%s': options or location empty or with a blank", file, e->key);
        strbuf_puts(b, file);
        strbuf_putc(b, '\t');
        strbuf_puts(b, e->key);
        strbuf_putc(b, ' ');
        if (e->options) {
                strbuf_puts(b, e->options);
                strbuf_putc(b, ' ');
        }
        strbuf_puts(b, e->location);
        strbuf_putc(b, '\n');
        *ret_line = true;
        return 0;
}

typedef int (*RenderFn)(StrBuf *b, const void *entry, size_t i, bool *ret_line, char **ret_error);

static const struct {
        RenderFn render;
        size_t array, count, size; /* where NssMaps keeps this map's entries */
} renderers[_NSS_MAP_MAX] = {
        [NSS_MAP_PASSWD] = { render_passwd, offsetof(NssMaps, passwd), offsetof(NssMaps, n_passwd),
                             sizeof(NssPasswd) },
        [NSS_MAP_SHADOW] = { render_shadow, offsetof(NssMaps, shadow), offsetof(NssMaps, n_shadow),
                             sizeof(NssShadow) },
        [NSS_MAP_GROUP] = { render_group, offsetof(NssMaps, group), offsetof(NssMaps, n_group),
                            sizeof(NssGroup) },
        [NSS_MAP_SSHKEY] = { render_sshkey, offsetof(NssMaps, sshkey), offsetof(NssMaps, n_sshkey),
                             sizeof(NssSshkey) },
        [NSS_MAP_NETGROUP] = { render_netgroup, offsetof(NssMaps, netgroup), offsetof(NssMaps, n_netgroup),
                               sizeof(NssNetgroup) },
        [NSS_MAP_AUTOMOUNT] = { render_automount, offsetof(NssMaps, automount),
                                offsetof(NssMaps, n_automount), sizeof(NssAutomount) },
};

/* One entry; a failed entry leaves no partial line behind. */
static int render_entry(StrBuf *b, NssMapType t, const void *entry, size_t i, size_t *lines,
                        char **ret_error) {
        size_t mark = b->len;
        bool line = false;
        int r;

        r = renderers[t].render(b, entry, i, &line, ret_error);
        if (r < 0) {
                strbuf_truncate(b, mark);
                return r;
        }
        if (line)
                (*lines)++;
        return b->oom ? -ENOMEM : 0;
}

int cache_format_render(const NssMaps *m, NssMapType t, char **ret_buf, size_t *ret_len, size_t *ret_entries,
                        char **ret_error) {
        StrBuf b = {};
        const char *entries;
        size_t n, lines = 0;
        int r;

        if (!m || (int) t < 0 || t >= _NSS_MAP_MAX || !ret_buf || !ret_len)
                return -EINVAL;
        entries = *(char *const *) ((const char *) m + renderers[t].array);
        n = *(const size_t *) ((const char *) m + renderers[t].count);
        for (size_t i = 0; i < n; i++) {
                r = render_entry(&b, t, entries + i * renderers[t].size, i, &lines, ret_error);
                if (r < 0) {
                        strbuf_done(&b);
                        return r;
                }
        }
        *ret_buf = strbuf_steal(&b, ret_len);
        if (!*ret_buf)
                return -ENOMEM;
        if (ret_entries)
                *ret_entries = lines;
        return 0;
}

void cache_formatted_init(CacheFormatted *f, NssMapType t) {
        *f = (CacheFormatted){ .type = t, .fd = -1, .max = CACHE_FORMATTED_MAX };
}

void cache_formatted_spill(CacheFormatted *f, int fd, char *path) {
        f->fd = fd;
        f->path = path;
        f->chunk = CACHE_FORMATTED_CHUNK;
}

/* A write error fails the map as an unrenderable entry does: it is kept
 * (without a text: the publisher names the file) and reported when the map
 * is published; later entries are ignored. */
static int spill_failed(CacheFormatted *f, int r) {
        if (f->error == 0) {
                f->error = r;
                f->error_text = mfree(f->error_text);
        }
        return f->error;
}

int cache_formatted_flush(CacheFormatted *f) {
        int r;

        if (f->fd < 0 || f->buf.len == 0)
                return 0;
        r = fileio_pwrite_all(f->fd, f->buf.data, f->buf.len, f->spilled);
        if (r < 0)
                return spill_failed(f, r);
        f->spilled += f->buf.len;
        strbuf_truncate(&f->buf, 0);
        return 0;
}

/* After an entry went in: a map past its ceiling fails (a hostile
 * directory must not fill the file system under files_dir, which is /etc),
 * else a full chunk is written out. */
static void after_add(CacheFormatted *f) {
        if (f->max > 0 && cache_formatted_size(f) > f->max) {
                f->error = -EFBIG;
                free(f->error_text);
                if (asprintf(&f->error_text, "%s: the map would be larger than %" PRIu64 " bytes",
                             nss_map_to_string(f->type), f->max) < 0)
                        f->error_text = NULL;
                return;
        }
        if (f->fd >= 0 && f->buf.len >= f->chunk)
                (void) cache_formatted_flush(f);
}

ssize_t cache_formatted_read(CacheFormatted *f, uint64_t pos, void *buf, size_t len) {
        if (pos >= f->spilled) {
                if (pos - f->spilled >= f->buf.len)
                        return 0;
                len = MIN(len, (size_t) (f->buf.len - (pos - f->spilled)));
                memcpy(buf, f->buf.data + (pos - f->spilled), len);
                return (ssize_t) len;
        }
        return fileio_pread_full(f->fd, buf, (size_t) MIN((uint64_t) len, f->spilled - pos), pos);
}

static void cut_memory(StrBuf *b, const CacheSpan *at, size_t n) {
        size_t out = 0, in = 0;

        for (size_t k = 0; k < n; k++) {
                memmove(b->data + out, b->data + in, at[k].pos - in);
                out += at[k].pos - in;
                in = at[k].pos + at[k].len;
        }
        memmove(b->data + out, b->data + in, b->len - in);
        strbuf_truncate(b, out + b->len - in);
}

/* Moves [from, from + len) down to @to, a chunk at a time (to <= from). */
static int move_down(int fd, uint64_t to, uint64_t from, uint64_t len, char *chunk) {
        while (len > 0) {
                size_t k = (size_t) MIN(len, (uint64_t) CACHE_FORMATTED_CHUNK);
                ssize_t got = fileio_pread_full(fd, chunk, k, from);
                int r;

                if (got < 0)
                        return (int) got;
                if ((size_t) got != k)
                        return -EIO; /* the file is shorter than what was written */
                r = fileio_pwrite_all(fd, chunk, k, to);
                if (r < 0)
                        return r;
                to += k;
                from += k;
                len -= k;
        }
        return 0;
}

static int cut_file(CacheFormatted *f, const CacheSpan *at, size_t n) {
        _cleanup_free_ char *chunk = NULL;
        uint64_t out = 0, in = 0;
        int r;

        r = cache_formatted_flush(f);
        if (r < 0)
                return r;
        chunk = malloc(CACHE_FORMATTED_CHUNK);
        if (!chunk)
                return -ENOMEM;
        for (size_t k = 0; k <= n; k++) {
                uint64_t end = k < n ? at[k].pos : f->spilled;

                r = move_down(f->fd, out, in, end - in, chunk);
                if (r < 0)
                        return spill_failed(f, r);
                out += end - in;
                if (k < n)
                        in = at[k].pos + at[k].len;
        }
        if (ftruncate(f->fd, (off_t) out) < 0)
                return spill_failed(f, negative_errno());
        f->spilled = out;
        return 0;
}

int cache_formatted_cut(CacheFormatted *f, const CacheSpan *at, size_t n) {
        uint64_t size = cache_formatted_size(f);
        int r;

        if (n == 0)
                return 0;
        for (size_t k = 0; k < n; k++)
                if (at[k].pos + at[k].len > size || (k > 0 && at[k].pos < at[k - 1].pos + at[k - 1].len))
                        return -EINVAL;
        if (f->fd >= 0) {
                r = cut_file(f, at, n);
                if (r < 0)
                        return r;
        } else
                cut_memory(&f->buf, at, n);
        f->entries -= MIN(n, f->entries);
        return 0;
}

int cache_formatted_add(CacheFormatted *f, const void *entry) {
        int r;

        if (f->error != 0)
                return 0;
        r = render_entry(&f->buf, f->type, entry, f->offered++, &f->entries, &f->error_text);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                f->error = r;
        else
                after_add(f);
        return 0;
}

int cache_formatted_try_add(CacheFormatted *f, const void *entry) {
        _cleanup_free_ char *error = NULL;
        int r;

        if (f->error != 0)
                return 0;
        r = render_entry(&f->buf, f->type, entry, f->offered, &f->entries, &error);
        if (r >= 0) {
                f->offered++;
                after_add(f);
        }
        return r;
}

int cache_format_check(NssMapType t, const void *entry) {
        _cleanup_free_ char *error = NULL;
        StrBuf b = {};
        size_t lines = 0;
        int r;

        if ((int) t < 0 || t >= _NSS_MAP_MAX)
                return -EINVAL;
        r = render_entry(&b, t, entry, 0, &lines, &error);
        strbuf_done(&b);
        return r;
}

void cache_formatted_done(CacheFormatted *f) {
        strbuf_done(&f->buf);
        free(f->error_text);
        if (f->fd >= 0)
                (void) close(f->fd);
        if (f->path) {
                (void) unlink(f->path);
                free(f->path);
        }
        cache_formatted_init(f, f->type);
}
