/* Child processes run for modules: scripts, checks, helpers. */
#pragma once

#include <systemd/sd-event.h>

#include "sunkd/module.h"

typedef struct SpawnSet SpawnSet;

int spawn_set_new(sd_event *event, SpawnSet **ret);
/** spawn_set_free() - SIGKILL every child still running, without callbacks. */
SpawnSet *spawn_set_free(SpawnSet *s);

/**
 * spawn_start() - start @spec->argv in a new session, without copying the
 * daemon's memory.  @cb runs on the loop once the child has exited and its
 * output is read.  @owner groups children for spawn_stop_owner().  The handle
 * in *@ret (may be NULL) is valid until @cb has run.  A spec shorter than
 * today's (an older module's) reads as zero past its size, and one older
 * than ABI 1.3 gets stderr merged into stdout.  @cb gets r < 0 with the
 * errno when the program never ran (exec, chdir or privilege drop failed).
 */
int spawn_start(SpawnSet *s, const sunkd_spawn_spec *spec, sunkd_spawn_cb cb, void *userdata,
                const void *owner, sunkd_child **ret);
/**
 * spawn_kill() - SIGTERM the child's process group, SIGKILL it after the
 * spec's grace.  Idempotent; the callback runs as usual.
 */
int spawn_kill(sunkd_child *child);
/** spawn_stop_owner() - spawn_kill() every child of @owner (NULL: all). */
void spawn_stop_owner(SpawnSet *s, const void *owner);
/** spawn_kill_owner() - the older name of spawn_stop_owner(). */
void spawn_kill_owner(SpawnSet *s, const void *owner);
/**
 * spawn_set_idle_hook() - @fn runs on the loop after each child's callback
 * has returned and the child is gone from the set, so spawn_n_running() can
 * tell when an owner has none left.
 */
void spawn_set_idle_hook(SpawnSet *s, void (*fn)(void *userdata), void *userdata);
unsigned spawn_n_running(SpawnSet *s, const void *owner);

/* The argv[0] under which sunkd, executed again, is the reaper of a spawn
 * with SUNKD_SPAWN_REAP (spawn-reap.c). */
#define SPAWN_REAP_ARGV0 "sunkd-reap"
/** spawn_reap_main() - the reaper; main() calls it when argv[0] is SPAWN_REAP_ARGV0. */
int spawn_reap_main(int argc, char **argv);
