/* A stand-in for libnvidia-ml.so.1: the NVML entry points gres discovery
 * resolves, answering from the description file named by $FAKE_NVML_CONFIG.
 *
 * Format, one directive a line ('#' starts a comment):
 *   init ok|fail|hang
 *   init wait <file>
 * blocks nvmlInit_v2 until <file> exists (announced as "hang" announces
 * itself), then goes on: a discovery that takes as long as a test wants.
 *   init delay <milliseconds>
 * sleeps that long in nvmlInit_v2: a slow driver.
 *   error|<text>
 * is what nvmlErrorString answers for every error from then on (bytes as
 * written, so a test can hand the module text that is not UTF-8); put it
 * before "init fail" to have the failed init explained with it.
 *   gpu|<busId>|<minor>|<name>|<uuid>|<memory bytes>|<cpus>|<nvlink>|<fail>
 * <cpus> is the affinity as a CPU list below MAX_CPUS ("0-47,96-143"), or "-" for none.
 * An optional tenth field is the multi-node NVLink fabric: "<32 hex digits of
 * the cluster UUID>/<clique id>", "pending" (registration not finished) or
 * "-" (NOT_SUPPORTED, as on Hopper HGX; also when absent).
 *   mig|<parent busId>|<gpu instance id>|<compute instance id>|<gi slices>|<memory MB>|<uuid>
 * puts the GPU with that bus id in MIG mode, with its MIG devices in file order.
 *   health|<busId>|<ecc volatile>|<ecc aggregate>|<retired pending>|<remapped unc>|<remap pending>|<remap
 * failure>|<recovery action> sets what the health calls answer for that GPU ("-": NOT_SUPPORTED); a GPU
 * without such a line is healthy (all zeros).
 *   telemetry|<busId>|<temperature C>|<slowdown C>|<shutdown C>|<power mW>|<limit mW>|<clocks event
 * reasons>|<persistence mode> sets what nvmlDeviceGetTemperature, ...GetTemperatureThreshold (slowdown,
 * shutdown), ...GetPowerUsage, ...GetEnforcedPowerLimit, ...GetCurrentClocksEventReasons (a number,
 * 0x... for the nvmlClocksEventReason* bits) and ...GetPersistenceMode (0 or 1) answer ("-":
 * NOT_SUPPORTED); a GPU without such a line answers NOT_SUPPORTED to all of them.
 *   nvlink|<busId>|<link>|up|down|<replay>|<recovery>|<crc flit>|<crc data>
 * sets one NVLink's state and its error counters (nvmlDeviceGetNvLinkErrorCounter; "-":
 * NOT_SUPPORTED).  A GPU has the links its gpu line lists (each up, counters 0) and any such a line
 * names; NVML answers INVALID_ARGUMENT past them, as for links a board has not.  "up" is for a link
 * the gpu line lists (it has a remote end); "down" takes one of those out of the peers.
 *   events|<directory>
 * is where XID events come from: nvmlEventSetWait_v2 takes the file that
 * sorts first (names starting with '.' are skipped, so a test writes one
 * and renames it in), deletes it and delivers "<busId>|<xid>[|<gi>|<ci>]"
 * if that GPU is registered in the set (else drops it); a file holding
 * "lost" makes the wait fail with GPU_IS_LOST.  Without such a line, or an
 * empty directory, the wait times out as NVML's does.
 * <nvlink> is "-" (no active link), "unsupported", or a comma-separated list
 * of remote bus ids, one per active link; <fail> is "-", "handle" (the
 * device's handle lookup returns GPU_IS_LOST) or "events" (registering it
 * for events answers NOT_SUPPORTED).  Devices are indexed in file
 * order.  "hang" blocks nvmlInit_v2 until the process is killed, after
 * writing one byte to the file descriptor in $FAKE_NVML_HANG_FD if set, and
 * its pid to the file $FAKE_NVML_HANG_FILE if set (for a process that closes
 * inherited descriptors), so a test knows the call is inside NVML.
 */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

#include "../../modules/gres/nvml-api.h"

