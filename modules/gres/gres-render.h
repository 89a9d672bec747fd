/* sunkctl's views of io.sunkd.Gres.List's answer: the module's own renderer,
 * linked into sunkctl, for output the generic one cannot give (a GPU table,
 * the Gres= line slurmd takes, the check's verdict). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include <json-c/json.h>

typedef enum GresView {
        GRES_VIEW_TABLE,       /* sunkctl gres */
        GRES_VIEW_SLURMD_CONF, /* sunkctl gres --slurmd-conf */
        GRES_VIEW_CHECK,       /* sunkctl gres --check */
        GRES_VIEW_BLOCK,       /* sunkctl gres --block */
        _GRES_VIEW_MAX,
} GresView;

/** gres_view_from_string() - "slurmd-conf", "check", "block"; NULL is the table.  -EINVAL otherwise. */
int gres_view_from_string(const char *s);

/**
 * gres_render() - print @list as @view on @out; the reason there is no
 * topology/block line goes to @err.
 */
void gres_render(json_object *list, GresView view, FILE *out, FILE *err);

/** gres_render_ok() - false where @view reports a failure: a check that does not match, no block line. */
bool gres_render_ok(json_object *list, GresView view);
