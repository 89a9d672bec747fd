/* XID errors: what the driver reports through NVML's event API as they
 * happen (gres-nvml.c watches for them in a child), kept as a bounded log
 * of the most recent, and how they bear on a GPU's health: an XID that
 * points at the hardware (GRES_XID_CRITICAL_DEFAULT, or the admin's list)
 * makes the GPU unhealthy for a hold time after it was seen. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define GRES_XID_LOG_MAX 256     /* events kept, all GPUs together */
#define GRES_XID_PER_GPU_SHOWN 16
#define GRES_XID_CRITICAL_MAX 64
#define GRES_XID_NONE UINT32_MAX /* gpu/compute instance: the whole GPU, or not attributable */

/* Hardware and driver faults NVIDIA's XID catalogue resolves with a GPU
 * reset, a reboot or service, as opposed to ones an application causes
 * (13, 31, 43, 45, 94: restart the job). */
#define GRES_XID_CRITICAL_DEFAULT { 48, 61, 62, 64, 74, 79, 92, 95, 119, 120, 121, 140 }

typedef struct GresXidEvent {
        char bus_id[16];        /* normalised "dddd:bb:dd.f" */
        char uuid[96];
        uint64_t xid;
        uint32_t gpu_instance, compute_instance;
        uint64_t time_usec;     /* CLOCK_REALTIME when the watcher received it */
} GresXidEvent;

typedef struct GresXidLog {
        GresXidEvent ev[GRES_XID_LOG_MAX]; /* a ring: the oldest at start */
        size_t start, n;
        uint64_t total;                    /* events added since the log began */
} GresXidLog;

/* gres_xid_describe() - NVIDIA's name for a well-known XID, or NULL. */
const char *gres_xid_describe(uint64_t xid);

/* gres_xid_is_critical() - whether @xid is one of @critical. */
bool gres_xid_is_critical(uint64_t xid, const uint64_t *critical, size_t n);

/* gres_xid_log_add() - append @e, dropping the oldest when full. */
void gres_xid_log_add(GresXidLog *l, const GresXidEvent *e);

/* gres_xid_log_get() - the @i-th event, oldest first (@i < l->n). */
const GresXidEvent *gres_xid_log_get(const GresXidLog *l, size_t i);

/* gres_xid_event_to_json() / _from_json() - one event as the watcher
 * hands it back and the log file keeps it.  _from_json() validates every
 * field (a bus id in the normalised form, a printable UUID, numbers in
 * range) and returns -EBADMSG for anything else. */
struct json_object *gres_xid_event_to_json(const GresXidEvent *e);
int gres_xid_event_from_json(struct json_object *o, GresXidEvent *e);

/* gres_xid_log_to_json() / _from_json() - the whole log, {"total": N,
 * "events": [...]}.  _from_json() adds to @l and fails with -EBADMSG,
 * leaving @l as it was, when any event is invalid. */
struct json_object *gres_xid_log_to_json(const GresXidLog *l);
int gres_xid_log_from_json(struct json_object *o, GresXidLog *l);

/* gres_xid_apply() - add what the log says about the GPU @gpu (an entry of
 * io.sunkd.Gres.List, matched by its bus_id, so MIG instances get their
 * GPU's) to it: "xid_events", its last GRES_XID_PER_GPU_SHOWN events, and
 * for each critical XID seen within @hold_usec of @now_usec (before it, or
 * after it when the clock was set back) a problem in its "health", which is
 * then unhealthy.  -ENOMEM or 0. */
int gres_xid_apply(const GresXidLog *l, struct json_object *gpu, const uint64_t *critical, size_t n_critical,
                   uint64_t now_usec, uint64_t hold_usec);

/* gres_xid_active() - how many critical events lie within the hold: when
 * it changes, what the GPUs' health shows has changed. */
size_t gres_xid_active(const GresXidLog *l, const uint64_t *critical, size_t n_critical, uint64_t now_usec,
                       uint64_t hold_usec);