#define EXPORT __attribute__((visibility("default")))
#define MAX_GPUS 16
#define MAX_MIGS 64
#define MAX_MIGS_PER_GPU 7
#define MAX_CPUS 1024
#define LONG_BITS (8 * sizeof(unsigned long))

/* Declared from the module's pointer types, so the fake cannot drift from them. */
#define DECLARE(f) __typeof__(*(f##_fn) 0) f
DECLARE(nvmlInit_v2);
DECLARE(nvmlShutdown);
DECLARE(nvmlErrorString);
DECLARE(nvmlDeviceGetCount_v2);
DECLARE(nvmlDeviceGetHandleByIndex_v2);
DECLARE(nvmlDeviceGetName);
DECLARE(nvmlDeviceGetUUID);
DECLARE(nvmlDeviceGetPciInfo_v3);
DECLARE(nvmlDeviceGetMinorNumber);
DECLARE(nvmlDeviceGetMemoryInfo);
DECLARE(nvmlDeviceGetCpuAffinity);
DECLARE(nvmlDeviceGetNvLinkState);
DECLARE(nvmlDeviceGetNvLinkRemotePciInfo_v2);
DECLARE(nvmlDeviceGetGpuFabricInfo);
DECLARE(nvmlDeviceGetMigMode);
DECLARE(nvmlDeviceGetMaxMigDeviceCount);
DECLARE(nvmlDeviceGetMigDeviceHandleByIndex);
DECLARE(nvmlDeviceGetGpuInstanceId);
DECLARE(nvmlDeviceGetComputeInstanceId);
DECLARE(nvmlDeviceGetAttributes_v2);
DECLARE(nvmlDeviceGetTotalEccErrors);
DECLARE(nvmlDeviceGetRetiredPagesPendingStatus);
DECLARE(nvmlDeviceGetRemappedRows);
DECLARE(nvmlDeviceGetFieldValues);
DECLARE(nvmlDeviceGetNvLinkErrorCounter);
DECLARE(nvmlDeviceGetTemperature);
DECLARE(nvmlDeviceGetTemperatureThreshold);
DECLARE(nvmlDeviceGetPowerUsage);
DECLARE(nvmlDeviceGetEnforcedPowerLimit);
DECLARE(nvmlDeviceGetCurrentClocksEventReasons);
DECLARE(nvmlDeviceGetPersistenceMode);
DECLARE(nvmlEventSetCreate);
DECLARE(nvmlDeviceRegisterEvents);
DECLARE(nvmlEventSetWait_v2);
DECLARE(nvmlEventSetFree);

struct nvmlDevice_st {
        char bus[32], name[96], uuid[96], nvlink[NVML_NVLINK_MAX_LINKS][32], fail[16];
        unsigned minor, n_links;
        unsigned long long memory;
        unsigned long cpus[MAX_CPUS / LONG_BITS];
        int nvlink_unsupported;
        int fabric; /* 0: not supported, 1: registered, 2: pending */
        /* MIG: a parent lists its instances; an instance knows its ids and size. */
        struct nvmlDevice_st *migs[MAX_MIGS_PER_GPU];
        unsigned n_migs, gi, ci, slices;
        unsigned long long mem_mb;
        unsigned char fabric_uuid[NVML_GPU_FABRIC_UUID_LEN];
        unsigned clique;
        long long health[7];    /* the health line's fields in order; -1: NOT_SUPPORTED */
        long long telemetry[7]; /* the telemetry line's, likewise; all -1 without one */
        unsigned has_links;     /* links the GPU has: n_links, or past it by an nvlink line */
        int link_down[NVML_NVLINK_MAX_LINKS];
        long long link_errors[NVML_NVLINK_MAX_LINKS][4]; /* -1: NOT_SUPPORTED */
};

static struct nvmlDevice_st devs[MAX_GPUS], migs[MAX_MIGS];
static unsigned n_devs, n_migs;
static int initialised;
static char events_dir[512];
static char error_text[256];

struct nvmlEventSet_st {
        unsigned long long types[MAX_GPUS]; /* registered per device */
        int inotify;
};

