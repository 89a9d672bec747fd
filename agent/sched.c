/* Jobs on sd-event timers.
 *
 * Each job owns exactly one CLOCK_BOOTTIME timer source, created once and
 * re-armed (never reallocated): while the job waits it points at the next
 * run, while the job runs it points at the timeout.  The work itself goes to
 * the worker pool; `done` comes back on the loop and owns the result.
 *
 * Timing:  first run at now + U(0, splay) so a fleet booted together spreads
 * its SCIM fetches; later runs at interval +/- jitter; after n consecutive
 * failures at U[d/2, d] with d = min(max, min * 2^(n-1)) ("equal jitter"), and
 * the first success returns to the interval.  Triggers coalesce: an idle job
 * runs now, a running one gets a single rerun flag.
 *
 * A timed-out run cannot be killed (it is a thread), so it is told through
 * its cancel flag and the job stays RUNNING until the work returns; `done`
 * then sees -ETIMEDOUT.  Work must poll sunkd_cancelled().
 *
 * Child and async runs always end.  A child is SIGKILLed at the timeout (or
 * the stop); if it has still not been reaped a grace later (stuck in the
 * kernel: a statfs() on a dead NFS server, a hung driver), the run ends with
 * -ETIMEDOUT (-ECANCELED when stopping) and the child moves to the Sched's
 * unreaped list, which keeps reaping it; the job starts no new run until it
 * is gone.  An async run whose module does not complete it within the grace
 * after its cancel (or that has no cancel) is ended by the host the same way,
 * and the job waits for the module's late job_complete() before running again.
 *
 * Log damping (collectd's c_complain): the first failure is a warning,
 * repeats are debug with a count, and recovery is a notice.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "abi-copy.h"
#include "job-child.h"
#include "sched.h"
#include "util/cleanup.h"
#include "util/json-util.h"
#include "util/macro.h"
#include "util/rand-util.h"
#include "util/time-util.h"
#include "util/text-escape.h"

typedef struct JobWait JobWait;
typedef struct Unreaped Unreaped;

/* The child of a run that was given up on: still reaped, still shown. */
struct Unreaped {
        Sched *sched;
        Job *job; /* NULL once the job is freed */
        pid_t pid;
        uint64_t since_realtime;
        Unreaped *next;
};
struct JobWait {
        JobWaitFn fn;
        void *userdata;
        unsigned target_run;
        JobWait *next;
};

struct sunkd_job {
        Sched *sched;
        sunkd_job_spec spec;
        char *name;
        void **statep;
        void *userdata; /* the spec's, which statep then points at */
        const void *owner;
        LogContext log;
        sd_event_source *timer;
        JobState jstate;
        bool rerun, timed_out, stopping;
        bool deferred;        /* due, but its owner has its share of workers busy */
        bool uses_worker;     /* the current run holds a worker thread */
        JobChild *child;      /* the current run's process, SUNKD_JOB_CHILD */
        uint64_t kept_since;  /* SUNKD_JOB_CHILD_REUSE: the kept children's generation it needs */
        bool killed;          /* the run's child was SIGKILLed or its async cancel called */
        bool blocked;         /* due, but the last run's child or async work lives on */
        bool async_abandoned; /* the host ended an async run the module has not completed */
        Unreaped *unreaped;
        sunkd_cancel cancel;
        void *input, *result;
        int work_r;
        unsigned n_started, n_completed, n_failed, consecutive_failures;
        int last_result;
        char *message; /* the last run's explanation, from its done() */
        uint64_t last_start_realtime, last_start_boottime, last_duration_usec, next_boottime;
        uint64_t last_success_realtime;
        JobWait *waits;
};

struct Sched {
        sd_event *event;
        WorkPool *pool;
        Job **jobs;
        size_t n_jobs;
        SchedDoneHook done_hook;
        void *done_hook_userdata;
        unsigned max_workers_per_owner; /* 0 = no cap */
        uint64_t kill_grace_usec;
        Unreaped *unreaped;
        sd_event_source *reap_timer; /* polls the unreaped while there are any */
        JobChildPool *kept;          /* children kept for SUNKD_JOB_CHILD_REUSE jobs */
};

#define BACKOFF_MIN_DEFAULT (5 * USEC_PER_SEC)
#define TRIGGER_ONLY_BACKOFF_MAX (3600 * USEC_PER_SEC)
#define JOB_MESSAGE_MAX 1024
#define KILL_GRACE_DEFAULT (5 * USEC_PER_SEC)
/* sd-event's child sources are not told reliably when a child it gave up
 * on exits after all (a pidfd that was readable before), so those are polled. */
#define REAP_POLL_USEC USEC_PER_SEC

static const char *const job_state_names[_JOB_STATE_MAX] = {
        [JOB_IDLE] = "idle",
        [JOB_ARMED] = "scheduled",
        [JOB_RUNNING] = "running",
};

