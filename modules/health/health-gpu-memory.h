/* The memory policy: what a GPU's memory counters, as gres observes them
 * through NVML, do to the node.  Beside the XID policy, the gpu check's
 * second rule book (gres observes, health judges), from
 * modules.health.memory_policy:
 *
 *   memory_policy:
 *     remapped_rows_uncorrectable: { action: drain, threshold: 8 }
 *     ecc_uncorrected_volatile: { action: ignore }
 *
 * One entry per counter of the fact gres.gpus (a GPU's "health"), each
 * with `action` (`drain`: the check fails while the counter is at or over
 * `threshold`; `ignore`) and `threshold` (default 1).  A counter left out
 * keeps its default:
 *
 *   ecc_uncorrected_volatile     drain at 1  uncorrectable ECC errors since
 *                                            the driver loaded (a reset clears it)
 *   ecc_uncorrected_aggregate    ignore      ... over the GPU's life
 *   retired_pages_pending        drain at 1  a page retirement waits for a reset
 *   remapped_rows_uncorrectable  ignore      rows remapped for uncorrectable errors
 *   remap_pending                drain at 1  a row remap waits for a reset
 *   remap_failure                drain at 1  a remap failed: the GPU needs service
 *
 * The verdict holds nothing: it is the counters' of the last discovery, so
 * it ends when they do (a GPU reset, a driver reload, a replaced board). */
#pragma once

#include <stdint.h>

#include "sunkd/module.h"

typedef enum HealthGpuMemoryCounter {
        HEALTH_GPU_MEMORY_ECC_VOLATILE,
        HEALTH_GPU_MEMORY_ECC_AGGREGATE,
        HEALTH_GPU_MEMORY_RETIRED_PENDING,
        HEALTH_GPU_MEMORY_REMAPPED_UNCORRECTABLE,
        HEALTH_GPU_MEMORY_REMAP_PENDING,
        HEALTH_GPU_MEMORY_REMAP_FAILURE,
        _HEALTH_GPU_MEMORY_COUNTER_MAX,
} HealthGpuMemoryCounter;

typedef enum HealthGpuMemoryAction {
        HEALTH_GPU_MEMORY_IGNORE,
        HEALTH_GPU_MEMORY_DRAIN,
        _HEALTH_GPU_MEMORY_ACTION_MAX,
} HealthGpuMemoryAction;

typedef struct HealthGpuMemoryRule {
        HealthGpuMemoryAction action;
        uint64_t threshold; /* >= 1 */
} HealthGpuMemoryRule;

typedef struct HealthGpuMemoryPolicy {
        HealthGpuMemoryRule rules[_HEALTH_GPU_MEMORY_COUNTER_MAX];
} HealthGpuMemoryPolicy;

/* health_gpu_memory_counter_key() - the counter's name in the fact and in
 * memory_policy ("remap_failure"); _words() what it means, for a reason. */
const char *health_gpu_memory_counter_key(HealthGpuMemoryCounter c);
const char *health_gpu_memory_counter_words(HealthGpuMemoryCounter c);

/* health_gpu_memory_policy_defaults() - the defaults above. */
void health_gpu_memory_policy_defaults(HealthGpuMemoryPolicy *p);

/* health_gpu_memory_policy_parse() - @node (the value of memory_policy;
 * NULL: the defaults only) into @ret, through the host's config functions.
 * On -EINVAL, *ret_error is "file:line:column: key 'memory_policy': reason"
 * (malloc'd) and @ret is left as it was; -ENOMEM. */
int health_gpu_memory_policy_parse(const sunkd_host_api *api, const sunkd_cfg *node,
                                   HealthGpuMemoryPolicy *ret, char **ret_error);