static void parse_links(struct nvmlDevice_st *d, char *s) {
        if (strcmp(s, "unsupported") == 0) {
                d->nvlink_unsupported = 1;
                return;
        }
        for (char *t = strtok(s, ","); t && d->n_links < NVML_NVLINK_MAX_LINKS; t = strtok(NULL, ","))
                if (strcmp(t, "-") != 0)
                        snprintf(d->nvlink[d->n_links++], 32, "%s", t);
}

static void parse_cpus(struct nvmlDevice_st *d, char *s) {
        for (char *t = strtok(s, ","); t; t = strtok(NULL, ",")) {
                char *dash = strchr(t, '-');
                unsigned long a = strtoul(t, NULL, 10),
                              b = dash && dash != t ? strtoul(dash + 1, NULL, 10) : a;

                if (dash == t)
                        continue; /* "-": none */
                for (unsigned long i = a; i <= b && i < MAX_CPUS; i++)
                        d->cpus[i / LONG_BITS] |= 1UL << (i % LONG_BITS);
        }
}

static void parse_fabric(struct nvmlDevice_st *d, const char *s) {
        const char *slash = strchr(s, '/');

        if (strcmp(s, "pending") == 0) {
                d->fabric = 2;
                return;
        }
        if (!slash || slash - s != 2 * NVML_GPU_FABRIC_UUID_LEN)
                return;
        for (int i = 0; i < NVML_GPU_FABRIC_UUID_LEN; i++) {
                char hex[3] = { s[2 * i], s[2 * i + 1], 0 };
                d->fabric_uuid[i] = (unsigned char) strtoul(hex, NULL, 16);
        }
        d->clique = (unsigned) strtoul(slash + 1, NULL, 10);
        d->fabric = 1;
}

static void parse_gpu(char *line) {
        char *f[10] = {};
        unsigned n = 0;
        struct nvmlDevice_st *d;

        for (char *p = line; p && n < 10; n++)
                f[n] = strsep(&p, "|");
        if (n < 9 || n_devs >= MAX_GPUS)
                return;
        d = &devs[n_devs++];
        *d = (struct nvmlDevice_st){};
        snprintf(d->bus, sizeof(d->bus), "%s", f[1]);
        d->minor = strtoul(f[2], NULL, 10);
        snprintf(d->name, sizeof(d->name), "%s", f[3]);
        snprintf(d->uuid, sizeof(d->uuid), "%s", f[4]);
        d->memory = strtoull(f[5], NULL, 10);
        parse_links(d, f[7]);
        parse_cpus(d, f[6]);
        snprintf(d->fail, sizeof(d->fail), "%s", f[8]);
        if (f[9])
                parse_fabric(d, f[9]);
        d->has_links = d->n_links;
        for (unsigned k = 0; k < 7; k++)
                d->telemetry[k] = -1;
}

static void parse_mig(char *line) {
        char *f[7] = {};
        unsigned n = 0;
        struct nvmlDevice_st *m;

        for (char *p = line; p && n < 7; n++)
                f[n] = strsep(&p, "|");
        if (n < 7 || n_migs >= MAX_MIGS)
                return;
        for (unsigned i = 0; i < n_devs; i++) {
                struct nvmlDevice_st *d = &devs[i];

                if (strcmp(d->bus, f[1]) != 0 || d->n_migs >= MAX_MIGS_PER_GPU)
                        continue;
                m = &migs[n_migs++];
                *m = (struct nvmlDevice_st){ .gi = (unsigned) strtoul(f[2], NULL, 10),
                                             .ci = (unsigned) strtoul(f[3], NULL, 10),
                                             .slices = (unsigned) strtoul(f[4], NULL, 10),
                                             .mem_mb = strtoull(f[5], NULL, 10) };
                snprintf(m->uuid, sizeof(m->uuid), "%s", f[6]);
                d->migs[d->n_migs++] = m;
                return;
        }
}

static void parse_health(char *line) {
        char *f[9] = {};
        unsigned n = 0;

        for (char *p = line; p && n < 9; n++)
                f[n] = strsep(&p, "|");
        if (n < 9)
                return;
        for (unsigned i = 0; i < n_devs; i++)
                if (strcmp(devs[i].bus, f[1]) == 0)
                        for (unsigned k = 0; k < 7; k++)
                                devs[i].health[k] =
                                        strcmp(f[2 + k], "-") == 0 ? -1 : strtoll(f[2 + k], NULL, 10);
}