const char *job_state_to_string(JobState s) {
        return s < _JOB_STATE_MAX ? job_state_names[s] : NULL;
}

uint64_t sched_splay_delay(uint64_t splay_usec) {
        return random_range(0, splay_usec);
}

uint64_t sched_interval_delay(uint64_t interval_usec, uint32_t jitter_pct) {
        uint64_t j = interval_usec / 100 * MIN(jitter_pct, 100u);
        return random_range(interval_usec - j, interval_usec + j);
}

uint64_t sched_backoff_bound(uint64_t min_usec, uint64_t max_usec, unsigned n_failures) {
        uint64_t d = min_usec;

        for (unsigned i = 1; i < n_failures && d < max_usec; i++)
                d = d > UINT64_MAX / 2 ? UINT64_MAX : d * 2;
        return MIN(d, max_usec);
}

uint64_t sched_backoff_delay(uint64_t min_usec, uint64_t max_usec, unsigned n_failures) {
        uint64_t d = sched_backoff_bound(min_usec, max_usec, n_failures);
        return random_range(d / 2, d);
}

int sched_new(sd_event *event, WorkPool *pool, Sched **ret) {
        Sched *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(event);
        s->pool = pool;
        s->kill_grace_usec = KILL_GRACE_DEFAULT;
        if (job_child_pool_new(event, &s->kept) < 0) {
                sched_free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

static void job_fire_waits(Job *j, int result, bool all) {
        JobWait **p = &j->waits;

        while (*p) {
                JobWait *w = *p;
                if (all || w->target_run <= j->n_completed) {
                        *p = w->next;
                        w->fn(w->userdata, j, result);
                        free(w);
                } else
                        p = &w->next;
        }
}

static Job *job_free(Job *j) {
        if (!j)
                return NULL;
        job_fire_waits(j, -ECANCELED, true);
        job_child_free(j->child);
        /* the kept children hold a copy of what this job's work read */
        if (j->spec.flags & SUNKD_JOB_CHILD_REUSE)
                job_child_pool_retire_idle(j->sched->kept);
        if (j->unreaped)
                j->unreaped->job = NULL;
        sd_event_source_disable_unref(j->timer);
        free(j->message);
        free(j->name);
        free(j);
        return NULL;
}

Sched *sched_free(Sched *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_jobs; i++)
                job_free(s->jobs[i]);
        free(s->jobs);
        job_child_pool_free(s->kept);
        /* Exiting: a waitpid() on a child that SIGKILL did not end would hang. */
        while (s->unreaped) {
                Unreaped *u = s->unreaped;
                s->unreaped = u->next;
                free(u);
        }
        sd_event_source_disable_unref(s->reap_timer);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}

void sched_set_max_workers_per_owner(Sched *s, unsigned n) {
        s->max_workers_per_owner = n;
}

void sched_set_kill_grace(Sched *s, uint64_t usec) {
        s->kill_grace_usec = usec;
}

void sched_set_done_hook(Sched *s, SchedDoneHook hook, void *userdata) {
        s->done_hook = hook;
        s->done_hook_userdata = userdata;
}

static int job_arm(Job *j, uint64_t delay_usec) {
        uint64_t now = now_usec(CLOCK_BOOTTIME), accuracy;
        int r;

        /* Let sd-event batch wake-ups, but never by more than a second. */
        accuracy = MIN(MAX(j->spec.interval_usec / 20, USEC_PER_MSEC), USEC_PER_SEC);
        if (delay_usec < 10 * USEC_PER_SEC)
                accuracy = USEC_PER_MSEC;
        j->next_boottime = now + delay_usec;
        r = sd_event_source_set_time(j->timer, j->next_boottime);
        if (r >= 0)
                r = sd_event_source_set_time_accuracy(j->timer, accuracy);
        if (r >= 0)
                r = sd_event_source_set_enabled(j->timer, SD_EVENT_ONESHOT);
        if (r < 0)
                return log_ctx_full_errno(&j->log, LOG_ERR, r, "Failed to arm timer of job '%s': %m",
                                          j->name);
        if (j->jstate != JOB_RUNNING)
                j->jstate = JOB_ARMED;
        return 0;
}

static void job_disarm(Job *j) {
        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_OFF);
        if (j->jstate == JOB_ARMED)
                j->jstate = JOB_IDLE;
}

static bool job_periodic(const Job *j) {
        return !(j->spec.flags & SUNKD_JOB_TRIGGER_ONLY) && j->spec.interval_usec > 0;
}

