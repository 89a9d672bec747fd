/* io.sunkd.Gres.List: the last discovery's result, with the XIDs seen
 * since and the slurm.conf check.  A call that comes before the first
 * result waits for it (gres-wait.h), as long as its caller, the
 * discovery's timeout and LIST_WAITING_MAX allow; gres-discover.c says when
 * a discovery ended, with a result or without. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "gres-state.h"
#include "gres-wait.h"
#include "sunkd/module.h"
#include "util/cleanup.h"

#define LIST_WAITING_MAX 64 /* io.sunkd.Gres.List calls waiting for the first discovery */

static int reply_unavailable(State *s, sunkd_call *call, const char *reason) {
        json_object *p = json_object_new_object();

        if (p)
                json_object_object_add(p, "reason", json_object_new_string(reason));
        return s->ctx->api->reply_error(call, "io.sunkd.Unavailable", p);
}

static int list_reply(State *s, sunkd_call *call) {
        json_object *reply, *check;

        if (json_object_deep_copy(s->last, &reply, NULL) < 0)
                return -ENOMEM;
        if (gres_apply_xids(s, json_object_object_get(reply, "gpus")) < 0) {
                json_object_put(reply);
                return -ENOMEM;
        }
        check = json_object_new_object();
        if (check) {
                json_object_object_add(check, "result",
                                       json_object_new_string(s->check == 1   ? "match"
                                                              : s->check == 0 ? "mismatch"
                                                                              : "unknown"));
                json_object_object_add(check, "message", json_object_new_string(s->check_message ?: ""));
                json_object_object_add(check, "slurm_conf", json_object_new_string(s->conf.slurm_conf));
                json_object_object_add(check, "node_name", json_object_new_string(s->conf.node_name));
                json_object_object_add(reply, "check", check);
        }
        json_object_object_add(reply, "discovered_usec", json_object_new_int64((int64_t) s->last_usec));
        return s->ctx->api->reply(call, reply);
}

/* Before the first result a call waits for it, as long as its caller does
 * (sunkctl's --timeout), the discovery's timeout and LIST_WAITING_MAX allow. */
static int method_list(sunkd_call *call, json_object *params, void *state) {
        State *s = state;
        int r;

        if (s->last)
                return list_reply(s, call);
        if (s->unavailable)
                return reply_unavailable(s, call, s->unavailable);
        r = gres_wait_add(&s->waiting, call, LIST_WAITING_MAX);
        if (r == -EBUSY)
                return reply_unavailable(s, call, "too many calls wait for the first discovery");
        return r;
}

static void answer_waiting(sunkd_call *call, void *userdata) {
        State *s = userdata;

        if ((s->last ? list_reply(s, call)
                     : reply_unavailable(s, call, s->unavailable ?: "no discovery has finished yet")) < 0)
                (void) s->ctx->api->reply_error(call, "io.sunkd.InternalError", NULL);
}

void gres_list_result(State *s) {
        s->unavailable = mfree(s->unavailable);
        gres_wait_answer(&s->waiting, answer_waiting, s);
}

void gres_list_no_result(State *s, int r, const char *why) {
        if (s->last)
                return;
        free(s->unavailable);
        if (asprintf(&s->unavailable, "GPU discovery failed: %s", why ?: strerror(-r)) < 0)
                s->unavailable = NULL;
        gres_wait_answer(&s->waiting, answer_waiting, s);
}

static const sunkd_method methods[] = {
        { "io.sunkd.Gres.List", SUNKD_METHOD_ANY_UID, method_list },
};

static void answer_stopping(sunkd_call *call, void *userdata) {
        (void) reply_unavailable(userdata, call, "the gres module is stopping");
}

int gres_list_methods_add(State *s) {
        return s->ctx->api->methods_add(s->ctx, methods, sizeof(methods) / sizeof(methods[0]));
}

void gres_list_stopping(State *s) {
        gres_wait_answer(&s->waiting, answer_stopping, s);
}