static struct nvmlDevice_st *by_bus(const char *bus) {
        for (unsigned i = 0; i < n_devs; i++)
                if (strcmp(devs[i].bus, bus) == 0)
                        return &devs[i];
        return NULL;
}

static long long field(const char *s) {
        return strcmp(s, "-") == 0 ? -1 : strtoll(s, NULL, 0);
}

static void parse_telemetry(char *line) {
        char *f[9] = {};
        unsigned n = 0;
        struct nvmlDevice_st *d;

        for (char *p = line; p && n < 9; n++)
                f[n] = strsep(&p, "|");
        if (n < 9 || !(d = by_bus(f[1])))
                return;
        for (unsigned k = 0; k < 7; k++)
                d->telemetry[k] = field(f[2 + k]);
}

static void parse_nvlink(char *line) {
        char *f[8] = {};
        unsigned n = 0, link;
        struct nvmlDevice_st *d;

        for (char *p = line; p && n < 8; n++)
                f[n] = strsep(&p, "|");
        if (n < 8 || !(d = by_bus(f[1])) ||
            (link = (unsigned) strtoul(f[2], NULL, 10)) >= NVML_NVLINK_MAX_LINKS)
                return;
        if (link >= d->has_links)
                d->has_links = link + 1;
        d->link_down[link] = strcmp(f[3], "down") == 0;
        for (unsigned k = 0; k < 4; k++)
                d->link_errors[link][k] = field(f[4 + k]);
}

/* Tells the test that this process is inside nvmlInit_v2. */
static void announce(void) {
        const char *fd = getenv("FAKE_NVML_HANG_FD"), *file = getenv("FAKE_NVML_HANG_FILE");

        if (fd && write(atoi(fd), "h", 1) < 0)
                abort();
        if (file) {
                FILE *f = fopen(file, "ae");

                if (!f || fprintf(f, "%d\n", (int) getpid()) < 0 || fclose(f) != 0)
                        abort();
        }
}

static void hang(void) {
        announce();
        for (;;)
                pause();
}

static void wait_for(const char *file) {
        struct timespec ts = { .tv_nsec = 10 * 1000 * 1000 };

        announce();
        while (access(file, F_OK) < 0)
                nanosleep(&ts, NULL);
}

EXPORT nvmlReturn_t nvmlInit_v2(void) {
        const char *path = getenv("FAKE_NVML_CONFIG");
        char line[1024];
        FILE *f;

        if (!path || !(f = fopen(path, "re")))
                return NVML_ERROR_DRIVER_NOT_LOADED;
        n_devs = n_migs = 0;
        events_dir[0] = 0;
        error_text[0] = 0;
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = 0;
                if (strncmp(line, "error|", 6) == 0)
                        snprintf(error_text, sizeof(error_text), "%.250s", line + 6);
                if (strncmp(line, "init wait ", 10) == 0)
                        wait_for(line + 10);
                if (strncmp(line, "init delay ", 11) == 0) {
                        long ms = strtol(line + 11, NULL, 10);
                        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

                        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                                ;
                }
                if (strcmp(line, "init fail") == 0) {
                        fclose(f);
                        return NVML_ERROR_DRIVER_NOT_LOADED;
                }
                if (strcmp(line, "init hang") == 0)
                        hang();
                if (strncmp(line, "gpu|", 4) == 0)
                        parse_gpu(line);
                if (strncmp(line, "mig|", 4) == 0)
                        parse_mig(line);
                if (strncmp(line, "health|", 7) == 0)
                        parse_health(line);
                if (strncmp(line, "telemetry|", 10) == 0)
                        parse_telemetry(line);
                if (strncmp(line, "nvlink|", 7) == 0)
                        parse_nvlink(line);
                if (strncmp(line, "events|", 7) == 0)
                        snprintf(events_dir, sizeof(events_dir), "%.500s", line + 7);
        }
        fclose(f);
        initialised = 1;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void) {
        if (!initialised)
                return NVML_ERROR_UNINITIALIZED;
        initialised = 0;
        return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
        if (r != NVML_SUCCESS && *error_text)
                return error_text;
        return r == NVML_SUCCESS               ? "Success"
               : r == NVML_ERROR_NOT_SUPPORTED ? "Not Supported"
                                               : "Fake error";
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *count) {
        if (!initialised)
                return NVML_ERROR_UNINITIALIZED;
        *count = n_devs;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t *dev) {
        if (!initialised)
                return NVML_ERROR_UNINITIALIZED;
        if (index >= n_devs)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (strcmp(devs[index].fail, "handle") == 0)
                return NVML_ERROR_GPU_IS_LOST;
        *dev = &devs[index];
        return NVML_SUCCESS;
}