static void job_log_result(Job *j, int result) {
        if (result == -ECANCELED && j->stopping) {
                log_ctx_full_errno(&j->log, LOG_INFO, 0, "Job '%s' cancelled: its module is stopping.",
                                   j->name);
                return;
        }
        if (result >= 0) {
                if (j->consecutive_failures > 0)
                        log_ctx_full_errno(&j->log, LOG_NOTICE, 0,
                                           "Job '%s' recovered after %u failed runs.", j->name,
                                           j->consecutive_failures);
                else
                        log_ctx_full_errno(&j->log, LOG_DEBUG, 0, "Job '%s' succeeded in %" PRIu64 " ms.",
                                           j->name, j->last_duration_usec / USEC_PER_MSEC);
                return;
        }
        if (j->consecutive_failures == 1)
                log_ctx_full_errno(&j->log, LOG_WARNING, result, "Job '%s' failed: %s", j->name,
                                   j->message ?: strerror(-result));
        else
                log_ctx_full_errno(&j->log, LOG_DEBUG, result, "Job '%s' failed again (%u in a row): %s",
                                   j->name, j->consecutive_failures, j->message ?: strerror(-result));
}

static uint64_t job_next_delay(Job *j, int result) {
        if (result < 0 && !j->rerun) {
                uint64_t min = j->spec.backoff_min_usec ?: BACKOFF_MIN_DEFAULT;
                uint64_t max =
                        j->spec.backoff_max_usec
                                ?: (job_periodic(j) ? j->spec.interval_usec : TRIGGER_ONLY_BACKOFF_MAX);
                return sched_backoff_delay(min, MAX(max, min), j->consecutive_failures);
        }
        if (j->rerun)
                return 0;
        return sched_interval_delay(j->spec.interval_usec, j->spec.jitter_pct);
}

static void job_start(Job *j);

static unsigned owner_workers(Sched *s, const void *owner) {
        unsigned n = 0;

        for (size_t i = 0; i < s->n_jobs; i++)
                if (s->jobs[i]->owner == owner && s->jobs[i]->uses_worker)
                        n++;
        return n;
}

static bool job_needs_worker(const Job *j) {
        return j->spec.work && !(j->spec.flags & (SUNKD_JOB_CHILD | SUNKD_JOB_ASYNC));
}

static bool owner_at_cap(Sched *s, const void *owner) {
        return s->max_workers_per_owner > 0 && owner_workers(s, owner) >= s->max_workers_per_owner;
}

/* A worker of @owner's came free: start its longest-waiting deferred job. */
static void sched_start_deferred(Sched *s, const void *owner) {
        Job *next = NULL;

        for (size_t i = 0; i < s->n_jobs; i++) {
                Job *j = s->jobs[i];
                if (j->owner == owner && j->deferred && (!next || j->next_boottime < next->next_boottime))
                        next = j;
        }
        if (next && !owner_at_cap(s, owner)) {
                next->deferred = false;
                job_start(next);
        }
}

static void job_completed(Job *j, int r) {
        Sched *s = j->sched;
        bool released = j->uses_worker;
        int result;

        j->uses_worker = false;
        j->child = job_child_free(j->child);

        j->last_duration_usec = now_usec(CLOCK_BOOTTIME) - j->last_start_boottime;
        /* Stopped by its owner: a run that ended anyway, or was interrupted
         * (a child killed by the cancel's signal), was cancelled, not failed. */
        if (j->timed_out)
                r = -ETIMEDOUT;
        else if (j->stopping && sunkd_cancelled(&j->cancel) && (r >= 0 || r == -EINTR))
                r = -ECANCELED;
        result = j->spec.done ? j->spec.done(*j->statep, r, TAKE_PTR(j->input), TAKE_PTR(j->result)) : r;
        if (result > 0)
                result = 0;

        j->jstate = JOB_IDLE;
        j->n_completed++;
        j->last_result = result;
        if (result < 0) {
                j->n_failed++;
                j->consecutive_failures++;
        }
        job_log_result(j, result);
        if (result >= 0) {
                j->consecutive_failures = 0;
                j->last_success_realtime = now_usec(CLOCK_REALTIME);
        }

        if (!j->stopping) {
                bool retry = result < 0 && (job_periodic(j) || j->rerun);
                if (j->rerun || job_periodic(j) || retry)
                        (void) job_arm(j, job_next_delay(j, result));
                j->rerun = false;
        }
        job_fire_waits(j, result, false);
        if (released)
                sched_start_deferred(s, j->owner);
        if (s->done_hook)
                s->done_hook(s->done_hook_userdata, j, result);
}

static void job_work_run(void *userdata) {
        Job *j = userdata;

        j->result = NULL;
        j->work_r = j->spec.work(*j->statep, j->input, &j->cancel, &j->result);
}

static void job_work_done(void *userdata) {
        Job *j = userdata;

        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_OFF);
        job_completed(j, j->work_r);
}

static int job_child_work(void *userdata, json_object **ret_result) {
        Job *j = userdata;
        void *result = NULL;
        int r;

        r = j->spec.work(*j->statep, j->input, &j->cancel, &result);
        *ret_result = result;
        return r;
}

/* In a kept child: the job as it was when the child was forked; prepare's
 * input of this run is not in that copy. */
