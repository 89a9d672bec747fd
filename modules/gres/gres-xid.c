#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "gres-proc.h"
#include "gres-xid.h"
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

void gres_xid_log_add(GresXidLog *l, const GresXidEvent *e) {
        if (l->n == GRES_XID_LOG_MAX) {
                l->ev[l->start] = *e;
                l->start = (l->start + 1) % GRES_XID_LOG_MAX;
        } else
                l->ev[(l->start + l->n++) % GRES_XID_LOG_MAX] = *e;
        l->total++;
}

const GresXidEvent *gres_xid_log_get(const GresXidLog *l, size_t i) {
        return &l->ev[(l->start + i) % GRES_XID_LOG_MAX];
}

json_object *gres_xid_event_to_json(const GresXidEvent *e) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "bus_id", json_object_new_string(e->bus_id));
        json_object_object_add(o, "uuid", json_object_new_string(e->uuid));
        json_object_object_add(o, "xid", json_object_new_int64((int64_t) e->xid));
        if (gres_xid_describe(e->xid))
                json_object_object_add(o, "what", json_object_new_string(gres_xid_describe(e->xid)));
        if (e->gpu_instance != GRES_XID_NONE)
                json_object_object_add(o, "gpu_instance", json_object_new_int64(e->gpu_instance));
        if (e->compute_instance != GRES_XID_NONE)
                json_object_object_add(o, "compute_instance", json_object_new_int64(e->compute_instance));
        json_object_object_add(o, "time_usec", json_object_new_int64((int64_t) e->time_usec));
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

static int get_string(json_object *o, const char *key, char *buf, size_t size) {
        json_object *v;
        const char *s;

        if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
                return -EBADMSG;
        s = json_object_get_string(v);
        if (!*s || (size_t) json_object_get_string_len(v) >= size || strlen(s) != (size_t) json_object_get_string_len(v))
                return -EBADMSG;
        for (const char *p = s; *p; p++)
                if (*p <= ' ' || *p >= 0x7f)
                        return -EBADMSG;
        strcpy(buf, s);
        return 0;
}

int gres_xid_event_from_json(json_object *o, GresXidEvent *e) {
        GresXidEvent x = { .gpu_instance = GRES_XID_NONE, .compute_instance = GRES_XID_NONE };
        uint64_t gi = GRES_XID_NONE, ci = GRES_XID_NONE;
        char norm[16];

        if (!json_object_is_type(o, json_type_object) || get_string(o, "bus_id", x.bus_id, sizeof(x.bus_id)) < 0 ||
            gres_bus_id_normalise(x.bus_id, norm) < 0 || strcmp(norm, x.bus_id) != 0 ||
            get_string(o, "uuid", x.uuid, sizeof(x.uuid)) < 0 || get_uint(o, "xid", UINT32_MAX, false, &x.xid) < 0 ||
            get_uint(o, "gpu_instance", GRES_XID_NONE - 1, true, &gi) < 0 ||
            get_uint(o, "compute_instance", GRES_XID_NONE - 1, true, &ci) < 0 ||
            get_uint(o, "time_usec", INT64_MAX, false, &x.time_usec) < 0)
                return -EBADMSG;
        x.gpu_instance = (uint32_t) gi;
        x.compute_instance = (uint32_t) ci;
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
        json_object_object_add(o, "total", json_object_new_int64((int64_t) l->total));
        json_object_object_add(o, "events", list);
        for (size_t i = 0; i < l->n; i++) {
                json_object *e = gres_xid_event_to_json(gres_xid_log_get(l, i));
                if (!e || json_object_array_add(list, e) < 0) {
                        json_object_put(e);
                        json_object_put(o);
                        return NULL;
                }
        }
        return o;
}

int gres_xid_log_from_json(json_object *o, GresXidLog *l) {
        GresXidLog *copy = malloc(sizeof(*copy));
        json_object *list;
        uint64_t total;

        if (!copy)
                return -ENOMEM;
        *copy = *l;
        if (!json_object_is_type(o, json_type_object) || get_uint(o, "total", INT64_MAX, false, &total) < 0 ||
            !json_object_object_get_ex(o, "events", &list) || !json_object_is_type(list, json_type_array) ||
            json_object_array_length(list) > GRES_XID_LOG_MAX || json_object_array_length(list) > total) {
                free(copy);
                return -EBADMSG;
        }
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                GresXidEvent e;

                if (gres_xid_event_from_json(json_object_array_get_idx(list, i), &e) < 0) {
                        free(copy);
                        return -EBADMSG;
                }
                gres_xid_log_add(copy, &e);
        }
        /* the events beyond the ring were counted too */
        copy->total = l->total + total;
        *l = *copy;
        free(copy);
        return 0;
}

