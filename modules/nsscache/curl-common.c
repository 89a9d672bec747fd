/* The libcurl settings, error mapping and backoff the fetchers share (curl-common.h). */
#include <errno.h>
#include <time.h>

#include "curl-common.h"
#include "util/macro.h"

#define CONNECT_TIMEOUT_MAX_USEC (10 * SUNKD_USEC_PER_SEC)

CURLcode curl_transport_setup(CURL *c, const CurlTransport *t) {
        CURLcode cr = CURLE_OK;

#define SET(opt, val)                                                                                       \
        do {                                                                                                \
                if (cr == CURLE_OK)                                                                         \
                        cr = curl_easy_setopt(c, opt, val);                                                 \
        } while (0)
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_FOLLOWLOCATION, 0L);
        SET(CURLOPT_PROTOCOLS_STR, "https,http");
        SET(CURLOPT_USERAGENT, "sunkd-nsscache/" PACKAGE_VERSION);
        SET(CURLOPT_TIMEOUT_MS, (long) (t->timeout_usec / SUNKD_USEC_PER_MSEC));
        SET(CURLOPT_CONNECTTIMEOUT_MS,
            (long) (MIN(t->timeout_usec, CONNECT_TIMEOUT_MAX_USEC) / SUNKD_USEC_PER_MSEC));
        SET(CURLOPT_SSL_VERIFYPEER, t->tls_verify ? 1L : 0L);
        SET(CURLOPT_SSL_VERIFYHOST, t->tls_verify ? 2L : 0L);
        if (t->ca_file)
                SET(CURLOPT_CAINFO, t->ca_file);
        if (t->proxy)
                SET(CURLOPT_PROXY, t->proxy);
        SET(CURLOPT_TCP_KEEPALIVE, 1L);
        SET(CURLOPT_VERBOSE, 0L);
#undef SET
        return cr;
}

int curl_to_errno(CURLcode cr) {
        static const struct {
                CURLcode code;
                int err;
        } table[] = {
                { CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT },
                { CURLE_COULDNT_CONNECT, -ECONNREFUSED },
                { CURLE_COULDNT_RESOLVE_HOST, -EHOSTUNREACH },
                { CURLE_COULDNT_RESOLVE_PROXY, -EHOSTUNREACH },
                { CURLE_ABORTED_BY_CALLBACK, -ECANCELED },
                { CURLE_FILESIZE_EXCEEDED, -EFBIG },
                { CURLE_OUT_OF_MEMORY, -ENOMEM },
                { CURLE_PEER_FAILED_VERIFICATION, -EPERM },
                { CURLE_SSL_CACERT_BADFILE, -EPERM },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                if (table[i].code == cr)
                        return table[i].err;
        return -EIO;
}

bool curl_transient(CURLcode cr) {
        /* a body that does not decode was most likely cut or mangled on the way */
        static const CURLcode transient[] = {
                CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT,
                CURLE_OPERATION_TIMEDOUT,   CURLE_SEND_ERROR,
                CURLE_RECV_ERROR,           CURLE_GOT_NOTHING,
                CURLE_PARTIAL_FILE,         CURLE_HTTP2,
                CURLE_HTTP2_STREAM,         CURLE_SSL_CONNECT_ERROR,
                CURLE_BAD_CONTENT_ENCODING,
        };

        for (size_t i = 0; i < ELEMENTSOF(transient); i++)
                if (cr == transient[i])
                        return true;
        return false;
}

uint64_t curl_now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * SUNKD_USEC_PER_SEC + (uint64_t) ts.tv_nsec / 1000;
}

int curl_backoff_sleep(const sunkd_cancel *cancel, uint64_t usec) {
        uint64_t end = curl_now_usec() + usec;

        for (;;) {
                uint64_t now = curl_now_usec(), slice;
                struct timespec ts;

                if (sunkd_cancelled(cancel))
                        return -ECANCELED;
                if (now >= end)
                        return 0;
                slice = MIN(end - now, 50 * SUNKD_USEC_PER_MSEC);
                ts = (struct timespec){ .tv_sec = (time_t) (slice / SUNKD_USEC_PER_SEC),
                                        .tv_nsec = (long) (slice % SUNKD_USEC_PER_SEC) * 1000 };
                nanosleep(&ts, NULL);
        }
}