static int job_kept_work(void *userdata, json_object **ret_result) {
        Job *j = userdata;
        void *result = NULL;
        int r;

        r = j->spec.work(*j->statep, NULL, &j->cancel, &result);
        *ret_result = result;
        return r;
}

static void job_child_done(void *userdata, int r, json_object *result, const char *why) {
        Job *j = userdata;

        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_OFF);
        j->result = result;
        if (why && !j->timed_out && !j->stopping)
                (void) sched_job_set_message(j, why);
        job_completed(j, r);
}

static int job_dispatch(Job *j) {
        int r;

        if (j->spec.flags & SUNKD_JOB_CHILD_REUSE)
                return job_child_start_kept(j->sched->kept, j->kept_since, job_kept_work, j, job_child_done,
                                            j, &j->child);
        if (j->spec.flags & SUNKD_JOB_CHILD)
                return job_child_start(j->sched->event, job_child_work, j, j->spec.child_uid,
                                       j->spec.child_gid, job_child_done, j, &j->child);
        r = work_submit(j->sched->pool, job_work_run, job_work_done, j);
        if (r >= 0)
                j->uses_worker = true;
        return r;
}

static void job_start(Job *j) {
        unsigned started;
        int r = 0;

        if (j->unreaped || j->async_abandoned) {
                if (!j->blocked)
                        log_ctx_full_errno(&j->log, LOG_WARNING, 0,
                                           "Job '%s' is due, but its last run %s; it waits for that.",
                                           j->name,
                                           j->unreaped ? "left a child that has not exited yet"
                                                       : "has not been completed by its module yet");
                j->blocked = true;
                job_disarm(j);
                return;
        }
        if (job_needs_worker(j) && owner_at_cap(j->sched, j->owner)) {
                if (!j->deferred)
                        log_ctx_full_errno(&j->log, LOG_NOTICE, 0,
                                           "Job '%s' is due, but its module already has %u runs on workers; "
                                           "it waits for one of them.",
                                           j->name, j->sched->max_workers_per_owner);
                j->deferred = true;
                job_disarm(j);
                return;
        }

        j->jstate = JOB_RUNNING;
        j->timed_out = false;
        j->killed = false;
        __atomic_store_n(&j->cancel.requested, 0, __ATOMIC_RELAXED);
        j->n_started++;
        j->last_start_boottime = now_usec(CLOCK_BOOTTIME);
        j->last_start_realtime = now_usec(CLOCK_REALTIME);
        j->input = NULL;
        j->message = mfree(j->message);
        log_ctx_full_errno(&j->log, LOG_DEBUG, 0, "Starting job '%s'.", j->name);

        started = j->n_completed;
        if (j->spec.prepare)
                r = j->spec.prepare(*j->statep, &j->input);
        if (j->spec.flags & SUNKD_JOB_ASYNC) {
                /* prepare started the run; job_complete() ends it, maybe already. */
                if (r < 0 && j->n_completed == started)
                        job_completed(j, r);
                if (j->n_completed == started && j->spec.timeout_usec > 0)
                        (void) job_arm(j, j->spec.timeout_usec);
                return;
        }
        if (r >= 0 && !j->spec.work) {
                job_completed(j, r);
                return;
        }
        if (r >= 0)
                r = job_dispatch(j);
        if (r < 0) {
                job_completed(j, r);
                return;
        }
        if (j->spec.timeout_usec > 0)
                (void) job_arm(j, j->spec.timeout_usec);
}

static void unreaped_gone(Unreaped *u) {
        Unreaped **p;
        Job *j = u->job;

        for (p = &u->sched->unreaped; *p != u; p = &(*p)->next)
                ;
        *p = u->next;
        log_full_errno(LOG_NOTICE, 0,
                       "The abandoned child (pid %d) of job '%s' has exited after %" PRIu64 " s.",
                       (int) u->pid, j ? j->name : "(removed)",
                       (now_usec(CLOCK_REALTIME) - u->since_realtime) / USEC_PER_SEC);
        free(u);
        if (!j)
                return;
        j->unreaped = NULL;
        if (j->blocked && !j->stopping) {
                j->blocked = false;
                job_start(j);
        }
}

static int on_reap_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        Sched *s = userdata;
        Unreaped *u = s->unreaped, *next;

        for (; u; u = next) {
                siginfo_t si = {};
                next = u->next;
                if (waitid(P_PID, u->pid, &si, WEXITED | WNOHANG) < 0 ? errno == ECHILD
                                                                      : si.si_pid == u->pid)
                        unreaped_gone(u);
        }
        if (!s->unreaped)
                return sd_event_source_set_enabled(source, SD_EVENT_OFF);
        return sd_event_source_set_time_relative(source, REAP_POLL_USEC);
}

