#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gres-proc.h"
#include "gres-xid.h"
#include "util/json-util.h"
#include "util/macro.h"

/* From NVIDIA's XID catalogue, in its words where they are short. */
const char *gres_xid_describe(uint64_t xid) {
        static const struct {
                unsigned xid;
                const char *what;
        } names[] = {
                { 13, "graphics engine exception" },
                { 31, "GPU memory page fault" },
                { 32, "invalid or corrupted push buffer stream" },
                { 38, "driver firmware error" },
                { 43, "GPU stopped processing" },
                { 45, "preemptive cleanup, due to previous errors" },
                { 48, "double-bit ECC error" },
                { 61, "internal micro-controller breakpoint/warning" },
                { 62, "internal micro-controller halt" },
                { 63, "ECC page retirement or row remapping recording event" },
                { 64, "ECC page retirement or row remapper recording failure" },
                { 68, "video processor exception" },
                { 69, "graphics engine class error" },
                { 74, "NVLink error" },
                { 79, "GPU has fallen off the bus" },
                { 92, "high single-bit ECC error rate" },
                { 94, "contained ECC error" },
                { 95, "uncontained ECC error" },
                { 109, "context switch timeout" },
                { 119, "GSP RPC timeout" },
                { 120, "GSP error" },
                { 121, "C2C link error" },
                { 140, "unrecovered ECC error" },
                { 999, "an error the driver does not know" },
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (names[i].xid == xid)
                        return names[i].what;
        return NULL;
}

const char *gres_xid_source_to_string(GresXidSource s) {
        return s == GRES_XID_KMSG ? "kmsg" : "nvml";
}

void gres_xid_log_init(GresXidLog *l) {
        l->start = l->n = 0;
        l->total = 0;
        l->next_seq = 1;
}

GresXidEvent *gres_xid_log_at(GresXidLog *l, size_t i) {
        return &l->ev[(l->start + i) % GRES_XID_LOG_MAX];
}

const GresXidEvent *gres_xid_log_get(const GresXidLog *l, size_t i) {
        return &l->ev[(l->start + i) % GRES_XID_LOG_MAX];
}

static uint64_t distance(uint64_t a, uint64_t b) {
        return a > b ? a - b : b - a;
}

/* The newest entry of @e's GPU and XID, if @e may join it: of the same boot,
 * and starting within the storm window (or, stamped a little earlier, within
 * the matching window: two sources' clocks differ by a few milliseconds). */
static GresXidEvent *storm_entry(GresXidLog *l, const GresXidEvent *e) {
        for (size_t i = l->n; i-- > 0;) {
                GresXidEvent *o = gres_xid_log_at(l, i);

                if (o->xid != e->xid || strcmp(o->bus_id, e->bus_id) != 0)
                        continue;
                if (strcmp(o->boot_id, e->boot_id) != 0)
                        return NULL;
                if (e->time_usec >= o->time_usec ? e->time_usec - o->time_usec < GRES_XID_STORM_USEC
                                                 : o->time_usec - e->time_usec <= GRES_XID_MATCH_USEC)
                        return o;
                return NULL;
        }
        return NULL;
}

static void append(GresXidLog *l, const GresXidEvent *e) {
        if (l->n == GRES_XID_LOG_MAX) {
                l->ev[l->start] = *e;
                l->start = (l->start + 1) % GRES_XID_LOG_MAX;
        } else
                l->ev[(l->start + l->n++) % GRES_XID_LOG_MAX] = *e;
}

GresXidAdded gres_xid_log_add(GresXidLog *l, const GresXidEvent *e, uint64_t count, GresXidSource source,
                              GresXidEvent **ret_entry) {
        GresXidSource other = source == GRES_XID_KMSG ? GRES_XID_NVML : GRES_XID_KMSG;
        GresXidEvent *o = storm_entry(l, e), n;
        uint64_t last = MAX(e->last_usec, e->time_usec);

        if (count == 0)
                count = 1;
        if (o) {
                /* what the other source reported of it already is the same event */
                if (o->unmatched[other] > 0 && distance(e->time_usec, o->last_usec) <= GRES_XID_MATCH_USEC) {
                        uint64_t same = MIN(count, o->unmatched[other]);

                        o->unmatched[other] -= same;
                        count -= same;
                        if (source == GRES_XID_KMSG)
                                o->source = GRES_XID_KMSG;
                        if (!*o->uuid)
                                strcpy(o->uuid, e->uuid);
                        if (o->gpu_instance == GRES_XID_NONE) {
                                o->gpu_instance = e->gpu_instance;
                                o->compute_instance = e->compute_instance;
                        }
                }
                *ret_entry = o;
                if (count == 0)
                        return GRES_XID_ADDED_MATCHED;
                o->count += count;
                o->unmatched[source] += count;
                o->last_seq = l->next_seq + count - 1;
                o->last_usec = MAX(o->last_usec, last);
                if (!*o->uuid)
                        strcpy(o->uuid, e->uuid);
                l->next_seq += count;
                l->total += count;
                return GRES_XID_ADDED_FOLDED;
        }
        n = *e;
        n.last_usec = last;
        n.seq = l->next_seq;
        n.last_seq = l->next_seq + count - 1;
        n.count = count;
        n.source = source;
        memset(n.unmatched, 0, sizeof(n.unmatched));
        n.unmatched[source] = count;
        n.reported = 0;
        l->next_seq += count;
        l->total += count;
        append(l, &n);
        *ret_entry = gres_xid_log_at(l, l->n - 1);
        return GRES_XID_ADDED_NEW;
}

static void add_uint(json_object *o, const char *key, uint64_t v) {
        json_object_object_add(o, key, json_object_new_int64((int64_t) v));
}

json_object *gres_xid_event_to_json(const GresXidEvent *e, unsigned flags) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        add_uint(o, "seq", e->seq);
        add_uint(o, "last_seq", e->last_seq);
        add_uint(o, "count", e->count);
        add_uint(o, "xid", e->xid);
        if ((flags & GRES_XID_JSON_WHAT) && gres_xid_describe(e->xid))
                json_object_object_add(o, "what", json_object_new_string(gres_xid_describe(e->xid)));
        json_object_object_add(o, "bus_id", json_object_new_string(e->bus_id));
        if (*e->uuid)
                json_object_object_add(o, "uuid", json_object_new_string(e->uuid));
        if (e->gpu_instance != GRES_XID_NONE)
                add_uint(o, "gpu_instance", e->gpu_instance);
        if (e->compute_instance != GRES_XID_NONE)
                add_uint(o, "compute_instance", e->compute_instance);
        add_uint(o, "time_usec", e->time_usec);
        add_uint(o, "last_usec", e->last_usec);
        json_object_object_add(o, "source", json_object_new_string(gres_xid_source_to_string(e->source)));
        if (*e->boot_id)
                json_object_object_add(o, "boot_id", json_object_new_string(e->boot_id));
        if (flags & GRES_XID_JSON_KEEP) {
                add_uint(o, "unmatched_nvml", e->unmatched[GRES_XID_NVML]);
                add_uint(o, "unmatched_kmsg", e->unmatched[GRES_XID_KMSG]);
        }
        return o;
}