static nvmlReturn_t copy_str(const char *s, char *buf, unsigned len) {
        if (strlen(s) >= len)
                return NVML_ERROR_INSUFFICIENT_SIZE;
        strcpy(buf, s);
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *buf, unsigned len) {
        return copy_str(d->name, buf, len);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *buf, unsigned len) {
        return copy_str(d->uuid, buf, len);
}

static void fill_pci(const char *bus, nvmlPciInfo_t *pci) {
        memset(pci, 0, sizeof(*pci));
        snprintf(pci->busId, sizeof(pci->busId), "%s", bus);
        sscanf(bus, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
}

EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *pci) {
        fill_pci(d->bus, pci);
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMinorNumber(nvmlDevice_t d, unsigned *minor) {
        *minor = d->minor;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m) {
        *m = (nvmlMemory_t){ .total = d->memory, .free = d->memory };
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned size, unsigned long *set) {
        if (size == 0)
                return NVML_ERROR_INVALID_ARGUMENT;
        memset(set, 0, size * sizeof(*set));
        memcpy(set, d->cpus, (size < MAX_CPUS / LONG_BITS ? size : MAX_CPUS / LONG_BITS) * sizeof(*set));
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, nvmlEnableState_t *active) {
        if (d->nvlink_unsupported)
                return NVML_ERROR_NOT_SUPPORTED;
        if (link >= NVML_NVLINK_MAX_LINKS || link >= d->has_links)
                return NVML_ERROR_INVALID_ARGUMENT;
        *active = link < d->n_links && !d->link_down[link] ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned link, nvmlPciInfo_t *pci) {
        if (d->nvlink_unsupported)
                return NVML_ERROR_NOT_SUPPORTED;
        if (link >= d->n_links)
                return NVML_ERROR_INVALID_ARGUMENT;
        fill_pci(d->nvlink[link], pci);
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t d, nvmlGpuFabricInfo_t *info) {
        if (d->fabric == 0)
                return NVML_ERROR_NOT_SUPPORTED;
        memset(info, 0, sizeof(*info));
        if (d->fabric == 2) {
                info->state = 2; /* in progress */
                info->status = NVML_ERROR_UNKNOWN;
                return NVML_SUCCESS;
        }
        memcpy(info->clusterUuid, d->fabric_uuid, sizeof(info->clusterUuid));
        info->cliqueId = d->clique;
        info->status = NVML_SUCCESS;
        info->state = NVML_GPU_FABRIC_STATE_COMPLETED;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned *current, unsigned *pending) {
        *current = *pending = d->n_migs > 0 ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t d, unsigned *count) {
        *count = d->n_migs > 0 ? MAX_MIGS_PER_GPU : 0;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t d, unsigned index, nvmlDevice_t *mig) {
        if (index >= d->n_migs)
                return NVML_ERROR_NOT_FOUND;
        *mig = d->migs[index];
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t d, unsigned *id) {
        *id = d->gi;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t d, unsigned *id) {
        *id = d->ci;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(nvmlDevice_t d, nvmlDeviceAttributes_t *a) {
        memset(a, 0, sizeof(*a));
        a->gpuInstanceSliceCount = d->slices;
        a->computeInstanceSliceCount = d->slices;
        a->memorySizeMB = d->mem_mb;
        return NVML_SUCCESS;
}

/* Health: from the GPU's health line; a MIG device answers NOT_SUPPORTED, as the driver does. */
static nvmlReturn_t health(nvmlDevice_t d, unsigned k, long long *v) {
        if (d < devs || d >= devs + n_devs || d->health[k] < 0)
                return NVML_ERROR_NOT_SUPPORTED;
        *v = d->health[k];
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, nvmlMemoryErrorType_t type,
                                                nvmlEccCounterType_t counter, unsigned long long *count) {
        long long v;
        nvmlReturn_t r;

        if (type != NVML_MEMORY_ERROR_TYPE_UNCORRECTED)
                return NVML_ERROR_NOT_SUPPORTED;
        r = health(d, counter == NVML_VOLATILE_ECC ? 0 : 1, &v);
        if (r == NVML_SUCCESS)
                *count = (unsigned long long) v;
        return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, nvmlEnableState_t *pending) {
        long long v;
        nvmlReturn_t r = health(d, 2, &v);

        if (r == NVML_SUCCESS)
                *pending = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc,
                                              unsigned *pending, unsigned *failure) {
        long long v[3];

        for (unsigned k = 0; k < 3; k++)
                if (health(d, 3 + k, &v[k]) != NVML_SUCCESS)
                        return NVML_ERROR_NOT_SUPPORTED;
        *corr = 0;
        *unc = (unsigned) v[0];
        *pending = (unsigned) v[1];
        *failure = (unsigned) v[2];
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t *values) {
        for (int i = 0; i < count; i++) {
                long long v;

                values[i].nvmlReturn = values[i].fieldId == NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
                                               ? health(d, 6, &v)
                                               : NVML_ERROR_NOT_SUPPORTED;
                if (values[i].nvmlReturn == NVML_SUCCESS) {
                        values[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
                        values[i].value.uiVal = (unsigned) v;
                }
        }
        return NVML_SUCCESS;
}

/* ---- Telemetry ---------------------------------------------------------- */

/* Field @k of the GPU's telemetry line; a MIG device answers NOT_SUPPORTED. */
static nvmlReturn_t telemetry(nvmlDevice_t d, unsigned k, long long *v) {
        if (d < devs || d >= devs + n_devs || d->telemetry[k] < 0)
                return NVML_ERROR_NOT_SUPPORTED;
        *v = d->telemetry[k];
        return NVML_SUCCESS;
}

static nvmlReturn_t telemetry_uint(nvmlDevice_t d, unsigned k, unsigned *out) {
        long long v;
        nvmlReturn_t r = telemetry(d, k, &v);

        if (r == NVML_SUCCESS)
                *out = (unsigned) v;
        return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, nvmlTemperatureSensors_t sensor,
                                             unsigned *temp) {
        if (sensor != NVML_TEMPERATURE_GPU)
                return NVML_ERROR_INVALID_ARGUMENT;
        return telemetry_uint(d, 0, temp);
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t type,
                                                      unsigned *temp) {
        if (type == NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
                return telemetry_uint(d, 1, temp);
        if (type == NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)
                return telemetry_uint(d, 2, temp);
        return NVML_ERROR_NOT_SUPPORTED;
}

EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *power) {
        return telemetry_uint(d, 3, power);
}

EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *limit) {
        return telemetry_uint(d, 4, limit);
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *reasons) {
        long long v;
        nvmlReturn_t r = telemetry(d, 5, &v);

        if (r == NVML_SUCCESS)
                *reasons = (unsigned long long) v;
        return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, nvmlEnableState_t *mode) {
        long long v;
        nvmlReturn_t r = telemetry(d, 6, &v);

        if (r == NVML_SUCCESS)
                *mode = v ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
        return r;
}

EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link,
                                                    nvmlNvLinkErrorCounter_t c, unsigned long long *value) {
        if (d < devs || d >= devs + n_devs || d->nvlink_unsupported)
                return NVML_ERROR_NOT_SUPPORTED;
        if (link >= d->has_links || (unsigned) c > NVML_NVLINK_ERROR_DL_CRC_DATA)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (d->link_errors[link][c] < 0)
                return NVML_ERROR_NOT_SUPPORTED;
        *value = (unsigned long long) d->link_errors[link][c];
        return NVML_SUCCESS;
}

/* ---- Events ------------------------------------------------------------- */

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
        struct nvmlEventSet_st *e;

        if (!initialised)
                return NVML_ERROR_UNINITIALIZED;
        e = calloc(1, sizeof(*e));
        if (!e)
                return NVML_ERROR_UNKNOWN;
        e->inotify = -1;
        if (*events_dir) {
                e->inotify = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
                if (e->inotify >= 0 &&
                    inotify_add_watch(e->inotify, events_dir, IN_MOVED_TO | IN_CLOSE_WRITE) < 0) {
                        close(e->inotify);
                        e->inotify = -1;
                }
        }
        *set = e;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set) {
        if (d < devs || d >= devs + n_devs)
                return NVML_ERROR_INVALID_ARGUMENT;
        if (strcmp(d->fail, "events") == 0)
                return NVML_ERROR_NOT_SUPPORTED;
        set->types[d - devs] |= types;
        return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
        if (set->inotify >= 0)
                close(set->inotify);
        free(set);
        return NVML_SUCCESS;
}

