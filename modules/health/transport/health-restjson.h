/* slurmrestd's JSON, as its data_parser v0.0.39 and later write and read
 * it: the nodes of a GET /slurm/<version>/node/<name> or /nodes answer,
 * the errors[] of any answer, and the body of a node update.  Pure: no
 * I/O; the requests are health-rest.c's. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "health-signal.h"

#define HEALTH_REST_NODES_MAX 100000

/**
 * health_rest_nodes_parse() - the "nodes" array of an answer into a new
 * array in *ret (*ret_n entries; free with health_nodes_free).  A node is
 * "name" (a string), "state" (an array of words such as "IDLE" and
 * "DRAIN", joined with '+' as scontrol prints them), "reason" (a string;
 * empty or missing: none) and "partitions" (an array of strings, or one
 * string of names split at commas; missing: none).  Control bytes in a
 * name, reason or partition, NUL included, become '?': what slurmrestd
 * says reaches messages and comparisons as one printable line.
 * Return: 0; -EBADMSG with *ret_error for an answer that is not one JSON
 * object, has no "nodes" array, or a node without a name or a state, or
 * whose state is not an array of upper-case words; -E2BIG beyond
 * HEALTH_REST_NODES_MAX nodes; -ENOMEM.
 */
int health_rest_nodes_parse(const char *body, size_t len, HealthNode **ret, size_t *ret_n, char **ret_error);

/**
 * health_rest_errors() - the "errors" of an answer as one line in @buf:
 * each entry's "error" (slurm_strerror's text) and "description", joined
 * with "; ", control bytes made '?'.  Return: false (and @buf empty) when
 * the body is not JSON or holds no error.
 */
bool health_rest_errors(const char *body, size_t len, char *buf, size_t size);

/**
 * health_rest_update_body() - the body of POST /node/<name>: with @drain,
 * {"state":["DRAIN"],"reason":@reason}; else {"state":["RESUME"]}.
 * Return: 0 and the malloc'd text in *ret, or -ENOMEM.
 */
int health_rest_update_body(bool drain, const char *reason, char **ret);
