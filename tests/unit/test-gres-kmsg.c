/* The kernel log as gres reads XID errors from it: records and NVRM lines
 * as drivers write them, and hostile ones; batches that resume after a
 * cursor, count what the sequence numbers say was lost (the ring's EPIPE
 * included), carry a record written in parts, and stay bounded in a storm;
 * the reader on a pipe, as a stand-in is, and on the node's own /dev/kmsg. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "util/cleanup.h"
#include "util/time-util.h"

#include "../../modules/gres/gres-kmsg.h"
#include "../../modules/gres/gres-xid.h"
#include "../lib/check-run.h"

static int xid_of(const char *msg, char bus[16], uint64_t *xid) {
        return gres_kmsg_parse_xid(msg, strlen(msg), bus, xid);
}

START_TEST(test_record) {
        static const char *const good[] = {
                "6,339,5140900,-;NET: Registered PF_INET6 protocol family",
                "3,1234,18446744073,c;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the "
                "bus.",
                "4,7,0,-,caller=T123;message with a caller field",
                "14,8,9,-;",
        };
        static const char *const bad[] = {
                "",
                "no header",
                "6,339,5140900;no flags",
                "6,339;x",
                ",1,2,-;x",
                "6,,2,-;x",
                "6,1,,-;x",
                "-6,1,2,-;x",
                "6, 1,2,-;x",
                "6,1,2,,;x",
                "1024,1,2,-;x",
                "6,99999999999999999999,2,-;x",
                "6,1,99999999999999999999,-;x",
                "6x,1,2,-;x",
                "6,1,2,-",
        };
        GresKmsgRecord r;

        ck_assert_int_eq(gres_kmsg_parse_record(good[0], strlen(good[0]), &r), 0);
        ck_assert_uint_eq(r.prio, 6);
        ck_assert_uint_eq(r.seq, 339);
        ck_assert_uint_eq(r.usec, 5140900);
        ck_assert_int_eq((int) r.msg_len, (int) strlen("NET: Registered PF_INET6 protocol family"));
        ck_assert(strncmp(r.msg, "NET: Registered", 15) == 0);
        for (size_t i = 1; i < sizeof(good) / sizeof(good[0]); i++)
                ck_assert_msg(gres_kmsg_parse_record(good[i], strlen(good[i]), &r) == 0, "refused: %s",
                              good[i]);
        ck_assert_uint_eq(r.msg_len, 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(gres_kmsg_parse_record(bad[i], strlen(bad[i]), &r) == -EBADMSG, "accepted: %s",
                              bad[i]);
        /* a NUL inside is no record */
        ck_assert_int_eq(gres_kmsg_parse_record("6,1,2,-;a\0b", 11, &r), -EBADMSG);
}
END_TEST

/* Lines as drivers have logged them (r470 to r580), and the older form
 * without "PCI:". */
