#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/cleanup.h"
#include "util/macro.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/time-util.h"

#include "gres-nvml.h"
#include "gres-topo.h"
#include "gres-proc.h"
#include "nvml-api.h"

typedef struct Nvml {
        void *dl;
        nvmlInit_v2_fn init;
        nvmlShutdown_fn shutdown;
        nvmlErrorString_fn error_string;
        nvmlDeviceGetCount_v2_fn count;
        nvmlDeviceGetHandleByIndex_v2_fn handle;
        nvmlDeviceGetName_fn name;
        nvmlDeviceGetUUID_fn uuid;
        nvmlDeviceGetPciInfo_v3_fn pci;
        nvmlDeviceGetMinorNumber_fn minor;
        nvmlDeviceGetMemoryInfo_fn memory;
        nvmlDeviceGetCpuAffinity_fn cpus;
        nvmlDeviceGetNvLinkState_fn link_state;
        nvmlDeviceGetNvLinkRemotePciInfo_v2_fn link_remote;
        nvmlDeviceGetGpuFabricInfo_fn fabric; /* optional: NULL before R535 */
        /* MIG, optional as a whole: without it no GPU is taken for MIG. */
        nvmlDeviceGetMigMode_fn mig_mode;
        nvmlDeviceGetMaxMigDeviceCount_fn mig_max;
        nvmlDeviceGetMigDeviceHandleByIndex_fn mig_handle;
        nvmlDeviceGetGpuInstanceId_fn mig_gi;
        nvmlDeviceGetComputeInstanceId_fn mig_ci;
        nvmlDeviceGetAttributes_v2_fn mig_attributes;
        /* Health, each optional. */
        nvmlDeviceGetTotalEccErrors_fn ecc;
        nvmlDeviceGetRetiredPagesPendingStatus_fn retired_pending;
        nvmlDeviceGetRemappedRows_fn remapped_rows;
        nvmlDeviceGetFieldValues_fn field_values;
        /* Telemetry, each optional. */
        nvmlDeviceGetNvLinkErrorCounter_fn link_errors;
        nvmlDeviceGetTemperature_fn temperature;
        nvmlDeviceGetTemperatureThreshold_fn temperature_threshold;
        nvmlDeviceGetPowerUsage_fn power;
        nvmlDeviceGetEnforcedPowerLimit_fn power_limit;
        nvmlDeviceGetCurrentClocksEventReasons_fn clocks_events; /* or ...ThrottleReasons before R535 */
        nvmlDeviceGetPersistenceMode_fn persistence;
        /* XID events: needed by gres_nvml_watch_xids() only. */
        nvmlEventSetCreate_fn set_create;
        nvmlDeviceRegisterEvents_fn register_events;
        nvmlEventSetWait_v2_fn set_wait;
        nvmlEventSetFree_fn set_free;
        const char *root;
        char **error;
} Nvml;

static const struct {
        const char *name;
        size_t offset;
} nvml_symbols[] = {
        { "nvmlInit_v2", offsetof(Nvml, init) },
        { "nvmlShutdown", offsetof(Nvml, shutdown) },
        { "nvmlErrorString", offsetof(Nvml, error_string) },
        { "nvmlDeviceGetCount_v2", offsetof(Nvml, count) },
        { "nvmlDeviceGetHandleByIndex_v2", offsetof(Nvml, handle) },
        { "nvmlDeviceGetName", offsetof(Nvml, name) },
        { "nvmlDeviceGetUUID", offsetof(Nvml, uuid) },
        { "nvmlDeviceGetPciInfo_v3", offsetof(Nvml, pci) },
        { "nvmlDeviceGetMinorNumber", offsetof(Nvml, minor) },
        { "nvmlDeviceGetMemoryInfo", offsetof(Nvml, memory) },
        { "nvmlDeviceGetCpuAffinity", offsetof(Nvml, cpus) },
        { "nvmlDeviceGetNvLinkState", offsetof(Nvml, link_state) },
        { "nvmlDeviceGetNvLinkRemotePciInfo_v2", offsetof(Nvml, link_remote) },
};

