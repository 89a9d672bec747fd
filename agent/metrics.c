/* Counters and gauges with labels, for `sunkctl metrics` and node_exporter.
 *
 * Each family has an owner: the host (NULL), or the module that registered
 * it.  A module's family names start with "sunkd_<module>_", so two modules
 * cannot collide by accident and none can write into the host's or another
 * module's families; a module's families go when it stops, and a module may
 * drop single series of its own (a check removed from its config, a GPU that
 * is gone).  A handle is valid until its family is removed; updates happen
 * on the loop only.  Series are found by linear search: a node agent has
 * dozens of series, not thousands, and the render order stays the order of
 * first use, which keeps diffs of the textfile readable.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi-copy.h"
#include "metrics.h"
#include "util/cleanup.h"
#include "util/errloc.h"
#include "util/macro.h"

typedef struct Series Series;
struct Series {
        char *labels[SUNKD_METRIC_LABELS_MAX];
        double value;
        Series *next;
};

struct sunkd_metric {
        const void *owner;
        char *owner_name;
        char *name;
        char *help;
        sunkd_metric_type type;
        char *labels[SUNKD_METRIC_LABELS_MAX];
        size_t n_labels;
        Series *series, *last;
        MetricFamily *next;
};

struct Metrics {
        MetricFamily *families, *last;
};

static void series_free(Series *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(s->labels[i]);
        free(s);
}

static MetricFamily *family_free(MetricFamily *f) {
        if (!f)
                return NULL;
        for (Series *s = f->series, *n; s; s = n) {
                n = s->next;
                series_free(s, f->n_labels);
        }
        for (size_t i = 0; i < f->n_labels; i++)
                free(f->labels[i]);
        free(f->owner_name);
        free(f->name);
        free(f->help);
        free(f);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(MetricFamily *, family_free);

int metrics_new(Metrics **ret) {
        *ret = calloc(1, sizeof(Metrics));
        return *ret ? 0 : -ENOMEM;
}

Metrics *metrics_free(Metrics *m) {
        if (!m)
                return NULL;
        for (MetricFamily *f = m->families, *n; f; f = n) {
                n = f->next;
                family_free(f);
        }
        free(m);
        return NULL;
}

static bool valid_name(const char *s) {
        if (isempty(s) || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
                return false;
        return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(s);
}

static bool same_shape(const MetricFamily *f, const sunkd_metric_spec *spec) {
        size_t n = 0;

        if (f->type != spec->type)
                return false;
        while (n < SUNKD_METRIC_LABELS_MAX && spec->labels[n])
                n++;
        if (n != f->n_labels)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!streq(f->labels[i], spec->labels[i]))
                        return false;
        return true;
}

/* "<module>_" with '-' as '_': module names may have dashes, metric names not. */
static char *module_prefix(const char *owner_name) {
        char *p;

        if (asprintf(&p, "%s_", owner_name) < 0)
                return NULL;
        for (char *c = p; *c; c++)
                if (*c == '-')
                        *c = '_';
        return p;
}

static MetricFamily *family_find(Metrics *m, const char *name) {
        for (MetricFamily *f = m->families; f; f = f->next)
                if (streq(f->name, name))
                        return f;
        return NULL;
}

