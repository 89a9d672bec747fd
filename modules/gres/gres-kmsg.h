/* XID errors from the kernel log: /dev/kmsg, or a stand-in (a FIFO, a pty)
 * read through the same code.
 *
 * /dev/kmsg hands one record per read(): "prio,seq,usec,flags[,...];message\n"
 * followed by dictionary lines that start with a space.  seq numbers every
 * record since boot; a reader whose next record the ring has overwritten
 * gets EPIPE once and then the oldest record left, so the gap in seq says
 * how many were lost.  A stand-in may hand several records, or part of one,
 * per read(): complete lines are taken, a partial one is kept for the next.
 *
 * The driver logs "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python3,
 * GPU has fallen off the bus." (older drivers without "PCI:", newer ones
 * with "pid='<unknown>', name=<unknown>", a channel "Ch 00000008" and more
 * after the number; nothing after the number is needed), and before a GPU's
 * first Xid "NVRM: GPU at PCI:0000:18:00: GPU-<uuid>", which names the GPU.
 *
 * A batch is what one read of the log saw, bounded whatever the log holds:
 * the XIDs counted per GPU and XID (a storm of a hundred thousand is one
 * key with its count), the GPUs the driver named, and the records lost. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_object;

#define GRES_KMSG_RECORD_MAX 8192 /* the kernel's longest record is shorter */
#define GRES_KMSG_KEYS_MAX 64     /* distinct GPU and XID pairs a batch counts */
#define GRES_KMSG_GPUS_MAX 64
#define GRES_KMSG_GAPS_MAX 4

typedef struct GresKmsgRecord {
        unsigned prio;
        uint64_t seq;
        uint64_t usec;   /* since boot, as the kernel stamps it */
        const char *msg; /* into the parsed line, not NUL-terminated */
        size_t msg_len;
} GresKmsgRecord;

/* gres_kmsg_parse_record() - the first line of a record (@len bytes,
 * without its newline).  -EBADMSG for anything but the form above. */
int gres_kmsg_parse_record(const char *line, size_t len, GresKmsgRecord *ret);

/* gres_kmsg_parse_xid() - an "NVRM: Xid (...): N, ..." message: its GPU's
 * bus id, normalised (function 0), and N.  -ENOENT for another message,
 * -EBADMSG for an Xid line that is not of the form. */
int gres_kmsg_parse_xid(const char *msg, size_t len, char bus_id[static 16], uint64_t *ret_xid);

/* gres_kmsg_parse_gpu() - an "NVRM: GPU at PCI:<bus>: GPU-<uuid>" message.
 * -ENOENT for another message, -EBADMSG for one of that start but not the form. */
int gres_kmsg_parse_gpu(const char *msg, size_t len, char bus_id[static 16], char uuid[static 96]);

typedef struct GresKmsgKey {
        char bus_id[16];
        uint64_t xid;
        uint64_t count;
        uint64_t first_usec, last_usec; /* kernel stamps */
        uint64_t first_seq, last_seq;
} GresKmsgKey;

typedef struct GresKmsgBatch {
        bool have_cursor; /* in: records up to @after are skipped */
        uint64_t after;
        bool seen; /* a record was taken: @last is its seq */
        uint64_t last;
        uint64_t records, skipped, malformed;
        uint64_t lost;         /* records the seq numbers say were never read */
        uint64_t overflows;    /* read() said EPIPE */
        bool overflow_pending; /* ... and the next record's gap is the loss */
        struct {
                uint64_t from, to;
        } gaps[GRES_KMSG_GAPS_MAX];
        size_t n_gaps;
        GresKmsgKey keys[GRES_KMSG_KEYS_MAX];
        size_t n_keys;
        uint64_t dropped; /* XIDs of a pair beyond GRES_KMSG_KEYS_MAX */
        struct {
                char bus_id[16], uuid[96];
        } gpus[GRES_KMSG_GPUS_MAX];
        size_t n_gpus;
        bool discarding; /* within an over-long line: dropped up to its end */
        bool eof;        /* read() returned 0: nothing writes to a stand-in */
        char partial[GRES_KMSG_RECORD_MAX];
        size_t n_partial;
} GresKmsgBatch;

/* gres_kmsg_batch_init() - an empty batch that resumes after record
 * @after (when @have_cursor) with @carry, a partial line the last batch
 * left, before what it reads. */
void gres_kmsg_batch_init(GresKmsgBatch *b, bool have_cursor, uint64_t after, const char *carry,
                          size_t carry_len);

/* gres_kmsg_batch_feed() - bytes as read() returned them. */
void gres_kmsg_batch_feed(GresKmsgBatch *b, const char *buf, size_t len);

/* gres_kmsg_batch_overflow() - read() returned EPIPE: the ring overwrote
 * the records this reader had not read. */
void gres_kmsg_batch_overflow(GresKmsgBatch *b);

/* gres_kmsg_read() - read @fd (non-blocking) into @b until something new
 * is taken and no more is there, waiting up to @window_usec for it; at most
 * about @max records and a second once the first is taken (records below
 * the cursor are skipped and count against neither), or until read()
 * returns 0.  A line that came in part gets up to 100 ms for its rest.
 * Blocks: run it in a child.  Returns 0, or a negative errno from poll() or
 * read(). */
int gres_kmsg_read(int fd, uint64_t window_usec, uint64_t max, GresKmsgBatch *b);

/* gres_kmsg_batch_to_json() - @b as the child hands it back, each key's
 * kernel stamps as CLOCK_REALTIME given both clocks' @realtime_usec and
 * @monotonic_usec now (a stamp ahead of the monotonic clock, as a stand-in
 * may write, counts as now).  NULL on OOM. */
struct json_object *gres_kmsg_batch_to_json(const GresKmsgBatch *b, uint64_t realtime_usec,
                                            uint64_t monotonic_usec);
