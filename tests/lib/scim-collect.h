/* A MapSink that collects a mapper's entries as NssMaps, for tests and
 * tools that look at entries rather than cache text.  The refresh itself
 * renders (map_sink_formatted()); the fuzz target checks both agree. */
#pragma once

#include "modules/nsscache/cache/nss-maps.h"
#include "modules/nsscache/map-sink.h"

typedef struct ScimCollect {
        NssMaps maps;
        size_t cap[_NSS_MAP_MAX];
} ScimCollect;

MapSink scim_collect_sink(ScimCollect *c);
/* Moves the maps out; @c is empty again. */
void scim_collect_take(ScimCollect *c, NssMaps *ret);
void scim_collect_done(ScimCollect *c);