static int nvml_open(Nvml *n, const char *library) {
        static const char *const names[] = { "libnvidia-ml.so.1", "libnvidia-ml.so" };

        _cleanup_free_ char *why = NULL;

        if (library)
                n->dl = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        for (size_t i = 0; !library && !n->dl && i < ELEMENTSOF(names); i++) {
                n->dl = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
                /* The versioned name is the one a driver installs: its
                 * reason is the one worth telling. */
                if (!n->dl && i == 0)
                        why = strdup(dlerror() ?: "not found");
        }
        if (!n->dl) {
                if (n->error && asprintf(n->error, "cannot load %s (%s)", library ?: "libnvidia-ml.so.1 or libnvidia-ml.so",
                                         library ? dlerror() ?: "not found" : why ?: "not found") < 0)
                        *n->error = NULL;
                return -ENOENT;
        }
        for (size_t i = 0; i < ELEMENTSOF(nvml_symbols); i++) {
                void *f = dlsym(n->dl, nvml_symbols[i].name);

                if (!f) {
                        if (n->error && asprintf(n->error, "%s: missing", nvml_symbols[i].name) < 0)
                                *n->error = NULL;
                        return -ENOSYS;
                }
                memcpy((char *) n + nvml_symbols[i].offset, &f, sizeof(f));
        }
        n->fabric = (nvmlDeviceGetGpuFabricInfo_fn) dlsym(n->dl, "nvmlDeviceGetGpuFabricInfo");
        n->mig_mode = (nvmlDeviceGetMigMode_fn) dlsym(n->dl, "nvmlDeviceGetMigMode");
        n->mig_max = (nvmlDeviceGetMaxMigDeviceCount_fn) dlsym(n->dl, "nvmlDeviceGetMaxMigDeviceCount");
        n->mig_handle =
                (nvmlDeviceGetMigDeviceHandleByIndex_fn) dlsym(n->dl, "nvmlDeviceGetMigDeviceHandleByIndex");
        n->mig_gi = (nvmlDeviceGetGpuInstanceId_fn) dlsym(n->dl, "nvmlDeviceGetGpuInstanceId");
        n->mig_ci = (nvmlDeviceGetComputeInstanceId_fn) dlsym(n->dl, "nvmlDeviceGetComputeInstanceId");
        n->mig_attributes = (nvmlDeviceGetAttributes_v2_fn) dlsym(n->dl, "nvmlDeviceGetAttributes_v2");
        if (!n->mig_max || !n->mig_handle || !n->mig_gi || !n->mig_ci || !n->mig_attributes)
                n->mig_mode = NULL;
        n->ecc = (nvmlDeviceGetTotalEccErrors_fn) dlsym(n->dl, "nvmlDeviceGetTotalEccErrors");
        n->retired_pending = (nvmlDeviceGetRetiredPagesPendingStatus_fn) dlsym(
                n->dl, "nvmlDeviceGetRetiredPagesPendingStatus");
        n->remapped_rows = (nvmlDeviceGetRemappedRows_fn) dlsym(n->dl, "nvmlDeviceGetRemappedRows");
        n->field_values = (nvmlDeviceGetFieldValues_fn) dlsym(n->dl, "nvmlDeviceGetFieldValues");
        n->link_errors =
                (nvmlDeviceGetNvLinkErrorCounter_fn) dlsym(n->dl, "nvmlDeviceGetNvLinkErrorCounter");
        n->temperature = (nvmlDeviceGetTemperature_fn) dlsym(n->dl, "nvmlDeviceGetTemperature");
        n->temperature_threshold =
                (nvmlDeviceGetTemperatureThreshold_fn) dlsym(n->dl, "nvmlDeviceGetTemperatureThreshold");
        n->power = (nvmlDeviceGetPowerUsage_fn) dlsym(n->dl, "nvmlDeviceGetPowerUsage");
        n->power_limit =
                (nvmlDeviceGetEnforcedPowerLimit_fn) dlsym(n->dl, "nvmlDeviceGetEnforcedPowerLimit");
        n->clocks_events = (nvmlDeviceGetCurrentClocksEventReasons_fn) dlsym(
                n->dl, "nvmlDeviceGetCurrentClocksEventReasons");
        if (!n->clocks_events)
                n->clocks_events = (nvmlDeviceGetCurrentClocksThrottleReasons_fn) dlsym(
                        n->dl, "nvmlDeviceGetCurrentClocksThrottleReasons");
        n->persistence = (nvmlDeviceGetPersistenceMode_fn) dlsym(n->dl, "nvmlDeviceGetPersistenceMode");
        n->set_create = (nvmlEventSetCreate_fn) dlsym(n->dl, "nvmlEventSetCreate");
        n->register_events = (nvmlDeviceRegisterEvents_fn) dlsym(n->dl, "nvmlDeviceRegisterEvents");
        n->set_wait = (nvmlEventSetWait_v2_fn) dlsym(n->dl, "nvmlEventSetWait_v2");
        n->set_free = (nvmlEventSetFree_fn) dlsym(n->dl, "nvmlEventSetFree");
        return 0;
}