static int get_uint(json_object *o, const char *key, uint64_t max, bool optional, uint64_t *ret) {
        json_object *v;
        int64_t i;

        if (!json_object_object_get_ex(o, key, &v))
                return optional ? 0 : -EBADMSG;
        if (!json_object_is_type(v, json_type_int))
                return -EBADMSG;
        i = json_object_get_int64(v);
        if (i < 0 || (uint64_t) i > max)
                return -EBADMSG;
        *ret = (uint64_t) i;
        return 1;
}

/* A printable ASCII word without spaces, shorter than @size. */
static int get_string(json_object *o, const char *key, bool optional, char *buf, size_t size) {
        json_object *v;
        const char *s;

        if (!json_object_object_get_ex(o, key, &v))
                return optional ? 0 : -EBADMSG;
        if (!json_object_is_type(v, json_type_string))
                return -EBADMSG;
        s = json_object_get_string(v);
        if (!*s || (size_t) json_object_get_string_len(v) >= size ||
            strlen(s) != (size_t) json_object_get_string_len(v))
                return -EBADMSG;
        for (const char *p = s; *p; p++)
                if (*p <= ' ' || *p >= 0x7f)
                        return -EBADMSG;
        strcpy(buf, s);
        return 1;
}

static int get_source(json_object *o, GresXidSource *ret) {
        const char *s = json_member_string(o, "source");

        if (!json_object_object_get_ex(o, "source", NULL)) {
                *ret = GRES_XID_NVML; /* an older file: NVML was the only source */
                return 0;
        }
        if (!s || (!streq(s, "nvml") && !streq(s, "kmsg")))
                return -EBADMSG;
        *ret = streq(s, "kmsg") ? GRES_XID_KMSG : GRES_XID_NVML;
        return 0;
}

