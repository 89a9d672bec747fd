/* sunkctl reload, metrics, version, ping: the daemon's own calls that print
 * a fixed text or one field. */
#include <inttypes.h>
#include <stdio.h>

#include <sunkd/module.h>

#include "sunkctl.h"
#include "util/cleanup.h"
#include "util/json-util.h"

/* "Settings that take effect at restart: a, b." when the reply names any. */
void print_pending_restart(FILE *f, json_object *reply) {
        json_object *keys = json_object_object_get(reply, "pending_restart");
        size_t n = json_object_is_type(keys, json_type_array) ? json_object_array_length(keys) : 0;

        if (n == 0)
                return;
        fputs("Settings that take effect at restart: ", f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%s", i ? ", " : "",
                        json_object_get_string(json_object_array_get_idx(keys, i)));
        fputs(".\n", f);
}

int verb_reload(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *p = NULL;
        int r = ctl_call(c, "io.sunkd.Agent.Reload", NULL, &p);

        if (r)
                return r;
        if (c->json)
                return ctl_print_json(p);
        printf("Configuration reloaded.\n");
        print_pending_restart(stdout, p);
        return 0;
}

int verb_metrics(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *p = NULL;
        int r = ctl_call(c, "io.sunkd.Agent.Metrics", NULL, &p);

        if (r)
                return r;
        if (c->json)
                return ctl_print_json(p);
        fputs(json_member_string(p, "text") ?: "", stdout);
        return 0;
}

/* The module ABI of the sunkd built with this sunkctl: a sunkctl and a
 * sunkd from different builds tell apart by it and the version. */
void print_client_version(void) {
        printf("sunkctl %s (module ABI %d.%d)\n", PACKAGE_VERSION, SUNKD_MODULE_ABI_MAJOR,
               SUNKD_MODULE_ABI_MINOR);
}

int verb_version(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *p = NULL;
        int r;

        if (!c->json)
                print_client_version();
        r = ctl_call(c, "io.sunkd.Agent.Version", NULL, &p);
        if (r)
                return r;
        if (c->json)
                return ctl_print_json(p);
        printf("sunkd %s (module ABI %" PRId64 ".%" PRId64 ")\n", json_member_string(p, "version") ?: "?",
               json_member_int64(p, "abi_major", 0), json_member_int64(p, "abi_minor", 0));
        return 0;
}

int verb_ping(Ctl *c, int argc, char **argv) {
        _cleanup_json_ json_object *p = NULL;
        int r = ctl_call(c, "io.sunkd.Agent.Ping", NULL, &p);

        if (r)
                return r;
        if (c->json)
                return ctl_print_json(p);
        printf("pong\n");
        return 0;
}
