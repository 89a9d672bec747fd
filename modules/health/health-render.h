/* sunkctl's view of io.sunkd.Health.Status and .Run: the module's own
 * renderer, linked into sunkctl: one line per check, and an exit status
 * that says whether a check failed (for slurmd's HealthCheckProgram). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include <json-c/json.h>

/** health_render() - the node, our reason and a table of the checks on @out. */
void health_render(json_object *status, FILE *out);

/** health_render_ok() - false when the reply says a check failed ("failed": true, Run's). */
bool health_render_ok(json_object *status);