/* The multi-node NVLink fabric the GPU joined, if it did; anything else
 * (no such call, NOT_SUPPORTED, registration unfinished or failed) is none. */
static int gpu_fabric(Nvml *n, nvmlDevice_t dev, GresGpu *g) {
        nvmlGpuFabricInfo_t fi = {};
        const unsigned char *u = fi.clusterUuid;

        if (!n->fabric || n->fabric(dev, &fi) != NVML_SUCCESS ||
            fi.state != NVML_GPU_FABRIC_STATE_COMPLETED || fi.status != NVML_SUCCESS)
                return 0;
        if (asprintf(&g->fabric, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                     u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                     u[14], u[15]) < 0) {
                g->fabric = NULL;
                return -ENOMEM;
        }
        g->clique = fi.cliqueId;
        return 0;
}

/* Record the first failed call for the caller's log line. */
/* nvmlErrorString()'s text, which is the driver's too. */
static const char *nvml_strerror(Nvml *n, nvmlReturn_t rc, char buf[static GRES_TEXT_MAX]) {
        gres_text_escape(n->error_string(rc) ?: "?", buf, GRES_TEXT_MAX);
        return buf;
}

static int nvml_fail(Nvml *n, const char *call, nvmlReturn_t rc) {
        char why[GRES_TEXT_MAX];

        if (n->error && !*n->error &&
            asprintf(n->error, "%s: %s (%d)", call, nvml_strerror(n, rc, why), rc) < 0)
                *n->error = NULL;
        return -EIO;
}

