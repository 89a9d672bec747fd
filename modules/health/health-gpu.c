/* The gpu check's judge (health-gpu.h): the fact gres.gpus in, a verdict
 * out, and a bounded memory of what it judged in between.  All of its
 * tables have fixed room, whatever the fact holds: a storm is one log
 * entry with a count, and its hits merge. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "health-gpu.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/json-util.h"
#include "util/macro.h"

#define SEEN_MAX 256                       /* log entries remembered (the fact shows 64) */
#define HOLDS_MAX 64                       /* GPU and XID pairs held failed */
#define HITS_MAX 256                       /* recent events of counted rules */
#define SEATS_MAX 64                       /* GPUs (bus ids) followed */
#define HIT_MERGE_USEC (60 * USEC_PER_SEC) /* hits of a pair this close are one, counted */
#define BOOT_ID_MAX 40
#define BUS_MAX 16
#define UUID_MAX 96
#define FINDINGS_MAX 16

typedef struct Seen {
        uint64_t seq, counted; /* an entry's first number, and how many of its events were judged */
} Seen;

typedef struct Hold {
        char bus_id[BUS_MAX], uuid[UUID_MAX];
        uint32_t xid;
        uint64_t since_usec; /* the last event that made it */
} Hold;

typedef struct Hit {
        char bus_id[BUS_MAX];
        uint32_t xid;
        uint64_t time_usec, count;
} Hit;

typedef struct Seat {
        char bus_id[BUS_MAX];
        uint64_t gone_usec; /* missing from the fact since; 0: there */
        uint64_t back_usec; /* came back then, after being missing */
} Seat;

struct HealthGpu {
        HealthXidPolicy policy;
        HealthGpuMemoryPolicy memory;
        HealthGpuLimits limits;
        char *root;
        char boot_id[BOOT_ID_MAX];
        uint64_t floor;     /* entries numbered below it were judged and left the fact */
        uint64_t last_seq;  /* the highest event number judged */
        uint64_t max_found; /* the most GPUs a fact of this boot found */
        Seen seen[SEEN_MAX];
        size_t n_seen;
        Hold holds[HOLDS_MAX];
        size_t n_holds;
        Hit hits[HITS_MAX];
        size_t n_hits;
        Seat seats[SEATS_MAX];
        size_t n_seats;
};

/* One entry of the fact's xid_events, as far as the judge needs it. */
typedef struct Event {
        uint64_t seq, last_seq, count, xid, time_usec, last_usec;
        const char *bus_id, *uuid, *boot_id;
} Event;

int health_gpu_new(const HealthXidPolicy *policy, const char *root, HealthGpu **ret) {
        HealthGpu *g = calloc(1, sizeof(*g));

        if (!g || !(g->root = strdup(root && !streq(root, "/") ? root : ""))) {
                free(g);
                return -ENOMEM;
        }
        g->policy = *policy;
        health_gpu_memory_policy_defaults(&g->memory);
        health_gpu_limits_none(&g->limits);
        *ret = g;
        return 0;
}

HealthGpu *health_gpu_free(HealthGpu *g) {
        if (g) {
                free(g->root);
                free(g);
        }
        return NULL;
}

void health_gpu_set_policy(HealthGpu *g, const HealthXidPolicy *policy) {
        g->policy = *policy;
}

void health_gpu_set_memory_policy(HealthGpu *g, const HealthGpuMemoryPolicy *policy) {
        g->memory = *policy;
}

void health_gpu_set_limits(HealthGpu *g, const HealthGpuLimits *limits) {
        g->limits = *limits;
}

/* ---- Reading the fact ------------------------------------------------------ */

static bool get_uint(json_object *o, const char *key, uint64_t max, uint64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_int) ||
            json_object_get_int64(v) < 0 || (uint64_t) json_object_get_int64(v) > max)
                return false;
        *ret = (uint64_t) json_object_get_int64(v);
        return true;
}

/* A string member shorter than @size, or NULL. */
static const char *get_str(json_object *o, const char *key, size_t size) {
        const char *s = json_member_string(o, key);

        return s && strlen(s) < size ? s : NULL;
}

static bool event_from(json_object *o, Event *e) {
        *e = (Event){ .bus_id = get_str(o, "bus_id", BUS_MAX),
                      .uuid = get_str(o, "uuid", UUID_MAX),
                      .boot_id = get_str(o, "boot_id", BOOT_ID_MAX) };
        if (!e->bus_id || !*e->bus_id || !get_uint(o, "seq", INT64_MAX, &e->seq) || e->seq == 0 ||
            !get_uint(o, "count", INT64_MAX, &e->count) || e->count == 0 ||
            !get_uint(o, "xid", UINT32_MAX, &e->xid) || !get_uint(o, "time_usec", INT64_MAX, &e->time_usec))
                return false;
        if (!get_uint(o, "last_usec", INT64_MAX, &e->last_usec) || e->last_usec < e->time_usec)
                e->last_usec = e->time_usec;
        if (!get_uint(o, "last_seq", INT64_MAX, &e->last_seq) || e->last_seq < e->seq)
                e->last_seq = e->seq;
        return true;
}

/* The fact's GPU at @bus: the one NVML reports a recovery action for, if any. */
static json_object *find_gpu(json_object *fact, const char *bus) {
        json_object *gpus = json_object_object_get(fact, "gpus"), *found = NULL;

        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i);

                if (!streq(json_member_string(o, "bus_id") ?: "", bus))
                        continue;
                if (json_object_object_get_ex(o, "recovery_action", NULL))
                        return o;
                found = found ?: o;
        }
        return found;
}

