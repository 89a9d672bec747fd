/* The catalogue of health codes and their remedies (health-code.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "health-code.h"
#include "util/macro.h"

static const char *const remedy_names[_HEALTH_REMEDY_MAX] = {
        [HEALTH_REMEDY_NONE] = "none",
        [HEALTH_REMEDY_RESET_GPU] = "reset-gpu",
        [HEALTH_REMEDY_REBOOT] = "reboot",
        [HEALTH_REMEDY_REPLACE] = "replace",
        [HEALTH_REMEDY_CONTACT_SUPPORT] = "contact-support",
};

const HealthCode health_codes[] = {
        { "ok", false, HEALTH_REMEDY_NONE, "the check passed" },
        { "mount-missing", true, HEALTH_REMEDY_REBOOT, "the file system is not mounted" },
        { "mount-fstype", true, HEALTH_REMEDY_NONE, "mounted with another file system type" },
        { "mount-readonly", true, HEALTH_REMEDY_REBOOT,
          "mounted read-only, or its file system went read-only" },
        { "mount-writable", true, HEALTH_REMEDY_NONE, "writable when it should be read-only (ro: true)" },
        { "disk_free-low", true, HEALTH_REMEDY_NONE, "less space free than asked for" },
        { "inodes_free-low", true, HEALTH_REMEDY_NONE, "fewer inodes free than asked for" },
        { "memory-total-low", true, HEALTH_REMEDY_CONTACT_SUPPORT, "less memory installed than asked for" },
        { "memory-available-low", true, HEALTH_REMEDY_REBOOT, "less memory available than asked for" },
        { "memory-total-high", true, HEALTH_REMEDY_NONE, "more memory installed than asked for" },
        { "memory-swap-low", true, HEALTH_REMEDY_NONE, "less swap than asked for" },
        { "memory-swap-high", true, HEALTH_REMEDY_NONE, "more swap than asked for" },
        { "memory-with-swap-low", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "less memory and swap together than asked for" },
        { "memory-with-swap-high", true, HEALTH_REMEDY_NONE,
          "more memory and swap together than asked for" },
        { "memory-free-low", true, HEALTH_REMEDY_REBOOT,
          "less memory free (MemFree+Buffers+Cached) than asked for" },
        { "memory-swap-free-low", true, HEALTH_REMEDY_REBOOT, "less swap free than asked for" },
        { "memory-free-with-swap-low", true, HEALTH_REMEDY_REBOOT,
          "less memory and swap free together than asked for" },
        { "process-missing", true, HEALTH_REMEDY_REBOOT, "fewer of the processes running than asked for" },
        { "file-missing", true, HEALTH_REMEDY_NONE, "the file is missing" },
        { "file-unreadable", true, HEALTH_REMEDY_NONE, "the file cannot be read" },
        { "file-mismatch", true, HEALTH_REMEDY_NONE, "the file does not match" },
        { "file-owner", true, HEALTH_REMEDY_NONE, "the file has another owner" },
        { "file-group", true, HEALTH_REMEDY_NONE, "the file has another group" },
        { "file-mode", true, HEALTH_REMEDY_NONE, "the file has other permission bits" },
        { "load-high", true, HEALTH_REMEDY_NONE, "the load average is over its limit" },
        { "ib-missing", true, HEALTH_REMEDY_REBOOT, "the InfiniBand device or port is missing" },
        { "ib-port-state", true, HEALTH_REMEDY_CONTACT_SUPPORT, "an InfiniBand port is not ACTIVE" },
        { "ib-rate", true, HEALTH_REMEDY_CONTACT_SUPPORT, "an InfiniBand port runs slower than asked for" },
        { "ib-errors", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "an InfiniBand port's error counter is over its max or saturated (a cable, a transceiver, a "
          "switch "
          "port)" },
        { "ib-link-flaps", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "an InfiniBand port's link went down and came back more often than its max (link_downed)" },
        { "cpu-sockets", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "another number of CPU sockets than asked for" },
        { "cpu-cores", true, HEALTH_REMEDY_CONTACT_SUPPORT, "another number of CPU cores than asked for" },
        { "cpu-threads", true, HEALTH_REMEDY_REBOOT,
          "another number of CPU threads than asked for (SMT off, a CPU taken offline)" },
        { "dmi-mismatch", true, HEALTH_REMEDY_NONE, "a DMI field (BIOS version, board) is not as asked" },
        { "edac-ce", true, HEALTH_REMEDY_CONTACT_SUPPORT, "more corrected memory errors than allowed" },
        { "edac-ue", true, HEALTH_REMEDY_REPLACE, "more uncorrected memory errors than allowed" },
        { "mce-exceptions", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "more machine-check exceptions than allowed" },
        { "ethernet-missing", true, HEALTH_REMEDY_REBOOT, "the network interface is missing" },
        { "ethernet-down", true, HEALTH_REMEDY_CONTACT_SUPPORT, "the network interface is not up" },
        { "ethernet-speed", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "the network interface runs slower than asked for" },
        { "munge-socket", true, HEALTH_REMEDY_REBOOT, "munged does not answer on its socket" },
        { "munge-encode", true, HEALTH_REMEDY_NONE, "munged refuses to make a credential" },
        { "munge-decode", true, HEALTH_REMEDY_NONE, "munged refuses its own credential" },
        { "munge-mismatch", true, HEALTH_REMEDY_NONE, "a credential came back changed" },
        { "script-failed", true, HEALTH_REMEDY_NONE, "the script exited non-zero" },
        { "script-exec", true, HEALTH_REMEDY_NONE, "the script could not be run" },
        { "script-signal", true, HEALTH_REMEDY_NONE, "the script was killed by a signal" },
        { "script-refused", true, HEALTH_REMEDY_NONE, "the script is not root's alone, so it is not run" },
        { "process_limit-cpu", true, HEALTH_REMEDY_NONE,
          "a process used more CPU over its life than its limit (ps's %CPU)" },
        { "process_limit-memory", true, HEALTH_REMEDY_NONE, "a process's virtual size is over its limit" },
        { "process_limit-physmem", true, HEALTH_REMEDY_NONE,
          "a process's resident memory is over its limit" },
        { "process_limit-time", true, HEALTH_REMEDY_NONE, "a process used more CPU time than its limit" },
        { "user_processes-unauthorized", true, HEALTH_REMEDY_NONE,
          "a process of a user with no job on the node, or not started by a job" },
        { "tcp_port-closed", true, HEALTH_REMEDY_REBOOT, "nothing listens on the TCP port" },
        { "tcp_port-owner", true, HEALTH_REMEDY_NONE, "the TCP port is not held by the process named" },
        { "tcp_port-open", true, HEALTH_REMEDY_NONE,
          "something listens on a TCP port that should be closed" },
        { "command-status", true, HEALTH_REMEDY_NONE,
          "the command exited with another status than asked for" },
        { "command-match", true, HEALTH_REMEDY_NONE,
          "a line of the command's output matched a '!' pattern" },
        { "command-nomatch", true, HEALTH_REMEDY_NONE, "a pattern matched no line of the command's output" },
        { "command-exec", true, HEALTH_REMEDY_NONE, "the command could not be run" },
        { "command-signal", true, HEALTH_REMEDY_NONE, "the command was killed by a signal" },
        { "command-refused", true, HEALTH_REMEDY_NONE, "the command is not root's alone, so it is not run" },
        { "check-timeout", true, HEALTH_REMEDY_REBOOT,
          "no answer within the check's timeout (a hung file system)" },
        { "check-error", true, HEALTH_REMEDY_NONE, "the check could not be run" },
        { "gpu-ok", false, HEALTH_REMEDY_NONE, "the GPUs hold no fault" },
        { "gpu-xid", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "an XID the policy acts on: reset-gpu for reset, reboot for reboot, contact-support for drain" },
        { "gpu-recovery", true, HEALTH_REMEDY_RESET_GPU,
          "NVML asks for recovery: reset-gpu (GPU reset), reboot (node reboot), contact-support (drain "
          "P2P)" },
        { "gpu-memory", true, HEALTH_REMEDY_RESET_GPU,
          "memory counters over their rule: reset-gpu, replace for a failed row remap" },
        { "gpu-nvlink-down", true, HEALTH_REMEDY_REBOOT,
          "an NVLink of a GPU is down (nvlink_up): links train when the fabric comes up, so a reboot; "
          "debounce it at boot" },
        { "gpu-nvlink-errors", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "an NVLink's replay, recovery or CRC error count is over its max (a marginal link)" },
        { "gpu-temperature", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "a GPU is hotter than max_temperature (cooling)" },
        { "gpu-clocks", true, HEALTH_REMEDY_CONTACT_SUPPORT,
          "a GPU's clocks are held down for a reason fail_clocks_events names: contact-support for HW "
          "slowdown, "
          "thermal or power brake, none for a setting" },
        { "gpu-power-limit", true, HEALTH_REMEDY_NONE,
          "a GPU's enforced power limit is under min_power_limit" },
        { "gpu-persistence", true, HEALTH_REMEDY_NONE,
          "a GPU's persistence mode is off (nvidia-persistenced is not running)" },
        { "gpu-count", true, HEALTH_REMEDY_REBOOT, "fewer GPUs found than seen" },
        { "gpu-unknown", false, HEALTH_REMEDY_NONE, "no fact gres.gpus to judge" },
        { "disk_free-error", true, HEALTH_REMEDY_REBOOT, "the file system's figures cannot be read (EIO)" },
        { "inodes_free-error", true, HEALTH_REMEDY_REBOOT,
          "the file system's figures cannot be read (EIO)" },
        { "*-input-missing", false, HEALTH_REMEDY_NONE, "unknown: what the check reads is not there" },
        { "*-input-bad", false, HEALTH_REMEDY_NONE, "unknown: what the check reads makes no sense" },
        { "out-of-memory", false, HEALTH_REMEDY_NONE, "sunkd ran out of memory checking" },
        {},
};

const char *health_code_remedy_to_string(HealthRemedy r) {
        return r >= 0 && r < _HEALTH_REMEDY_MAX ? remedy_names[r] : "none";
}

int health_code_remedy_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(remedy_names); i++)
                if (streq(s, remedy_names[i]))
                        return (int) i;
        return -EINVAL;
}

/* "*-input-bad" matches "<type>-input-bad". */
static bool code_matches(const char *pattern, const char *code) {
        size_t lp = strlen(pattern), lc = strlen(code);

        if (pattern[0] != '*')
                return streq(pattern, code);
        return lc > lp - 1 && streq(code + lc - (lp - 1), pattern + 1);
}

const HealthCode *health_code_find(const char *code) {
        for (const HealthCode *c = health_codes; code && c->code; c++)
                if (code_matches(c->code, code))
                        return c;
        return NULL;
}

HealthRemedy health_code_remedy(const char *code) {
        const HealthCode *c = health_code_find(code);

        return c ? c->remedy : HEALTH_REMEDY_NONE;
}