static int sched_reap_later(Sched *s) {
        int r;

        if (!s->reap_timer) {
                r = sd_event_add_time_relative(s->event, &s->reap_timer, CLOCK_BOOTTIME, REAP_POLL_USEC, 0,
                                               on_reap_timer, s);
                if (r < 0)
                        return r;
                (void) sd_event_source_set_description(s->reap_timer, "unreaped-children");
        } else if ((r = sd_event_source_set_time_relative(s->reap_timer, REAP_POLL_USEC)) < 0)
                return r;
        return sd_event_source_set_enabled(s->reap_timer, SD_EVENT_ON);
}

/* The child did not exit a grace after SIGKILL: keep reaping it off the job. */
static int job_abandon_child(Job *j) {
        Unreaped *u = calloc(1, sizeof(*u));
        int r;

        if (!u)
                return -ENOMEM;
        r = sched_reap_later(j->sched);
        if (r < 0) {
                free(u);
                return r;
        }
        *u = (Unreaped){ .sched = j->sched,
                         .job = j,
                         .pid = job_child_disown(TAKE_PTR(j->child)),
                         .since_realtime = now_usec(CLOCK_REALTIME),
                         .next = j->sched->unreaped };
        j->sched->unreaped = u;
        j->unreaped = u;
        log_ctx_full_errno(
                &j->log, LOG_ERR, 0,
                "Job '%s': its child (pid %d) has not exited %" PRIu64
                " ms after SIGKILL (stuck in the kernel?); "
                "the run ends now, the child is still reaped, and the job runs again only once it is gone.",
                j->name, (int) u->pid, j->sched->kill_grace_usec / USEC_PER_MSEC);
        return 0;
}

/* The grace after the kill or cancel has passed and the run is still on. */
static void job_give_up(Job *j) {
        int r = j->stopping && !j->timed_out ? -ECANCELED : -ETIMEDOUT;

        if (j->child) {
                if (job_abandon_child(j) < 0)
                        return; /* keep waiting for the exit; the timer is re-armed below */
        } else {
                j->async_abandoned = true;
                log_ctx_full_errno(
                        &j->log, LOG_ERR, 0,
                        "Job '%s': its module has not completed the run %s; the host ends it now.", j->name,
                        j->spec.cancel ? "after its cancel" : "(it has no cancel)");
        }
        job_completed(j, r);
}

/* Raise the flag for thread work, kill a child, ask an async job to end.
 * A child or async run that is still on a grace later is given up on. */
static void job_cancel(Job *j) {
        bool async = j->spec.flags & SUNKD_JOB_ASYNC;

        __atomic_store_n(&j->cancel.requested, 1, __ATOMIC_RELAXED);
        if (j->killed)
                return;
        job_child_kill(j->child);
        if (async && !j->spec.cancel) {
                job_give_up(j);
                return;
        }
        if (async) {
                unsigned completed = j->n_completed;
                j->spec.cancel(*j->statep, j->input);
                if (j->n_completed != completed)
                        return; /* the cancel completed the run */
        }
        if (j->child || async) {
                j->killed = true;
                (void) job_arm(j, j->sched->kill_grace_usec);
        }
}

static int on_job_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        Job *j = userdata;

        if (j->jstate == JOB_RUNNING && j->killed) {
                job_give_up(j);
                if (j->jstate == JOB_RUNNING)
                        (void) job_arm(j, j->sched->kill_grace_usec);
                return 0;
        }
        if (j->jstate == JOB_RUNNING) {
                j->timed_out = true;
                log_ctx_full_errno(&j->log, LOG_WARNING, ETIMEDOUT,
                                   "Job '%s' exceeded its timeout of %" PRIu64 " s, %s it.", j->name,
                                   j->spec.timeout_usec / USEC_PER_SEC, j->child ? "killing" : "cancelling");
                job_cancel(j);
                return 0;
        }
        job_start(j);
        return 0;
}

/* A module's spec in this host's layout; every field up to `done` is ABI 1.0. */
static int spec_copy(sunkd_job_spec *dst, const sunkd_job_spec *spec) {
        return abi_copy(dst, sizeof(*dst), spec, spec ? spec->size : 0, ABI_END_OF(sunkd_job_spec, done));
}

/* What a job spec must be, each rule with the words that name it when a
 * spec breaks it.  An async run is started by prepare and has no work; a
 * child run has work. */
typedef struct JobSpecRule {
        bool (*broken)(const sunkd_job_spec *spec);
        const char *rule;
} JobSpecRule;

static bool spec_no_name(const sunkd_job_spec *spec) {
        return isempty(spec->name);
}

static bool spec_name_not_utf8(const sunkd_job_spec *spec) {
        return !text_escape_utf8_valid(spec->name, strlen(spec->name));
}

static bool spec_nothing_to_run(const sunkd_job_spec *spec) {
        return !spec->work && !spec->prepare;
}

static bool spec_async_child(const sunkd_job_spec *spec) {
        return (spec->flags & SUNKD_JOB_ASYNC) && (spec->flags & SUNKD_JOB_CHILD);
}

