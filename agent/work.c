/* A small thread pool whose results come back through an eventfd.
 *
 * The loop thread submits items; workers take them from a FIFO, run them, and
 * move them to a completion list, then bump the eventfd.  The loop drains
 * that list and calls each item's done callback, so module code that owns
 * results only ever runs on the loop.  Threads start on demand, up to the
 * limit, and sleep on a condition variable when idle: an idle sunkd has no
 * timer wake-ups from here.  Threads inherit the loop's blocked signal mask,
 * so signals are only ever seen through sd-event.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "work.h"
#include "util/cleanup.h"
#include "util/macro.h"

typedef struct WorkItem WorkItem;
struct WorkItem {
        WorkRunFn run;
        WorkDoneFn done;
        void *userdata;
        WorkItem *next;
};

typedef struct WorkList {
        WorkItem *head, *tail;
} WorkList;

struct WorkPool {
        sd_event_source *source;
        int efd;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        WorkList queue, completed;
        pthread_t *threads;
        unsigned n_threads, max_threads, n_idle;
        unsigned busy; /* loop thread only */
        bool stopping;
};

static void list_push(WorkList *l, WorkItem *i) {
        i->next = NULL;
        if (l->tail)
                l->tail->next = i;
        else
                l->head = i;
        l->tail = i;
}

static WorkItem *list_pop(WorkList *l) {
        WorkItem *i = l->head;

        if (i) {
                l->head = i->next;
                if (!l->head)
                        l->tail = NULL;
        }
        return i;
}

static void *worker_main(void *arg) {
        WorkPool *p = arg;

        pthread_mutex_lock(&p->lock);
        for (;;) {
                WorkItem *i;

                while (!p->stopping && !p->queue.head) {
                        p->n_idle++;
                        pthread_cond_wait(&p->cond, &p->lock);
                        p->n_idle--;
                }
                if (p->stopping)
                        break;
                i = list_pop(&p->queue);
                pthread_mutex_unlock(&p->lock);

                i->run(i->userdata);

                pthread_mutex_lock(&p->lock);
                list_push(&p->completed, i);
                (void) !write(p->efd, &(uint64_t){ 1 }, sizeof(uint64_t));
        }
        pthread_mutex_unlock(&p->lock);
        return NULL;
}

static int on_completed(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        WorkPool *p = userdata;
        WorkList done;
        uint64_t v;

        (void) !read(fd, &v, sizeof(v));
        pthread_mutex_lock(&p->lock);
        done = p->completed;
        p->completed = (WorkList){};
        pthread_mutex_unlock(&p->lock);

        for (WorkItem *i; (i = list_pop(&done));) {
                p->busy--;
                i->done(i->userdata);
                free(i);
        }
        return 0;
}

int work_pool_new(sd_event *event, unsigned max_threads, WorkPool **ret) {
        WorkPool *p;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->max_threads = MAX(max_threads, 1u);
        p->threads = calloc(p->max_threads, sizeof(pthread_t));
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);
        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (!p->threads || p->efd < 0) {
                r = p->threads ? negative_errno() : -ENOMEM;
                work_pool_free(p);
                return r;
        }
        r = sd_event_add_io(event, &p->source, p->efd, EPOLLIN, on_completed, p);
        if (r < 0) {
                work_pool_free(p);
                return r;
        }
        (void) sd_event_source_set_description(p->source, "work-completed");
        *ret = p;
        return 0;
}

WorkPool *work_pool_free(WorkPool *p) {
        if (!p)
                return NULL;
        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        for (unsigned i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);
        for (WorkItem *i; (i = list_pop(&p->queue));)
                free(i);
        for (WorkItem *i; (i = list_pop(&p->completed));)
                free(i);
        sd_event_source_disable_unref(p->source);
        if (p->efd >= 0)
                close(p->efd);
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p->threads);
        free(p);
        return NULL;
}

int work_submit(WorkPool *p, WorkRunFn run, WorkDoneFn done, void *userdata) {
        WorkItem *i;
        int r = 0;

        i = calloc(1, sizeof(*i));
        if (!i)
                return -ENOMEM;
        *i = (WorkItem){ .run = run, .done = done, .userdata = userdata };

        pthread_mutex_lock(&p->lock);
        list_push(&p->queue, i);
        if (p->n_idle == 0 && p->n_threads < p->max_threads) {
                r = -pthread_create(&p->threads[p->n_threads], NULL, worker_main, p);
                if (r == 0)
                        p->n_threads++;
                else if (p->n_threads > 0)
                        r = 0; /* the others will get to it */
        }
        if (r < 0) {
                p->queue.tail = NULL;
                p->queue.head = NULL; /* it was the only item: no thread at all */
                pthread_mutex_unlock(&p->lock);
                free(i);
                return r;
        }
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        p->busy++;
        return 0;
}

unsigned work_pool_busy(WorkPool *p) {
        return p->busy;
}
