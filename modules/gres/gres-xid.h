/* XID errors as gres observes them: from the kernel log (gres-kmsg.h) and
 * from NVML's event API (gres-nvml.c), kept as a bounded log of the most
 * recent.  gres judges none of them: the health module holds the only XID
 * policy and reads this log from the fact gres.gpus.
 *
 * Every event gets a sequence number, one more than the last, across
 * restarts (the log is kept in the state directory), so that a reader can
 * tell what it has seen.  Repeats of one XID on one GPU within
 * GRES_XID_STORM_USEC of the first are folded into that entry, which counts
 * them (`count`) and covers their numbers (`seq` to `last_seq`): a storm of
 * a hundred thousand takes one entry, not the whole log.  An event both
 * sources report (the driver logs it and NVML delivers it) is counted once:
 * one source's report within GRES_XID_MATCH_USEC of an entry that only the
 * other reported is taken as the same event. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define GRES_XID_LOG_MAX 256 /* entries kept, all GPUs together */
#define GRES_XID_PER_GPU_SHOWN 16
#define GRES_XID_NONE UINT32_MAX /* gpu/compute instance: the whole GPU, or not attributable */
#define GRES_XID_STORM_USEC (60 * UINT64_C(1000000))
#define GRES_XID_MATCH_USEC (10 * UINT64_C(1000000))
#define GRES_XID_BOOT_ID_MAX 40

typedef enum GresXidSource {
        GRES_XID_NVML,
        GRES_XID_KMSG,
        _GRES_XID_SOURCE_MAX,
} GresXidSource;

typedef struct GresXidEvent {
        char bus_id[16];                    /* normalised "dddd:bb:dd.f" */
        char uuid[96];                      /* "" when not known: a kernel log line names the bus only */
        char boot_id[GRES_XID_BOOT_ID_MAX]; /* the boot it happened in; "" not known */
        uint64_t xid;
        uint32_t gpu_instance, compute_instance;
        uint64_t time_usec;     /* CLOCK_REALTIME of the first */
        uint64_t last_usec;     /* ... and of the last folded in */
        uint64_t seq, last_seq; /* the first event's number and the last one's */
        uint64_t count;         /* events this entry stands for, >= 1 */
        GresXidSource source;   /* GRES_XID_KMSG once the kernel log named it */
        /* events only one source reported so far, for the other to match */
        uint64_t unmatched[_GRES_XID_SOURCE_MAX];
        uint64_t reported; /* of count, how many the module has logged (not kept) */
} GresXidEvent;

typedef struct GresXidLog {
        GresXidEvent ev[GRES_XID_LOG_MAX]; /* a ring: the oldest at start */
        size_t start, n;
        uint64_t total;    /* events added since the log began */
        uint64_t next_seq; /* the number the next event gets, from 1 */
} GresXidLog;

/* gres_xid_describe() - NVIDIA's name for a well-known XID, or NULL. */
const char *gres_xid_describe(uint64_t xid);

const char *gres_xid_source_to_string(GresXidSource s);

/* gres_xid_log_init() - an empty log whose first event is number 1. */
void gres_xid_log_init(GresXidLog *l);

typedef enum GresXidAdded {
        GRES_XID_ADDED_NEW,     /* a new entry */
        GRES_XID_ADDED_FOLDED,  /* repeats counted in an entry */
        GRES_XID_ADDED_MATCHED, /* all of them the other source had reported */
} GresXidAdded;

/* gres_xid_log_add() - @count events like @e (its bus_id, uuid, boot_id,
 * xid, instances, time_usec and last_usec; the rest is the log's) that
 * @source reported: folded into the newest entry of the same GPU and XID
 * when they lie within GRES_XID_STORM_USEC of its first, else a new entry,
 * the oldest dropped when the log is full.  Returns what became of them and
 * in *ret_entry the entry (valid until the next add). */
GresXidAdded gres_xid_log_add(GresXidLog *l, const GresXidEvent *e, uint64_t count, GresXidSource source,
                              GresXidEvent **ret_entry);

/* gres_xid_log_get() - the @i-th entry, oldest first (@i < l->n). */
const GresXidEvent *gres_xid_log_get(const GresXidLog *l, size_t i);
GresXidEvent *gres_xid_log_at(GresXidLog *l, size_t i);

enum {
        GRES_XID_JSON_WHAT = 1u << 0, /* NVIDIA's name of the XID, for people */
        GRES_XID_JSON_KEEP = 1u << 1, /* what the log file needs beside the fact's fields */
};

/* gres_xid_event_to_json() / _from_json() - one entry as the fact, the List
 * and the log file show it.  _from_json() validates every field (a bus id in
 * the normalised form, a printable UUID and boot id, numbers in range, a
 * count its sequence numbers can hold) and returns -EBADMSG for anything
 * else; an entry of an older file without sequence numbers gets seq 0
 * (gres_xid_log_from_json() numbers it). */
struct json_object *gres_xid_event_to_json(const GresXidEvent *e, unsigned flags);
int gres_xid_event_from_json(struct json_object *o, GresXidEvent *e);

/* gres_xid_log_to_json() / _from_json() - the whole log, {"total": N, "seq":
 * the next number, "events": [...]}, as the file keeps it.  _from_json()
 * takes it into the empty @l, or fails with -EBADMSG, leaving @l empty, when
 * any entry is invalid or they disagree (numbers not rising, more events
 * than the total). */
struct json_object *gres_xid_log_to_json(const GresXidLog *l);
int gres_xid_log_from_json(struct json_object *o, GresXidLog *l);

/* gres_xid_log_tail_json() - the last @max entries, oldest first, as the
 * fact carries them; NULL on OOM. */
struct json_object *gres_xid_log_tail_json(const GresXidLog *l, size_t max);

/* gres_xid_show() - add the GPU @gpu's (an entry of io.sunkd.Gres.List,
 * matched by its bus_id, so MIG instances get their GPU's) last
 * GRES_XID_PER_GPU_SHOWN entries to it as "xid_events".  -ENOMEM or 0. */
int gres_xid_show(const GresXidLog *l, struct json_object *gpu);