static int visible(const struct dirent *d) {
        return d->d_name[0] != '.';
}

/* The first event file: 1 delivered, 0 none left, -1 "lost". */
static int next_event(nvmlEventSet_t set, nvmlEventData_t *data) {
        struct dirent **names = NULL;
        int n = *events_dir ? scandir(events_dir, &names, visible, alphasort) : 0, found = 0;

        for (int i = 0; i < n; i++) {
                char path[1024], line[256] = "", *f[4] = {}, *p = line;
                FILE *file;
                unsigned k = 0;

                if (found) {
                        free(names[i]);
                        continue;
                }
                snprintf(path, sizeof(path), "%s/%s", events_dir, names[i]->d_name);
                free(names[i]);
                file = fopen(path, "re");
                if (!file)
                        continue;
                if (!fgets(line, sizeof(line), file))
                        line[0] = 0;
                fclose(file);
                unlink(path);
                line[strcspn(line, "\n")] = 0;
                if (strcmp(line, "lost") == 0) {
                        found = -1;
                        continue;
                }
                for (; p && k < 4; k++)
                        f[k] = strsep(&p, "|");
                for (unsigned d = 0; k >= 2 && d < n_devs && !found; d++)
                        if (strcasecmp(devs[d].bus, f[0]) == 0 &&
                            (set->types[d] & nvmlEventTypeXidCriticalError)) {
                                *data = (nvmlEventData_t){
                                        .device = &devs[d],
                                        .eventType = nvmlEventTypeXidCriticalError,
                                        .eventData = strtoull(f[1], NULL, 10),
                                        .gpuInstanceId =
                                                f[2] ? (unsigned) strtoul(f[2], NULL, 10) : 0xFFFFFFFFu,
                                        .computeInstanceId =
                                                f[3] ? (unsigned) strtoul(f[3], NULL, 10) : 0xFFFFFFFFu
                                };
                                found = 1;
                        }
        }
        free(names);
        return found;
}

static long long now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned timeoutms) {
        long long deadline = now_ms() + timeoutms;

        for (;;) {
                char buf[4096];
                long long left;
                int r = next_event(set, data);

                if (r > 0)
                        return NVML_SUCCESS;
                if (r < 0)
                        return NVML_ERROR_GPU_IS_LOST;
                left = deadline - now_ms();
                if (left <= 0)
                        return NVML_ERROR_TIMEOUT;
                if (set->inotify >= 0) {
                        struct pollfd p = { .fd = set->inotify, .events = POLLIN };
                        if (poll(&p, 1, (int) (left < 1000 ? left : 1000)) > 0)
                                while (read(set->inotify, buf, sizeof(buf)) > 0)
                                        ;
                } else {
                        struct timespec ts = { .tv_sec = left / 1000, .tv_nsec = (left % 1000) * 1000000 };
                        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                                ;
                }
        }
}
