/* Discovery through NVML, loaded with dlopen() so nothing links against the
 * driver: a configured path, else libnvidia-ml.so.1, else libnvidia-ml.so.
 * NVML calls may block for as long as the driver does; callers run this off
 * the event loop. */
#pragma once

#include <stddef.h>

#include "gres-gpu.h"
#include "gres-xid.h"

/* gres_nvml_discover() - the GPUs NVML reports, in NVML index order; a GPU
 * in MIG mode is replaced by its MIG instances (GresGpu.mig), whose
 * nvidia-caps device minors come from <@root>/proc/driver/nvidia-caps/mig-minors.
 * @library: a path to load instead of the default names, or NULL.
 * @ret_error: on an NVML failure, a new string naming the call and NVML's
 * message (the caller logs it and falls back); may be NULL.
 * Returns 0; -ENOENT when no library loads; -ENOSYS when one lacks an entry
 * point; -EIO when an NVML call fails; -ENOMEM. */
int gres_nvml_discover(const char *library, const char *root, GresGpu **ret, size_t *ret_n,
                       char **ret_error);

/* What one window of watching for XID events saw. */
typedef struct GresXidWatch {
        GresXidEvent *events;
        size_t n;
        unsigned watched; /* GPUs registered for XID events */
        char **unwatched; /* "<bus id>: <NVML's reason>" per GPU that could not be */
} GresXidWatch;

void gres_xid_watch_done(GresXidWatch *w);

/* gres_nvml_watch_xids() - register every GPU for NVML's XID events and wait
 * up to @window_usec for them, returning as soon as one has come (with up to
 * @max that came with it).  Blocks: run it in a child.  NVML delivers only
 * events that happen while a set is registered; none is lost within a
 * window.  With no GPU to watch the window is slept through.  Errors as
 * gres_nvml_discover(); -ENOSYS also when the library has no event API. */
int gres_nvml_watch_xids(const char *library, uint64_t window_usec, size_t max, GresXidWatch *w,
                         char **ret_error);