START_TEST(test_nvrm_xid) {
        static const struct {
                const char *msg, *bus;
                uint64_t xid;
        } good[] = {
                { "NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python3, GPU has fallen off the bus.",
                  "0000:18:00.0", 79 },
                { "NVRM: Xid (PCI:0000:cb:00): 13, pid='<unknown>', name=<unknown>, Graphics SM Warp "
                  "Exception on "
                  "(GPC 7, TPC 7, SM 0): Illegal Instruction Parameter",
                  "0000:cb:00.0", 13 },
                { "NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch 00000008, "
                  "errorString CTX "
                  "SWITCH TIMEOUT, Info 0x58005",
                  "0000:cb:00.0", 109 },
                { "NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by "
                  "previous Xid 149",
                  "0000:dc:00.0", 45 },
                { "NVRM: Xid (PCI:0009:01:00): 43, pid=3188489, name=trigger_xid, channel 0x0b00000a",
                  "0009:01:00.0", 43 },
                { "NVRM: Xid (0000:03:00): 14, Channel 00000001", "0000:03:00.0", 14 },
                { "NVRM: Xid (PCI:0000:DB:00.0): 95, pid=7, name=x, Uncontained: FBHUB.", "0000:db:00.0",
                  95 },
                { "NVRM: Xid (PCI:0000:3a:00 GPU-I:03): 13, pid=1, name=x", "0000:3a:00.0", 13 },
                { "NVRM: Xid (PCI:0000:18:00): 4294967295", "0000:18:00.0", 4294967295ULL },
        };
        static const char *const bad[] = {
                "NVRM: Xid (PCI:0000:18:00) 79, pid=1", /* no colon */
                "NVRM: Xid (PCI:0000:18:00): x79",
                "NVRM: Xid (PCI:0000:18:00): 79x",
                "NVRM: Xid (PCI:0000:18:00): -79",
                "NVRM: Xid (PCI:0000:18:00): 4294967296, too big",
                "NVRM: Xid (PCI:0000:18:00): ",
                "NVRM: Xid (PCI:0000:18:00: 79, no closing",
                "NVRM: Xid (PCI:zzzz:18:00): 79, pid=1",
                "NVRM: Xid (PCI:0000:18): 79, pid=1",
                "NVRM: Xid (PCI:123456789:18:00): 79, pid=1", /* domain beyond the kernel's 16 bits */
                "NVRM: Xid (PCI:0000:18:20): 79, pid=1",      /* device beyond 31 */
                "NVRM: Xid (PCI:0000:18:00.9): 79, pid=1",    /* function beyond 7 */
                "NVRM: Xid (PCI:0000:18:00)x: 79",
                "NVRM: Xid (PCI:0000:18:00x): 79",
                "NVRM: Xid PCI:0000:18:00: 79",
        };
        char bus[16];
        uint64_t xid;

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                ck_assert_msg(xid_of(good[i].msg, bus, &xid) == 0, "refused: %s", good[i].msg);
                ck_assert_str_eq(bus, good[i].bus);
                ck_assert_uint_eq(xid, good[i].xid);
        }
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(xid_of(bad[i], bus, &xid) == -EBADMSG, "accepted: %s", bad[i]);
        ck_assert_int_eq(
                xid_of("NVRM: GPU at PCI:0000:18:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7", bus, &xid),
                -ENOENT);
        ck_assert_int_eq(xid_of("nvidia-peermem nv_get_p2p_free_callback:127 ERROR", bus, &xid), -ENOENT);
        ck_assert_int_eq(xid_of("NVRM: Xid", bus, &xid), -ENOENT);
        /* the text is the message's length, not up to a NUL */
        ck_assert_int_eq(gres_kmsg_parse_xid("NVRM: Xid (PCI:0000:18:00): 79", 26, bus, &xid), -EBADMSG);
}
END_TEST

START_TEST(test_nvrm_gpu) {
        static const char *const bad[] = {
                "NVRM: GPU at PCI:0000:18:00: b850f46d",          "NVRM: GPU at PCI:0000:18:00: GPU-",
                "NVRM: GPU at PCI:0000:18:00: GPU-b850f46d\\x0a", "NVRM: GPU at PCI:0000:18:00 GPU-b850f46d",
                "NVRM: GPU at PCI:0000:18: GPU-b850f46d",
        };
        char bus[16], uuid[96], lng[200];
        const char *m = "NVRM: GPU at PCI:0000:18:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7";

        ck_assert_int_eq(gres_kmsg_parse_gpu(m, strlen(m), bus, uuid), 0);
        ck_assert_str_eq(bus, "0000:18:00.0");
        ck_assert_str_eq(uuid, "GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7");
        m = "NVRM: GPU at 0000:03:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7";
        ck_assert_int_eq(gres_kmsg_parse_gpu(m, strlen(m), bus, uuid), 0);
        ck_assert_str_eq(bus, "0000:03:00.0");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(gres_kmsg_parse_gpu(bad[i], strlen(bad[i]), bus, uuid) == -EBADMSG,
                              "accepted: %s", bad[i]);
        snprintf(lng, sizeof(lng), "NVRM: GPU at PCI:0000:18:00: GPU-%0150d", 0);
        ck_assert_int_eq(gres_kmsg_parse_gpu(lng, strlen(lng), bus, uuid), -EBADMSG);
        ck_assert_int_eq(gres_kmsg_parse_gpu("NVRM: GPU Board Serial Number: 1", 32, bus, uuid), -ENOENT);
}
END_TEST

