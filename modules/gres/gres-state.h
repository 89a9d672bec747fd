/* The gres module's state, and what its files call of each other.  Private
 * to the module (gres.la); libgres knows nothing of it.  On the loop only,
 * but for what a job's work reads in its child. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "gres-conf.h"
#include "gres-wait.h"
#include "gres-xid.h"
#include "sunkd/module.h"
#include "util/json-util.h"

#define ALIASES_MAX 64
#define XID_FACT_MAX 64 /* the XID log's last entries in the fact gres.gpus */

/* The module's section of sunkd.yaml, as parsed (gres-settings.c). */
typedef struct Conf {
        char *backend;
        char *nvml_library;
        char *root;
        uint64_t interval_usec;
        uint64_t timeout_usec;
        char *gres_conf;
        const sunkd_cfg *type_alias; /* borrowed during init only */
        char *slurm_conf;
        char *node_name;
        bool xid_events;
        uint64_t xid_window_usec;
        char *kmsg;
        /* moved to the health module's xid_policy: only warned about */
        uint64_t xid_hold_usec;
        char **xid_critical;
} Conf;

typedef enum Backend { BACKEND_AUTO, BACKEND_NVML, BACKEND_PROC } Backend;

typedef struct Known {
        char *type, *uuid, *bus_id;
} Known;

#define KMSG_GPUS_MAX 64

/* Where the kernel log was read up to, kept with the XID log: valid for
 * the same file in the same boot. */
typedef struct KmsgCursor {
        bool valid;
        uint64_t seq;
} KmsgCursor;

typedef struct State {
        sunkd_ctx *ctx;
        Conf conf;
        Backend backend;
        GresTypeAlias aliases[ALIASES_MAX];
        size_t n_aliases;
        sunkd_job *job;
        bool use_proc;        /* NVML hung in the last run */
        bool topology_warned; /* the CPU topology could not be read, and that was logged */
        char *block_error;    /* the GPUs' NVLink domains disagree: logged when it changes */
        json_object *last;    /* the last discovery's result */
        uint64_t last_usec;
        GresWaitList waiting; /* List calls that came before there was a result */
        char *unavailable; /* why there is none although a discovery has ended; NULL: the first is to come */
        Known *known;      /* the GPUs of the discovery that found the most */
        size_t n_known;
        int check; /* 1 match, 0 mismatch, -1 unknown */
        char *check_message;
        uint64_t runs, failures, changes;
        sunkd_metric *m_gpus, *m_memory, *m_failures, *m_changes, *m_check;
        sunkd_metric *m_ecc, *m_recovery;
        uint64_t discover_started_usec; /* when the running discovery's child started */
        uint64_t read_usec;             /* ... and the last one's: its NVML counters were read after this */
        char boot_id[GRES_XID_BOOT_ID_MAX];
        /* XID events, from NVML */
        sunkd_job *events_job;
        GresXidLog *xids;
        char *xid_path; /* where the log is kept; NULL without a state directory */
        bool xid_dirty; /* changed since it was last saved */
        sunkd_job *save_job;
        uint64_t storm_logged_usec;
        int watching; /* 1 watching, 0 not (watch_error says why), -1 not yet known */
        char *watch_error;
        unsigned xid_watched;
        json_object *xid_unwatched;
        /* ... and from the kernel log */
        sunkd_job *kmsg_job;
        KmsgCursor kmsg_cursor;
        char *kmsg_carry; /* a record's first part, for the next read */
        int kmsg_reading; /* 1 reading, 0 not (kmsg_error says why), -1 not yet known */
        char *kmsg_error;
        uint64_t kmsg_records, kmsg_lost, kmsg_overflows, kmsg_malformed;
        struct {
                char bus_id[16], uuid[96];
        } kmsg_gpus[KMSG_GPUS_MAX]; /* as the driver named them */
        size_t n_kmsg_gpus;
        sunkd_metric *m_xid, *m_last_xid;
} State;

/* gres.c */
void gres_state_free(State *s);

/* gres-list.c */
int gres_list_methods_add(State *s);
/* A discovery has a result: the List calls waiting for one get it. */
void gres_list_result(State *s);
/* A discovery ended without one: calls waiting are told why, and so are
 * later ones until a discovery succeeds. */
void gres_list_no_result(State *s, int r, const char *why);
/* The module stops: calls still waiting are told so. */
void gres_list_stopping(State *s);

/* gres-settings.c */
int gres_settings_load(sunkd_ctx *c, const sunkd_cfg *cfg, State *s);
void gres_settings_clear(State *s);
int gres_check(sunkd_ctx *c, const sunkd_cfg *cfg);
int gres_reload(void *state, const sunkd_cfg *cfg);

/* gres-discover.c */
sunkd_job_spec gres_discover_spec(const State *s);
void gres_known_free(State *s);

/* gres-events.c */
sunkd_job_spec gres_events_spec(const State *s);
bool gres_watches_xids(const State *s);

/* gres-kmsg-job.c */
sunkd_job_spec gres_kmsg_spec(const State *s);
bool gres_reads_kmsg(const State *s);

/* gres-xid-store.c */
int gres_xids_load(State *s);
/* The XID events a source reported, taken into the log: @events as
 * gres_xid_event_from_json() reads them, each with its "count".  Logged,
 * counted in the metrics, saved and shown; returns how many entries are new. */
size_t gres_xids_add(State *s, json_object *events, GresXidSource source);
/* The log changed: repeats summed up, saved soon.  The caller shows it
 * (gres_show_gpus()): the log knows nothing of the fact and the metrics, so
 * gres-publish.c reads the log and never the other way round. */
void gres_xids_changed(State *s);
/* Repeats not logged yet, summed up in one line if one is due. */
void gres_xids_summary(State *s);
sunkd_job_spec gres_save_spec(const State *s);
void gres_xids_save_now(State *s);
/* The UUID of the GPU at @bus as discovery or the driver named it, or "". */
const char *gres_uuid_of(const State *s, const char *bus);
/* Entries whose GPU had no known UUID when they came get it once known. */
void gres_xids_name(State *s);

/* gres-publish.c: the fact gres.gpus, what gres observes for the health
 * module to judge (gres judges nothing of it).  Its fields are a contract,
 * written down in sunkd(8)'s FACTS and held to the code by
 * tests/integration/0277-gres-fact.t. */
int gres_metrics_add(State *s);
void gres_show_gpus(State *s);
int gres_apply_xids(State *s, json_object *gpus);
void gres_forget_gpu_metrics(State *s, json_object *gpu);
