/* sunkctl's view of io.sunkd.Prolog.Status: the module's own renderer,
 * linked into sunkctl.  A line per run, newest first (job, kind, when, how
 * long, result), and under a failed run the script, how it ended and the
 * end of its output. */
#pragma once

#include <stdio.h>

#include <json-c/json.h>

/** prolog_render() - the runs in flight and the last runs on @out. */
void prolog_render(json_object *status, FILE *out);
