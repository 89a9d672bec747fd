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
