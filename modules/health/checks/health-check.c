#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util/macro.h"
#include "util/text-escape.h"

#include "health-gpu-limits.h"
#include "health-check.h"

static const sunkd_cfg_key script_keys[] = {
        HEALTH_COMMON_KEYS,
        { "path", SUNKD_CFG_PATH, offsetof(ScriptConf, path), SUNKD_CFG_REQUIRED, 0, 0 },
        { "args", SUNKD_CFG_LIST, offsetof(ScriptConf, args), 0, 0, 0 },
};

/* A script: run by the module through the host's spawn (health-check-jobs.c),
 * refused unless it is a file only root can change. */
const HealthCheckType health_check_script = {
        .name = "script",
        .keys = script_keys,
        .n_keys = ELEMENTSOF(script_keys),
        .conf_size = sizeof(ScriptConf),
        .runner = HEALTH_RUNNER_SCRIPT,
};

static const sunkd_cfg_key gpu_keys[] = {
        HEALTH_COMMON_KEYS,
        { "max_temperature", SUNKD_CFG_INT, offsetof(GpuConf, max_temperature), 0, 1, 200 },
        { "fail_clocks_events", SUNKD_CFG_LIST, offsetof(GpuConf, fail_clocks_events), 0, 0, 0 },
        { "persistence_mode", SUNKD_CFG_BOOL, offsetof(GpuConf, persistence_mode), 0, 0, 0 },
        { "nvlink_up", SUNKD_CFG_BOOL, offsetof(GpuConf, nvlink_up), 0, 0, 0 },
        { "max_nvlink_replay_errors", SUNKD_CFG_INT, offsetof(GpuConf, max_nvlink_replay_errors), 0, 0,
          INT64_MAX },
        { "max_nvlink_recovery_errors", SUNKD_CFG_INT, offsetof(GpuConf, max_nvlink_recovery_errors), 0, 0,
          INT64_MAX },
        { "max_nvlink_crc_flit_errors", SUNKD_CFG_INT, offsetof(GpuConf, max_nvlink_crc_flit_errors), 0, 0,
          INT64_MAX },
        { "max_nvlink_crc_data_errors", SUNKD_CFG_INT, offsetof(GpuConf, max_nvlink_crc_data_errors), 0, 0,
          INT64_MAX },
        { "min_power_limit", SUNKD_CFG_INT, offsetof(GpuConf, min_power_limit), 0, 1, 100000 },
};

/* The GPUs: the fact gres.gpus weighed by the module's judge on the loop
 * (health-gpucheck.c, health-gpu.c). */
const HealthCheckType health_check_gpu = {
        .name = "gpu",
        .keys = gpu_keys,
        .n_keys = ELEMENTSOF(gpu_keys),
        .conf_size = sizeof(GpuConf),
        .defaults = health_gpu_limits_defaults,
        .validate = health_gpu_limits_validate,
        .runner = HEALTH_RUNNER_GPU,
};

const HealthCheckType *const health_check_types[] = {
        &health_check_mount,
        &health_check_disk_free,
        &health_check_inodes_free,
        &health_check_memory,
        &health_check_process,
        &health_check_file,
        &health_check_load,
        &health_check_ib,
        &health_check_munge,
        &health_check_process_limit,
        &health_check_user_processes,
        &health_check_tcp_port,
        &health_check_command,
        &health_check_cpu,
        &health_check_dmi,
        &health_check_edac,
        &health_check_mce,
        &health_check_ethernet,
        &health_check_script,
        &health_check_gpu,
        NULL,
};

const HealthCheckType *health_check_type_find(const char *name) {
        if (!name)
                return NULL;
        for (size_t i = 0; health_check_types[i]; i++)
                if (streq(health_check_types[i]->name, name))
                        return health_check_types[i];
        return NULL;
}

/* The length of @s cut to at most @len bytes without splitting a UTF-8
 * sequence: a name or path shown in a drain reason stays valid text. */
static size_t utf8_cut(const char *s, size_t len) {
        size_t i = len, need;
        unsigned char lead;

        while (i > 0 && len - i < 3 && ((unsigned char) s[i - 1] & 0xC0) == 0x80)
                i--;
        if (i == 0)
                return len;
        lead = (unsigned char) s[i - 1];
        if (lead < 0xC0)
                return len;
        need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
        return len - (i - 1) < need ? i - 1 : len;
}

/* What a check found is outside text (a path, a device's name, a script's
 * line): it enters the module's state here, through the one rule for such
 * text (util/text-escape.h), as one line. */
void health_result_set(HealthResult *ret, HealthStatus status, const char *code, const char *fmt, ...) {
        char raw[HEALTH_DETAIL_MAX];
        size_t len = 0;
        va_list ap;
        int n;

        ret->status = status;
        snprintf(ret->code, sizeof(ret->code), "%s", code ?: "");
        text_escape_buf(ret->code, sizeof(ret->code), TEXT_ESCAPE_LINE);
        ret->target[0] = '\0';
        ret->remedy = status == HEALTH_FAIL ? health_code_remedy(ret->code) : HEALTH_REMEDY_NONE;
        va_start(ap, fmt);
        n = vsnprintf(raw, sizeof(raw), fmt, ap);
        va_end(ap);
        if (n < 0)
                raw[0] = 0;
        else if ((size_t) n >= sizeof(raw))
                raw[utf8_cut(raw, sizeof(raw) - 1)] = 0;
        ret->detail[0] = 0;
        (void) text_escape_append(ret->detail, sizeof(ret->detail), &len, raw, strlen(raw),
                                  TEXT_ESCAPE_LINE);
}
