/* A node as slurmctld shows it, what its state flags say, and nodes as
 * `scontrol show node` prints them (the multi-line form: the one-line form
 * cannot be split, since Reason= and Comment= may hold any text).  Pure
 * parsing; the spawning is health-scontrol.c's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A node as slurmctld shows it. */
typedef struct HealthNode {
        char *name;
        char *state;  /* "IDLE+DRAIN+DYNAMIC_NORM", as scontrol prints it */
        char *reason; /* without the "[user@time]" scontrol adds; NULL if none */
        char **partitions;
} HealthNode;

void health_node_clear(HealthNode *n);
bool health_node_has_flag(const HealthNode *n, const char *flag);
bool health_node_drained(const HealthNode *n);     /* DRAIN, DRAINING or DRAINED */
bool health_node_unreachable(const HealthNode *n); /* DOWN, NOT_RESPONDING, FAIL, FUTURE, POWERED_DOWN */
const char *
health_node_reason(const HealthNode *n);    /* the reason, if drained or unreachable: else an old one */
bool health_node_busy(const HealthNode *n); /* ALLOCATED, MIXED or COMPLETING: a job runs */

/* health_nodes_parse() - every "NodeName=" record of @text into a new array
 * in *ret (*ret_n entries; free with health_nodes_free).  Records without a
 * name are skipped; -EBADMSG when there is text but no record; at most
 * 100000 nodes (-E2BIG beyond). */
int health_nodes_parse(const char *text, HealthNode **ret, size_t *ret_n);

HealthNode *health_nodes_free(HealthNode *nodes, size_t n);

/* health_nodes_find() - the node named @name, or NULL. */
const HealthNode *health_nodes_find(const HealthNode *nodes, size_t n, const char *name);
