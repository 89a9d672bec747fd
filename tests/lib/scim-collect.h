/* A ScimSink that collects a mapper's entries as NssMaps, for tests and
 * tools that look at entries rather than cache text.  The refresh itself
 * renders (scim_sink_formatted()); the fuzz target checks both agree. */
#pragma once

#include "modules/nsscache/nss-maps.h"
#include "modules/nsscache/scim-sink.h"

typedef struct ScimCollect {
        NssMaps maps;
        size_t cap[_NSS_MAP_MAX];
} ScimCollect;

ScimSink scim_collect_sink(ScimCollect *c);
/* Moves the maps out; @c is empty again. */
void scim_collect_take(ScimCollect *c, NssMaps *ret);
void scim_collect_done(ScimCollect *c);
