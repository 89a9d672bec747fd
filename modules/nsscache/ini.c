#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ini.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/strv.h"

int ini_error(char **ret_error, const char *file, unsigned line, const char *key, const char *fmt, ...) {
        va_list ap;

        if (ret_error) {
                free(*ret_error);
                va_start(ap, fmt);
                *ret_error = errloc_formatv(file, line, 0, key, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

void ini_file_done(IniFile *f) {
        for (size_t i = 0; i < f->n; i++) {
                free(f->entries[i].section);
                free(f->entries[i].key);
                erase_and_free(f->entries[i].value);
        }
        free(f->entries);
        f->entries = NULL;
        f->n = 0;
}

const IniEntry *ini_lookup(const IniFile *f, const char *section, const char *key) {
        for (size_t i = 0; i < f->n; i++)
                if (streq(f->entries[i].section, section) && streq(f->entries[i].key, key))
                        return &f->entries[i];
        if (!streq(section, "DEFAULT"))
                return ini_lookup(f, "DEFAULT", key);
        return NULL;
}

char *ini_strip(char *s) {
        char *e;

        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
                *--e = 0;
        return s;
}

static void lower(char *s) {
        for (; *s; s++)
                *s = (char) tolower((unsigned char) *s);
}

/* "[name]": checked, and as ConfigParser, [DEFAULT] may reopen while other sections may not. */
static int section_header(IniFile *f, char *s, unsigned line, IniSectionCheck check, char ***seen,
                          char **section, char **ret_error) {
        char *e = strchr(s, ']'), *name;
        const char *why;
        int r;

        if (!e || e == s + 1 || !isempty(ini_strip(e + 1)))
                return ini_error(ret_error, f->fname, line, NULL, "malformed section header");
        *e = 0;
        name = s + 1;
        why = check ? check(name) : NULL;
        if (why)
                return ini_error(ret_error, f->fname, line, NULL, "section '%s': %s", name, why);
        if (!streq(name, "DEFAULT")) {
                if (strv_contains(*seen, name))
                        return ini_error(ret_error, f->fname, line, NULL, "section '%s': duplicate section",
                                         name);
                r = strv_extend(seen, name);
                if (r < 0)
                        return r;
        }
        free(*section);
        *section = strdup(name);
        return *section ? 0 : -ENOMEM;
}

static int entry_add(IniFile *f, const char *section, const char *key, const char *value, unsigned line,
                     char **ret_error) {
        IniEntry *e;

        for (size_t i = 0; i < f->n; i++)
                if (streq(f->entries[i].section, section) && streq(f->entries[i].key, key))
                        return ini_error(ret_error, f->fname, line, key, "duplicate key in section [%s]",
                                         section);
        if (f->n >= INI_ENTRIES_MAX)
                return ini_error(ret_error, f->fname, line, NULL, "too many keys");
        if (!(f->n % 16)) {
                IniEntry *n = reallocarray(f->entries, f->n + 16, sizeof(IniEntry));
                if (!n)
                        return -ENOMEM;
                f->entries = n;
        }
        e = &f->entries[f->n++];
        *e = (IniEntry){
                .section = strdup(section), .key = strdup(key), .value = strdup(value), .line = line
        };
        return e->section && e->key && e->value ? 0 : -ENOMEM;
}

int ini_read(IniFile *f, const char *text, size_t len, IniSectionCheck check, char **ret_error) {
        _cleanup_free_ char *section = NULL;
        _cleanup_erase_ char *buf = NULL;
        _cleanup_strv_free_ char **seen = NULL;
        char *p, *next;
        unsigned line = 0;
        int r;

        if (memchr(text, 0, len))
                return ini_error(ret_error, f->fname, 0, NULL, "NUL byte in file");
        buf = strndup(text, len);
        if (!buf)
                return -ENOMEM;
        p = buf;
        if (strncmp(p, "\xef\xbb\xbf", 3) == 0)
                p += 3;

        for (; p; p = next) {
                char *s, *d, *key;

                line++;
                next = strchr(p, '\n');
                if (next)
                        *next++ = 0;
                s = ini_strip(p);
                if (!*s || *s == '#' || *s == ';')
                        continue;
                if (p[0] == ' ' || p[0] == '\t')
                        return ini_error(ret_error, f->fname, line, NULL,
                                         "continuation lines are not supported");
                if (*s == '[') {
                        r = section_header(f, s, line, check, &seen, &section, ret_error);
                        if (r < 0)
                                return r;
                        continue;
                }
                d = strpbrk(s, "=:");
                if (!d)
                        return ini_error(ret_error, f->fname, line, NULL, "expected 'key = value'");
                *d = 0;
                key = ini_strip(s);
                if (!*key)
                        return ini_error(ret_error, f->fname, line, NULL, "empty key");
                if (!section)
                        return ini_error(ret_error, f->fname, line, key, "outside of any section");
                lower(key);
                r = entry_add(f, section, key, ini_strip(d + 1), line, ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Appends @n bytes of @p to the growing value, within INI_VALUE_MAX. */
static int value_append(const IniFile *f, const IniEntry *e, const char *p, size_t n, char **out,
                        size_t *out_len, char **ret_error) {
        char *t;

        if (*out_len + n >= INI_VALUE_MAX)
                return ini_error(ret_error, f->fname, e->line, e->key, "value too long");
        t = malloc(*out_len + n + 1);
        if (!t)
                return -ENOMEM;
        /* Copied rather than realloc'd: the old buffer may hold a secret and is wiped. */
        if (*out)
                memcpy(t, *out, *out_len);
        memcpy(t + *out_len, p, n);
        t[*out_len + n] = 0;
        erase_and_free(*out);
        *out = t;
        *out_len += n;
        return 0;
}

/* ConfigParser's BasicInterpolation: %% and %(name)s, names looked up in @e's section, then [DEFAULT]. */
static int interpolate(const IniFile *f, const IniEntry *e, const char *value, unsigned depth, char **out,
                       size_t *out_len, char **ret_error) {
        const char *p = value;
        int r;

        if (depth > INI_INTERPOLATION_DEPTH)
                return ini_error(ret_error, f->fname, e->line, e->key, "interpolation nested too deeply");
        while (*p) {
                const char *pct = strchr(p, '%');
                _cleanup_free_ char *name = NULL;
                const char *close;
                const IniEntry *ref;

                r = value_append(f, e, p, pct ? (size_t) (pct - p) : strlen(p), out, out_len, ret_error);
                if (r < 0 || !pct)
                        return r;
                if (pct[1] == '%') {
                        r = value_append(f, e, "%", 1, out, out_len, ret_error);
                        if (r < 0)
                                return r;
                        p = pct + 2;
                        continue;
                }
                if (pct[1] != '(')
                        return ini_error(ret_error, f->fname, e->line, e->key,
                                         "'%%' must be followed by '%%' or '(' (write %%%% for a literal "
                                         "percent sign)");
                close = strstr(pct + 2, ")s");
                if (!close)
                        return ini_error(ret_error, f->fname, e->line, e->key, "bad interpolation syntax");
                name = strndup(pct + 2, (size_t) (close - pct - 2));
                if (!name)
                        return -ENOMEM;
                lower(name);
                ref = ini_lookup(f, e->section, name);
                if (!ref)
                        return ini_error(ret_error, f->fname, e->line, e->key,
                                         "interpolation references unknown key '%s'", name);
                r = interpolate(f, e, ref->value, depth + 1, out, out_len, ret_error);
                if (r < 0)
                        return r;
                p = close + 2;
        }
        return 0;
}

int ini_value(const IniFile *f, const IniEntry *e, char **ret, char **ret_error) {
        _cleanup_erase_ char *v = NULL;
        size_t len = 0;
        int r;

        r = interpolate(f, e, e->value, 0, &v, &len, ret_error);
        if (r < 0)
                return r;
        if (!v && !(v = strdup("")))
                return -ENOMEM;
        if (len >= 2 && ((v[0] == '"' && v[len - 1] == '"') || (v[0] == '\'' && v[len - 1] == '\''))) {
                memmove(v, v + 1, len - 2);
                explicit_bzero(v + len - 2, 2);
        }
        *ret = TAKE_PTR(v);
        return 0;
}