/* NVML's recovery action for the GPU @gpu, -1 when not reported. */
static int recovery_action(json_object *gpu) {
        uint64_t a;

        return get_uint(gpu, "recovery_action", 1000, &a) ? (int) a : -1;
}

/* The name a reason gives the GPU at @bus: its UUID (the whole GPU's, not a
 * MIG instance's) as the event or the fact names it. */
static const char *uuid_of(json_object *fact, const char *bus, const char *given) {
        json_object *gpus = json_object_object_get(fact, "gpus");
        const char *any = NULL;

        if (given && *given)
                return given;
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i);
                const char *u = get_str(o, "uuid", UUID_MAX);

                if (!u || !*u || !streq(json_member_string(o, "bus_id") ?: "", bus))
                        continue;
                if (strncmp(u, "GPU-", 4) == 0)
                        return u;
                any = any ?: u;
        }
        return any ?: "";
}

/* ---- The boot -------------------------------------------------------------- */

static void read_boot_id(const HealthGpu *g, char out[static BOOT_ID_MAX]) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        size_t len;

        out[0] = '\0';
        if (asprintf(&path, "%s/proc/sys/kernel/random/boot_id", g->root) < 0 ||
            fileio_read(path, 64, &text, &len) < 0)
                return;
        len = strcspn(text, "\n");
        if (len == 0 || len >= BOOT_ID_MAX)
                return;
        for (size_t i = 0; i < len; i++)
                if (text[i] <= ' ' || text[i] > '~')
                        return;
        memcpy(out, text, len);
        out[len] = '\0';
}

/* A reboot resets every GPU: nothing of the last boot is held any more. */
static void check_boot(HealthGpu *g) {
        char now[BOOT_ID_MAX];

        read_boot_id(g, now);
        if (!*now)
                return;
        if (*g->boot_id && !streq(now, g->boot_id)) {
                g->n_holds = g->n_hits = g->n_seats = 0;
                g->max_found = 0;
        }
        strcpy(g->boot_id, now);
}

/* ---- The GPUs there and gone ----------------------------------------------- */

static Seat *seat(HealthGpu *g, const char *bus, bool add) {
        for (size_t i = 0; i < g->n_seats; i++)
                if (streq(g->seats[i].bus_id, bus))
                        return &g->seats[i];
        if (!add || g->n_seats == SEATS_MAX || strlen(bus) >= BUS_MAX)
                return NULL;
        g->seats[g->n_seats] = (Seat){};
        strcpy(g->seats[g->n_seats].bus_id, bus);
        return &g->seats[g->n_seats++];
}

static bool in_list(json_object *list, const char *bus) {
        for (size_t i = 0; i < json_object_array_length(list); i++)
                if (streq(json_member_string(json_object_array_get_idx(list, i), "bus_id") ?: "", bus))
                        return true;
        return false;
}

/* The fact's GPUs as of its discovery (read_usec): one missing that was
 * there is gone from then; one there that was gone came back then. */
static void observe_gpus(HealthGpu *g, json_object *fact, uint64_t now_usec) {
        json_object *gpus = json_object_object_get(fact, "gpus"),
                    *missing = json_object_object_get(fact, "missing");
        uint64_t at = now_usec, found;

        if (get_uint(fact, "read_usec", INT64_MAX, &at) && at == 0)
                at = now_usec;
        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                const char *bus = get_str(json_object_array_get_idx(gpus, i), "bus_id", BUS_MAX);
                Seat *s = bus && *bus ? seat(g, bus, true) : NULL;

                if (s && s->gone_usec) {
                        s->gone_usec = 0;
                        s->back_usec = at;
                }
        }
        for (size_t i = 0; i < json_object_array_length(missing); i++) {
                const char *bus = get_str(json_object_array_get_idx(missing, i), "bus_id", BUS_MAX);
                if (bus && *bus)
                        (void) seat(g, bus, true);
        }
        for (size_t i = 0; i < g->n_seats; i++)
                if (!g->seats[i].gone_usec && !in_list(gpus, g->seats[i].bus_id))
                        g->seats[i].gone_usec = at;
        if (get_uint(fact, "found", INT64_MAX, &found))
                g->max_found = MAX(g->max_found, found);
}

/* ---- Events ---------------------------------------------------------------- */

static Seen *find_seen(HealthGpu *g, uint64_t seq) {
        for (size_t i = 0; i < g->n_seen; i++)
                if (g->seen[i].seq == seq)
                        return &g->seen[i];
        return NULL;
}

static void set_seen(HealthGpu *g, uint64_t seq, uint64_t counted) {
        Seen *s = find_seen(g, seq);

        if (!s) {
                if (g->n_seen == SEEN_MAX) {
                        /* the lowest goes, and with it everything below */
                        size_t low = 0;
                        for (size_t i = 1; i < g->n_seen; i++)
                                if (g->seen[i].seq < g->seen[low].seq)
                                        low = i;
                        g->floor = MAX(g->floor, g->seen[low].seq + 1);
                        g->seen[low] = g->seen[--g->n_seen];
                }
                s = &g->seen[g->n_seen++];
                s->seq = seq;
        }
        s->counted = counted;
}

static void add_hit(HealthGpu *g, const char *bus, uint32_t xid, uint64_t time_usec, uint64_t count) {
        for (size_t i = g->n_hits; i-- > 0;) {
                Hit *h = &g->hits[i];
                if (h->xid == xid && streq(h->bus_id, bus) &&
                    (time_usec > h->time_usec ? time_usec - h->time_usec : h->time_usec - time_usec) <
                            HIT_MERGE_USEC) {
                        h->count += count;
                        h->time_usec = MAX(h->time_usec, time_usec);
                        return;
                }
        }
        if (g->n_hits == HITS_MAX) /* the oldest goes */
                memmove(g->hits, g->hits + 1, --g->n_hits * sizeof(Hit));
        g->hits[g->n_hits] = (Hit){ .xid = xid, .time_usec = time_usec, .count = count };
        strcpy(g->hits[g->n_hits++].bus_id, bus);
}