static GresKmsgBatch *batch(bool cursor, uint64_t after) {
        GresKmsgBatch *b = malloc(sizeof(*b));

        ck_assert_ptr_nonnull(b);
        gres_kmsg_batch_init(b, cursor, after, NULL, 0);
        return b;
}

static void feed(GresKmsgBatch *b, const char *text) {
        gres_kmsg_batch_feed(b, text, strlen(text));
}

#define XID79(seq)                                                                                          \
        seq ",5000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"

/* Records as /dev/kmsg hands them, dictionary lines and all; a GPU line
 * names the UUID; the records up to the cursor are skipped. */
START_TEST(test_batch) {
        _cleanup_free_ GresKmsgBatch *b = batch(true, 100);

        feed(b, "6,99,1,-;old\n");
        feed(b, "3,100,2,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, read before\n");
        feed(b, "6,101,4000000,-;NVRM: GPU at PCI:0000:18:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7\n"
                " SUBSYSTEM=pci\n DEVICE=+pci:0000:18:00.0\n");
        feed(b, "3," XID79("102"));
        feed(b, "3,103,5000001,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, again\n");
        feed(b, "3,104,5000002,-;NVRM: Xid (PCI:0000:2a:00): 13, pid=1, name=x, Graphics Exception\n");
        feed(b, "3,105,5000003,-;NVRM: Xid (PCI:0000:2a:00): x13, broken\n");
        feed(b, "garbage\n");
        ck_assert_uint_eq(b->skipped, 2);
        ck_assert_uint_eq(b->records, 5);
        ck_assert_uint_eq(b->malformed, 2);
        ck_assert_uint_eq(b->lost, 0);
        ck_assert(b->seen);
        ck_assert_uint_eq(b->last, 105);
        ck_assert_uint_eq(b->n_gpus, 1);
        ck_assert_str_eq(b->gpus[0].uuid, "GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7");
        ck_assert_uint_eq(b->n_keys, 2);
        ck_assert_str_eq(b->keys[0].bus_id, "0000:18:00.0");
        ck_assert_uint_eq(b->keys[0].xid, 79);
        ck_assert_uint_eq(b->keys[0].count, 2);
        ck_assert_uint_eq(b->keys[0].first_usec, 5000000);
        ck_assert_uint_eq(b->keys[0].last_usec, 5000001);
        ck_assert_uint_eq(b->keys[0].first_seq, 102);
        ck_assert_uint_eq(b->keys[0].last_seq, 103);
        ck_assert_uint_eq(b->keys[1].xid, 13);
}
END_TEST

/* An NVRM line from any facility but the kernel's (a program writing to
 * /dev/kmsg, journald forwarding a user's log there) is no XID. */
START_TEST(test_batch_not_kernel) {
        _cleanup_free_ GresKmsgBatch *b = batch(true, 0);

        feed(b, "14," XID79("1")); /* user.info */
        feed(b, "11," XID79("2")); /* user.err */
        feed(b, "30," XID79("3")); /* daemon.info */
        ck_assert_uint_eq(b->n_keys, 0);
        ck_assert_uint_eq(b->last, 3);
        feed(b, "3," XID79("4")); /* kern.err: the driver */
        ck_assert_uint_eq(b->n_keys, 1);
        ck_assert_uint_eq(b->keys[0].xid, 79);
}
END_TEST

/* Records the ring overwrote before they were read: a jump in the numbers,
 * after an EPIPE or after a restart; each gap said from where to where. */
