/* File watches for modules: "tell me when this path may have changed".
 *
 * A watch follows a path, not an inode: it watches the directory holding the
 * path's last component (so a rename over the file, a delete and a re-create
 * are seen) and, for every symlink met while resolving the path, the
 * directory holding that link (so Kubernetes' `..data` swap in a Secret or
 * ConfigMap volume is seen).  A missing component is waited for in the
 * nearest existing directory.  Callbacks are coalesced per burst and run on
 * the loop; the callback re-reads the file, it is never told what changed.
 */
#pragma once

#include <systemd/sd-event.h>

#include "sunkd/module.h"

typedef struct WatchSet WatchSet;
typedef struct sunkd_watch Watch;

typedef void (*WatchFn)(void *userdata, const char *path);

/* Quiet period after the first event of a burst before the callback runs. */
#define WATCH_DEBOUNCE_USEC (50 * SUNKD_USEC_PER_MSEC)
/* Watches per set, and symlinks followed while resolving one path. */
#define WATCH_MAX 1024
#define WATCH_SYMLINKS_MAX 32

int watch_set_new(sd_event *event, WatchSet **ret);
/** watch_set_free() - remove every watch, without callbacks. */
WatchSet *watch_set_free(WatchSet *s);

/**
 * watch_add() - call @cb(@userdata, @path) on the loop after @path (absolute)
 * may have changed: written and closed, renamed over, deleted, created,
 * chmod'ed, or a symlink on its way re-pointed.  @owner groups watches for
 * watch_remove_owner().  Return: 0 and the watch in *ret (may be NULL), or
 * -EINVAL (relative or overlong path), -ELOOP, -E2BIG (too many watches), or
 * what inotify_add_watch() failed with.
 */
int watch_add(WatchSet *s, const char *path, WatchFn cb, void *userdata, const void *owner, Watch **ret);
/** watch_remove() - stop and free @w; safe from inside its own callback. */
void watch_remove(Watch *w);
void watch_remove_owner(WatchSet *s, const void *owner);
unsigned watch_count(WatchSet *s, const void *owner);
