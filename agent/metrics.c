/* Counters and gauges with labels, for `sunkctl metrics` and node_exporter.
 *
 * Families and series live as long as the daemon (a module that reloads gets
 * its families back by name), so nothing here needs reference counting.
 * Updates happen on the loop only.  Series are found by linear search: a
 * node agent has dozens of series, not thousands, and the render order stays
 * the order of first use, which keeps diffs of the textfile readable.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi-copy.h"
#include "metrics.h"
#include "util/cleanup.h"
#include "util/macro.h"

typedef struct Series Series;
struct Series {
        char *labels[SUNKD_METRIC_LABELS_MAX];
        double value;
        Series *next;
};

struct sunkd_metric {
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

int metrics_add(Metrics *m, const sunkd_metric_spec *module_spec, MetricFamily **ret) {
        _cleanup_(family_freep) MetricFamily *f = NULL;
        _cleanup_free_ char *name = NULL;
        sunkd_metric_spec copy;
        const sunkd_metric_spec *spec = &copy;

        if (abi_copy(&copy, sizeof(copy), module_spec, module_spec ? module_spec->size : 0,
                     ABI_END_OF(sunkd_metric_spec, labels)) < 0 || !valid_name(spec->name) ||
            (spec->type != SUNKD_METRIC_COUNTER && spec->type != SUNKD_METRIC_GAUGE))
                return -EINVAL;
        if (asprintf(&name, "sunkd_%s", spec->name) < 0)
                return -ENOMEM;
        for (MetricFamily *e = m->families; e; e = e->next)
                if (streq(e->name, name)) {
                        if (!same_shape(e, spec))
                                return -EEXIST;
                        *ret = e;
                        return 0;
                }

        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        f->name = TAKE_PTR(name);
        f->type = spec->type;
        f->help = strdup(spec->help ?: "");
        if (!f->help)
                return -ENOMEM;
        for (; f->n_labels < SUNKD_METRIC_LABELS_MAX && spec->labels[f->n_labels]; f->n_labels++) {
                if (!valid_name(spec->labels[f->n_labels]))
                        return -EINVAL;
                f->labels[f->n_labels] = strdup(spec->labels[f->n_labels]);
                if (!f->labels[f->n_labels])
                        return -ENOMEM;
        }
        if (m->last)
                m->last->next = f;
        else
                m->families = f;
        m->last = f;
        *ret = TAKE_PTR(f);
        return 0;
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
                fprintf(out, "\n# TYPE %s %s\n", f->name, f->type == SUNKD_METRIC_COUNTER ? "counter" : "gauge");
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
