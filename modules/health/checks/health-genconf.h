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
        /* What was left out and why, one line each ("mount: a mount point
         * that is not UTF-8 left out"): comments of the baseline. */
        char **notes;
        size_t n_notes, cap_notes;
} HealthGenconf;

/* A check's name: at most this many bytes (the module's CHECK_NAME_MAX). */
#define HEALTH_GENCONF_NAME_MAX 32

/** health_genconf_add() - append one entry of @fmt.  Return: 0, or -ENOMEM (and oom set). */
int health_genconf_add(HealthGenconf *g, const char *fmt, ...) _printf_(2, 3);

/**
 * health_genconf_quote() - @s as a YAML double-quoted scalar in @buf
 * ("/mnt/a b" -> "\"/mnt/a b\""): '"' and '\\' escaped, and what YAML holds only
 * as an escape (C0 and C1 controls, DEL, the byte order mark, U+FFFE,
 * U+FFFF, and the line breaks NEL, U+2028, U+2029 that a quoted scalar
 * would fold) as \xNN or \uNNNN.  Return: @buf, or NULL when @s is not UTF-8 (YAML cannot hold its
 * bytes: leave such a thing out of the baseline) or does not fit.
 */
const char *health_genconf_quote(const char *s, char *buf, size_t size);

/**
 * health_genconf_note() - append one line of @fmt to what the baseline
 * says it left out.  Node strings in it go through health_genconf_quote()
 * or stay out.  Return: 0, or -ENOMEM (and oom set).
 */
int health_genconf_note(HealthGenconf *g, const char *fmt, ...) _printf_(2, 3);

/**
 * health_genconf_name() - a check name for @type and what it is about
 * (@what: "/var/lib" gives "mount-var-lib", "/" or "" gives "mount-root",
 * NULL the type's name alone):
 * letters, digits, '_' and '-' as sunkd.yaml takes them, at most
 * HEALTH_GENCONF_NAME_MAX bytes, and no entry of @g's name yet ("-2",
 * "-3" ... at its end where it would be).  Return: @buf.
 */
const char *health_genconf_name(const HealthGenconf *g, const char *type, const char *what,
                                char buf[static HEALTH_GENCONF_NAME_MAX + 1]);

void health_genconf_clear(HealthGenconf *g);
