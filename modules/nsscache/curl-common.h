/* What every libcurl handle of the module shares: the transport (no
 * signals, no redirects, http and https only, sunkd's User-Agent, the
 * request and connect timeouts, TLS verified against the CAs given, the
 * proxy), libcurl's errors as negative errno and which of them another
 * attempt may heal, and a backoff that notices cancellation.  Non-logging;
 * the host must have called curl_global_init() once. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <curl/curl.h>

#include "sunkd/module.h"

typedef struct CurlTransport {
        uint64_t timeout_usec; /* per request; connecting takes at most 10 s of it */
        bool tls_verify;
        const char *ca_file; /* NULL: the system's CAs */
        const char *proxy;   /* NULL: libcurl's default (the environment's) */
} CurlTransport;

/** curl_transport_setup() - @t on the easy handle @c.  Return: libcurl's code of the first option refused.
 */
CURLcode curl_transport_setup(CURL *c, const CurlTransport *t);

/** curl_to_errno() - @cr as a negative errno (-EIO for those without a better one). */
int curl_to_errno(CURLcode cr);

/** curl_transient() - whether a transfer that failed with @cr is worth another attempt. */
bool curl_transient(CURLcode cr);

/** curl_backoff_sleep() - sleep @usec in slices, so that cancellation is noticed quickly.  Return: 0 or
 * -ECANCELED. */
int curl_backoff_sleep(const sunkd_cancel *cancel, uint64_t usec);

/** curl_now_usec() - CLOCK_MONOTONIC in microseconds, for the fetches' durations. */
uint64_t curl_now_usec(void);