static bool spec_async_work(const sunkd_job_spec *spec) {
        return (spec->flags & SUNKD_JOB_ASYNC) && spec->work;
}

static bool spec_child_no_work(const sunkd_job_spec *spec) {
        return (spec->flags & SUNKD_JOB_CHILD) && !spec->work;
}

/* As spawn: an unprivileged child never keeps root's group. */
static bool spec_child_root_group(const sunkd_job_spec *spec) {
        return (spec->flags & SUNKD_JOB_CHILD) && spec->child_uid != 0 && spec->child_gid == 0;
}

static bool spec_reuse_not_child(const sunkd_job_spec *spec) {
        return (spec->flags & SUNKD_JOB_CHILD_REUSE) && !(spec->flags & SUNKD_JOB_CHILD);
}

/* A kept child runs the work of many jobs: as the daemon only. */
static bool spec_reuse_dropped(const sunkd_job_spec *spec) {
        return (spec->flags & SUNKD_JOB_CHILD_REUSE) && spec->child_uid != 0;
}

static const JobSpecRule job_spec_rules[] = {
        { spec_no_name, "a job needs a name" },
        { spec_name_not_utf8, "a job's name must be UTF-8: answers and metric labels show it" },
        { spec_nothing_to_run, "a job needs work, or prepare for an async job" },
        { spec_async_child, "a job is SUNKD_JOB_ASYNC or SUNKD_JOB_CHILD, not both" },
        { spec_async_work, "a SUNKD_JOB_ASYNC job has no work: its prepare starts the run" },
        { spec_child_no_work, "a SUNKD_JOB_CHILD job needs work, which the child runs" },
        { spec_child_root_group, "a SUNKD_JOB_CHILD job with a child_uid needs a child_gid other than 0" },
        { spec_reuse_not_child, "SUNKD_JOB_CHILD_REUSE goes with SUNKD_JOB_CHILD" },
        { spec_reuse_dropped, "a SUNKD_JOB_CHILD_REUSE job runs as sunkd: its child_uid is 0" },
};

int sched_job_refuse(const char *module, const char *name, const char *rule) {
        LogContext ctx = { .module = module, .job = name };

        return log_ctx_full_errno(&ctx, LOG_ERR, EINVAL, "Job '%s' refused: %s.", name ?: "", rule);
}

/* The spec in this host's layout in *copy, or -EINVAL logged with the rule it breaks. */
static int spec_check(sunkd_job_spec *copy, const sunkd_job_spec *module_spec, const char *module) {
        if (!module_spec)
                return sched_job_refuse(module, NULL, "the spec is NULL");
        if (spec_copy(copy, module_spec) < 0) {
                LogContext ctx = { .module = module };

                return log_ctx_full_errno(&ctx, LOG_ERR, EINVAL,
                                          "Job refused: its spec's size %zu is less than ABI 1.0's %zu.",
                                          module_spec->size, ABI_END_OF(sunkd_job_spec, done));
        }
        for (size_t i = 0; i < ELEMENTSOF(job_spec_rules); i++)
                if (job_spec_rules[i].broken(copy))
                        return sched_job_refuse(module, copy->name, job_spec_rules[i].rule);
        return 0;
}

int sched_job_add(Sched *s, const sunkd_job_spec *module_spec, void **statep, const void *owner,
                  const char *module, Job **ret) {
        _cleanup_free_ Job *j = NULL;
        sunkd_job_spec copy;
        Job **jobs;
        int r;

        r = spec_check(&copy, module_spec, module);
        if (r < 0)
                return r;
        const sunkd_job_spec *spec = &copy;
        if (sched_find(s, spec->name)) {
                LogContext ctx = { .module = module, .job = spec->name };

                return log_ctx_full_errno(&ctx, LOG_ERR, EEXIST, "Job '%s' refused: the name is taken.",
                                          spec->name);
        }

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->spec = *spec;
        j->name = strdup(spec->name);
        if (!j->name)
                return -ENOMEM;
        j->spec.name = j->name;
        j->sched = s;
        j->statep = statep;
        if (spec->userdata) {
                j->userdata = spec->userdata;
                j->statep = &j->userdata;
        }
        j->owner = owner;
        j->log = (LogContext){ .module = module, .job = j->name };
        if (spec->flags & SUNKD_JOB_CHILD_REUSE)
                j->kept_since = job_child_pool_mark(s->kept);

        r = sd_event_add_time(s->event, &j->timer, CLOCK_BOOTTIME, UINT64_MAX, 0, on_job_timer, j);
        if (r < 0) {
                free(j->name);
                return r;
        }
        (void) sd_event_source_set_description(j->timer, j->name);
        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_OFF);

        jobs = realloc(s->jobs, (s->n_jobs + 1) * sizeof(Job *));
        if (!jobs) {
                sd_event_source_disable_unref(j->timer);
                free(j->name);
                return -ENOMEM;
        }
        s->jobs = jobs;
        s->jobs[s->n_jobs++] = j;

        if (job_periodic(j))
                (void) job_arm(j, sched_splay_delay(spec->splay_usec));
        if (ret)
                *ret = j;
        j = NULL;
        return 0;
}

