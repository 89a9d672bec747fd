/* Discovery without NVML: the driver's /proc/driver/nvidia/gpus/<bus>/information,
 * /dev/nvidia<minor> and /sys/bus/pci/devices/<bus>/local_cpulist, all read
 * under a root directory so tests (and containers with the host mounted
 * elsewhere) can point it at another tree. */
#pragma once

#include <stddef.h>

#include "gres-gpu.h"

/* gres_proc_discover() - the GPUs under @root ("/" for the host), in PCI bus
 * order, indexed in that order.  No driver directory is 0 GPUs, not an error.
 * A GPU whose /dev/nvidia<minor> is missing is left out.  Returns 0, -EBADMSG
 * for a malformed information file, or another negative errno. */
int gres_proc_discover(const char *root, GresGpu **ret, size_t *ret_n);

/* gres_bus_id_normalise() - "00000000:1B:00.0" or "0000:1b:00.0" to
 * "0000:1b:00.0".  Returns -EINVAL for anything else. */
int gres_bus_id_normalise(const char *in, char out[static 16]);

/* gres_proc_mig_minors() - the nvidia-caps minors of GPU instance @gi and
 * compute instance @ci of the GPU with device minor @gpu, from
 * <@root>/proc/driver/nvidia-caps/mig-minors ("gpu0/gi1/access 21",
 * "gpu0/gi1/ci0/access 22"): /dev/nvidia-caps/nvidia-cap<minor> are the
 * files a job needs besides /dev/nvidia<gpu>.  Returns 0, -ENOENT when the
 * file or either line is missing, -EBADMSG for a malformed file. */
int gres_proc_mig_minors(const char *root, unsigned gpu, unsigned gi, unsigned ci, unsigned *ret_gi_minor,
                         unsigned *ret_ci_minor);