START_TEST(test_batch_lost) {
        _cleanup_free_ GresKmsgBatch *b = batch(true, 100);

        /* the cursor says 100 was the last read: 101 to 149 are gone */
        feed(b, "6,150,1,-;first left in the ring\n");
        ck_assert_uint_eq(b->lost, 49);
        ck_assert_uint_eq(b->n_gaps, 1);
        ck_assert_uint_eq(b->gaps[0].from, 101);
        ck_assert_uint_eq(b->gaps[0].to, 149);
        feed(b, "6,151,1,-;next\n");
        /* read() says EPIPE, and the next record is further on */
        gres_kmsg_batch_overflow(b);
        feed(b, "3," XID79("400"));
        ck_assert_uint_eq(b->overflows, 1);
        ck_assert_uint_eq(b->lost, 49 + 248);
        ck_assert_uint_eq(b->gaps[1].from, 152);
        ck_assert_uint_eq(b->gaps[1].to, 399);
        ck_assert_uint_eq(b->n_keys, 1);
        /* a record again, or from before: skipped, nothing lost */
        feed(b, "3," XID79("400"));
        feed(b, "3," XID79("300"));
        ck_assert_uint_eq(b->skipped, 2);
        ck_assert_uint_eq(b->keys[0].count, 1);
        /* the gaps kept are bounded, the count is not */
        for (unsigned i = 0; i < 10; i++) {
                char line[64];
                snprintf(line, sizeof(line), "6,%u,1,-;x\n", 1000 + 10 * i);
                feed(b, line);
        }
        ck_assert_uint_eq(b->n_gaps, GRES_KMSG_GAPS_MAX);
        ck_assert_uint_eq(b->lost, 49 + 248 + 599 + 9 * 9);
}
END_TEST

/* Without a cursor (the first read in this boot) the first record is where
 * reading starts: nothing before it counts as lost. */
START_TEST(test_batch_no_cursor) {
        _cleanup_free_ GresKmsgBatch *b = batch(false, 0);

        feed(b, "6,5000,1,-;x\n6,5001,1,-;y\n");
        ck_assert_uint_eq(b->lost, 0);
        ck_assert_uint_eq(b->records, 2);
        ck_assert_uint_eq(b->last, 5001);
}
END_TEST

/* A stand-in hands records in pieces: a line completes across reads and
 * across batches (the carry); one longer than any record is dropped whole. */
START_TEST(test_batch_partial) {
        _cleanup_free_ GresKmsgBatch *b = batch(false, 0), *next = NULL;
        _cleanup_free_ char *huge = malloc(3 * GRES_KMSG_RECORD_MAX);
        const char *rec = "3," XID79("7");
        size_t cut = 20;

        gres_kmsg_batch_feed(b, rec, cut);
        ck_assert_uint_eq(b->records, 0);
        ck_assert_uint_eq(b->n_partial, cut);
        gres_kmsg_batch_feed(b, rec + cut, 5);
        /* the batch ends here: its part goes to the next */
        next = malloc(sizeof(*next));
        gres_kmsg_batch_init(next, true, 6, b->partial, b->n_partial);
        feed(next, rec + cut + 5);
        ck_assert_uint_eq(next->records, 1);
        ck_assert_uint_eq(next->n_keys, 1);
        ck_assert_uint_eq(next->n_partial, 0);

        memset(huge, 'a', 3 * GRES_KMSG_RECORD_MAX);
        memcpy(huge, "6,8,1,-;", 8);
        gres_kmsg_batch_feed(next, huge, 3 * GRES_KMSG_RECORD_MAX);
        ck_assert_uint_eq(next->malformed, 1);
        ck_assert_uint_eq(next->n_partial, 0);
        feed(next, "aaaa\n3," XID79("9"));
        ck_assert_uint_eq(next->malformed, 1);
        ck_assert_uint_eq(next->records, 2);
        ck_assert_uint_eq(next->keys[0].count, 2);
}
END_TEST

/* A storm takes one key whatever its length; more pairs than a batch keeps
 * are counted as dropped, and the batch's size never changes. */