int sched_job_complete(Job *j, int r) {
        if (!(j->spec.flags & SUNKD_JOB_ASYNC))
                return -EINVAL;
        if (j->jstate != JOB_RUNNING && j->async_abandoned) {
                /* The late end of a run the host already ended: no second done(). */
                j->async_abandoned = false;
                log_ctx_full_errno(&j->log, LOG_NOTICE, r,
                                   "Job '%s': its module completed the run the host had ended.", j->name);
                if (j->blocked && !j->stopping) {
                        j->blocked = false;
                        job_start(j);
                }
                return 0;
        }
        if (j->jstate != JOB_RUNNING)
                return -ESTALE;
        (void) sd_event_source_set_enabled(j->timer, SD_EVENT_OFF);
        job_completed(j, r);
        return 0;
}

int sched_job_trigger(Job *j, const char *reason) {
        if (j->stopping)
                return -ESHUTDOWN;
        log_ctx_full_errno(&j->log, LOG_INFO, 0, "Job '%s' triggered%s%s.", j->name, reason ? " by " : "",
                           reason ?: "");
        if (j->jstate == JOB_RUNNING) {
                j->rerun = true;
                return 0;
        }
        return job_arm(j, 0);
}

int sched_job_wait(Job *j, JobWaitFn fn, void *userdata) {
        JobWait *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        *w = (JobWait){ .fn = fn, .userdata = userdata, .target_run = j->n_started + 1, .next = j->waits };
        j->waits = w;
        return 0;
}

void sched_job_unwait(Job *j, void *userdata) {
        JobWait **p = &j->waits;

        while (*p) {
                JobWait *w = *p;
                if (w->userdata == userdata) {
                        *p = w->next;
                        free(w);
                } else
                        p = &w->next;
        }
}

int sched_job_set_interval(Job *j, uint64_t interval_usec, uint64_t splay_usec) {
        bool was_periodic = job_periodic(j);

        j->spec.interval_usec = interval_usec;
        j->spec.splay_usec = splay_usec;
        if (j->jstate == JOB_RUNNING || j->stopping)
                return 0;
        if (!job_periodic(j)) {
                job_disarm(j);
                return 0;
        }
        /* A shorter interval takes effect now; an unchanged one keeps its slot. */
        if (!was_periodic || j->jstate != JOB_ARMED ||
            j->next_boottime > now_usec(CLOCK_BOOTTIME) + interval_usec)
                return job_arm(j, was_periodic ? sched_interval_delay(interval_usec, j->spec.jitter_pct)
                                               : sched_splay_delay(splay_usec));
        return 0;
}

int sched_job_update(Job *j, const sunkd_job_spec *module_spec) {
        sunkd_job_spec copy;
        const sunkd_job_spec *spec = &copy;

        if (spec_copy(&copy, module_spec) < 0)
                return -EINVAL;
        /* Only the timing may change: the rest is what the job is. */
        if (!streq_ptr(spec->name, j->name) || spec->flags != j->spec.flags ||
            spec->prepare != j->spec.prepare || spec->work != j->spec.work || spec->done != j->spec.done ||
            spec->cancel != j->spec.cancel || spec->child_uid != j->spec.child_uid ||
            spec->child_gid != j->spec.child_gid)
                return -EINVAL;
        j->spec.jitter_pct = spec->jitter_pct;
        j->spec.backoff_min_usec = spec->backoff_min_usec;
        j->spec.backoff_max_usec = spec->backoff_max_usec;
        j->spec.timeout_usec = spec->timeout_usec;
        return sched_job_set_interval(j, spec->interval_usec, spec->splay_usec);
}

Job *sched_find(Sched *s, const char *name) {
        for (size_t i = 0; i < s->n_jobs; i++)
                if (streq(s->jobs[i]->name, name))
                        return s->jobs[i];
        return NULL;
}

size_t sched_n_jobs(Sched *s) {
        return s->n_jobs;
}

Job *sched_job_at(Sched *s, size_t i) {
        return i < s->n_jobs ? s->jobs[i] : NULL;
}

const char *sched_job_name(Job *j) {
        return j->name;
}

JobState sched_job_state(Job *j) {
        return j->jstate;
}

unsigned sched_job_runs(Job *j) {
        return j->n_completed;
}

const void *sched_job_owner(Job *j) {
        return j->owner;
}

bool sched_job_is_gate(Job *j) {
        return j->spec.flags & SUNKD_JOB_READY_GATE;
}

uint64_t sched_job_last_duration(Job *j) {
        return j->last_duration_usec;
}

