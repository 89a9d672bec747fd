/* A baseline of `checks:` built from the node itself (`sunkctl health
 * genconf`, what NHC's nhc-genconf does): each check type that can says
 * what it finds on this node as checks that pass on it.  An entry is one
 * YAML flow mapping, name and type first:
 *   {name: cpu, type: cpu, sockets: 2, cores: 64, threads: 128}
 * Strings taken from the node go through health_genconf_quote(), so a
 * mount point with a colon or a quote stays one scalar.  Non-logging; like
 * a check's `run`, a type's genconf may run in a child forked from the
 * threaded daemon. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "util/macro.h"

typedef struct HealthGenconf {
        char **entries; /* malloc'd, each a flow mapping without its "- " */
        size_t n, cap;
        bool oom; /* an add failed: the baseline is incomplete */
} HealthGenconf;

/** health_genconf_add() - append one entry of @fmt.  Return: 0, or -ENOMEM (and oom set). */
int health_genconf_add(HealthGenconf *g, const char *fmt, ...) _printf_(2, 3);

/**
 * health_genconf_quote() - @s as a YAML double-quoted scalar in @buf
 * ("/mnt/a b" -> "\"/mnt/a b\""): '"' and '\\' escaped, a control byte as
 * \xNN.  Return: @buf, or NULL when @s is not UTF-8 (YAML cannot hold its
 * bytes: leave such a thing out of the baseline) or does not fit.
 */
const char *health_genconf_quote(const char *s, char *buf, size_t size);

void health_genconf_clear(HealthGenconf *g);
