/* Socket calls that wait for something the module does not have yet (the
 * first discovery's result): each is kept pending (SUNKD_CALL_PENDING)
 * until the module answers the whole list.  At most a fixed number wait at
 * a time, so callers cannot pile them up; one whose caller hangs up leaves
 * the list at once and is never answered.  On the loop only. */
#pragma once

#include <stddef.h>

#include "sunkd/module.h"

typedef struct GresWaiter GresWaiter;

typedef struct GresWaitList {
        sunkd_ctx *ctx;
        GresWaiter *first;
        size_t n;
} GresWaitList;

/* gres_wait_add() - keep @call in @l.  Returns SUNKD_CALL_PENDING (the
 * handler's return value), -EBUSY when @max calls wait already, or -ENOMEM;
 * on an error the call is not kept and still the caller's to answer. */
int gres_wait_add(GresWaitList *l, sunkd_call *call, size_t max);

/* gres_wait_answer() - empty @l, calling @answer for each call in the order
 * they came; @answer must reply to it. */
void gres_wait_answer(GresWaitList *l, void (*answer)(sunkd_call *call, void *userdata), void *userdata);
