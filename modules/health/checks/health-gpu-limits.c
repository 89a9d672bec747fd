/* The gpu check's limits (health-gpu-limits.h): its keys, checked, made
 * into what the judge weighs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-gpu-limits.h"
#include "util/macro.h"

/* nvml.h's nvmlClocksEventReason* bits, by the names fail_clocks_events
 * takes and gres shows (a GPU's telemetry.clocks_events). */
static const struct {
        uint64_t bit;
        const char *name;
        bool hardware;
} clocks_events[] = {
        { 0x1, "gpu_idle", false },
        { 0x2, "applications_clocks_setting", false },
        { 0x4, "sw_power_cap", false },
        { 0x8, "hw_slowdown", true },
        { 0x10, "sync_boost", false },
        { 0x20, "sw_thermal_slowdown", true },
        { 0x40, "hw_thermal_slowdown", true },
        { 0x80, "hw_power_brake_slowdown", true },
        { 0x100, "display_clock_setting", false },
};

static const char *const nvlink_keys[_HEALTH_GPU_NVLINK_COUNTER_MAX] = {
        [HEALTH_GPU_NVLINK_REPLAY] = "replay_errors",
        [HEALTH_GPU_NVLINK_RECOVERY] = "recovery_errors",
        [HEALTH_GPU_NVLINK_CRC_FLIT] = "crc_flit_errors",
        [HEALTH_GPU_NVLINK_CRC_DATA] = "crc_data_errors",
};

void health_gpu_limits_none(HealthGpuLimits *l) {
        *l = (HealthGpuLimits){ .max_temperature = -1, .min_power_limit = -1 };
        for (size_t i = 0; i < _HEALTH_GPU_NVLINK_COUNTER_MAX; i++)
                l->max_nvlink_errors[i] = -1;
}

uint64_t health_gpu_clocks_event_bit(const char *name) {
        for (size_t i = 0; name && i < ELEMENTSOF(clocks_events); i++)
                if (streq(clocks_events[i].name, name))
                        return clocks_events[i].bit;
        return 0;
}

const char *health_gpu_clocks_event_name(uint64_t bit) {
        for (size_t i = 0; i < ELEMENTSOF(clocks_events); i++)
                if (clocks_events[i].bit == bit)
                        return clocks_events[i].name;
        return NULL;
}

bool health_gpu_clocks_event_hardware(uint64_t bits) {
        for (size_t i = 0; i < ELEMENTSOF(clocks_events); i++)
                if ((bits & clocks_events[i].bit) && clocks_events[i].hardware)
                        return true;
        return false;
}

const char *health_gpu_nvlink_counter_key(HealthGpuNvLinkCounter c) {
        return c >= 0 && c < _HEALTH_GPU_NVLINK_COUNTER_MAX ? nvlink_keys[c] : "?";
}

void health_gpu_limits_defaults(void *conf) {
        GpuConf *c = conf;

        c->max_temperature = -1;
        c->min_power_limit = -1;
        c->max_nvlink_replay_errors = c->max_nvlink_recovery_errors = c->max_nvlink_crc_flit_errors =
                c->max_nvlink_crc_data_errors = -1;
}

int health_gpu_limits_validate(void *conf, char **ret_error) {
        const GpuConf *c = conf;

        for (char **n = c->fail_clocks_events; n && *n; n++)
                if (!health_gpu_clocks_event_bit(*n))
                        return asprintf(ret_error,
                                        "key 'fail_clocks_events': '%.40s' is not a reason NVML gives "
                                        "(hw_slowdown, "
                                        "hw_thermal_slowdown, hw_power_brake_slowdown, sw_thermal_slowdown, "
                                        "sw_power_cap, applications_clocks_setting, sync_boost, "
                                        "display_clock_setting, gpu_idle)",
                                        *n) < 0
                                       ? -ENOMEM
                                       : -EINVAL;
        return 0;
}

void health_gpu_limits_from_conf(const GpuConf *c, HealthGpuLimits *ret) {
        health_gpu_limits_none(ret);
        ret->max_temperature = c->max_temperature;
        ret->min_power_limit = c->min_power_limit;
        ret->persistence_mode = c->persistence_mode;
        ret->nvlink_up = c->nvlink_up;
        ret->max_nvlink_errors[HEALTH_GPU_NVLINK_REPLAY] = c->max_nvlink_replay_errors;
        ret->max_nvlink_errors[HEALTH_GPU_NVLINK_RECOVERY] = c->max_nvlink_recovery_errors;
        ret->max_nvlink_errors[HEALTH_GPU_NVLINK_CRC_FLIT] = c->max_nvlink_crc_flit_errors;
        ret->max_nvlink_errors[HEALTH_GPU_NVLINK_CRC_DATA] = c->max_nvlink_crc_data_errors;
        for (char **n = c->fail_clocks_events; n && *n; n++)
                ret->fail_clocks_events |= health_gpu_clocks_event_bit(*n);
}