bool gres_xid_is_critical(uint64_t xid, const uint64_t *critical, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (critical[i] == xid)
                        return true;
        return false;
}

/* Within the hold of now, on either side: an event stamped later than now
 * (the clock was set back since, or the saved log was edited) cannot keep
 * a GPU unhealthy for longer than the hold either. */
static bool within(const GresXidEvent *e, uint64_t now_usec, uint64_t hold_usec) {
        return e->time_usec >= now_usec ? e->time_usec - now_usec <= hold_usec : now_usec - e->time_usec <= hold_usec;
}

size_t gres_xid_active(const GresXidLog *l, const uint64_t *critical, size_t n_critical, uint64_t now_usec,
                       uint64_t hold_usec) {
        size_t n = 0;

        for (size_t i = 0; i < l->n; i++) {
                const GresXidEvent *e = gres_xid_log_get(l, i);
                n += gres_xid_is_critical(e->xid, critical, n_critical) && within(e, now_usec, hold_usec);
        }
        return n;
}

/* "XID 79 (GPU has fallen off the bus) at 2026-11-24T10:00:00Z, 3 times
 * within the hold": the latest of each critical XID, once. */
static int add_problems(const GresXidLog *l, const char *bus, json_object *health, const uint64_t *critical,
                        size_t n_critical, uint64_t now_usec, uint64_t hold_usec) {
        json_object *problems;
        bool any = false;

        if (!json_object_object_get_ex(health, "problems", &problems) || !json_object_is_type(problems, json_type_array))
                return 0;
        for (size_t i = l->n; i-- > 0;) {
                const GresXidEvent *e = gres_xid_log_get(l, i);
                unsigned times = 0;
                bool seen = false;
                char when[32], count[32] = "", *line;
                struct tm tm;
                time_t t;

                if (strcmp(e->bus_id, bus) != 0 || !gres_xid_is_critical(e->xid, critical, n_critical) ||
                    !within(e, now_usec, hold_usec))
                        continue;
                for (size_t k = i + 1; k < l->n && !seen; k++)
                        seen = gres_xid_log_get(l, k)->xid == e->xid && strcmp(gres_xid_log_get(l, k)->bus_id, bus) == 0;
                if (seen)
                        continue; /* a later one of the same XID said it */
                for (size_t k = 0; k <= i; k++) {
                        const GresXidEvent *o = gres_xid_log_get(l, k);
                        times += o->xid == e->xid && strcmp(o->bus_id, bus) == 0 && within(o, now_usec, hold_usec);
                }
                t = (time_t) (e->time_usec / USEC_PER_SEC);
                if (!gmtime_r(&t, &tm) || strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                        strcpy(when, "?");
                if (times > 1)
                        snprintf(count, sizeof(count), ", %u times", times);
                if (asprintf(&line, "XID %llu (%s) at %s%s", (unsigned long long) e->xid,
                             gres_xid_describe(e->xid) ?: "not in the catalogue", when, count) < 0)
                        return -ENOMEM;
                json_object_array_add(problems, json_object_new_string(line));
                free(line);
                any = true;
        }
        if (any)
                json_object_object_add(health, "healthy", json_object_new_boolean(false));
        return 0;
}

int gres_xid_apply(const GresXidLog *l, json_object *gpu, const uint64_t *critical, size_t n_critical,
                   uint64_t now_usec, uint64_t hold_usec) {
        json_object *bus_v, *list, *health;
        const char *bus;
        size_t first, shown = 0;

        if (!json_object_object_get_ex(gpu, "bus_id", &bus_v) || !(bus = json_object_get_string(bus_v)))
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
                json_object_array_add(list, gres_xid_event_to_json(e));
        }
        json_object_object_add(gpu, "xid_events", list);
        if (!json_object_object_get_ex(gpu, "health", &health)) {
                /* discovered through /proc: health unknown but for the XIDs */
                health = json_object_new_object();
                if (!health)
                        return -ENOMEM;
                json_object_object_add(health, "healthy", json_object_new_boolean(true));
                json_object_object_add(health, "problems", json_object_new_array());
                json_object_object_add(gpu, "health", health);
        }
        return add_problems(l, bus, health, critical, n_critical, now_usec, hold_usec);
}