static int get_numbers(json_object *o, GresXidEvent *x) {
        uint64_t gi = GRES_XID_NONE, ci = GRES_XID_NONE;

        x->count = 1;
        if (get_uint(o, "xid", UINT32_MAX, false, &x->xid) < 0 ||
            get_uint(o, "gpu_instance", GRES_XID_NONE - 1, true, &gi) < 0 ||
            get_uint(o, "compute_instance", GRES_XID_NONE - 1, true, &ci) < 0 ||
            get_uint(o, "time_usec", INT64_MAX, false, &x->time_usec) < 0 ||
            get_uint(o, "count", INT64_MAX, true, &x->count) < 0 || x->count == 0 ||
            get_uint(o, "seq", INT64_MAX, true, &x->seq) < 0 ||
            get_uint(o, "unmatched_nvml", x->count, true, &x->unmatched[GRES_XID_NVML]) < 0 ||
            get_uint(o, "unmatched_kmsg", x->count, true, &x->unmatched[GRES_XID_KMSG]) < 0)
                return -EBADMSG;
        x->last_usec = x->time_usec;
        if (get_uint(o, "last_usec", INT64_MAX, true, &x->last_usec) < 0 || x->last_usec < x->time_usec)
                return -EBADMSG;
        /* numbered: the count must fit between the first number and the last */
        x->last_seq = x->seq ? x->seq + x->count - 1 : 0;
        if (get_uint(o, "last_seq", INT64_MAX, true, &x->last_seq) < 0 ||
            (x->seq == 0) != (x->last_seq == 0) || x->last_seq < x->seq ||
            (x->seq && x->last_seq - x->seq < x->count - 1))
                return -EBADMSG;
        x->gpu_instance = (uint32_t) gi;
        x->compute_instance = (uint32_t) ci;
        return 0;
}

int gres_xid_event_from_json(json_object *o, GresXidEvent *e) {
        GresXidEvent x = {};
        char norm[16];

        if (!json_object_is_type(o, json_type_object) ||
            get_string(o, "bus_id", false, x.bus_id, sizeof(x.bus_id)) < 0 ||
            gres_bus_id_normalise(x.bus_id, norm) < 0 || strcmp(norm, x.bus_id) != 0 ||
            get_string(o, "uuid", true, x.uuid, sizeof(x.uuid)) < 0 ||
            get_string(o, "boot_id", true, x.boot_id, sizeof(x.boot_id)) < 0 ||
            get_source(o, &x.source) < 0 || get_numbers(o, &x) < 0)
                return -EBADMSG;
        x.reported = x.count;
        *e = x;
        return 0;
}