/* Events of the pair within @window of now (0: this boot); one stamped
 * later than now (a clock set back) counts as within. */
static uint64_t hits_within(const HealthGpu *g, const char *bus, uint32_t xid, uint64_t window,
                            uint64_t now) {
        uint64_t n = 0;

        for (size_t i = 0; i < g->n_hits; i++) {
                const Hit *h = &g->hits[i];
                if (h->xid == xid && streq(h->bus_id, bus) && (window == 0 || h->time_usec + window >= now))
                        n += h->count;
        }
        return n;
}

static void hold(HealthGpu *g, const Event *e, const char *uuid) {
        Hold *h = NULL;

        for (size_t i = 0; i < g->n_holds && !h; i++)
                if (g->holds[i].xid == e->xid && streq(g->holds[i].bus_id, e->bus_id))
                        h = &g->holds[i];
        if (!h) {
                if (g->n_holds == HOLDS_MAX) /* the oldest goes */
                        memmove(g->holds, g->holds + 1, --g->n_holds * sizeof(Hold));
                h = &g->holds[g->n_holds++];
                *h = (Hold){ .xid = (uint32_t) e->xid };
                strcpy(h->bus_id, e->bus_id);
        }
        snprintf(h->uuid, sizeof(h->uuid), "%s", uuid);
        h->since_usec = MAX(h->since_usec, e->last_usec);
}

/* @n new events of entry @e, as the policy says. */
static void apply(HealthGpu *g, json_object *fact, const Event *e, uint64_t n, uint64_t now) {
        HealthXidRule r = health_xid_rule(&g->policy, e->xid);
        bool counted = r.count > 1 || r.action == HEALTH_XID_DRAIN;

        /* of an earlier boot: a reboot since has resolved it */
        if (e->boot_id && *e->boot_id && *g->boot_id && !streq(e->boot_id, g->boot_id))
                return;
        if (r.action == HEALTH_XID_IGNORE)
                return;
        if (counted)
                add_hit(g, e->bus_id, (uint32_t) e->xid, e->last_usec, n);
        if ((r.action == HEALTH_XID_RESET || r.action == HEALTH_XID_REBOOT) &&
            (!counted || hits_within(g, e->bus_id, (uint32_t) e->xid, r.window_usec, now) >= r.count))
                hold(g, e, uuid_of(fact, e->bus_id, e->uuid));
}

static void forget_events(HealthGpu *g) {
        g->n_seen = 0;
        g->floor = 0;
        g->last_seq = 0;
}

/* Each entry's events not judged yet.  Entries numbered below the lowest
 * the fact shows have left it: forgotten, and never judged again. */
static void take_events(HealthGpu *g, json_object *fact, uint64_t now) {
        json_object *list = json_object_object_get(fact, "xid_events");
        uint64_t low = UINT64_MAX, top;

        /* gres's numbers went back (its state was lost): start over with them */
        if (get_uint(fact, "xid_seq", INT64_MAX, &top) && top < g->last_seq)
                forget_events(g);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                Event e;
                Seen *s;
                uint64_t counted;

                if (!event_from(json_object_array_get_idx(list, i), &e))
                        continue;
                low = MIN(low, e.seq);
                if (e.seq < g->floor)
                        continue;
                s = find_seen(g, e.seq);
                counted = s ? s->counted : 0;
                if (e.count <= counted)
                        continue;
                apply(g, fact, &e, e.count - counted, now);
                set_seen(g, e.seq, e.count);
                g->last_seq = MAX(g->last_seq, e.last_seq);
        }
        if (low == UINT64_MAX)
                return;
        g->floor = MAX(g->floor, low);
        for (size_t i = 0; i < g->n_seen;)
                if (g->seen[i].seq < g->floor)
                        g->seen[i] = g->seen[--g->n_seen];
                else
                        i++;
}

/* Hits no rule counts any more. */
static void prune_hits(HealthGpu *g, uint64_t now) {
        for (size_t i = 0; i < g->n_hits;) {
                HealthXidRule r = health_xid_rule(&g->policy, g->hits[i].xid);
                bool keep = (r.count > 1 || r.action == HEALTH_XID_DRAIN) &&
                            (r.window_usec == 0 || g->hits[i].time_usec + r.window_usec >= now);

                if (keep)
                        i++;
                else
                        memmove(g->hits + i, g->hits + i + 1, (--g->n_hits - i) * sizeof(Hit));
        }
}

/* ---- Holds end ------------------------------------------------------------- */

/* Whether hold @h has ended: NVML decides where it reports a recovery action
 * (none, read after the event); else the GPU's coming back is a reset. */
static bool resolved(const HealthGpu *g, json_object *fact, const Hold *h, HealthXidAction action) {
        json_object *gpu = find_gpu(fact, h->bus_id);
        int a = gpu ? recovery_action(gpu) : -1;
        uint64_t read = 0;
        const Seat *s;

        if (a >= 0)
                return a == 0 && get_uint(fact, "read_usec", INT64_MAX, &read) && read > h->since_usec;
        if (action != HEALTH_XID_RESET)
                return false;
        s = seat((HealthGpu *) g, h->bus_id, false);
        return s && s->back_usec > h->since_usec;
}

