#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "gres-kmsg.h"
#include "gres-proc.h"
#include "util/cleanup.h"
#include "util/macro.h"
#include "util/time-util.h"

#define READ_SIZE (64 * 1024)
#define PARTIAL_WAIT_USEC (100 * USEC_PER_MSEC) /* for the rest of a line a stand-in wrote in parts */
#define READ_BUDGET_USEC USEC_PER_SEC           /* from the first data to the batch's end */

/* A decimal number without sign or spaces, at most @max; advances *p. */
static int parse_number(const char **p, const char *end, uint64_t max, uint64_t *ret) {
        uint64_t v = 0;
        const char *s = *p;

        if (s >= end || *s < '0' || *s > '9')
                return -EBADMSG;
        for (; s < end && *s >= '0' && *s <= '9'; s++) {
                if (v > (max - (uint64_t) (*s - '0')) / 10)
                        return -EBADMSG;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        *p = s;
        *ret = v;
        return 0;
}

static bool skip(const char **p, const char *end, const char *lit) {
        size_t n = strlen(lit);

        if ((size_t) (end - *p) < n || memcmp(*p, lit, n) != 0)
                return false;
        *p += n;
        return true;
}

int gres_kmsg_parse_record(const char *line, size_t len, GresKmsgRecord *ret) {
        const char *end = line + len, *semi = memchr(line, ';', len), *p = line;
        uint64_t prio, seq, usec;

        if (!semi || memchr(line, '\0', len))
                return -EBADMSG;
        if (parse_number(&p, semi, 1023, &prio) < 0 || !skip(&p, semi, ",") ||
            parse_number(&p, semi, INT64_MAX, &seq) < 0 || !skip(&p, semi, ",") ||
            parse_number(&p, semi, INT64_MAX, &usec) < 0 || !skip(&p, semi, ",") || p == semi || *p == ',')
                return -EBADMSG;
        *ret = (GresKmsgRecord){ .prio = (unsigned) prio,
                                 .seq = seq,
                                 .usec = usec,
                                 .msg = semi + 1,
                                 .msg_len = (size_t) (end - semi - 1) };
        return 0;
}

static int hex_field(const char **p, const char *end, unsigned digits, unsigned *ret) {
        unsigned v = 0, n = 0;

        for (; *p < end && n < digits; (*p)++, n++) {
                char c = **p;
                int d = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
                if (d < 0)
                        break;
                v = v * 16 + (unsigned) d;
        }
        if (n == 0)
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* "[PCI:]dddd:bb:dd[.f]", as the driver names a GPU, normalised. */
static int parse_bus(const char **p, const char *end, char bus_id[static 16]) {
        unsigned dom, bus, dev, fn = 0;
        char text[32];

        (void) skip(p, end, "PCI:");
        if (hex_field(p, end, 8, &dom) < 0 || !skip(p, end, ":") || hex_field(p, end, 2, &bus) < 0 ||
            !skip(p, end, ":") || hex_field(p, end, 2, &dev) < 0 ||
            (skip(p, end, ".") && hex_field(p, end, 1, &fn) < 0))
                return -EBADMSG;
        snprintf(text, sizeof(text), "%x:%x:%x.%x", dom, bus, dev, fn);
        return gres_bus_id_normalise(text, bus_id) < 0 ? -EBADMSG : 0;
}

int gres_kmsg_parse_xid(const char *msg, size_t len, char bus_id[static 16], uint64_t *ret_xid) {
        const char *p = msg, *end = msg + len, *close;
        uint64_t xid;

        if (!skip(&p, end, "NVRM: Xid "))
                return -ENOENT;
        /* what a driver adds in the parentheses after the bus (a MIG
         * instance, say) is not needed: NVML's events name instances */
        if (!skip(&p, end, "(") || parse_bus(&p, end, bus_id) < 0 ||
            !(close = memchr(p, ')', (size_t) (end - p))) || (close != p && *p != ' ') || close - p > 64)
                return -EBADMSG;
        p = close + 1;
        if (!skip(&p, end, ": ") || parse_number(&p, end, UINT32_MAX, &xid) < 0 ||
            (p < end && *p != ',' && *p != ' '))
                return -EBADMSG;
        *ret_xid = xid;
        return 0;
}

int gres_kmsg_parse_gpu(const char *msg, size_t len, char bus_id[static 16], char uuid[static 96]) {
        const char *p = msg, *end = msg + len, *u;

        if (!skip(&p, end, "NVRM: GPU at "))
                return -ENOENT;
        if (parse_bus(&p, end, bus_id) < 0 || !skip(&p, end, ": ") || (size_t) (end - p) < 5 ||
            memcmp(p, "GPU-", 4) != 0)
                return -EBADMSG;
        for (u = p + 4; u < end && (strchr("0123456789abcdefABCDEF-", *u) && *u); u++)
                ;
        if (u == p + 4 || u - p >= 96 || (u < end && *u != ' '))
                return -EBADMSG;
        memcpy(uuid, p, (size_t) (u - p));
        uuid[u - p] = '\0';
        return 0;
}

void gres_kmsg_batch_init(GresKmsgBatch *b, bool have_cursor, uint64_t after, const char *carry,
                          size_t carry_len) {
        memset(b, 0, sizeof(*b));
        b->have_cursor = have_cursor;
        b->after = after;
        if (carry && carry_len < sizeof(b->partial)) {
                memcpy(b->partial, carry, carry_len);
                b->n_partial = carry_len;
        }
}

void gres_kmsg_batch_overflow(GresKmsgBatch *b) {
        b->overflows++;
}

static void add_gap(GresKmsgBatch *b, uint64_t from, uint64_t to) {
        b->lost += to - from + 1;
        if (b->n_gaps < GRES_KMSG_GAPS_MAX)
                b->gaps[b->n_gaps++] = (typeof(b->gaps[0])){ from, to };
}

/* Whether the record is one to take: after the cursor and the last taken.
 * A record past the next one expected means those between were lost. */
static bool take_seq(GresKmsgBatch *b, uint64_t seq) {
        uint64_t next;

        if ((b->have_cursor && seq <= b->after) || (b->seen && seq <= b->last)) {
                b->skipped++;
                return false;
        }
        next = b->seen ? b->last + 1 : b->have_cursor ? b->after + 1 : seq;
        if (seq > next)
                add_gap(b, next, seq - 1);
        b->seen = true;
        b->last = seq;
        b->records++;
        return true;
}

static void add_xid(GresKmsgBatch *b, const char *bus, uint64_t xid, const GresKmsgRecord *r) {
        GresKmsgKey *k = NULL;

        for (size_t i = 0; i < b->n_keys && !k; i++)
                if (b->keys[i].xid == xid && streq(b->keys[i].bus_id, bus))
                        k = &b->keys[i];
        if (!k) {
                if (b->n_keys == GRES_KMSG_KEYS_MAX) {
                        b->dropped++;
                        return;
                }
                k = &b->keys[b->n_keys++];
                *k = (GresKmsgKey){ .xid = xid, .first_usec = r->usec, .first_seq = r->seq };
                strcpy(k->bus_id, bus);
        }
        k->count++;
        k->last_usec = MAX(k->last_usec, r->usec);
        k->first_usec = MIN(k->first_usec, r->usec);
        k->last_seq = r->seq;
}

static void add_gpu(GresKmsgBatch *b, const char *bus, const char *uuid) {
        size_t i;

        for (i = 0; i < b->n_gpus && !streq(b->gpus[i].bus_id, bus); i++)
                ;
        if (i == GRES_KMSG_GPUS_MAX)
                return;
        if (i == b->n_gpus)
                b->n_gpus++;
        strcpy(b->gpus[i].bus_id, bus);
        strcpy(b->gpus[i].uuid, uuid);
}

/* One line: a record's first, or one of its dictionary (" KEY=value"). */
static void take_line(GresKmsgBatch *b, const char *line, size_t len) {
        GresKmsgRecord r;
        char bus[16], uuid[96];
        uint64_t xid;
        int k;

        if (len == 0 || line[0] == ' ')
                return;
        if (gres_kmsg_parse_record(line, len, &r) < 0) {
                b->malformed++;
                return;
        }
        if (!take_seq(b, r.seq))
                return;
        /* Only the kernel speaks for the driver: a line a program wrote to
         * /dev/kmsg (facility user, or any but kern; journald forwards there
         * when told to) must not drain a node by quoting an NVRM line. */
        if ((r.prio >> 3) != 0)
                return;
        k = gres_kmsg_parse_xid(r.msg, r.msg_len, bus, &xid);
        if (k == 0)
                add_xid(b, bus, xid, &r);
        else if (k == -EBADMSG)
                b->malformed++;
        else if (gres_kmsg_parse_gpu(r.msg, r.msg_len, bus, uuid) == 0)
                add_gpu(b, bus, uuid);
}

void gres_kmsg_batch_feed(GresKmsgBatch *b, const char *buf, size_t len) {
        while (len > 0) {
                const char *nl = memchr(buf, '\n', len);
                size_t n = nl ? (size_t) (nl - buf) : len;

                if (b->discarding)
                        ;
                else if (b->n_partial + n >= sizeof(b->partial)) {
                        /* longer than any record: dropped up to its end */
                        b->malformed++;
                        b->n_partial = 0;
                        b->discarding = true;
                } else if (!nl) {
                        memcpy(b->partial + b->n_partial, buf, n);
                        b->n_partial += n;
                } else if (b->n_partial > 0) {
                        memcpy(b->partial + b->n_partial, buf, n);
                        take_line(b, b->partial, b->n_partial + n);
                        b->n_partial = 0;
                } else
                        take_line(b, buf, n);
                if (!nl)
                        return;
                b->discarding = false;
                buf = nl + 1;
                len -= n + 1;
        }
}

static int wait_readable(int fd, uint64_t usec) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int r = poll(&p, 1, (int) MIN(usec / USEC_PER_MSEC + 1, (uint64_t) INT32_MAX));

        return r < 0 ? (errno == EINTR ? 1 : -errno) : r;
}

/* What counts against a batch's room and time: records taken, not those
 * skipped below the cursor (a new open of /dev/kmsg hands the whole ring
 * again, however large). */
static uint64_t taken(const GresKmsgBatch *b) {
        return b->records + b->malformed + b->overflows;
}

int gres_kmsg_read(int fd, uint64_t window_usec, uint64_t max, GresKmsgBatch *b) {
        _cleanup_free_ char *buf = malloc(READ_SIZE);
        uint64_t now = now_usec(CLOCK_MONOTONIC), deadline = now + window_usec, before = taken(b);
        bool data = false, took = false;
        int r;

        if (!buf)
                return -ENOMEM;
        while (taken(b) - before < max) {
                ssize_t n = read(fd, buf, READ_SIZE);

                if (n > 0 || (n < 0 && errno == EPIPE)) {
                        if (n > 0)
                                gres_kmsg_batch_feed(b, buf, (size_t) n);
                        else
                                gres_kmsg_batch_overflow(b);
                        data = true;
                        if (!took && taken(b) > before) {
                                took = true;
                                deadline = now_usec(CLOCK_MONOTONIC) + READ_BUDGET_USEC;
                        }
                        if (took && now_usec(CLOCK_MONOTONIC) >= deadline)
                                break;
                        continue;
                }
                if (n == 0) {
                        b->eof = true;
                        break;
                }
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return -errno;
                /* drained: done once something was taken, unless a line
                 * that came now waits for its rest */
                if (took && b->n_partial == 0)
                        break;
                now = now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        break;
                r = wait_readable(fd, data && b->n_partial > 0 ? MIN(PARTIAL_WAIT_USEC, deadline - now)
                                                               : deadline - now);
                if (r < 0)
                        return r;
                if (r == 0)
                        break;
        }
        return 0;
}

static void add_uint(json_object *o, const char *key, uint64_t v) {
        json_object_object_add(o, key, json_object_new_int64((int64_t) MIN(v, (uint64_t) INT64_MAX)));
}

static uint64_t realtime(uint64_t stamp, uint64_t rt, uint64_t mono) {
        return stamp >= mono || mono - stamp > rt ? rt : rt - (mono - stamp);
}

static json_object *keys_json(const GresKmsgBatch *b, uint64_t rt, uint64_t mono) {
        json_object *list = json_object_new_array();

        for (size_t i = 0; list && i < b->n_keys; i++) {
                const GresKmsgKey *k = &b->keys[i];
                json_object *o = json_object_new_object();

                if (!o || json_object_array_add(list, o) < 0) {
                        json_object_put(o);
                        json_object_put(list);
                        return NULL;
                }
                json_object_object_add(o, "bus_id", json_object_new_string(k->bus_id));
                add_uint(o, "xid", k->xid);
                add_uint(o, "count", k->count);
                add_uint(o, "time_usec", realtime(k->first_usec, rt, mono));
                add_uint(o, "last_usec", realtime(k->last_usec, rt, mono));
        }
        return list;
}

static json_object *gpus_json(const GresKmsgBatch *b) {
        json_object *list = json_object_new_array();

        for (size_t i = 0; list && i < b->n_gpus; i++) {
                json_object *o = json_object_new_object();

                if (!o || json_object_array_add(list, o) < 0) {
                        json_object_put(o);
                        json_object_put(list);
                        return NULL;
                }
                json_object_object_add(o, "bus_id", json_object_new_string(b->gpus[i].bus_id));
                json_object_object_add(o, "uuid", json_object_new_string(b->gpus[i].uuid));
        }
        return list;
}

static json_object *gaps_json(const GresKmsgBatch *b) {
        json_object *list = json_object_new_array();

        for (size_t i = 0; list && i < b->n_gaps; i++) {
                json_object *g = json_object_new_array();

                if (!g || json_object_array_add(list, g) < 0) {
                        json_object_put(g);
                        json_object_put(list);
                        return NULL;
                }
                json_object_array_add(g, json_object_new_int64((int64_t) b->gaps[i].from));
                json_object_array_add(g, json_object_new_int64((int64_t) b->gaps[i].to));
        }
        return list;
}

/* A partial line goes back to the parent as text: printable ASCII only,
 * as the kernel escapes every other byte; anything else was no record. */
static bool printable(const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (s[i] < ' ' || s[i] > '~')
                        return false;
        return true;
}

json_object *gres_kmsg_batch_to_json(const GresKmsgBatch *b, uint64_t realtime_usec,
                                     uint64_t monotonic_usec) {
        json_object *o = json_object_new_object(), *keys = keys_json(b, realtime_usec, monotonic_usec),
                    *gpus = gpus_json(b), *gaps = gaps_json(b);
        bool partial_ok = printable(b->partial, b->n_partial);

        if (!o || !keys || !gpus || !gaps) {
                json_object_put(o);
                json_object_put(keys);
                json_object_put(gpus);
                json_object_put(gaps);
                return NULL;
        }
        add_uint(o, "records", b->records);
        add_uint(o, "skipped", b->skipped);
        add_uint(o, "malformed", b->malformed + (partial_ok ? 0 : 1));
        add_uint(o, "lost", b->lost);
        add_uint(o, "overflows", b->overflows);
        add_uint(o, "dropped", b->dropped);
        if (b->seen)
                add_uint(o, "seq", b->last);
        if (b->eof)
                json_object_object_add(o, "eof", json_object_new_boolean(true));
        if (b->n_partial > 0 && partial_ok)
                json_object_object_add(o, "partial",
                                       json_object_new_string_len(b->partial, (int) b->n_partial));
        json_object_object_add(o, "gaps", gaps);
        json_object_object_add(o, "events", keys);
        json_object_object_add(o, "gpus", gpus);
        return o;
}