json_object *gres_xid_log_to_json(const GresXidLog *l) {
        json_object *o = json_object_new_object(), *list = json_object_new_array();

        if (!o || !list) {
                json_object_put(o);
                json_object_put(list);
                return NULL;
        }
        add_uint(o, "total", l->total);
        add_uint(o, "seq", l->next_seq);
        json_object_object_add(o, "events", list);
        for (size_t i = 0; i < l->n; i++) {
                json_object *e = gres_xid_event_to_json(gres_xid_log_get(l, i), GRES_XID_JSON_KEEP);
                if (!e || json_object_array_add(list, e) < 0) {
                        json_object_put(e);
                        json_object_put(o);
                        return NULL;
                }
        }
        return o;
}

/* Entries come in the order of their first numbers; a folded entry's last
 * may lie past the next entry's first.  Entries of an older file come
 * without numbers: they get the next ones. */
static int take_events(json_object *list, GresXidLog *l, uint64_t total) {
        uint64_t counted = 0, first = 0;

        for (size_t i = 0; i < json_object_array_length(list); i++) {
                GresXidEvent e;

                if (gres_xid_event_from_json(json_object_array_get_idx(list, i), &e) < 0)
                        return -EBADMSG;
                if (e.seq == 0) {
                        e.seq = l->next_seq;
                        e.last_seq = e.seq + e.count - 1;
                }
                if (e.seq <= first || e.last_seq >= INT64_MAX || (counted += e.count) > total)
                        return -EBADMSG;
                first = e.seq;
                l->next_seq = MAX(l->next_seq, e.last_seq + 1);
                append(l, &e);
        }
        return 0;
}

int gres_xid_log_from_json(json_object *o, GresXidLog *l) {
        json_object *list;
        uint64_t total, next = 1;

        gres_xid_log_init(l);
        if (!json_object_is_type(o, json_type_object) ||
            get_uint(o, "total", INT64_MAX, false, &total) < 0 ||
            get_uint(o, "seq", INT64_MAX, true, &next) < 0 || next == 0 ||
            !json_object_object_get_ex(o, "events", &list) || !json_object_is_type(list, json_type_array) ||
            json_object_array_length(list) > GRES_XID_LOG_MAX || take_events(list, l, total) < 0 ||
            (json_object_object_get_ex(o, "seq", NULL) && next < l->next_seq)) {
                gres_xid_log_init(l);
                return -EBADMSG;
        }
        /* the events beyond the ring were counted, and numbered, too */
        l->total = total;
        l->next_seq = MAX(l->next_seq, next);
        return 0;
}

json_object *gres_xid_log_tail_json(const GresXidLog *l, size_t max) {
        json_object *list = json_object_new_array();

        for (size_t i = l->n > max ? l->n - max : 0; list && i < l->n; i++) {
                json_object *e = gres_xid_event_to_json(gres_xid_log_get(l, i), 0);

                if (!e || json_object_array_add(list, e) < 0) {
                        json_object_put(e);
                        json_object_put(list);
                        return NULL;
                }
        }
        return list;
}

int gres_xid_show(const GresXidLog *l, json_object *gpu) {
        json_object *list;
        const char *bus = json_member_string(gpu, "bus_id");
        size_t first, shown = 0;

        if (!bus)
                return 0;
        for (size_t i = 0; i < l->n; i++)
                shown += strcmp(gres_xid_log_get(l, i)->bus_id, bus) == 0;
        if (shown == 0)
                return 0;
        list = json_object_new_array();
        if (!list)
                return -ENOMEM;
        first = shown > GRES_XID_PER_GPU_SHOWN ? shown - GRES_XID_PER_GPU_SHOWN : 0;
        for (size_t i = 0, k = 0; i < l->n; i++) {
                const GresXidEvent *e = gres_xid_log_get(l, i);
                if (strcmp(e->bus_id, bus) != 0 || k++ < first)
                        continue;
                json_object_array_add(list, gres_xid_event_to_json(e, GRES_XID_JSON_WHAT));
        }
        json_object_object_add(gpu, "xid_events", list);
        return 0;
}