static void resolve_holds(HealthGpu *g, json_object *fact) {
        for (size_t i = 0; i < g->n_holds;) {
                HealthXidAction a = health_xid_rule(&g->policy, g->holds[i].xid).action;

                if ((a == HEALTH_XID_RESET || a == HEALTH_XID_REBOOT) && !resolved(g, fact, &g->holds[i], a))
                        i++;
                else
                        memmove(g->holds + i, g->holds + i + 1, (--g->n_holds - i) * sizeof(Hold));
        }
}

/* ---- The verdict ----------------------------------------------------------- */

typedef struct Findings {
        const char *code; /* the first's */
        HealthRemedy remedy;
        char target[HEALTH_TARGET_MAX]; /* the first's GPU, its PCI bus id */
        char first[HEALTH_DETAIL_MAX];
        size_t n;
        /* limits the fact could not answer: the verdict when nothing fails */
        const char *unknown_code;
        char unknown[HEALTH_DETAIL_MAX];
        size_t n_unknown;
} Findings;

static void found(Findings *f, const char *code, HealthRemedy remedy, const char *bus, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
static void found(Findings *f, const char *code, HealthRemedy remedy, const char *bus, const char *fmt,
                  ...) {
        va_list ap;

        if (f->n++ > 0)
                return;
        f->code = code;
        f->remedy = remedy;
        (void) snprintf(f->target, sizeof(f->target), "%s", bus ?: "");
        va_start(ap, fmt);
        vsnprintf(f->first, sizeof(f->first), fmt, ap);
        va_end(ap);
}

/* "GPU-<uuid> (pci <bus>)", or "a GPU (pci <bus>)" when no UUID is known. */
static const char *gpu_name(char *buf, size_t size, const char *uuid, const char *bus) {
        snprintf(buf, size, "%s (pci %s)", uuid && *uuid ? uuid : "a GPU", bus);
        return buf;
}

static void find_holds(const HealthGpu *g, HealthXidAction action, Findings *f) {
        for (size_t i = 0; i < g->n_holds; i++) {
                char name[UUID_MAX + BUS_MAX + 16];

                if (health_xid_rule(&g->policy, g->holds[i].xid).action == action)
                        found(f, "gpu-xid",
                              action == HEALTH_XID_REBOOT ? HEALTH_REMEDY_REBOOT : HEALTH_REMEDY_RESET_GPU,
                              g->holds[i].bus_id, "XID %" PRIu32 " on %s", g->holds[i].xid,
                              gpu_name(name, sizeof(name), g->holds[i].uuid, g->holds[i].bus_id));
        }
}

static void find_drains(const HealthGpu *g, json_object *fact, uint64_t now, Findings *f) {
        for (size_t i = 0; i < g->n_hits; i++) {
                const Hit *h = &g->hits[i];
                HealthXidRule r = health_xid_rule(&g->policy, h->xid);
                char name[UUID_MAX + BUS_MAX + 16];
                bool first = true;
                uint64_t n;

                for (size_t k = 0; k < i && first; k++)
                        first = !(g->hits[k].xid == h->xid && streq(g->hits[k].bus_id, h->bus_id));
                if (r.action != HEALTH_XID_DRAIN || !first ||
                    (n = hits_within(g, h->bus_id, h->xid, r.window_usec, now)) < r.count)
                        continue;
                found(f, "gpu-xid", HEALTH_REMEDY_CONTACT_SUPPORT, h->bus_id,
                      "XID %" PRIu32 " on %s, %" PRIu64 " times within %" PRIu64 "s", h->xid,
                      gpu_name(name, sizeof(name), uuid_of(fact, h->bus_id, NULL), h->bus_id), n,
                      r.window_usec / USEC_PER_SEC);
        }
}

/* nvml.h's nvmlDeviceGpuRecoveryAction_t, as a reason says it. */
static const char *recovery_words(int a) {
        static const char *const words[] = {
                [1] = "a GPU reset",
                [2] = "a node reboot",
                [3] = "peer-to-peer traffic drained",
                [4] = "peer-to-peer traffic drained and a GPU reset",
        };

        return a > 0 && (size_t) a < ELEMENTSOF(words) ? words[a] : "recovery";
}

/* What NVML's recovery action recommends: 1 and 4 a GPU reset, 2 a reboot;
 * 3 (drain peer-to-peer traffic) and any later one a person. */
static HealthRemedy recovery_remedy(int a) {
        return a == 1 || a == 4 ? HEALTH_REMEDY_RESET_GPU
               : a == 2         ? HEALTH_REMEDY_REBOOT
                                : HEALTH_REMEDY_CONTACT_SUPPORT;
}

static void find_recovery(json_object *fact, Findings *f) {
        json_object *gpus = json_object_object_get(fact, "gpus");

        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i);
                const char *bus = get_str(o, "bus_id", BUS_MAX) ?: "?";
                char name[UUID_MAX + BUS_MAX + 16];
                int a = recovery_action(o);

                if (a > 0 && find_gpu(fact, bus) == o) /* a MIG instance's is its GPU's */
                        found(f, "gpu-recovery", recovery_remedy(a), bus,
                              "%s needs %s (NVML recovery action %d)",
                              gpu_name(name, sizeof(name), uuid_of(fact, bus, NULL), bus), recovery_words(a),
                              a);
        }
}

/* A failed row remap and lifetime counts over a site's threshold want the
 * card replaced; what this driver load saw, a GPU reset. */
static HealthRemedy memory_remedy(HealthGpuMemoryCounter c) {
        return c == HEALTH_GPU_MEMORY_REMAP_FAILURE || c == HEALTH_GPU_MEMORY_ECC_AGGREGATE ||
                               c == HEALTH_GPU_MEMORY_REMAPPED_UNCORRECTABLE
                       ? HEALTH_REMEDY_REPLACE
                       : HEALTH_REMEDY_RESET_GPU;
}