/* Remote ends of the active links; NOT_SUPPORTED is a GPU without NVLink. */
static int gpu_links(Nvml *n, nvmlDevice_t dev, GresGpu *g) {
        for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
                nvmlEnableState_t active = NVML_FEATURE_DISABLED;
                nvmlPciInfo_t pci = {};
                char bus[16];
                nvmlReturn_t rc = n->link_state(dev, link, &active);

                if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
                        break;
                if (rc != NVML_SUCCESS)
                        return nvml_fail(n, "nvmlDeviceGetNvLinkState", rc);
                if (active != NVML_FEATURE_ENABLED)
                        continue;
                rc = n->link_remote(dev, link, &pci);
                if (rc != NVML_SUCCESS)
                        return nvml_fail(n, "nvmlDeviceGetNvLinkRemotePciInfo_v2", rc);
                pci.busId[sizeof(pci.busId) - 1] = 0;
                if (gres_bus_id_normalise(pci.busId, bus) < 0)
                        continue;
                if (strv_extend(&g->peers, bus) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* What the driver reports of the GPU's health.  Nothing here fails
 * discovery: a call the driver lacks or refuses leaves its field at -1. */
static void gpu_health(Nvml *n, nvmlDevice_t dev, GresHealth *h) {
        unsigned long long count;
        nvmlEnableState_t pending;
        unsigned corr, unc, remap_pending, failure;
        nvmlFieldValue_t fv = { .fieldId = NVML_FI_DEV_GET_GPU_RECOVERY_ACTION };

        gres_health_unknown(h);
        h->read = true;
        if (n->ecc &&
            n->ecc(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &count) == NVML_SUCCESS)
                h->ecc_uncorrected_volatile = (int64_t) MIN(count, (unsigned long long) INT64_MAX);
        if (n->ecc &&
            n->ecc(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, &count) == NVML_SUCCESS)
                h->ecc_uncorrected_aggregate = (int64_t) MIN(count, (unsigned long long) INT64_MAX);
        if (n->retired_pending && n->retired_pending(dev, &pending) == NVML_SUCCESS)
                h->retired_pages_pending = pending == NVML_FEATURE_ENABLED;
        if (n->remapped_rows &&
            n->remapped_rows(dev, &corr, &unc, &remap_pending, &failure) == NVML_SUCCESS) {
                h->remapped_rows_uncorrectable = unc;
                h->remap_pending = remap_pending != 0;
                h->remap_failure = failure != 0;
        }
        if (n->field_values && n->field_values(dev, 1, &fv) == NVML_SUCCESS && fv.nvmlReturn == NVML_SUCCESS)
                h->recovery_action = fv.valueType == NVML_VALUE_TYPE_UNSIGNED_LONG_LONG
                                             ? (int) MIN(fv.value.ullVal, 1000ULL)
                                             : (int) MIN(fv.value.uiVal, 1000U);
}

static int64_t link_counter(Nvml *n, nvmlDevice_t dev, unsigned link, nvmlNvLinkErrorCounter_t c) {
        unsigned long long v;

        if (!n->link_errors || n->link_errors(dev, link, c, &v) != NVML_SUCCESS)
                return -1;
        return (int64_t) MIN(v, (unsigned long long) INT64_MAX);
}

/* Temperature, power, clocks, persistence and each NVLink the GPU has (up
 * to the first link NVML says it has not).  As gpu_health(): nothing here
 * fails discovery. */
static void gpu_telemetry(Nvml *n, nvmlDevice_t dev, GresTelemetry *t) {
        unsigned v = 0;
        unsigned long long reasons;
        nvmlEnableState_t mode;

        gres_health_telemetry_unknown(t);
        t->read = true;
        if (n->temperature && n->temperature(dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS)
                t->temperature = (int) MIN(v, (unsigned) INT32_MAX);
        if (n->temperature_threshold &&
            n->temperature_threshold(dev, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &v) == NVML_SUCCESS)
                t->temperature_slowdown = (int) MIN(v, (unsigned) INT32_MAX);
        if (n->temperature_threshold &&
            n->temperature_threshold(dev, NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, &v) == NVML_SUCCESS)
                t->temperature_shutdown = (int) MIN(v, (unsigned) INT32_MAX);
        if (n->power && n->power(dev, &v) == NVML_SUCCESS)
                t->power_mw = v;
        if (n->power_limit && n->power_limit(dev, &v) == NVML_SUCCESS)
                t->power_limit_mw = v;
        if (n->clocks_events && n->clocks_events(dev, &reasons) == NVML_SUCCESS)
                t->clocks_event_reasons = (int64_t) (reasons & 0xffffffffULL);
        if (n->persistence && n->persistence(dev, &mode) == NVML_SUCCESS)
                t->persistence_mode = mode == NVML_FEATURE_ENABLED;
        for (unsigned link = 0; link < GRES_NVLINKS_MAX; link++) {
                nvmlEnableState_t active = NVML_FEATURE_DISABLED;
                nvmlReturn_t rc = n->link_state(dev, link, &active);
                GresNvLink *l = &t->links[link];

                if (rc == NVML_ERROR_NOT_SUPPORTED || rc == NVML_ERROR_INVALID_ARGUMENT)
                        break;
                t->n_links = link + 1;
                l->up = rc == NVML_SUCCESS ? active == NVML_FEATURE_ENABLED : -1;
                l->replay = link_counter(n, dev, link, NVML_NVLINK_ERROR_DL_REPLAY);
                l->recovery = link_counter(n, dev, link, NVML_NVLINK_ERROR_DL_RECOVERY);
                l->crc_flit = link_counter(n, dev, link, NVML_NVLINK_ERROR_DL_CRC_FLIT);
                l->crc_data = link_counter(n, dev, link, NVML_NVLINK_ERROR_DL_CRC_DATA);
        }
}

static int gpu_read(Nvml *n, unsigned index, GresGpu *g) {
        char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE] = {}, uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {}, bus[16];
        unsigned long mask[GRES_CPUS_MAX / (8 * sizeof(unsigned long))] = {};
        nvmlPciInfo_t pci = {};
        nvmlMemory_t mem = {};
        nvmlDevice_t dev;
        nvmlReturn_t rc;

        g->index = index;
        if ((rc = n->handle(index, &dev)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetHandleByIndex_v2", rc);
        if ((rc = n->name(dev, name, sizeof(name))) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetName", rc);
        if ((rc = n->uuid(dev, uuid, sizeof(uuid))) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetUUID", rc);
        if ((rc = n->pci(dev, &pci)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetPciInfo_v3", rc);
        if ((rc = n->minor(dev, &g->minor)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetMinorNumber", rc);
        if ((rc = n->memory(dev, &mem)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetMemoryInfo", rc);
        g->memory = mem.total;
        /* Affinity is optional (not reported inside some VMs). */
        if (n->cpus(dev, ELEMENTSOF(mask), mask) == NVML_SUCCESS)
                g->cpus = gres_cpulist_format(mask, sizeof(mask) * 8);
        name[sizeof(name) - 1] = uuid[sizeof(uuid) - 1] = pci.busId[sizeof(pci.busId) - 1] = 0;
        if (gres_bus_id_normalise(pci.busId, bus) < 0)
                return nvml_fail(n, "nvmlDeviceGetPciInfo_v3", NVML_ERROR_UNKNOWN);
        g->name = gres_text_safe(name);
        g->uuid = gres_text_safe(uuid);
        g->bus_id = strdup(bus);
        if (!g->name || !g->uuid || !g->bus_id)
                return -ENOMEM;
        if (gpu_fabric(n, dev, g) < 0)
                return -ENOMEM;
        gpu_health(n, dev, &g->health);
        gpu_telemetry(n, dev, &g->telemetry);
        return gpu_links(n, dev, g);
}

/* Slurm's type for a MIG instance: the GPU's name up to its first '-' and
 * the profile, "NVIDIA A100-SXM4-40GB" -> "NVIDIA A100_3g.20gb" (gpu_nvml.c;
 * gres_type_normalise() then makes it nvidia_a100_3g.20gb). */
static char *mig_name(const char *gpu_name, const nvmlDeviceAttributes_t *a) {
        size_t base = strcspn(gpu_name, "-");
        char *s;

        if (asprintf(&s, "%.*s_%ug.%llugb", (int) base, gpu_name, a->gpuInstanceSliceCount,
                     (a->memorySizeMB + 512) / 1024) < 0)
                return NULL;
        return s;
}

/* MIG instance @j of @dev, whose whole-GPU entry is @p; 1 when there is none. */
static int mig_read(Nvml *n, nvmlDevice_t dev, const GresGpu *p, unsigned j, GresGpu *m) {
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
        unsigned gi, ci, gi_minor, ci_minor;
        nvmlDeviceAttributes_t a = {};
        nvmlDevice_t mig;
        nvmlReturn_t rc;
        int r;

        rc = n->mig_handle(dev, j, &mig);
        if (rc == NVML_ERROR_NOT_FOUND || rc == NVML_ERROR_INVALID_ARGUMENT)
                return 1;
        if (rc != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetMigDeviceHandleByIndex", rc);
        if ((rc = n->mig_gi(mig, &gi)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetGpuInstanceId", rc);
        if ((rc = n->mig_ci(mig, &ci)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetComputeInstanceId", rc);
        if ((rc = n->mig_attributes(mig, &a)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetAttributes_v2", rc);
        if ((rc = n->uuid(mig, uuid, sizeof(uuid))) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetUUID", rc);
        uuid[sizeof(uuid) - 1] = 0;
        r = gres_proc_mig_minors(n->root, p->minor, gi, ci, &gi_minor, &ci_minor);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (n->error && !*n->error &&
                    asprintf(n->error,
                             "%s/proc/driver/nvidia-caps/mig-minors: no minors for gpu%u/gi%u/ci%u (%s)",
                             n->root, p->minor, gi, ci, strerror(-r)) < 0)
                        *n->error = NULL;
                return -EIO;
        }
        *m = (GresGpu){ .index = p->index,
                        .minor = p->minor,
                        .memory = a.memorySizeMB * 1024 * 1024,
                        .mig = j + 1,
                        .health = p->health,
                        .telemetry = p->telemetry };
        m->name = mig_name(p->name, &a);
        m->uuid = gres_text_safe(uuid);
        m->bus_id = strdup(p->bus_id);
        m->cpus = p->cpus ? strdup(p->cpus) : NULL;
        if (asprintf(&m->files, "/dev/nvidia%u,/dev/nvidia-caps/nvidia-cap%u,/dev/nvidia-caps/nvidia-cap%u",
                     p->minor, gi_minor, ci_minor) < 0)
                m->files = NULL;
        return m->name && m->uuid && m->bus_id && (m->cpus || !p->cpus) && m->files ? 0 : -ENOMEM;
}

static int gpus_append(GresGpu **gpus, size_t *n, size_t *cap, GresGpu *g) {
        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 8;
                GresGpu *a = reallocarray(*gpus, c, sizeof(GresGpu));
                if (!a)
                        return -ENOMEM;
                *gpus = a;
                *cap = c;
        }
        (*gpus)[(*n)++] = *g;
        *g = (GresGpu){};
        return 0;
}

/* GPU @index: its entry, or the entries of its MIG instances when it is in MIG mode. */
static int gpu_entries(Nvml *n, unsigned index, GresGpu **gpus, size_t *count, size_t *cap) {
        _cleanup_(gres_gpu_done) GresGpu g = {};
        unsigned cur = NVML_DEVICE_MIG_DISABLE, pending, max = 0;
        nvmlDevice_t dev;
        int r;

        r = gpu_read(n, index, &g);
        if (r < 0)
                return r;
        if (!n->mig_mode || n->handle(index, &dev) != NVML_SUCCESS ||
            n->mig_mode(dev, &cur, &pending) != NVML_SUCCESS || cur != NVML_DEVICE_MIG_ENABLE ||
            n->mig_max(dev, &max) != NVML_SUCCESS)
                return gpus_append(gpus, count, cap, &g);
        for (unsigned j = 0; j < max; j++) {
                GresGpu m = {};

                r = mig_read(n, dev, &g, j, &m);
                if (r == 0)
                        r = gpus_append(gpus, count, cap, &m);
                gres_gpu_done(&m);
                if (r < 0)
                        return r;
                if (r > 0)
                        break;
        }
        return 0;
}

static int nvml_discover(Nvml *n, GresGpu **ret, size_t *ret_n) {
        GresGpu *gpus = NULL;
        size_t count = 0, cap = 0;
        unsigned devices = 0;
        nvmlReturn_t rc;
        int r = 0;

        if ((rc = n->count(&devices)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetCount_v2", rc);
        for (unsigned i = 0; i < devices && r == 0; i++)
                r = gpu_entries(n, i, &gpus, &count, &cap);
        if (r < 0) {
                gres_gpus_free(gpus, count);
                return r;
        }
        *ret = gpus;
        *ret_n = count;
        return 0;
}

int gres_nvml_discover(const char *library, const char *root, GresGpu **ret, size_t *ret_n,
                       char **ret_error) {
        Nvml n = { .error = ret_error, .root = root ?: "/" };
        nvmlReturn_t rc;
        int r;

        if (ret_error)
                *ret_error = NULL;
        r = nvml_open(&n, library);
        if (r == 0) {
                rc = n.init();
                r = rc == NVML_SUCCESS ? nvml_discover(&n, ret, ret_n) : nvml_fail(&n, "nvmlInit_v2", rc);
                if (rc == NVML_SUCCESS)
                        n.shutdown();
        }
        if (n.dl)
                dlclose(n.dl);
        return r;
}

/* ---- XID events ---------------------------------------------------------- */

typedef struct Watched {
        nvmlDevice_t dev;
        char bus[16];
        char uuid[GRES_TEXT_MAX]; /* as discovery shows it: through gres_text_escape() */
} Watched;

void gres_xid_watch_done(GresXidWatch *w) {
        free(w->events);
        strv_free(w->unwatched);
        *w = (GresXidWatch){};
}

/* Register GPU @index for XID events; one that cannot be is named in w->unwatched. */
static int watch_gpu(Nvml *n, nvmlEventSet_t set, unsigned index, Watched *d, GresXidWatch *w) {
        char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {}, why[GRES_TEXT_MAX];
        nvmlPciInfo_t pci = {};
        nvmlReturn_t rc;

        rc = n->handle(index, &d->dev);
        if (rc == NVML_SUCCESS)
                rc = n->uuid(d->dev, uuid, sizeof(uuid));
        if (rc == NVML_SUCCESS)
                rc = n->pci(d->dev, &pci);
        pci.busId[sizeof(pci.busId) - 1] = 0;
        uuid[sizeof(uuid) - 1] = 0;
        gres_text_escape(uuid, d->uuid, sizeof(d->uuid));
        if (rc == NVML_SUCCESS && gres_bus_id_normalise(pci.busId, d->bus) < 0)
                rc = NVML_ERROR_UNKNOWN;
        if (rc == NVML_SUCCESS)
                rc = n->register_events(d->dev, nvmlEventTypeXidCriticalError, set);
        if (rc == NVML_SUCCESS) {
                w->watched++;
                return 1;
        }
        d->dev = NULL;
        if (*d->bus)
                return strv_extendf(&w->unwatched, "%s: %s", d->bus, nvml_strerror(n, rc, why));
        return strv_extendf(&w->unwatched, "GPU %u: %s", index, nvml_strerror(n, rc, why));
}

static int record(GresXidWatch *w, const Watched *d, unsigned n_devs, const nvmlEventData_t *data,
                  size_t max) {
        GresXidEvent *e;

        if (!(data->eventType & nvmlEventTypeXidCriticalError))
                return 0;
        for (unsigned i = 0; i < n_devs; i++) {
                if (!d[i].dev || d[i].dev != data->device)
                        continue;
                if (!w->events && !(w->events = calloc(max, sizeof(*w->events))))
                        return -ENOMEM;
                e = &w->events[w->n++];
                snprintf(e->bus_id, sizeof(e->bus_id), "%s", d[i].bus);
                snprintf(e->uuid, sizeof(e->uuid), "%s", d[i].uuid);
                e->xid = data->eventData;
                e->gpu_instance = data->gpuInstanceId;
                e->compute_instance = data->computeInstanceId;
                e->time_usec = e->last_usec = now_usec(CLOCK_REALTIME);
                e->count = 1;
                return 0;
        }
        return 0; /* a device this watch does not know of */
}

/* Wait for the first event of the window, then take what else is queued. */
static int wait_events(Nvml *n, nvmlEventSet_t set, const Watched *d, unsigned n_devs, uint64_t window_usec,
                       size_t max, GresXidWatch *w) {
        uint64_t deadline = now_usec(CLOCK_MONOTONIC) + window_usec;

        while (w->n < max) {
                uint64_t now = now_usec(CLOCK_MONOTONIC);
                unsigned ms = w->n > 0 || now >= deadline
                                      ? 0
                                      : (unsigned) MIN((deadline - now + 999) / 1000, UINT32_MAX);
                nvmlEventData_t data = {};
                nvmlReturn_t rc = n->set_wait(set, &data, ms);
                int r;

                if (rc == NVML_ERROR_TIMEOUT) {
                        if (w->n > 0 || now_usec(CLOCK_MONOTONIC) >= deadline)
                                return 0;
                        continue;
                }
                if (rc != NVML_SUCCESS)
                        return nvml_fail(n, "nvmlEventSetWait_v2", rc);
                r = record(w, d, n_devs, &data, max);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Nothing to watch: the window passes all the same, so the caller's next
 * window does not start at once. */
static void sleep_window(uint64_t window_usec) {
        struct timespec ts = { .tv_sec = (time_t) (window_usec / 1000000ULL),
                               .tv_nsec = (long) (window_usec % 1000000ULL) * 1000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int nvml_watch(Nvml *n, uint64_t window_usec, size_t max, GresXidWatch *w) {
        _cleanup_free_ Watched *d = NULL;
        nvmlEventSet_t set = NULL;
        unsigned devices = 0;
        nvmlReturn_t rc;
        int r = 0;

        if ((rc = n->count(&devices)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlDeviceGetCount_v2", rc);
        if (devices > 0 && !(d = calloc(devices, sizeof(*d))))
                return -ENOMEM;
        if ((rc = n->set_create(&set)) != NVML_SUCCESS)
                return nvml_fail(n, "nvmlEventSetCreate", rc);
        for (unsigned i = 0; i < devices && r >= 0; i++)
                r = watch_gpu(n, set, i, &d[i], w);
        if (r >= 0 && w->watched > 0)
                r = wait_events(n, set, d, devices, window_usec, max, w);
        else if (r >= 0)
                sleep_window(window_usec);
        (void) n->set_free(set);
        return r;
}

int gres_nvml_watch_xids(const char *library, uint64_t window_usec, size_t max, GresXidWatch *w,
                         char **ret_error) {
        Nvml n = { .error = ret_error };
        nvmlReturn_t rc;
        int r;

        *w = (GresXidWatch){};
        if (ret_error)
                *ret_error = NULL;
        r = nvml_open(&n, library);
        if (r == 0 && (!n.set_create || !n.register_events || !n.set_wait || !n.set_free)) {
                if (ret_error &&
                    asprintf(ret_error, "the driver's NVML has no event API (nvmlEventSetWait_v2)") < 0)
                        *ret_error = NULL;
                r = -ENOSYS;
        }
        if (r == 0) {
                rc = n.init();
                r = rc == NVML_SUCCESS ? nvml_watch(&n, window_usec, MAX(max, (size_t) 1), w)
                                       : nvml_fail(&n, "nvmlInit_v2", rc);
                if (rc == NVML_SUCCESS)
                        n.shutdown();
        }
        if (n.dl)
                dlclose(n.dl);
        if (r < 0)
                gres_xid_watch_done(w);
        return r;
}