START_TEST(test_batch_storm) {
        _cleanup_free_ GresKmsgBatch *b = batch(false, 0);
        char line[160];

        for (unsigned i = 0; i < 100000; i++) {
                snprintf(line, sizeof(line),
                         "3,%u,%u,-;NVRM: Xid (PCI:0000:18:00): 45, pid=%u, name=x, Ch 00000001\n", i + 1,
                         1000000 + i * 10, i);
                feed(b, line);
        }
        ck_assert_uint_eq(b->n_keys, 1);
        ck_assert_uint_eq(b->keys[0].count, 100000);
        ck_assert_uint_eq(b->keys[0].first_usec, 1000000);
        ck_assert_uint_eq(b->keys[0].last_usec, 1000000 + 99999 * 10);
        for (unsigned i = 0; i < GRES_KMSG_KEYS_MAX + 10; i++) {
                snprintf(line, sizeof(line), "3,%u,1,-;NVRM: Xid (PCI:0000:18:00): %u, pid=1, name=x\n",
                         200000 + i, 1000 + i);
                feed(b, line);
        }
        ck_assert_uint_eq(b->n_keys, GRES_KMSG_KEYS_MAX);
        ck_assert_uint_eq(b->dropped, 11);
}
END_TEST

/* The reader on a pipe, as on a FIFO stand-in: what is there is read at
 * once, a quiet window ends empty, a closed writer is the end. */
START_TEST(test_read_pipe) {
        _cleanup_free_ GresKmsgBatch *b = batch(false, 0);
        int p[2];
        uint64_t t;
        const char *recs = "6,1,1,-;NVRM: GPU at PCI:0000:18:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7\n"
                           "3,2,2,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the "
                           "bus.\n3,3,3,-;NVRM: X";

        ck_assert_int_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
        ck_assert_int_eq(write(p[1], recs, strlen(recs)), (ssize_t) strlen(recs));
        t = now_usec(CLOCK_MONOTONIC);
        ck_assert_int_eq(gres_kmsg_read(p[0], 3600ULL * 1000000, 65536, b), 0);
        /* the partial line waited 100 ms for its rest, not the hour */
        ck_assert_uint_lt(now_usec(CLOCK_MONOTONIC) - t, 30ULL * 1000000);
        ck_assert_uint_eq(b->records, 2);
        ck_assert_uint_eq(b->n_keys, 1);
        ck_assert_uint_eq(b->n_partial, strlen("3,3,3,-;NVRM: X"));
        ck_assert(!b->eof);

        gres_kmsg_batch_init(b, true, 2, NULL, 0);
        ck_assert_int_eq(gres_kmsg_read(p[0], 200000, 65536, b), 0);
        ck_assert_uint_eq(b->records, 0);

        /* bounded: a batch stops once past its maximum (at the end of a
         * read) and the rest waits for the next */
        ck_assert_int_ge(fcntl(p[1], F_SETPIPE_SZ, 1024 * 1024), 1024 * 1024);
        gres_kmsg_batch_init(b, false, 0, NULL, 0);
        for (unsigned i = 0; i < 20000; i++) {
                char line[64];
                int n = snprintf(line, sizeof(line), "6,%u,1,-;x\n", 10 + i);
                ck_assert_int_eq(write(p[1], line, (size_t) n), n);
        }
        ck_assert_int_eq(gres_kmsg_read(p[0], 200000, 100, b), 0);
        ck_assert_uint_lt(b->records, 20000);
        ck_assert_uint_ge(b->records, 100);
        {
                char carry[GRES_KMSG_RECORD_MAX];
                size_t n = b->n_partial;

                memcpy(carry, b->partial, n);
                gres_kmsg_batch_init(b, true, b->last, carry, n);
        }
        ck_assert_int_eq(gres_kmsg_read(p[0], 200000, UINT64_MAX, b), 0);
        ck_assert_uint_eq(b->last, 10 + 19999);
        ck_assert_uint_eq(b->lost, 0);

        /* what the cursor says was read counts against nothing: a ring
         * larger than a batch still gets to the new records */
        gres_kmsg_batch_init(b, true, 20000, NULL, 0);
        for (unsigned i = 0; i < 20010; i++) {
                char line[64];
                int n = snprintf(line, sizeof(line), "6,%u,1,-;x\n", 1 + i);
                ck_assert_int_eq(write(p[1], line, (size_t) n), n);
        }
        ck_assert_int_eq(gres_kmsg_read(p[0], 200000, 100, b), 0);
        ck_assert_uint_eq(b->skipped, 20000);
        ck_assert_uint_eq(b->records, 10);
        ck_assert_uint_eq(b->last, 20010);

        close(p[1]);
        gres_kmsg_batch_init(b, false, 0, NULL, 0);
        ck_assert_int_eq(gres_kmsg_read(p[0], 3600ULL * 1000000, 65536, b), 0);
        ck_assert(b->eof);
        close(p[0]);
}
END_TEST

