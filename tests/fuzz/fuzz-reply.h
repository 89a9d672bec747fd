/* The replies of a fuzzer's fake host, checked: each call is answered once,
 * and the answer must be what varlink_format() takes, or the fuzzer aborts.
 * The real server's last defence (varlink_repair_utf8()) would hide a
 * reply it refuses.  Shared by fuzz-methods.c (a module's methods) and
 * fuzz-agent-methods.c (the daemon's own). */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "util/cleanup.h"
#include "util/json-util.h"
#include "proto/varlink.h"

/* Aborts unless {"error": @error, "parameters": @params} formats as a
 * Varlink message; takes @params. */
static inline void fuzz_reply_check(const char *error, json_object *params) {
        _cleanup_json_ json_object *msg = json_object_new_object();
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r;

        if (!msg)
                abort();
        if (error)
                json_object_object_add(msg, "error", json_object_new_string(error));
        json_object_object_add(msg, "parameters", params ?: json_object_new_object());
        r = varlink_format(msg, &buf, &len);
        if (r == -ENOMEM)
                return;
        if (r < 0) {
                fprintf(stderr, "reply not valid Varlink JSON (%s): %s\n", strerror(-r),
                        json_object_to_json_string_ext(msg, JSON_C_TO_STRING_PLAIN));
                abort();
        }
}

/* The host's reply_error to a call whose answered flag is @replied (NULL:
 * no call): -EALREADY for a second answer, as the host refuses it; takes
 * @params either way. */
static inline int fuzz_reply_once(bool *replied, const char *error, json_object *params) {
        if (!replied || *replied) {
                json_object_put(params);
                return -EALREADY;
        }
        *replied = true;
        fuzz_reply_check(error, params);
        return 0;
}
