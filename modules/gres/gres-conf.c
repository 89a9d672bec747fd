#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strbuf.h"

#include "gres-conf.h"

static bool is_separator(char c) {
        return !isgraph((unsigned char) c) || strchr("=,:#\\", c);
}

char *gres_type_normalise(const char *name) {
        char *t = strdup(name);

        if (!t)
                return NULL;
        /* Slurm lowercases and turns spaces into '_'; anything else that would
         * split a gres.conf line or a Gres= value (controls, '=', ',', ':', '#')
         * goes the same way, so a driver string cannot inject a key; so does
         * the backslash of an escaped byte (gres_text_safe()). */
        for (char *p = t; *p; p++)
                *p = is_separator(*p) ? '_' : (char) tolower((unsigned char) *p);
        return t;
}

static char *type_of(const GresGpu *g, const GresTypeAlias *aliases, size_t n_aliases) {
        char *t = gres_type_normalise(g->name ?: "");

        for (size_t i = 0; t && i < n_aliases; i++)
                if (streq(t, aliases[i].from)) {
                        free(t);
                        return strdup(aliases[i].to);
                }
        return t;
}

/* PCI bus order; a GPU's MIG instances in their order. */
static int by_bus_id(const void *a, const void *b) {
        const GresGpu *x = a, *y = b;
        int c = strcmp(x->bus_id ?: "", y->bus_id ?: "");

        return c ?: (x->mig > y->mig) - (x->mig < y->mig);
}

static unsigned links_between(const GresGpu *from, const GresGpu *to) {
        unsigned c = 0;

        for (char **p = from->peers; p && *p; p++)
                c += streq_ptr(*p, to->bus_id);
        return c;
}

/* Links= only where some GPU has NVLink, and never beside MIG instances,
 * which have none and would shift every GPU's place in the list. */
static bool any_links(const GresGpu *gpus, size_t n) {
        bool links = false;

        for (size_t i = 0; i < n; i++) {
                if (gpus[i].mig)
                        return false;
                links = links || (gpus[i].peers && gpus[i].peers[0]);
        }
        return links;
}

static void put_links(StrBuf *b, const GresGpu *gpus, size_t n, size_t self) {
        strbuf_puts(b, " Links=");
        for (size_t j = 0; j < n; j++) {
                if (j > 0)
                        strbuf_putc(b, ',');
                strbuf_put_i64(b, j == self ? -1 : (int64_t) links_between(&gpus[self], &gpus[j]));
        }
}

int gres_conf_render(GresGpu *gpus, size_t n, const GresTypeAlias *aliases, size_t n_aliases, char **ret) {
        StrBuf b = {};
        bool links;

        if (n > 0)
                qsort(gpus, n, sizeof(*gpus), by_bus_id);
        links = any_links(gpus, n);
        strbuf_reserve(&b, 1);
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *type = type_of(&gpus[i], aliases, n_aliases);

                if (!type) {
                        strbuf_done(&b);
                        return -ENOMEM;
                }
                strbuf_puts(&b, "Name=gpu Type=");
                strbuf_puts(&b, type);
                if (gpus[i].files) {
                        strbuf_puts(&b, " MultipleFiles=");
                        strbuf_puts(&b, gpus[i].files);
                } else {
                        strbuf_puts(&b, " File=/dev/nvidia");
                        strbuf_put_u64(&b, gpus[i].minor);
                }
                if (!isempty(gpus[i].cores)) {
                        strbuf_puts(&b, " Cores=");
                        strbuf_puts(&b, gpus[i].cores);
                }
                if (links)
                        put_links(&b, gpus, n, i);
                strbuf_putc(&b, '\n');
        }
        if (b.oom) {
                strbuf_done(&b);
                return -ENOMEM;
        }
        *ret = strbuf_steal(&b, NULL);
        return 0;
}

int gres_conf_gres_value(GresGpu *gpus, size_t n, const GresTypeAlias *aliases, size_t n_aliases,
                         char **ret) {
        _cleanup_free_ char **types = calloc(n + 1, sizeof(char *));
        _cleanup_free_ size_t *counts = calloc(n + 1, sizeof(size_t));
        size_t n_types = 0;
        StrBuf b = {};
        int r = 0;

        if (!types || !counts)
                return -ENOMEM;
        if (n > 0)
                qsort(gpus, n, sizeof(*gpus), by_bus_id);
        for (size_t i = 0; i < n && r == 0; i++) {
                char *t = type_of(&gpus[i], aliases, n_aliases);
                size_t k = 0;

                if (!t) {
                        r = -ENOMEM;
                        break;
                }
                while (k < n_types && !streq(types[k], t))
                        k++;
                if (k == n_types)
                        types[n_types++] = t;
                else
                        free(t);
                counts[k]++;
        }
        strbuf_reserve(&b, 1);
        for (size_t k = 0; k < n_types; k++) {
                if (k > 0)
                        strbuf_putc(&b, ',');
                strbuf_puts(&b, "gpu:");
                strbuf_puts(&b, types[k]);
                strbuf_putc(&b, ':');
                strbuf_put_u64(&b, counts[k]);
                free(types[k]);
        }
        if (r < 0 || b.oom) {
                strbuf_done(&b);
                return r < 0 ? r : -ENOMEM;
        }
        *ret = strbuf_steal(&b, NULL);
        return 0;
}

/* "nvl-<cluster>-<clique>", or "no NVLink fabric". */
static char *domain_name(const GresGpu *g) {
        char *s;

        if (!g->fabric)
                return strdup("no NVLink fabric");
        return asprintf(&s, "nvl-%s-%u", g->fabric, g->clique) < 0 ? NULL : s;
}

int gres_conf_block(const GresGpu *gpus, size_t n, const char *node, char **ret, char **ret_error) {
        _cleanup_free_ char *want = NULL;
        const GresGpu *first = NULL;

        *ret = NULL;
        for (size_t i = 0; i < n && !first; i++)
                if (gpus[i].fabric)
                        first = gpus + i;
        if (!first)
                return 0;
        want = domain_name(first);
        if (!want)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *got = domain_name(gpus + i);

                if (!got)
                        return -ENOMEM;
                if (strcmp(got, want) == 0)
                        continue;
                if (asprintf(ret_error, "GPU %s at %s is in %s, GPU %s at %s in %s", gpus[i].uuid ?: "?",
                             gpus[i].bus_id ?: "?", got, first->uuid ?: "?", first->bus_id ?: "?", want) < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }
        if (asprintf(ret, "BlockName=%s Nodes=%s", want, node) < 0) {
                *ret = NULL;
                return -ENOMEM;
        }
        return 0;
}