/* The node's own kernel log, read as gres reads it: one record per read,
 * each one well formed, the numbers rising without a gap (the ring may have
 * dropped records before the first; none between). */
START_TEST(test_read_dev_kmsg) {
        _cleanup_free_ GresKmsgBatch *b = batch(false, 0);
        int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

        ck_assert_msg(fd >= 0, "Bail out! cannot read /dev/kmsg (%s): run the tests as root",
                      strerror(errno));
        ck_assert_int_eq(gres_kmsg_read(fd, 1000000, UINT64_MAX, b), 0);
        close(fd);
        ck_assert_uint_gt(b->records, 0);
        ck_assert_uint_eq(b->malformed, 0);
        ck_assert_uint_eq(b->lost, 0);
        ck_assert_uint_eq(b->n_partial, 0);
}
END_TEST

START_TEST(test_json) {
        _cleanup_free_ GresKmsgBatch *b = batch(true, 0);
        json_object *o, *e;
        const uint64_t rt = 1800000000000000ULL, mono = 10000000;

        feed(b, "6,1,4000000,-;NVRM: GPU at PCI:0000:18:00: GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7\n");
        feed(b,
             "3,3,5000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, GPU has fallen off the bus.\n");
        feed(b, "3,4,99000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, stamped ahead\n");
        feed(b, "6,5,1,-;part");
        o = gres_kmsg_batch_to_json(b, rt, mono);
        ck_assert_ptr_nonnull(o);
        /* the last whole record: the part of the next is carried */
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(o, "seq")), 4);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(o, "lost")), 1);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(o, "partial")), "6,5,1,-;part");
        e = json_object_array_get_idx(json_object_object_get(o, "events"), 0);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "count")), 2);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "time_usec")),
                         (int64_t) (rt - 5000000));
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "last_usec")), (int64_t) rt);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(
                                 json_object_array_get_idx(json_object_object_get(o, "gpus"), 0), "uuid")),
                         "GPU-b850f46d-d5ea-c752-ddf3-c4453e44d3f7");
        json_object_put(o);
        /* a partial line that is no text (a stand-in's binary) is not handed on */
        gres_kmsg_batch_init(b, false, 0, NULL, 0);
        gres_kmsg_batch_feed(b, "6,1,1,-;\x01\xff", 10);
        o = gres_kmsg_batch_to_json(b, rt, mono);
        ck_assert_ptr_null(json_object_object_get(o, "partial"));
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(o, "malformed")), 1);
        json_object_put(o);
}
END_TEST

/* The same XID on two GPUs in one batch: a count for each GPU, handed on
 * as two events, which the XID log books on each GPU. */
START_TEST(test_batch_same_xid_two_gpus) {
        _cleanup_free_ GresKmsgBatch *b = batch(true, 0);
        _cleanup_free_ GresXidLog *l = malloc(sizeof(*l));
        const uint64_t rt = 1800000000000000ULL, mono = 10000000;
        json_object *o, *events;

        feed(b, "3,1,5000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, fell off the bus\n");
        feed(b, "3,2,5000001,-;NVRM: Xid (PCI:0000:2a:00): 79, pid=1, name=x, fell off the bus\n");
        feed(b, "3,3,5000002,-;NVRM: Xid (PCI:0000:2a:00): 79, pid=1, name=x, fell off the bus\n");
        ck_assert_uint_eq(b->n_keys, 2);
        ck_assert_str_eq(b->keys[0].bus_id, "0000:18:00.0");
        ck_assert_uint_eq(b->keys[0].count, 1);
        ck_assert_str_eq(b->keys[1].bus_id, "0000:2a:00.0");
        ck_assert_uint_eq(b->keys[1].xid, 79);
        ck_assert_uint_eq(b->keys[1].count, 2);
        o = gres_kmsg_batch_to_json(b, rt, mono);
        ck_assert_ptr_nonnull(o);
        events = json_object_object_get(o, "events");
        ck_assert_uint_eq(json_object_array_length(events), 2);
        /* as the module takes them in (gres-xid-store.c) */
        ck_assert_ptr_nonnull(l);
        gres_xid_log_init(l);
        for (size_t i = 0; i < json_object_array_length(events); i++) {
                GresXidEvent e, *entry;

                ck_assert_int_eq(gres_xid_event_from_json(json_object_array_get_idx(events, i), &e), 0);
                ck_assert_int_eq(gres_xid_log_add(l, &e, e.count, GRES_XID_KMSG, &entry),
                                 GRES_XID_ADDED_NEW);
        }
        json_object_put(o);
        ck_assert_uint_eq(l->n, 2);
        ck_assert_str_eq(gres_xid_log_get(l, 0)->bus_id, "0000:18:00.0");
        ck_assert_uint_eq(gres_xid_log_get(l, 0)->count, 1);
        ck_assert_str_eq(gres_xid_log_get(l, 1)->bus_id, "0000:2a:00.0");
        ck_assert_uint_eq(gres_xid_log_get(l, 1)->count, 2);
        ck_assert_uint_eq(l->total, 3);
}
END_TEST