/* Whether gpus[@i] is the first of @bus: a MIG instance carries its GPU's
 * figures, which are weighed once. */
static bool first_of_bus(json_object *gpus, size_t i, const char *bus) {
        for (size_t k = 0; k < i; k++)
                if (streq(json_member_string(json_object_array_get_idx(gpus, k), "bus_id") ?: "", bus))
                        return false;
        return true;
}

/* Each GPU's memory counters against the memory policy; a MIG instance
 * carries its GPU's, so each bus id is weighed once. */
static void find_memory(const HealthGpu *g, json_object *fact, Findings *f) {
        json_object *gpus = json_object_object_get(fact, "gpus");

        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i),
                            *h = json_object_object_get(o, "health");
                const char *bus = get_str(o, "bus_id", BUS_MAX) ?: "?";
                char name[UUID_MAX + BUS_MAX + 16];

                if (!first_of_bus(gpus, i, bus) || !json_object_is_type(h, json_type_object))
                        continue;
                for (int c = 0; c < _HEALTH_GPU_MEMORY_COUNTER_MAX; c++) {
                        const HealthGpuMemoryRule *r = &g->memory.rules[c];
                        uint64_t v;

                        if (r->action == HEALTH_GPU_MEMORY_DRAIN &&
                            get_uint(h, health_gpu_memory_counter_key(c), INT64_MAX, &v) &&
                            v >= r->threshold)
                                found(f, "gpu-memory", memory_remedy(c), bus, "%s: %s (%s %" PRIu64 ")",
                                      gpu_name(name, sizeof(name), uuid_of(fact, bus, NULL), bus),
                                      health_gpu_memory_counter_words(c), health_gpu_memory_counter_key(c),
                                      v);
                }
        }
}

/* ---- The check's limits ---------------------------------------------------- */

static void not_known(Findings *f, const char *code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void not_known(Findings *f, const char *code, const char *fmt, ...) {
        va_list ap;

        if (f->n_unknown++ > 0)
                return;
        f->unknown_code = code;
        va_start(ap, fmt);
        vsnprintf(f->unknown, sizeof(f->unknown), fmt, ap);
        va_end(ap);
}

/* What a telemetry field says: 1 with *ret set, 0 not reported, -1 not a
 * count (not an integer, negative, or over @max). */
static int field(json_object *o, const char *key, uint64_t max, uint64_t *ret) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return 0;
        return get_uint(o, key, max, ret) ? 1 : -1;
}

/* The field a limit needs: 1 with it; else the unknown noted and 0. */
static int need(Findings *f, json_object *t, const char *key, uint64_t max, const char *name,
                const char *limit, uint64_t *ret) {
        int r = t ? field(t, key, max, ret) : 0;

        if (r == 0)
                not_known(f, "gpu-input-missing", "%s: the driver does not report %s (%s)", name, key,
                          limit);
        else if (r < 0)
                not_known(f, "gpu-input-bad", "%s: %s is not a count (%s)", name, key, limit);
        return r > 0;
}

static void find_nvlinks(const HealthGpuLimits *l, json_object *t, const char *bus, const char *name,
                         Findings *f) {
        json_object *links = t ? json_object_object_get(t, "links") : NULL;
        bool counted = false;
        size_t n = 0, down = 0;
        uint64_t first_down = 0;

        for (int c = 0; c < _HEALTH_GPU_NVLINK_COUNTER_MAX; c++)
                counted = counted || l->max_nvlink_errors[c] >= 0;
        if (!l->nvlink_up && !counted)
                return;
        if (!links) /* no NVLink on this GPU, or /proc discovery: nothing to judge */
                return;
        if (!json_object_is_type(links, json_type_array)) {
                not_known(f, "gpu-input-bad", "%s: its NVLinks are not a list", name);
                return;
        }
        n = json_object_array_length(links);
        /* a link down first: its errors are what took it down */
        for (size_t i = 0; l->nvlink_up && i < n; i++) {
                json_object *k = json_object_array_get_idx(links, i), *up = NULL;
                uint64_t link = i;

                (void) get_uint(k, "link", 63, &link);
                if (!json_object_object_get_ex(k, "up", &up))
                        not_known(f, "gpu-input-missing",
                                  "%s: the driver does not report NVLink %" PRIu64 "'s state (nvlink_up)",
                                  name, link);
                else if (!json_object_is_type(up, json_type_boolean))
                        not_known(f, "gpu-input-bad", "%s: NVLink %" PRIu64 "'s state is not true or false",
                                  name, link);
                else if (!json_object_get_boolean(up) && down++ == 0)
                        first_down = link;
        }
        if (down > 0)
                found(f, "gpu-nvlink-down", HEALTH_REMEDY_REBOOT, bus,
                      "%s: NVLink %" PRIu64 " down (%zu of %zu links down)", name, first_down, down, n);
        for (size_t i = 0; counted && i < n; i++) {
                json_object *k = json_object_array_get_idx(links, i);
                uint64_t link = i, v;

                (void) get_uint(k, "link", 63, &link);
                for (int c = 0; c < _HEALTH_GPU_NVLINK_COUNTER_MAX; c++) {
                        int r;

                        if (l->max_nvlink_errors[c] < 0)
                                continue;
                        r = field(k, health_gpu_nvlink_counter_key(c), INT64_MAX, &v);
                        if (r == 0)
                                not_known(f, "gpu-input-missing",
                                          "%s: the driver does not report NVLink %" PRIu64 "'s %s", name,
                                          link, health_gpu_nvlink_counter_key(c));
                        else if (r < 0)
                                not_known(f, "gpu-input-bad", "%s: NVLink %" PRIu64 "'s %s is not a count",
                                          name, link, health_gpu_nvlink_counter_key(c));
                        else if (v > (uint64_t) l->max_nvlink_errors[c])
                                found(f, "gpu-nvlink-errors", HEALTH_REMEDY_CONTACT_SUPPORT, bus,
                                      "%s: NVLink %" PRIu64 " %s %" PRIu64 ", max %" PRIi64, name, link,
                                      health_gpu_nvlink_counter_key(c), v, l->max_nvlink_errors[c]);
                }
        }
}