static int family_new(const sunkd_metric_spec *spec, const char *name, const void *owner,
                      const char *owner_name, MetricFamily **ret, char **ret_error) {
        _cleanup_(family_freep) MetricFamily *f = calloc(1, sizeof(*f));

        if (!f)
                return -ENOMEM;
        f->owner = owner;
        f->type = spec->type;
        f->name = strdup(name);
        f->help = strdup(spec->help ?: "");
        if (!f->name || !f->help || (owner_name && !(f->owner_name = strdup(owner_name))))
                return -ENOMEM;
        for (; f->n_labels < SUNKD_METRIC_LABELS_MAX && spec->labels[f->n_labels]; f->n_labels++) {
                if (!valid_name(spec->labels[f->n_labels]))
                        return errmsg_set(ret_error, -EINVAL, "'%s' is not a valid label name",
                                          spec->labels[f->n_labels]);
                f->labels[f->n_labels] = strdup(spec->labels[f->n_labels]);
                if (!f->labels[f->n_labels])
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(f);
        return 0;
}

int metrics_add_owned(Metrics *m, const void *owner, const char *owner_name, bool strict,
                      const sunkd_metric_spec *module_spec, MetricFamily **ret, char **ret_error) {
        _cleanup_free_ char *name = NULL, *prefix = NULL;
        sunkd_metric_spec copy;
        const sunkd_metric_spec *spec = &copy;
        MetricFamily *f;
        int r;

        if (ret_error)
                *ret_error = NULL;
        if (abi_copy(&copy, sizeof(copy), module_spec, module_spec ? module_spec->size : 0,
                     ABI_END_OF(sunkd_metric_spec, labels)) < 0)
                return errmsg_set(ret_error, -EINVAL, "the spec is missing or shorter than ABI 1.0's");
        if (!valid_name(spec->name))
                return errmsg_set(ret_error, -EINVAL, "'%s' is not a valid metric name",
                                  spec->name ?: "(null)");
        if (spec->type != SUNKD_METRIC_COUNTER && spec->type != SUNKD_METRIC_GAUGE)
                return errmsg_set(ret_error, -EINVAL, "unknown metric type %d", (int) spec->type);
        if (owner) {
                prefix = module_prefix(owner_name);
                if (!prefix)
                        return -ENOMEM;
                if (strncmp(spec->name, prefix, strlen(prefix)) != 0 ||
                    strlen(spec->name) == strlen(prefix)) {
                        (void) errmsg_set(
                                ret_error, 0,
                                "a module's metric names start with its own name: '%s...' (sunkd_%s...)",
                                prefix, prefix);
                        if (strict)
                                return -EINVAL;
                }
        }
        if (asprintf(&name, "sunkd_%s", spec->name) < 0)
                return -ENOMEM;
        f = family_find(m, name);
        if (f && f->owner != owner && f->owner)
                return errmsg_set(ret_error, -EEXIST, "'%s' belongs to module '%s'", name, f->owner_name);
        if (f && f->owner != owner)
                return errmsg_set(ret_error, -EEXIST, "'%s' belongs to sunkd itself", name);
        if (f && !same_shape(f, spec))
                return errmsg_set(ret_error, -EEXIST,
                                  "'%s' is registered already with another type or labels", name);
        if (f) {
                *ret = f; /* the same again: a module registering in reload */
                return 0;
        }

        r = family_new(spec, name, owner, owner ? owner_name : NULL, &f, ret_error);
        if (r < 0)
                return r;
        if (m->last)
                m->last->next = f;
        else
                m->families = f;
        m->last = f;
        *ret = f;
        return 0;
}

int metrics_add(Metrics *m, const sunkd_metric_spec *spec, MetricFamily **ret) {
        return metrics_add_owned(m, NULL, NULL, true, spec, ret, NULL);
}

void metrics_remove_owner(Metrics *m, const void *owner) {
        MetricFamily *prev = NULL;

        if (!owner)
                return; /* the host's families live as long as the daemon */
        for (MetricFamily *f = m->families, *next; f; f = next) {
                next = f->next;
                if (f->owner != owner) {
                        prev = f;
                        continue;
                }
                if (prev)
                        prev->next = next;
                else
                        m->families = next;
                if (m->last == f)
                        m->last = prev;
                family_free(f);
        }
}

static int series_get(MetricFamily *f, const char *const *values, Series **ret) {
        Series *s;

        for (size_t i = 0; i < f->n_labels; i++)
                if (!values || !values[i])
                        return -EINVAL;
        for (s = f->series; s; s = s->next) {
                size_t i = 0;
                while (i < f->n_labels && streq(s->labels[i], values[i]))
                        i++;
                if (i == f->n_labels) {
                        *ret = s;
                        return 0;
                }
        }
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = 0; i < f->n_labels; i++)
                if (!(s->labels[i] = strdup(values[i]))) {
                        series_free(s, f->n_labels);
                        return -ENOMEM;
                }
        if (f->last)
                f->last->next = s;
        else
                f->series = s;
        f->last = s;
        *ret = s;
        return 0;
}

