/* Worker threads for slow work, so the event loop never blocks. */
#pragma once

#include <systemd/sd-event.h>

typedef struct WorkPool WorkPool;

typedef void (*WorkRunFn)(void *userdata);  /* on a worker thread */
typedef void (*WorkDoneFn)(void *userdata); /* back on the loop */

/** work_pool_new() - a pool of up to @max_threads, started on demand. */
int work_pool_new(sd_event *event, unsigned max_threads, WorkPool **ret);
/**
 * work_pool_free() - stop the threads.  Queued items that have not started
 * are completed with their done callback never called; the caller must
 * have drained running items first (work_pool_busy() == 0).
 */
WorkPool *work_pool_free(WorkPool *p);
/** work_submit() - run @run(@userdata) on a worker, then @done on the loop. */
int work_submit(WorkPool *p, WorkRunFn run, WorkDoneFn done, void *userdata);
/** work_pool_busy() - items queued or running (loop thread only). */
unsigned work_pool_busy(WorkPool *p);