void sched_stop_owner(Sched *s, const void *owner) {
        for (size_t i = 0; i < s->n_jobs; i++) {
                Job *j = s->jobs[i];
                if (owner && j->owner != owner)
                        continue;
                j->stopping = true;
                j->rerun = false;
                j->deferred = false;
                j->blocked = false;
                if (j->jstate == JOB_RUNNING)
                        job_cancel(j);
                else
                        job_disarm(j);
        }
}

unsigned sched_n_running(Sched *s, const void *owner) {
        unsigned n = 0;

        for (size_t i = 0; i < s->n_jobs; i++)
                if ((!owner || s->jobs[i]->owner == owner) && s->jobs[i]->jstate == JOB_RUNNING)
                        n++;
        return n;
}

void sched_remove_owner(Sched *s, const void *owner) {
        size_t k = 0;

        for (size_t i = 0; i < s->n_jobs; i++) {
                if (s->jobs[i]->owner == owner && s->jobs[i]->jstate != JOB_RUNNING)
                        job_free(s->jobs[i]);
                else
                        s->jobs[k++] = s->jobs[i];
        }
        s->n_jobs = k;
}

static int json_add(json_object *o, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        return json_object_object_add(o, key, v) < 0 ? -ENOMEM : 0;
}

/* A module's text (a check's detail, a script's line) enters the host's
 * state here: cut and escaped by the one rule for outside text, so that no
 * module can make `sunkctl jobs` or a trigger's answer invalid. */
int sched_job_set_message(Job *j, const char *message) {
        char *m = NULL;

        if (message && !(m = text_escape(message, strlen(message), JOB_MESSAGE_MAX, TEXT_ESCAPE_LINE)))
                return -ENOMEM;
        free(j->message);
        j->message = m;
        return 0;
}

const char *sched_job_error(Job *j) {
        if (j->last_result >= 0)
                return NULL;
        return j->message ?: strerror(-j->last_result);
}

int sched_job_to_json(Job *j, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        uint64_t now_bt = now_usec(CLOCK_BOOTTIME), now_rt = now_usec(CLOCK_REALTIME);
        int r = 0;

        if (!o)
                return -ENOMEM;
        r |= json_add(o, "name", json_object_new_string(j->name));
        r |= json_add(o, "state",
                      json_object_new_string(j->deferred || j->blocked ? "waiting"
                                                                       : job_state_to_string(j->jstate)));
        r |= json_add(o, "interval_usec", json_object_new_int64((int64_t) j->spec.interval_usec));
        r |= json_add(o, "runs", json_object_new_int64(j->n_completed));
        r |= json_add(o, "failures", json_object_new_int64(j->n_failed));
        r |= json_add(o, "consecutive_failures", json_object_new_int64(j->consecutive_failures));
        if (j->n_started > 0)
                r |= json_add(o, "last_start_usec", json_object_new_int64((int64_t) j->last_start_realtime));
        if (j->n_completed > 0) {
                r |= json_add(o, "last_duration_usec",
                              json_object_new_int64((int64_t) j->last_duration_usec));
                r |= json_add(o, "last_result",
                              json_object_new_string(j->last_result >= 0 ? "success" : "failure"));
                if (j->last_result < 0) {
                        r |= json_add(o, "last_errno", json_object_new_int(-j->last_result));
                        r |= json_add(o, "last_error", json_object_new_string(sched_job_error(j)));
                } else if (j->message)
                        r |= json_add(o, "last_message", json_object_new_string(j->message));
        }
        if (j->last_success_realtime)
                r |= json_add(o, "last_success_usec",
                              json_object_new_int64((int64_t) j->last_success_realtime));
        if (j->jstate == JOB_ARMED && j->next_boottime >= now_bt)
                r |= json_add(o, "next_run_usec",
                              json_object_new_int64((int64_t) (now_rt + (j->next_boottime - now_bt))));
        if (j->jstate == JOB_RUNNING) {
                r |= json_add(o, "running_usec",
                              json_object_new_int64((int64_t) (now_bt - j->last_start_boottime)));
                if (j->timed_out)
                        r |= json_add(o, "timed_out", json_object_new_boolean(true));
        }
        if (j->unreaped) {
                r |= json_add(o, "unreaped_pid", json_object_new_int(j->unreaped->pid));
                r |= json_add(o, "unreaped_since_usec",
                              json_object_new_int64((int64_t) j->unreaped->since_realtime));
        }
        if (j->async_abandoned)
                r |= json_add(o, "abandoned", json_object_new_boolean(true));
        if (r < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

unsigned sched_n_unreaped(Sched *s, uint64_t *ret_oldest_realtime) {
        uint64_t oldest = 0;
        unsigned n = 0;

        for (Unreaped *u = s->unreaped; u; u = u->next, n++)
                if (!oldest || u->since_realtime < oldest)
                        oldest = u->since_realtime;
        if (ret_oldest_realtime)
                *ret_oldest_realtime = oldest;
        return n;
}
