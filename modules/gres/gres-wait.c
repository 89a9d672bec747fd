#include <errno.h>
#include <stdlib.h>

#include "gres-wait.h"

struct GresWaiter {
        GresWaitList *list;
        sunkd_call *call;
        GresWaiter *prev, *next;
};

static void unlink_waiter(GresWaiter *w) {
        GresWaitList *l = w->list;

        if (w->prev)
                w->prev->next = w->next;
        else
                l->first = w->next;
        if (w->next)
                w->next->prev = w->prev;
        l->n--;
}

/* The caller hung up: the reply only frees the handle. */
static void on_gone(sunkd_call *call, void *userdata) {
        GresWaiter *w = userdata;
        sunkd_ctx *c = w->list->ctx;

        unlink_waiter(w);
        free(w);
        (void) c->api->reply(call, NULL);
}

int gres_wait_add(GresWaitList *l, sunkd_call *call, size_t max) {
        GresWaiter *w, **end;
        int r;

        if (l->n >= max)
                return -EBUSY;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (GresWaiter){ .list = l, .call = call };
        r = l->ctx->api->call_on_gone(call, on_gone, w);
        if (r < 0) {
                free(w);
                return r;
        }
        /* At the end: answered in the order they came. */
        for (end = &l->first; *end; end = &(*end)->next)
                w->prev = *end;
        *end = w;
        l->n++;
        return SUNKD_CALL_PENDING;
}

void gres_wait_answer(GresWaitList *l, void (*answer)(sunkd_call *call, void *userdata), void *userdata) {
        while (l->first) {
                GresWaiter *w = l->first;
                sunkd_call *call = w->call;

                unlink_waiter(w);
                free(w);
                answer(call, userdata);
        }
}