static bool series_matches(const MetricFamily *f, const Series *s, const char *const *values) {
        for (size_t i = 0; i < f->n_labels; i++)
                if (!streq(s->labels[i], values[i]))
                        return false;
        return true;
}

int metrics_remove(MetricFamily *f, const char *const *label_values) {
        Series *prev = NULL;
        bool all = !label_values;

        for (size_t i = 0; !all && i < f->n_labels; i++)
                if (!label_values[i])
                        return -EINVAL;
        for (Series *s = f->series, *next; s; s = next) {
                next = s->next;
                if (!all && !series_matches(f, s, label_values)) {
                        prev = s;
                        continue;
                }
                if (prev)
                        prev->next = next;
                else
                        f->series = next;
                if (f->last == s)
                        f->last = prev;
                series_free(s, f->n_labels);
                if (!all)
                        return 0;
        }
        return all ? 0 : -ENOENT;
}

int metrics_set(MetricFamily *f, double value, const char *const *label_values) {
        Series *s;
        int r;

        r = series_get(f, label_values, &s);
        if (r < 0)
                return r;
        s->value = value;
        return 0;
}

int metrics_add_value(MetricFamily *f, double delta, const char *const *label_values) {
        Series *s;
        int r;

        if (f->type == SUNKD_METRIC_COUNTER && delta < 0)
                return -EINVAL;
        r = series_get(f, label_values, &s);
        if (r < 0)
                return r;
        s->value += delta;
        return 0;
}

/* Exposition format: label values escape backslash, quote and newline;
 * HELP text escapes backslash and newline. */
static void put_escaped(FILE *out, const char *s, bool quote) {
        for (; *s; s++) {
                if (*s == '\\')
                        fputs("\\\\", out);
                else if (*s == '\n')
                        fputs("\\n", out);
                else if (quote && *s == '"')
                        fputs("\\\"", out);
                else
                        fputc(*s, out);
        }
}

static void put_value(FILE *out, double v) {
        if (isnan(v))
                fputs("NaN", out);
        else if (isinf(v))
                fputs(v > 0 ? "+Inf" : "-Inf", out);
        else if (v == (double) (long long) v && fabs(v) < 1e15)
                fprintf(out, "%lld", (long long) v);
        else
                fprintf(out, "%.10g", v);
}

int metrics_render(Metrics *m, char **ret, size_t *ret_len) {
        char *buf = NULL;
        size_t len = 0;
        FILE *out;

        out = open_memstream(&buf, &len);
        if (!out)
                return -ENOMEM;
        for (MetricFamily *f = m->families; f; f = f->next) {
                if (!f->series)
                        continue;
                fprintf(out, "# HELP %s ", f->name);
                put_escaped(out, f->help, false);
                fprintf(out, "\n# TYPE %s %s\n", f->name,
                        f->type == SUNKD_METRIC_COUNTER ? "counter" : "gauge");
                for (Series *s = f->series; s; s = s->next) {
                        fputs(f->name, out);
                        for (size_t i = 0; i < f->n_labels; i++) {
                                fprintf(out, "%s%s=\"", i == 0 ? "{" : ",", f->labels[i]);
                                put_escaped(out, s->labels[i], true);
                                fputc('"', out);
                        }
                        fputs(f->n_labels ? "} " : " ", out);
                        put_value(out, s->value);
                        fputc('\n', out);
                }
        }
        if (fclose(out) != 0 || !buf) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}
