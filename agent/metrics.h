/* The metrics registry, rendered as Prometheus text exposition. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sunkd/module.h"

typedef struct Metrics Metrics;
typedef struct sunkd_metric MetricFamily;

int metrics_new(Metrics **ret);
Metrics *metrics_free(Metrics *m);

/**
 * metrics_add_owned() - register family "sunkd_<spec->name>" for @owner, a
 * module named @owner_name, or for the host itself when @owner is NULL.
 * A module's spec->name must start with "<owner_name>_" ('-' read as '_')
 * and go on after it: -EINVAL otherwise when @strict, else it is let
 * through (a module built before the rule) with the reason in *@ret_error
 * as a warning.  The same name again from the same owner with the same
 * type and labels returns the existing family (modules may register again
 * on reload); another owner's name, or another shape, is -EEXIST.  Names and
 * label names must match [a-zA-Z_][a-zA-Z0-9_]*.  On -EINVAL and -EEXIST,
 * *@ret_error (may be NULL) gets a malloc'd reason naming the metric.
 */
int metrics_add_owned(Metrics *m, const void *owner, const char *owner_name, bool strict,
                      const sunkd_metric_spec *spec, MetricFamily **ret, char **ret_error);
/** metrics_add() - metrics_add_owned() for the host's own families. */
int metrics_add(Metrics *m, const sunkd_metric_spec *spec, MetricFamily **ret);
/**
 * metrics_remove_owner() - free every family of @owner (a module that
 * stopped): its handles are invalid afterwards.  NULL (the host) does nothing.
 */
void metrics_remove_owner(Metrics *m, const void *owner);
/**
 * metrics_remove() - drop the series with @label_values (every series of
 * the family when NULL).  -ENOENT when none has them, -EINVAL for a NULL
 * among the values.
 */
int metrics_remove(MetricFamily *f, const char *const *label_values);
int metrics_set(MetricFamily *f, double value, const char *const *label_values);
int metrics_add_value(MetricFamily *f, double delta, const char *const *label_values);
/** metrics_render() - every family with HELP and TYPE lines, series sorted by insertion. */
int metrics_render(Metrics *m, char **ret, size_t *ret_len);
