/* The gpu check's judge: what the fact gres.gpus (sunkd(8)'s FACTS
 * describes it) says of the node's GPUs, weighed by the XID policy
 * (health-xid-policy.h) and the memory policy (health-gpu-memory.h).  gres
 * observes; this is the only place that decides a GPU fault drains the
 * node.  A library, no module glue: the
 * module feeds it the fact, saves its state, and drains on its verdict.
 *
 * Each XID event counts once: the judge remembers the sequence numbers of
 * the log entries it has judged and how many of their events (an entry's
 * count grows while a storm is folded into it).  What it then holds:
 *   - `reset` rules hold the GPU (by bus id) failed until a reset is seen:
 *     NVML's recovery action, where the fact reports one, read after the
 *     event (the fact's read_usec) and saying none; where it does not, the
 *     GPU missing from a fact after the event and back in a later one (a
 *     reset, a driver reload, a re-seated card);
 *   - `reboot` rules until the boot id changes, or NVML says none as above;
 *   - `drain` rules while `count` of the XID fall within `window`.
 *   A reboot ends every hold; events of an earlier boot hold nothing.
 * NVML's recovery action decides where present: a GPU whose action is not
 * none fails (gpu-recovery) whatever its XIDs.  A GPU whose memory counters
 * (the fact's "health") reach a `drain` rule of the memory policy fails
 * (gpu-memory) while they do.  Fewer GPUs found than expected (the most the
 * fact or this boot has seen) fails (gpu-count).
 *
 * The check's limits (health-gpu-limits.h) weigh each GPU's "telemetry":
 * an NVLink down (gpu-nvlink-down) or over an error max (gpu-nvlink-errors),
 * a temperature over max_temperature (gpu-temperature), clocks held down
 * for a reason fail_clocks_events names (gpu-clocks), an enforced power
 * limit under min_power_limit (gpu-power-limit), persistence mode off
 * (gpu-persistence).  A limit the fact cannot answer for a GPU (the driver
 * does not report it, or reports what makes no sense) makes the verdict
 * unknown (gpu-input-missing, gpu-input-bad) when nothing fails.
 *
 * Codes: gpu-xid, gpu-recovery, gpu-memory, gpu-nvlink-down,
 * gpu-nvlink-errors, gpu-temperature, gpu-clocks, gpu-power-limit,
 * gpu-persistence, gpu-count; gpu-ok when passing; gpu-unknown (no fact, or
 * not one) counts neither way.  The detail names the GPU,
 * "XID 79 on GPU-<uuid> (pci 0000:18:00.0)", for the drain reason after the
 * check's name ("gpu: "). */
#pragma once

#include <stdint.h>

#include "checks/health-check.h"
#include "checks/health-gpu-limits.h"
#include "health-gpu-memory.h"
#include "health-xid-policy.h"
#include "sunkd/module.h"

struct json_object;

typedef struct HealthGpu HealthGpu;

/* health_gpu_new() - a judge with @policy's rules (copied) and the memory
 * policy's defaults, reading the boot id from
 * <@root>/proc/sys/kernel/random/boot_id ("/" or NULL: the node's). */
int health_gpu_new(const HealthXidPolicy *policy, const char *root, HealthGpu **ret);
HealthGpu *health_gpu_free(HealthGpu *g);
static inline void health_gpu_freep(HealthGpu **g) {
        health_gpu_free(*g);
}

/* health_gpu_set_policy() - new rules (a reload); what is held is judged
 * again by them at the next judge: a hold whose XID is now ignored ends. */
void health_gpu_set_policy(HealthGpu *g, const HealthXidPolicy *policy);

/* health_gpu_set_memory_policy() - the memory policy's rules (copied). */
void health_gpu_set_memory_policy(HealthGpu *g, const HealthGpuMemoryPolicy *policy);

/* health_gpu_set_limits() - the gpu check's limits (copied; health-gpu-limits.h). */
void health_gpu_set_limits(HealthGpu *g, const HealthGpuLimits *limits);

/* health_gpu_judge() - judge @gres_gpus_fact (NULL when gres publishes
 * none) at @now_usec (CLOCK_REALTIME), remembering what it took.  Returns
 * the status it put in @ret (HEALTH_PASS, HEALTH_FAIL or HEALTH_UNKNOWN),
 * or -ENOMEM. */
int health_gpu_judge(HealthGpu *g, struct json_object *gres_gpus_fact, uint64_t now_usec, HealthResult *ret);

/* health_gpu_state_to_json() / _from_json() - what the judge remembers
 * (the boot, the entries judged, what is held, the recent hits of counted
 * rules, the GPUs seen gone), for the module to keep in its state directory
 * so that a restart neither forgets a fault nor counts an event twice.
 * _from_json() validates all of it (a hostile or broken file) and returns
 * -EBADMSG, leaving @g as it was.  NULL / -ENOMEM on OOM. */
struct json_object *health_gpu_state_to_json(const HealthGpu *g);
int health_gpu_state_from_json(HealthGpu *g, struct json_object *o);
