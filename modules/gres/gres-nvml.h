/* Discovery through NVML, loaded with dlopen() so nothing links against the
 * driver: a configured path, else libnvidia-ml.so.1, else libnvidia-ml.so.
 * NVML calls may block for as long as the driver does; callers run this off
 * the event loop. */
#pragma once

#include <stddef.h>

#include "gres-gpu.h"

/* gres_nvml_discover() - the GPUs NVML reports, in NVML index order; a GPU
 * in MIG mode is replaced by its MIG instances (GresGpu.mig), whose
 * nvidia-caps device minors come from <@root>/proc/driver/nvidia-caps/mig-minors.
 * @library: a path to load instead of the default names, or NULL.
 * @ret_error: on an NVML failure, a new string naming the call and NVML's
 * message (the caller logs it and falls back); may be NULL.
 * Returns 0; -ENOENT when no library loads; -ENOSYS when one lacks an entry
 * point; -EIO when an NVML call fails; -ENOMEM. */
int gres_nvml_discover(const char *library, const char *root, GresGpu **ret, size_t *ret_n, char **ret_error);
