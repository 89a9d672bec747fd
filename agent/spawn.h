/* Child processes run for modules: scripts, checks, helpers. */
#pragma once

#include <systemd/sd-event.h>

#include "sunkd/module.h"

typedef struct SpawnSet SpawnSet;

int spawn_set_new(sd_event *event, SpawnSet **ret);
/** spawn_set_free() - SIGKILL every child still running, without callbacks. */
SpawnSet *spawn_set_free(SpawnSet *s);

/**
 * spawn_start() - fork and exec @spec->argv in a new session.  @cb runs on
 * the loop once the child has exited (or failed to start) and its output is
 * read.  @owner groups children for spawn_kill_owner().
 */
int spawn_start(SpawnSet *s, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                const void *owner);
/** spawn_kill_owner() - SIGTERM the process groups of @owner's children. */
void spawn_kill_owner(SpawnSet *s, const void *owner);
unsigned spawn_n_running(SpawnSet *s, const void *owner);
