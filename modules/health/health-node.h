/* Nodes as `scontrol show node` prints them (the multi-line form: the
 * one-line form cannot be split, since Reason= and Comment= may hold any
 * text).  Pure parsing; the spawning is health-scontrol.c's. */
#pragma once

#include <stddef.h>

#include "health-signal.h"

/* health_nodes_parse() - every "NodeName=" record of @text into a new array
 * in *ret (*ret_n entries; free with health_nodes_free).  Records without a
 * name are skipped; -EBADMSG when there is text but no record; at most
 * 100000 nodes (-E2BIG beyond). */
int health_nodes_parse(const char *text, HealthNode **ret, size_t *ret_n);

HealthNode *health_nodes_free(HealthNode *nodes, size_t n);

/* health_nodes_find() - the node named @name, or NULL. */
const HealthNode *health_nodes_find(const HealthNode *nodes, size_t n, const char *name);
