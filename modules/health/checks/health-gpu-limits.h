/* The gpu check's limits on what NVML reports of a GPU beside its memory
 * and XIDs (the fact gres.gpus, each GPU's "telemetry"): temperature, the
 * reasons its clocks are held down, persistence mode, its enforced power
 * limit, and each NVLink's state and error counters.  From the gpu check's
 * own keys (GpuConf); each limit is off until a site sets it, so a check
 * without them judges what it did before.  A limit set on a GPU whose
 * driver does not report what it needs makes the check unknown (while
 * nothing fails), never a pass it cannot vouch for. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "health-check.h"

typedef enum HealthGpuNvLinkCounter {
        HEALTH_GPU_NVLINK_REPLAY,
        HEALTH_GPU_NVLINK_RECOVERY,
        HEALTH_GPU_NVLINK_CRC_FLIT,
        HEALTH_GPU_NVLINK_CRC_DATA,
        _HEALTH_GPU_NVLINK_COUNTER_MAX,
} HealthGpuNvLinkCounter;

typedef struct HealthGpuLimits {
        int64_t max_temperature;     /* degrees C; -1: none */
        uint64_t fail_clocks_events; /* nvmlClocksEventReason* bits that fail; 0: none */
        bool persistence_mode;       /* required on */
        bool nvlink_up;              /* every NVLink the GPU has is up */
        int64_t max_nvlink_errors[_HEALTH_GPU_NVLINK_COUNTER_MAX]; /* per link; -1: none */
        int64_t min_power_limit;                                   /* W; -1: none */
} HealthGpuLimits;

/* health_gpu_limits_none() - every limit off. */
void health_gpu_limits_none(HealthGpuLimits *l);

/* health_gpu_limits_from_conf() - the limits of a gpu check's keys, which
 * health_gpu_limits_validate() accepted. */
void health_gpu_limits_from_conf(const GpuConf *c, HealthGpuLimits *ret);

/* health_gpu_limits_defaults() / _validate() - the gpu check type's
 * defaults and validate (health-check.h). */
void health_gpu_limits_defaults(void *conf);
int health_gpu_limits_validate(void *conf, char **ret_error);

/* health_gpu_clocks_event_bit() - the nvmlClocksEventReason* bit of a
 * reason's name ("hw_slowdown": 0x8), 0 for a name that is none. */
uint64_t health_gpu_clocks_event_bit(const char *name);
/* health_gpu_clocks_event_name() - the name of one bit, NULL for none. */
const char *health_gpu_clocks_event_name(uint64_t bit);
/* health_gpu_clocks_event_hardware() - whether @bits hold a reason the
 * hardware or its cooling imposes (HW slowdown, HW or SW thermal, power
 * brake): for a person to look at, not a setting. */
bool health_gpu_clocks_event_hardware(uint64_t bits);

/* health_gpu_nvlink_counter_key() - the counter's key in the fact's links
 * ("crc_flit_errors"). */
const char *health_gpu_nvlink_counter_key(HealthGpuNvLinkCounter c);
