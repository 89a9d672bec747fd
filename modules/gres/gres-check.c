/* slurm.conf's node line for this node, and the comparison with what was found. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <slurm/slurm.h>

#include "gres-check.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/errloc.h"
#include "util/strbuf.h"

#define TYPES_MAX 64

/* The value of KEY=value in a node line's words, or NULL; @len gets its length. */
static const char *line_value(const char *line, const char *key, size_t *len) {
        size_t kl = strlen(key);
        const char *p = line;

        while (*p) {
                const char *w = p + strspn(p, " \t"), *e;

                if (!*w)
                        break;
                e = w + strcspn(w, " \t");
                if ((size_t) (e - w) > kl && w[kl] == '=' && strncasecmp(w, key, kl) == 0) {
                        *len = (size_t) (e - w) - kl - 1;
                        return w + kl + 1;
                }
                p = e;
        }
        return NULL;
}

static bool hostlist_names(const char *list, size_t len, const char *node) {
        _cleanup_free_ char *s = strndup(list, len);
        /* not hostlist_t: a pointer in Slurm 22.05, the struct itself in 24.11 */
        struct hostlist *hl;
        bool found;

        if (!s)
                return false;
        hl = slurm_hostlist_create(s);
        if (!hl)
                return false;
        found = slurm_hostlist_find(hl, node) >= 0;
        slurm_hostlist_destroy(hl);
        return found;
}

/* Joins continued lines and drops comments, in place; one logical line at a
 * time from *pos.  Returns the line or NULL at the end; *ret_no is the
 * number of its first physical line. */
static char *next_line(char **pos, unsigned *no, unsigned *ret_no) {
        char *start = *pos, *w = *pos, *r = *pos;

        if (!*r)
                return NULL;
        *ret_no = *no;
        while (*r) {
                char c = *r++;

                if (c == '\n') {
                        (*no)++;
                        if (w > start && w[-1] == '\\') {
                                w--;
                                continue;
                        }
                        break;
                }
                *w++ = c;
        }
        *w = '\0';
        *pos = r;
        w = strchr(start, '#');
        if (w)
                *w = '\0';
        return start;
}

int gres_slurm_conf_node_gres(const char *path, const char *node, char **ret, char **ret_error) {
        _cleanup_free_ char *data = NULL, *deflt = NULL;
        char *pos, *line;
        unsigned no = 1, line_no;
        size_t len;
        int r;

        *ret = NULL;
        r = fileio_read(path, GRES_SLURM_CONF_MAX, &data, &len);
        if (r == -EFBIG)
                return errmsg_set(ret_error, r, "%s: larger than %u bytes", path, GRES_SLURM_CONF_MAX);
        if (r < 0)
                return errmsg_set(ret_error, r, "%s: %s", path, strerror(-r));
        if (memchr(data, '\0', len))
                return errmsg_set(ret_error, -EBADMSG, "%s: a NUL byte: not a slurm.conf", path);
        pos = data;
        while ((line = next_line(&pos, &no, &line_no))) {
                const char *names, *gres;
                size_t nl, gl = 0;

                names = line_value(line, "NodeName", &nl);
                if (!names)
                        continue;
                if (nl == 0)
                        return errmsg_set(ret_error, -EBADMSG, "%s:%u: NodeName= without a name", path,
                                          line_no);
                gres = line_value(line, "Gres", &gl);
                if (nl == 7 && strncasecmp(names, "DEFAULT", 7) == 0) {
                        free(deflt);
                        deflt = gres ? strndup(gres, gl) : NULL;
                        if (gres && !deflt)
                                return -ENOMEM;
                        continue;
                }
                if (!hostlist_names(names, nl, node))
                        continue;
                if (gres)
                        *ret = strndup(gres, gl);
                else if (deflt)
                        *ret = strdup(deflt);
                return (gres || deflt) && !*ret ? -ENOMEM : 0;
        }
        return errmsg_set(ret_error, -ENOENT, "%s: no NodeName= line names %s", path, node);
}

/* ---- The comparison ------------------------------------------------------ */

typedef struct Want {
        char type[128]; /* "" for an untyped gpu:N */
        unsigned long count;
} Want;