/* The clocks-event reasons of @bits that fail, by name, in @buf. */
static const char *clocks_names(uint64_t bits, char *buf, size_t size) {
        size_t w = 0;

        buf[0] = '\0';
        for (uint64_t b = 1; b && w < size; b <<= 1)
                if ((bits & b) && health_gpu_clocks_event_name(b))
                        w += (size_t) snprintf(buf + w, size - w, "%s%s", w ? ", " : "",
                                               health_gpu_clocks_event_name(b));
        return buf;
}

static void find_thermal(const HealthGpuLimits *l, json_object *t, const char *bus, const char *name,
                         Findings *f) {
        uint64_t v, slow, stop;
        char limits[64] = "", names[128];

        if (l->max_temperature >= 0 && need(f, t, "temperature", 1000, name, "max_temperature", &v) &&
            v > (uint64_t) l->max_temperature) {
                bool has_slow = field(t, "temperature_slowdown", 1000, &slow) > 0,
                     has_stop = field(t, "temperature_shutdown", 1000, &stop) > 0;

                if (has_slow && has_stop)
                        snprintf(limits, sizeof(limits),
                                 " (slowdown at %" PRIu64 " C, shutdown at %" PRIu64 " C)", slow, stop);
                else if (has_slow)
                        snprintf(limits, sizeof(limits), " (slowdown at %" PRIu64 " C)", slow);
                else if (has_stop)
                        snprintf(limits, sizeof(limits), " (shutdown at %" PRIu64 " C)", stop);
                found(f, "gpu-temperature", HEALTH_REMEDY_CONTACT_SUPPORT, bus,
                      "%s: %" PRIu64 " C, max %" PRIi64 "%s", name, v, l->max_temperature, limits);
        }
        if (l->fail_clocks_events &&
            need(f, t, "clocks_event_reasons", UINT32_MAX, name, "fail_clocks_events", &v) &&
            (v & l->fail_clocks_events))
                found(f, "gpu-clocks",
                      health_gpu_clocks_event_hardware(v & l->fail_clocks_events)
                              ? HEALTH_REMEDY_CONTACT_SUPPORT
                              : HEALTH_REMEDY_NONE,
                      bus, "%s: clocks held down by %s", name,
                      clocks_names(v & l->fail_clocks_events, names, sizeof(names)));
}

static void find_settings(const HealthGpuLimits *l, json_object *t, const char *bus, const char *name,
                          Findings *f) {
        uint64_t v;

        if (l->min_power_limit >= 0 &&
            need(f, t, "power_limit_mw", INT64_MAX, name, "min_power_limit", &v) &&
            v < (uint64_t) l->min_power_limit * 1000)
                found(f, "gpu-power-limit", HEALTH_REMEDY_NONE, bus,
                      "%s: power limit %" PRIu64 " W, min %" PRIi64 " W", name, v / 1000,
                      l->min_power_limit);
        if (l->persistence_mode && need(f, t, "persistence_mode", 1, name, "persistence_mode", &v) && v == 0)
                found(f, "gpu-persistence", HEALTH_REMEDY_NONE, bus, "%s: persistence mode is off", name);
}

/* Each GPU's telemetry against the check's limits, a bus id once (a MIG
 * instance carries its GPU's). */
static void find_limits(const HealthGpu *g, json_object *fact, Findings *f) {
        json_object *gpus = json_object_object_get(fact, "gpus");

        for (size_t i = 0; i < json_object_array_length(gpus); i++) {
                json_object *o = json_object_array_get_idx(gpus, i),
                            *t = json_object_object_get(o, "telemetry");
                const char *bus = get_str(o, "bus_id", BUS_MAX) ?: "?";
                char name[UUID_MAX + BUS_MAX + 16];

                if (!first_of_bus(gpus, i, bus))
                        continue;
                gpu_name(name, sizeof(name), uuid_of(fact, bus, NULL), bus);
                if (t && !json_object_is_type(t, json_type_object)) {
                        not_known(f, "gpu-input-bad", "%s: its telemetry is not an object", name);
                        continue;
                }
                find_nvlinks(&g->limits, t, bus, name, f);
                find_thermal(&g->limits, t, bus, name, f);
                find_settings(&g->limits, t, bus, name, f);
        }
}

static void find_count(const HealthGpu *g, json_object *fact, Findings *f) {
        json_object *missing = json_object_object_get(fact, "missing");
        uint64_t n = 0, expected = 0;

        (void) get_uint(fact, "found", INT64_MAX, &n);
        (void) get_uint(fact, "expected", INT64_MAX, &expected);
        expected = MAX(expected, g->max_found);
        if (n >= expected)
                return;
        if (json_object_array_length(missing) > 0) {
                json_object *m = json_object_array_get_idx(missing, 0);
                char name[UUID_MAX + BUS_MAX + 16];

                found(f, "gpu-count", HEALTH_REMEDY_REBOOT, NULL,
                      "%" PRIu64 " of %" PRIu64 " GPUs found; %s is missing", n, expected,
                      gpu_name(name, sizeof(name), get_str(m, "uuid", UUID_MAX),
                               get_str(m, "bus_id", BUS_MAX) ?: "?"));
        } else
                found(f, "gpu-count", HEALTH_REMEDY_REBOOT, NULL, "%" PRIu64 " of %" PRIu64 " GPUs found", n,
                      expected);
}

