/* The metrics registry, rendered as Prometheus text exposition. */
#pragma once

#include <stddef.h>

#include "sunkd/module.h"

typedef struct Metrics Metrics;
typedef struct sunkd_metric MetricFamily;

int metrics_new(Metrics **ret);
Metrics *metrics_free(Metrics *m);

/**
 * metrics_add() - register family "sunkd_<spec->name>".  Registering the
 * same name again with the same type and labels returns the existing family
 * (modules re-register on reload); anything else is -EEXIST.  Names and
 * label names must match [a-zA-Z_][a-zA-Z0-9_]*.
 */
int metrics_add(Metrics *m, const sunkd_metric_spec *spec, MetricFamily **ret);
int metrics_set(MetricFamily *f, double value, const char *const *label_values);
int metrics_add_value(MetricFamily *f, double delta, const char *const *label_values);
/** metrics_render() - every family with HELP and TYPE lines, series sorted by insertion. */
int metrics_render(Metrics *m, char **ret, size_t *ret_len);