static int parse_configured(const char *s, Want *w, size_t *n, char **ret_message) {
        const char *p = s;

        *n = 0;
        while (*p) {
                const char *e = p + strcspn(p, ","), *c1, *c2;
                char *end;
                size_t tl = 0;

                c1 = memchr(p, ':', (size_t) (e - p));
                if ((size_t) (e - p) == 3 && strncmp(p, "gpu", 3) == 0)
                        return errmsg_set(ret_message, -EINVAL, "Gres=%s: 'gpu' without a count", s);
                if (!c1 || (size_t) (c1 - p) != 3 || strncmp(p, "gpu", 3) != 0) {
                        p = *e ? e + 1 : e; /* another GRES: not ours to compare */
                        continue;
                }
                if (*n >= TYPES_MAX)
                        return errmsg_set(ret_message, -EINVAL, "Gres=%s: more than %d GPU entries", s,
                                          TYPES_MAX);
                c2 = memchr(c1 + 1, ':', (size_t) (e - c1 - 1));
                if (c2) {
                        tl = (size_t) (c2 - c1 - 1);
                        if (tl == 0 || tl >= sizeof(w[0].type))
                                return errmsg_set(ret_message, -EINVAL, "Gres=%s: a GPU type of %zu bytes",
                                                  s, tl);
                        memcpy(w[*n].type, c1 + 1, tl);
                }
                w[*n].type[tl] = '\0';
                errno = 0;
                w[*n].count = strtoul(c2 ? c2 + 1 : c1 + 1, &end, 10);
                if (errno != 0 || end != e || end == (c2 ? c2 + 1 : c1 + 1) ||
                    !isdigit((unsigned char) *(c2 ? c2 + 1 : c1 + 1)))
                        return errmsg_set(ret_message, -EINVAL, "Gres=%s: '%.*s' is not gpu[:TYPE]:COUNT", s,
                                          (int) (e - p), p);
                (*n)++;
                p = *e ? e + 1 : e;
        }
        return 0;
}

static bool has_uuid(const GresCheckGpu *g, size_t n, const char *uuid) {
        for (size_t i = 0; uuid && i < n; i++)
                if (g[i].uuid && strcmp(g[i].uuid, uuid) == 0)
                        return true;
        return false;
}

static unsigned count_type(const GresCheckGpu *g, size_t n, const char *type) {
        unsigned c = 0;

        for (size_t i = 0; i < n; i++)
                if (!*type || strcmp(g[i].type, type) == 0)
                        c++;
        return c;
}

static void sep(StrBuf *b) {
        if (b->len > 0)
                strbuf_puts(b, "; ");
}

int gres_check_compare(const char *configured, const GresCheckGpu *found, size_t n_found,
                       const GresCheckGpu *known, size_t n_known, char **ret_message) {
        Want want[TYPES_MAX];
        StrBuf b = {};
        size_t n = 0;
        bool ok = true;
        int r;

        *ret_message = NULL;
        r = parse_configured(configured ?: "", want, &n, ret_message);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                unsigned have = count_type(found, n_found, want[i].type);
                const char *type = *want[i].type ? want[i].type : "GPUs";

                if (have == want[i].count)
                        continue;
                ok = false;
                sep(&b);
                strbuf_put_u64(&b, have);
                strbuf_puts(&b, " of ");
                strbuf_put_u64(&b, want[i].count);
                strbuf_putc(&b, ' ');
                strbuf_puts(&b, type);
                strbuf_puts(&b, " found");
                for (size_t k = 0; k < n_known; k++) {
                        if ((*want[i].type && strcmp(known[k].type, want[i].type) != 0) ||
                            has_uuid(found, n_found, known[k].uuid))
                                continue;
                        strbuf_puts(&b, ", ");
                        strbuf_puts(&b, known[k].uuid ?: "a GPU");
                        strbuf_puts(&b, " at ");
                        strbuf_puts(&b, known[k].bus_id ?: "?");
                        strbuf_puts(&b, " missing");
                }
        }
        /* A type found but not configured: slurmctld would not schedule it. */
        for (size_t i = 0; i < n_found; i++) {
                bool listed = false, seen = false;

                for (size_t k = 0; k < n && !listed; k++)
                        listed = !*want[k].type || strcmp(want[k].type, found[i].type) == 0;
                for (size_t k = 0; k < i && !seen; k++)
                        seen = strcmp(found[k].type, found[i].type) == 0;
                if (listed || seen)
                        continue;
                ok = false;
                sep(&b);
                strbuf_put_u64(&b, count_type(found, n_found, found[i].type));
                strbuf_putc(&b, ' ');
                strbuf_puts(&b, found[i].type);
                strbuf_puts(&b, " found, not in Gres=");
        }
        if (ok) {
                strbuf_put_u64(&b, n_found);
                strbuf_puts(&b, " GPU(s) found, as Gres=");
                strbuf_puts(&b, configured ?: "");
                strbuf_puts(&b, " says");
        }
        if (b.oom) {
                strbuf_done(&b);
                return -ENOMEM;
        }
        *ret_message = strbuf_steal(&b, NULL);
        return ok ? 1 : 0;
}
