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

/* No such method: the verbs the module has (sunkd lists its interface's
 * methods), or, with none, that the module is not there. */
static int print_not_found(const char *method, const char *error, json_object *reply) {
        json_object *l = json_object_object_get(reply, "methods");
        size_t n = json_object_is_type(l, json_type_array) ? json_object_array_length(l) : 0;
        char module[128], verb[128];

        if (n == 0 || method_words(method, module, verb, sizeof(module)) < 0) {
                fprintf(stderr, "sunkctl: this sunkd does not know %s (is the module enabled?) (%s)\n",
                        method, error);
                return EXIT_FAILED;
        }
        fprintf(stderr, "sunkctl: %s has no verb '%s' (%s); its verbs:", module, verb, method);
        for (size_t i = 0; i < n; i++) {
                const char *m = json_object_get_string(json_object_array_get_idx(l, i));

                if (m && method_words(m, NULL, verb, sizeof(verb)) == 0)
                        fprintf(stderr, " %s", verb);
        }
        fprintf(stderr, " (sunkctl %s VERB [KEY=VALUE...])\n", module);
        return EXIT_FAILED;
}

/* A parameter the method refused: missing, when it was not given; else its
 * value, with the method's reason. */
static int print_invalid_parameter(const char *method, json_object *params, json_object *reply) {
        const char *p = json_member_string(reply, "parameter"),
                   *reason = json_member_string(reply, "reason");
        json_object *given;

        if (!p)
                return -1;
        if (!json_object_object_get_ex(params, p, &given))
                fprintf(stderr, "sunkctl: %s: missing parameter %s=%s%s\n", method, p, reason ? ": " : "",
                        reason ?: "");
        else
                fprintf(stderr, "sunkctl: %s: invalid parameter %s=%s%s%s\n", method, p,
                        json_object_is_type(given, json_type_string)
                                ? json_object_get_string(given)
                                : json_object_to_json_string_ext(given, JSON_C_TO_STRING_PLAIN),
                        reason ? ": " : "", reason ?: "");
        return EXIT_FAILED;
}

/* Prints sunkd's error @error with its parameters @reply to the call of
 * @method with @params; returns the exit code. */
static int print_error(const char *method, json_object *params, const char *error, json_object *reply) {
        const char *reason = json_member_string(reply, "reason");
        int r;

        if (streq_ptr(error, "io.sunkd.ReloadFailed"))
                return print_reload_failed(error, reply);
        if (streq_ptr(error, "org.varlink.service.MethodNotFound"))
                return print_not_found(method, error, reply);
        if (streq_ptr(error, "org.varlink.service.InvalidParameter") &&
            (r = print_invalid_parameter(method, params, reply)) >= 0)
                return r;
        /* root's alone: no allow: list opens it */
        if (streq_ptr(error, "io.sunkd.PermissionDenied") && streq(method, "io.sunkd.Agent.Reload")) {
                fprintf(stderr, "sunkctl: permission denied: only root may reload the configuration (%s)\n",
                        error);
                return EXIT_FAILED;
        }
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
                r = print_error(method, params, error, reply);
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