/* The detail: one printable line, at most HEALTH_DETAIL_MAX - 1 bytes. */
static void result(HealthResult *ret, HealthStatus status, const char *code, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void result(HealthResult *ret, HealthStatus status, const char *code, const char *fmt, ...) {
        va_list ap;

        ret->status = status;
        ret->remedy = HEALTH_REMEDY_NONE;
        ret->target[0] = '\0';
        snprintf(ret->code, sizeof(ret->code), "%s", code);
        va_start(ap, fmt);
        vsnprintf(ret->detail, sizeof(ret->detail), fmt, ap);
        va_end(ap);
        for (char *p = ret->detail; *p; p++)
                if (*p < ' ' || *p > '~')
                        *p = '?';
}

static void verdict(const HealthGpu *g, json_object *fact, uint64_t now, HealthResult *ret) {
        Findings f = {};
        uint64_t n = 0;

        find_holds(g, HEALTH_XID_REBOOT, &f);
        find_holds(g, HEALTH_XID_RESET, &f);
        find_drains(g, fact, now, &f);
        find_recovery(fact, &f);
        find_memory(g, fact, &f);
        find_limits(g, fact, &f);
        find_count(g, fact, &f);
        if (f.n == 0 && f.n_unknown > 0)
                result(ret, HEALTH_UNKNOWN, f.unknown_code, "%s", f.unknown);
        else if (f.n == 0) {
                (void) get_uint(fact, "found", INT64_MAX, &n);
                result(ret, HEALTH_PASS, "gpu-ok", "%" PRIu64 " GPU(s), no fault held", n);
        } else if (f.n == 1)
                result(ret, HEALTH_FAIL, f.code, "%s", f.first);
        else
                result(ret, HEALTH_FAIL, f.code, "%s; and %zu more", f.first, f.n - 1);
        if (f.n > 0) {
                ret->remedy = f.remedy;
                memcpy(ret->target, f.target, sizeof(ret->target));
        }
}

int health_gpu_judge(HealthGpu *g, json_object *fact, uint64_t now_usec, HealthResult *ret) {
        if (!fact || !json_object_is_type(fact, json_type_object) ||
            !json_object_is_type(json_object_object_get(fact, "gpus"), json_type_array)) {
                result(ret, HEALTH_UNKNOWN, "gpu-unknown", "%s",
                       fact ? "the fact gres.gpus is not one gres publishes"
                            : "no fact gres.gpus: the gres module has not found the GPUs yet, or does not "
                              "run");
                return ret->status;
        }
        check_boot(g);
        observe_gpus(g, fact, now_usec);
        take_events(g, fact, now_usec);
        prune_hits(g, now_usec);
        resolve_holds(g, fact);
        verdict(g, fact, now_usec, ret);
        return ret->status;
}

/* ---- State ----------------------------------------------------------------- */

static void add_u(json_object *o, const char *key, uint64_t v) {
        json_object_object_add(o, key, json_object_new_int64((int64_t) MIN(v, (uint64_t) INT64_MAX)));
}

static json_object *seen_json(const HealthGpu *g) {
        json_object *l = json_object_new_array();

        for (size_t i = 0; l && i < g->n_seen; i++) {
                json_object *p = json_object_new_array();
                if (!p || json_object_array_add(l, p) < 0) {
                        json_object_put(p);
                        json_object_put(l);
                        return NULL;
                }
                json_object_array_add(p, json_object_new_int64((int64_t) g->seen[i].seq));
                json_object_array_add(p, json_object_new_int64((int64_t) g->seen[i].counted));
        }
        return l;
}

static json_object *holds_json(const HealthGpu *g) {
        json_object *l = json_object_new_array();

        for (size_t i = 0; l && i < g->n_holds; i++) {
                json_object *o = json_object_new_object();
                if (!o || json_object_array_add(l, o) < 0) {
                        json_object_put(o);
                        json_object_put(l);
                        return NULL;
                }
                json_object_object_add(o, "bus_id", json_object_new_string(g->holds[i].bus_id));
                json_object_object_add(o, "uuid", json_object_new_string(g->holds[i].uuid));
                add_u(o, "xid", g->holds[i].xid);
                add_u(o, "since_usec", g->holds[i].since_usec);
        }
        return l;
}

static json_object *hits_json(const HealthGpu *g) {
        json_object *l = json_object_new_array();

        for (size_t i = 0; l && i < g->n_hits; i++) {
                json_object *o = json_object_new_object();
                if (!o || json_object_array_add(l, o) < 0) {
                        json_object_put(o);
                        json_object_put(l);
                        return NULL;
                }
                json_object_object_add(o, "bus_id", json_object_new_string(g->hits[i].bus_id));
                add_u(o, "xid", g->hits[i].xid);
                add_u(o, "time_usec", g->hits[i].time_usec);
                add_u(o, "count", g->hits[i].count);
        }
        return l;
}

static json_object *seats_json(const HealthGpu *g) {
        json_object *l = json_object_new_array();

        for (size_t i = 0; l && i < g->n_seats; i++) {
                json_object *o = json_object_new_object();
                if (!o || json_object_array_add(l, o) < 0) {
                        json_object_put(o);
                        json_object_put(l);
                        return NULL;
                }
                json_object_object_add(o, "bus_id", json_object_new_string(g->seats[i].bus_id));
                add_u(o, "gone_usec", g->seats[i].gone_usec);
                add_u(o, "back_usec", g->seats[i].back_usec);
        }
        return l;
}

json_object *health_gpu_state_to_json(const HealthGpu *g) {
        json_object *o = json_object_new_object(),
                    *parts[4] = { seen_json(g), holds_json(g), hits_json(g), seats_json(g) };
        static const char *const names[4] = { "seen", "holds", "hits", "gpus" };
        bool ok = o;

        for (size_t i = 0; i < 4; i++)
                ok = ok && parts[i];
        if (!ok) {
                json_object_put(o);
                for (size_t i = 0; i < 4; i++)
                        json_object_put(parts[i]);
                return NULL;
        }
        json_object_object_add(o, "boot_id", json_object_new_string(g->boot_id));
        add_u(o, "floor", g->floor);
        add_u(o, "last_seq", g->last_seq);
        add_u(o, "max_found", g->max_found);
        for (size_t i = 0; i < 4; i++)
                json_object_object_add(o, names[i], parts[i]);
        return o;
}

/* A bus id or UUID as gres writes them: printable, no spaces, bounded. */
static bool word(json_object *o, const char *key, size_t size, bool empty_ok, char *out) {
        const char *s = get_str(o, key, size);

        if (!s || (!*s && !empty_ok))
                return false;
        for (const char *p = s; *p; p++)
                if (*p <= ' ' || *p > '~')
                        return false;
        strcpy(out, s);
        return true;
}

/* A list of at most @max elements, each taken by @take into @ret. */
static bool take_list(json_object *o, const char *key, size_t max, bool (*take)(json_object *e, void *slot),
                      void *base, size_t size, size_t *ret_n) {
        json_object *l = json_object_object_get(o, key);

        if (!json_object_is_type(l, json_type_array) || json_object_array_length(l) > max)
                return false;
        for (size_t i = 0; i < json_object_array_length(l); i++)
                if (!take(json_object_array_get_idx(l, i), (char *) base + i * size))
                        return false;
        *ret_n = json_object_array_length(l);
        return true;
}

static bool take_seen(json_object *e, void *slot) {
        Seen *s = slot;
        json_object *a = json_object_array_get_idx(e, 0), *b = json_object_array_get_idx(e, 1);

        if (!json_object_is_type(e, json_type_array) || json_object_array_length(e) != 2 ||
            !json_object_is_type(a, json_type_int) || !json_object_is_type(b, json_type_int) ||
            json_object_get_int64(a) <= 0 || json_object_get_int64(b) < 0)
                return false;
        *s = (Seen){ (uint64_t) json_object_get_int64(a), (uint64_t) json_object_get_int64(b) };
        return true;
}

static bool take_hold(json_object *e, void *slot) {
        Hold *h = slot;
        uint64_t xid;

        *h = (Hold){};
        if (!word(e, "bus_id", BUS_MAX, false, h->bus_id) || !word(e, "uuid", UUID_MAX, true, h->uuid) ||
            !get_uint(e, "xid", UINT32_MAX, &xid) || !get_uint(e, "since_usec", INT64_MAX, &h->since_usec))
                return false;
        h->xid = (uint32_t) xid;
        return true;
}

static bool take_hit(json_object *e, void *slot) {
        Hit *h = slot;
        uint64_t xid;

        *h = (Hit){};
        if (!word(e, "bus_id", BUS_MAX, false, h->bus_id) || !get_uint(e, "xid", UINT32_MAX, &xid) ||
            !get_uint(e, "time_usec", INT64_MAX, &h->time_usec) ||
            !get_uint(e, "count", INT64_MAX, &h->count) || h->count == 0)
                return false;
        h->xid = (uint32_t) xid;
        return true;
}

static bool take_seat(json_object *e, void *slot) {
        Seat *s = slot;

        *s = (Seat){};
        return word(e, "bus_id", BUS_MAX, false, s->bus_id) &&
               get_uint(e, "gone_usec", INT64_MAX, &s->gone_usec) &&
               get_uint(e, "back_usec", INT64_MAX, &s->back_usec);
}

int health_gpu_state_from_json(HealthGpu *g, json_object *o) {
        _cleanup_free_ HealthGpu *n = malloc(sizeof(*n));

        if (!n)
                return -ENOMEM;
        *n = *g;
        n->n_seen = n->n_holds = n->n_hits = n->n_seats = 0;
        if (!json_object_is_type(o, json_type_object) ||
            !word(o, "boot_id", BOOT_ID_MAX, true, n->boot_id) ||
            !get_uint(o, "floor", INT64_MAX, &n->floor) ||
            !get_uint(o, "last_seq", INT64_MAX, &n->last_seq) ||
            !get_uint(o, "max_found", 4096, &n->max_found) ||
            !take_list(o, "seen", SEEN_MAX, take_seen, n->seen, sizeof(Seen), &n->n_seen) ||
            !take_list(o, "holds", HOLDS_MAX, take_hold, n->holds, sizeof(Hold), &n->n_holds) ||
            !take_list(o, "hits", HITS_MAX, take_hit, n->hits, sizeof(Hit), &n->n_hits) ||
            !take_list(o, "gpus", SEATS_MAX, take_seat, n->seats, sizeof(Seat), &n->n_seats))
                return -EBADMSG;
        for (size_t i = 0; i < n->n_seen; i++)
                if (n->seen[i].seq < n->floor)
                        return -EBADMSG;
        *g = *n;
        return 0;
}