/* A record stamped after now (a stand-in's clock, a stamp read wrong) is
 * not the newest: it counts as now, and a record of the pair stamped
 * before it, read after it, keeps the first time. */
START_TEST(test_json_stamped_after_now) {
        _cleanup_free_ GresKmsgBatch *b = batch(true, 0);
        const uint64_t rt = 1800000000000000ULL, mono = 10000000;
        json_object *o, *e;

        feed(b, "3,1,99000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, stamped ahead\n");
        feed(b, "3,2,4000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, stamped before now\n");
        feed(b, "3,3,4000000,-;NVRM: Xid (PCI:0000:2a:00): 48, pid=1, name=x, stamped before now\n");
        feed(b, "3,4,99000000,-;NVRM: Xid (PCI:0000:2a:00): 48, pid=1, name=x, stamped ahead\n");
        ck_assert_uint_eq(b->n_keys, 2);
        for (size_t i = 0; i < 2; i++) {
                ck_assert_uint_eq(b->keys[i].first_usec, 4000000);
                ck_assert_uint_eq(b->keys[i].last_usec, 99000000);
        }
        o = gres_kmsg_batch_to_json(b, rt, mono);
        ck_assert_ptr_nonnull(o);
        for (size_t i = 0; i < 2; i++) {
                e = json_object_array_get_idx(json_object_object_get(o, "events"), i);
                ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "time_usec")),
                                 (int64_t) (rt - 6000000));
                ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "last_usec")),
                                 (int64_t) rt);
        }
        json_object_put(o);
        /* stamped ahead alone: both times are now, none after it */
        gres_kmsg_batch_init(b, false, 0, NULL, 0);
        feed(b, "3,9,99000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=1, name=x, stamped ahead\n");
        o = gres_kmsg_batch_to_json(b, rt, mono);
        e = json_object_array_get_idx(json_object_object_get(o, "events"), 0);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "time_usec")), (int64_t) rt);
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(e, "last_usec")), (int64_t) rt);
        json_object_put(o);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("gres-kmsg");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_record);
        tcase_add_test(tc, test_nvrm_xid);
        tcase_add_test(tc, test_nvrm_gpu);
        suite_add_tcase(s, tc);
        tc = tcase_create("batch");
        tcase_add_test(tc, test_batch);
        tcase_add_test(tc, test_batch_lost);
        tcase_add_test(tc, test_batch_not_kernel);
        tcase_add_test(tc, test_batch_no_cursor);
        tcase_add_test(tc, test_batch_partial);
        tcase_add_test(tc, test_batch_storm);
        tcase_add_test(tc, test_json);
        tcase_add_test(tc, test_batch_same_xid_two_gpus);
        tcase_add_test(tc, test_json_stamped_after_now);
        suite_add_tcase(s, tc);
        tc = tcase_create("read");
        tcase_add_test(tc, test_read_pipe);
        tcase_add_test(tc, test_read_dev_kmsg);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
