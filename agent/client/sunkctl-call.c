/* sunkctl: the one call each verb makes, and what it prints when the call
 * fails. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"

#define REPLY_MAX (16 * 1024 * 1024)

/* What a person should read for the errors everyone meets; where @then is
 * set, the method goes between @hint and @then. */
static const struct {
        const char *error;
        const char *hint, *then;
} hints[] = {
        { "io.sunkd.PermissionDenied", "permission denied: run as root, or be in the module's allow: list",
          NULL },
        { "io.sunkd.NoSuchJob", "no such job (sunkctl jobs lists them)", NULL },
        { "org.varlink.service.MethodNotFound", "this sunkd does not know ", " (is the module enabled?)" },
        { "io.sunkd.ReloadFailed", "the new configuration was refused; the running one stays", NULL },
};

/* A refused reload: a configuration error, as --check-config reports it
 * (exit 2), unless the file is in force but for a module that could not
 * apply its section (exit 1). */
static int print_reload_failed(const char *error, json_object *reply) {
        const char *reason = json_member_string(reply, "reason");

        if (json_object_get_boolean(json_object_object_get(reply, "applied"))) {
                fprintf(stderr, "sunkctl: the new configuration is in force, except for %s (%s)\n",
                        reason ?: "some modules", error);
                print_pending_restart(stderr, reply);
                return EXIT_FAILED;
        }
        fprintf(stderr, "sunkctl: the new configuration was refused; the running one stays: %s (%s)\n",
                reason ?: "invalid", error);
        return EXIT_USAGE;
}

/* Prints sunkd's error @error with its parameters @reply; returns the exit code. */
static int print_error(const char *method, const char *error, json_object *reply) {
        const char *reason = json_member_string(reply, "reason");

        if (streq_ptr(error, "io.sunkd.ReloadFailed"))
                return print_reload_failed(error, reply);
        for (size_t i = 0; error && i < ELEMENTSOF(hints); i++)
                if (streq(error, hints[i].error)) {
                        fprintf(stderr, "sunkctl: %s%s%s%s%s (%s)\n", hints[i].hint,
                                hints[i].then ? method : "", hints[i].then ?: "", reason ? ": " : "",
                                reason ?: "", error);
                        return EXIT_FAILED;
                }
        fprintf(stderr, "sunkctl: %s failed: %s%s%s\n", method, error ?: "unknown error", reply ? " " : "",
                reply ? json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PLAIN) : "");
        return EXIT_FAILED;
}

int ctl_call(Ctl *c, const char *method, json_object *params, json_object **ret) {
        _cleanup_free_ char *error = NULL;
        json_object *reply = NULL;
        int r;

        if (c->fd < 0) {
                r = client_connect(c->socket, c->timeout_usec, &c->fd);
                if (r < 0) {
                        fprintf(stderr, "sunkctl: cannot connect to %s: %s: is sunkd running?\n", c->socket,
                                strerror(-r));
                        return EXIT_UNREACHABLE;
                }
        }
        /* Every verb makes one call. */
        r = client_call_last(c->fd, method, params, c->timeout_usec, REPLY_MAX, &reply, &error);
        if (r == -EREMOTEIO) {
                r = print_error(method, error, reply);
                json_object_put(reply);
                return r;
        }
        if (r < 0) {
                fprintf(stderr, "sunkctl: %s: %s\n", method, strerror(-r));
                return EXIT_FAILED;
        }
        *ret = reply;
        return 0;
}

int ctl_print_json(json_object *reply) {
        printf("%s\n", reply ? json_object_to_json_string_ext(reply, JSON_C_TO_STRING_PRETTY |
                                                                             JSON_C_TO_STRING_SPACED)
                             : "{}");
        return 0;
}
