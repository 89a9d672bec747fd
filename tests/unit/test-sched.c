/* The scheduler: timing math, then real sd-event runs with worker threads.
 *
 * The real runs check what the scheduler decided (the timer it armed, the
 * state it is in), never how soon something happened: a loaded machine delays
 * runs but must not fail the tests.  A timer never fires early, so gaps
 * between starts are checked from below only; the armed delay is checked
 * from above through next_run_usec, read after the timer was armed.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "sched.h"
#include "util/macro.h"
#include "util/time-util.h"
#include "../lib/check-run.h"

#define MS USEC_PER_MSEC

START_TEST(test_math) {
        for (int i = 0; i < 2000; i++) {
                ck_assert_uint_le(sched_splay_delay(300 * MS), 300 * MS);
                uint64_t d = sched_interval_delay(1000 * MS, 10);
                ck_assert_uint_ge(d, 900 * MS);
                ck_assert_uint_le(d, 1100 * MS);
        }
        ck_assert_uint_eq(sched_splay_delay(0), 0);
        ck_assert_uint_eq(sched_interval_delay(1000, 0), 1000);

        static const uint64_t expect[] = { 100, 200, 400, 800, 800, 800 };
        for (unsigned n = 1; n <= ELEMENTSOF(expect); n++) {
                ck_assert_uint_eq(sched_backoff_bound(100 * MS, 800 * MS, n), expect[n - 1] * MS);
                for (int i = 0; i < 200; i++) {
                        uint64_t d = sched_backoff_delay(100 * MS, 800 * MS, n);
                        ck_assert_uint_ge(d, expect[n - 1] * MS / 2);
                        ck_assert_uint_le(d, expect[n - 1] * MS);
                }
        }
        /* No overflow for absurd failure counts. */
        ck_assert_uint_eq(sched_backoff_bound(UINT64_MAX / 4, UINT64_MAX - 1, 1000), UINT64_MAX - 1);
}
END_TEST

typedef struct Harness {
        sd_event *event;
        WorkPool *pool;
        Sched *sched;
        void *state;
        uint64_t t0;
        uint64_t starts[32];
        unsigned n_starts;
        int results[32];
        unsigned n_done;
        uint64_t work_usec;
        int work_result;
        int waited_result;
        bool waited;
        int release;    /* work_gate returns once this is set */
        int saw_cancel; /* work_until_cancelled saw its cancel flag */
        /* From the done hook, which runs after the next run was armed. */
        unsigned n_hooks;
        bool rearmed[32];
        int64_t ahead[32]; /* next_run_usec minus the realtime clock after reading it */
} Harness;

static Harness *H;

/* How far ahead the job's timer points, at most: read after the timer was
 * armed, so it is never more than the delay the scheduler chose. */
static bool job_ahead(Job *j, int64_t *ret) {
        json_object *o = NULL, *v;
        bool armed;

        ck_assert_int_eq(sched_job_to_json(j, &o), 0);
        armed = sched_job_state(j) == JOB_ARMED;
        *ret = json_object_object_get_ex(o, "next_run_usec", &v)
                       ? json_object_get_int64(v) - (int64_t) now_usec(CLOCK_REALTIME)
                       : 0;
        json_object_put(o);
        return armed;
}

static void on_done_hook(void *userdata, Job *j, int result) {
        Harness *h = userdata;

        if (h->n_hooks < ELEMENTSOF(h->ahead)) {
                h->rearmed[h->n_hooks] = job_ahead(j, &h->ahead[h->n_hooks]);
                h->n_hooks++;
        }
}

static void harness_setup(void) {
        H = calloc(1, sizeof(*H));
        ck_assert_int_ge(sd_event_new(&H->event), 0);
        ck_assert_int_eq(work_pool_new(H->event, 2, &H->pool), 0);
        ck_assert_int_eq(sched_new(H->event, H->pool, &H->sched), 0);
        sched_set_done_hook(H->sched, on_done_hook, H);
        H->state = H;
        H->t0 = now_usec(CLOCK_BOOTTIME);
}

static void harness_teardown(void) {
        for (int i = 0; i < 200 && work_pool_busy(H->pool); i++)
                sd_event_run(H->event, 10 * MS);
        sched_free(H->sched);
        work_pool_free(H->pool);
        sd_event_unref(H->event);
        free(H);
}

static void run_until(bool (*cond)(void), uint64_t max_usec) {
        uint64_t end = now_usec(CLOCK_BOOTTIME) + max_usec;
        while (!cond() && now_usec(CLOCK_BOOTTIME) < end)
                ck_assert_int_ge(sd_event_run(H->event, 10 * MS), 0);
}

static void sleep_usec(uint64_t usec) {
        struct timespec ts = { .tv_sec = (time_t) (usec / USEC_PER_SEC),
                               .tv_nsec = (long) (usec % USEC_PER_SEC) * 1000 };
        nanosleep(&ts, NULL);
}

static int prepare_record(void *state, void **ret_input) {
        Harness *h = state;
        if (h->n_starts < ELEMENTSOF(h->starts))
                h->starts[h->n_starts++] = now_usec(CLOCK_BOOTTIME) - h->t0;
        return 0;
}

static int work_sleep(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        Harness *h = state;
        sleep_usec(h->work_usec);
        return h->work_result;
}

static int work_until_cancelled(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        Harness *h = state;
        for (int i = 0; i < 5000 && !sunkd_cancelled(cancel); i++)
                sleep_usec(MS);
        if (sunkd_cancelled(cancel))
                __atomic_store_n(&h->saw_cancel, 1, __ATOMIC_RELEASE);
        return 0;
}

static int work_gate(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        Harness *h = state;
        while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE) && !sunkd_cancelled(cancel))
                sleep_usec(MS);
        return 0;
}

static int done_record(void *state, int r, void *input, void *result) {
        Harness *h = state;
        if (h->n_done < ELEMENTSOF(h->results))
                h->results[h->n_done] = r;
        h->n_done++;
        return r;
}

static Job *add_job(sunkd_job_spec spec) {
        Job *j = NULL;
        spec.size = sizeof(spec);
        spec.prepare = spec.prepare ?: prepare_record;
        spec.done = done_record;
        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", &j), 0);
        return j;
}

static bool done_1(void) {
        return H->n_done >= 1;
}
static bool done_2(void) {
        return H->n_done >= 2;
}
static bool done_5(void) {
        return H->n_done >= 5;
}
static unsigned want_done;
static bool done_want(void) {
        return H->n_done >= want_done;
}
static Job *J;
static bool j_running(void) {
        return sched_job_state(J) == JOB_RUNNING;
}

/* Generous: these bound a wait for a state, not how fast it comes. */
#define WAIT_MAX (60 * USEC_PER_SEC)

START_TEST(test_splay_real) {
        int64_t ahead;
        Job *j = add_job((sunkd_job_spec){ .name = "t.splay",
                                           .interval_usec = 3600 * USEC_PER_SEC,
                                           .splay_usec = 300 * MS,
                                           .work = work_sleep });

        /* The first run is armed within the splay, not at the interval. */
        ck_assert(job_ahead(j, &ahead));
        ck_assert_int_le(ahead, 300 * MS);
        run_until(done_1, WAIT_MAX);
        ck_assert_uint_eq(H->n_done, 1);
        ck_assert_int_eq(H->results[0], 0);
        /* Then the interval (no jitter set): at least 3599 s ahead, whatever the load. */
        ck_assert(H->rearmed[0]);
        ck_assert_int_ge(H->ahead[0], (int64_t) (3599 * USEC_PER_SEC));
}
END_TEST

START_TEST(test_backoff_real) {
        H->work_result = -EIO;
        add_job((sunkd_job_spec){ .name = "t.backoff",
                                  .interval_usec = 3600 * USEC_PER_SEC,
                                  .splay_usec = 0,
                                  .backoff_min_usec = 80 * MS,
                                  .backoff_max_usec = 320 * MS,
                                  .work = work_sleep });
        run_until(done_5, WAIT_MAX);
        ck_assert_uint_ge(H->n_done, 5);
        ck_assert_uint_ge(H->n_hooks, 5);
        static const uint64_t bound[] = { 80, 160, 320, 320 };
        for (unsigned i = 0; i < 4; i++) {
                /* A timer never fires early: the gap is at least the lower bound. */
                uint64_t gap = H->starts[i + 1] - H->starts[i];
                ck_assert_msg(gap >= bound[i] * MS / 2, "gap %u is %llu us, expected at least %llu ms", i,
                              (unsigned long long) gap, (unsigned long long) bound[i] / 2);
                /* And the timer armed after the failure points no further than the bound. */
                ck_assert_msg(H->rearmed[i], "not re-armed after failure %u", i);
                ck_assert_msg(H->ahead[i] <= (int64_t) (bound[i] * MS),
                              "after failure %u the next run is %lld us ahead, "
                              "expected at most %llu ms",
                              i, (long long) H->ahead[i], (unsigned long long) bound[i]);
                ck_assert_int_eq(H->results[i], -EIO);
        }
}
END_TEST

START_TEST(test_backoff_resets) {
        Job *j;
        H->work_result = -EIO;
        j = add_job((sunkd_job_spec){ .name = "t.reset",
                                      .interval_usec = 400 * MS,
                                      .backoff_min_usec = 20 * MS,
                                      .backoff_max_usec = 40 * MS,
                                      .work = work_sleep });
        run_until(done_2, WAIT_MAX);
        ck_assert_uint_ge(H->n_done, 2);
        H->work_result = 0;
        unsigned before = H->n_done;
        want_done = before + 2;
        run_until(done_want, WAIT_MAX);
        ck_assert_uint_ge(H->n_done, want_done);
        ck_assert_uint_ge(H->n_starts, before + 2);
        /* After the success the next gap is the interval again, not a backoff. */
        uint64_t gap = H->starts[before + 1] - H->starts[before];
        ck_assert_uint_ge(gap, 390 * MS);
        (void) j;
}
END_TEST

START_TEST(test_coalesce) {
        Job *j;
        j = J = add_job((sunkd_job_spec){
                .name = "t.coalesce", .flags = SUNKD_JOB_TRIGGER_ONLY, .work = work_gate });
        ck_assert_int_eq(sched_job_trigger(j, "test"), 0);
        run_until(j_running, WAIT_MAX);
        /* The work cannot end before the release: the triggers land while it runs. */
        ck_assert_int_eq(sched_job_state(j), JOB_RUNNING);
        for (int i = 0; i < 5; i++)
                ck_assert_int_eq(sched_job_trigger(j, "test"), 0);
        ck_assert_uint_eq(H->n_done, 0);
        __atomic_store_n(&H->release, 1, __ATOMIC_RELEASE);
        run_until(done_2, WAIT_MAX);
        /* Five triggers while running collapse into a single rerun: once it
         * has completed nothing is armed or running. */
        ck_assert_uint_eq(H->n_done, 2);
        ck_assert_int_eq(sched_job_state(j), JOB_IDLE);
}
END_TEST

START_TEST(test_timeout) {
        Job *j = add_job((sunkd_job_spec){ .name = "t.timeout",
                                           .flags = SUNKD_JOB_TRIGGER_ONLY,
                                           .timeout_usec = 100 * MS,
                                           .work = work_until_cancelled });
        ck_assert_int_eq(sched_job_trigger(j, NULL), 0);
        run_until(done_1, WAIT_MAX);
        ck_assert_uint_eq(H->n_done, 1);
        ck_assert_int_eq(H->results[0], -ETIMEDOUT);
        /* The work ended because it was told to, not after its own 5 s. */
        ck_assert(__atomic_load_n(&H->saw_cancel, __ATOMIC_ACQUIRE));
}
END_TEST

/* A reload's new timing: the next run gets the new timeout; what the job is
 * (name, flags, callbacks) cannot change. */
START_TEST(test_update) {
        sunkd_job_spec spec = { .size = sizeof(spec),
                                .name = "t.update",
                                .flags = SUNKD_JOB_TRIGGER_ONLY,
                                .timeout_usec = 5 * USEC_PER_SEC,
                                .prepare = prepare_record,
                                .work = work_until_cancelled,
                                .done = done_record };
        Job *j = NULL;

        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", &j), 0);
        spec.timeout_usec = 100 * MS;
        ck_assert_int_eq(sched_job_update(j, &spec), 0);
        ck_assert_int_eq(sched_job_trigger(j, NULL), 0);
        run_until(done_1, WAIT_MAX);
        ck_assert_uint_eq(H->n_done, 1);
        ck_assert_int_eq(H->results[0], -ETIMEDOUT);
        /* Cancelled at the new 100 ms, not after the old 5 s: the work saw it. */
        ck_assert(__atomic_load_n(&H->saw_cancel, __ATOMIC_ACQUIRE));

        spec.name = "t.other";
        ck_assert_int_eq(sched_job_update(j, &spec), -EINVAL);
        spec.name = "t.update";
        spec.work = work_sleep;
        ck_assert_int_eq(sched_job_update(j, &spec), -EINVAL);
        spec.work = work_until_cancelled;
        spec.flags = 0;
        ck_assert_int_eq(sched_job_update(j, &spec), -EINVAL);
}
END_TEST

static void on_wait(void *userdata, Job *j, int result) {
        Harness *h = userdata;
        h->waited = true;
        h->waited_result = result;
}

START_TEST(test_wait_and_stop) {
        Job *j;
        H->work_result = -ENOENT;
        j = add_job(
                (sunkd_job_spec){ .name = "t.wait", .flags = SUNKD_JOB_TRIGGER_ONLY, .work = work_sleep });
        ck_assert_int_eq(sched_job_trigger(j, NULL), 0);
        ck_assert_int_eq(sched_job_wait(j, on_wait, H), 0);
        run_until(done_1, WAIT_MAX);
        ck_assert(H->waited);
        ck_assert_int_eq(H->waited_result, -ENOENT);
        ck_assert_ptr_eq(sched_find(H->sched, "t.wait"), j);
        ck_assert_int_eq(sched_job_add(H->sched,
                                       &(sunkd_job_spec){ .size = sizeof(sunkd_job_spec),
                                                          .name = "t.wait",
                                                          .work = work_sleep },
                                       &H->state, H, "test", NULL),
                         -EEXIST);

        Job *h = add_job((sunkd_job_spec){
                .name = "t.hang", .flags = SUNKD_JOB_TRIGGER_ONLY, .work = work_until_cancelled });
        ck_assert_int_eq(sched_job_trigger(h, NULL), 0);
        run_until(done_2, 50 * MS);
        ck_assert_uint_eq(sched_n_running(H->sched, H), 1);
        sched_stop_owner(H->sched, H);
        ck_assert_int_eq(sched_job_trigger(h, NULL), -ESHUTDOWN);
        run_until(done_2, WAIT_MAX);
        ck_assert_uint_ge(H->n_done, 2);
        ck_assert_int_eq(H->results[1], -ECANCELED);
        ck_assert_uint_eq(sched_n_running(H->sched, NULL), 0);
        sched_remove_owner(H->sched, H);
        ck_assert_uint_eq(sched_n_jobs(H->sched), 0);
}
END_TEST

static int work_pause(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        /* Only a signal ends it: the cancel flag lives in the parent. */
        while (!sunkd_cancelled(cancel))
                pause();
        return 0;
}

static bool running_1(void) {
        return sched_n_running(H->sched, H) == 1;
}

/* A child killed because its owner stops was cancelled, not failed: done()
 * sees -ECANCELED, as a thread's work that returns on cancel does. */
START_TEST(test_stop_kills_child_as_cancel) {
        Job *j = add_job((sunkd_job_spec){
                .name = "t.child", .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD, .work = work_pause });
        sigset_t chld;

        /* sd-event watches children only with SIGCHLD blocked, as sunkd has it. */
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        ck_assert_int_eq(sigprocmask(SIG_BLOCK, &chld, NULL), 0);
        ck_assert_int_eq(sched_job_trigger(j, NULL), 0);
        run_until(running_1, WAIT_MAX);
        ck_assert_uint_eq(sched_n_running(H->sched, H), 1);
        sched_stop_owner(H->sched, H);
        run_until(done_1, WAIT_MAX);
        ck_assert_uint_eq(H->n_done, 1);
        ck_assert_int_eq(H->results[0], -ECANCELED);
        ck_assert_uint_eq(sched_n_running(H->sched, NULL), 0);
        sched_remove_owner(H->sched, H);
}
END_TEST

/* ---- runs that never return ------------------------------------------------
 *
 * A child stuck in the kernel outlives SIGKILL.  Unprivileged and without a
 * dead NFS server or a FUSE mount (neither can be made here without root and
 * /dev/fuse), the same thing is seen from the parent's side with ptrace: a
 * tracee killed while another process traces it stays a zombie that only its
 * tracer may reap, so its real parent gets no SIGCHLD and no wait result until
 * the tracer lets go.  The tracer is a sibling of the child (outside its
 * session, so the job's kill of the process group misses it), and the child
 * allows it with PR_SET_PTRACER for hosts where Yama restricts ptrace. */

static char pid_path[64];

static int work_pid_pause(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        char tmp[80], text[32];
        int fd, n;

        (void) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
        snprintf(tmp, sizeof(tmp), "%s.tmp", pid_path);
        n = snprintf(text, sizeof(text), "%d\n", (int) getpid());
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, text, (size_t) n) != n || close(fd) < 0 || rename(tmp, pid_path) < 0)
                return -EIO;
        for (;;)
                pause();
}

/* Forks a process that waits for a signal (SIGALRM at the latest, so that
 * one spared by the kill fails the test rather than outliving it), leaves
 * its pid where work_pid_pause() leaves its own, and waits too. */
static int work_fork_pause(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        char tmp[80], text[32];
        pid_t g = fork();
        int fd, n;

        if (g < 0)
                return -errno;
        if (g == 0) {
                signal(SIGALRM, SIG_DFL); /* not Check's handler, inherited */
                alarm(120);
                for (;;)
                        pause();
        }
        snprintf(tmp, sizeof(tmp), "%s.tmp", pid_path);
        n = snprintf(text, sizeof(text), "%d\n", (int) g);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || write(fd, text, (size_t) n) != n || close(fd) < 0 || rename(tmp, pid_path) < 0)
                return -EIO;
        for (;;)
                pause();
}

/* Without running the loop: the run's timeout cannot fire before the test
 * has attached its tracer, however slow the machine. */
static pid_t read_pid_file(void) {
        uint64_t end = now_usec(CLOCK_BOOTTIME) + WAIT_MAX;
        FILE *f;
        int pid = 0;

        while (access(pid_path, F_OK) < 0 && now_usec(CLOCK_BOOTTIME) < end)
                sleep_usec(MS);
        f = fopen(pid_path, "re");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fscanf(f, "%d", &pid), 1);
        fclose(f);
        ck_assert_int_eq(unlink(pid_path), 0);
        return pid;
}

/* A process that traces @pid until killed. */
static pid_t start_tracer(pid_t pid) {
        int p[2];
        char ok = 0;
        pid_t t;

        ck_assert_int_eq(pipe(p), 0);
        t = fork();
        ck_assert_int_ge(t, 0);
        if (t == 0) {
                ok = ptrace(PTRACE_SEIZE, pid, 0, 0) == 0 ? 'y' : 'n';
                (void) !write(p[1], &ok, 1);
                for (;;)
                        pause();
        }
        close(p[1]);
        ck_assert_int_eq(read(p[0], &ok, 1), 1);
        close(p[0]);
        ck_assert_msg(ok == 'y',
                      "cannot ptrace the job's child here: the test needs ptrace between siblings");
        return t;
}

static void stop_tracer(pid_t t) {
        ck_assert_int_eq(kill(t, SIGKILL), 0);
        ck_assert_int_eq(waitpid(t, NULL, 0), t);
}

static void block_sigchld(void) {
        sigset_t chld;

        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        ck_assert_int_eq(sigprocmask(SIG_BLOCK, &chld, NULL), 0);
}

static json_object *job_json(Job *j) {
        json_object *o = NULL;
        ck_assert_int_eq(sched_job_to_json(j, &o), 0);
        return o;
}

static int64_t job_int(Job *j, const char *key) {
        json_object *o = job_json(j), *v;
        int64_t x = json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : -1;
        json_object_put(o);
        return x;
}

static bool job_waiting(void) {
        json_object *o = job_json(J), *v;
        bool w = json_object_object_get_ex(o, "state", &v) && streq(json_object_get_string(v), "waiting");
        json_object_put(o);
        return w;
}

static bool no_unreaped(void) {
        return sched_n_unreaped(H->sched, NULL) == 0;
}
static bool started_2(void) {
        return H->n_starts >= 2;
}

START_TEST(test_child_outlives_kill) {
        pid_t pid, tracer;

        snprintf(pid_path, sizeof(pid_path), "/tmp/test-sched.%d.pid", (int) getpid());
        block_sigchld();
        sched_set_kill_grace(H->sched, 200 * MS);
        J = add_job((sunkd_job_spec){ .name = "t.stuck",
                                      .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD,
                                      .timeout_usec = 300 * MS,
                                      .work = work_pid_pause });
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(j_running, WAIT_MAX);
        pid = read_pid_file();
        tracer = start_tracer(pid);

        /* Timeout, SIGKILL, grace: the run ends although the child is not reaped. */
        run_until(done_1, WAIT_MAX);
        ck_assert_uint_eq(H->n_done, 1);
        ck_assert_int_eq(H->results[0], -ETIMEDOUT);
        ck_assert_int_ne(sched_job_state(J), JOB_RUNNING);
        ck_assert_uint_eq(sched_n_unreaped(H->sched, NULL), 1);
        ck_assert_int_eq(job_int(J, "unreaped_pid"), pid);
        ck_assert_int_gt(job_int(J, "unreaped_since_usec"), 0);

        /* No second run while the old child lives. */
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(job_waiting, WAIT_MAX);
        ck_assert(job_waiting());
        ck_assert_uint_eq(H->n_starts, 1);

        /* Once it is reaped, the due run starts. */
        stop_tracer(tracer);
        run_until(started_2, WAIT_MAX);
        ck_assert_uint_eq(H->n_starts, 2);
        ck_assert(no_unreaped());
        ck_assert_int_eq(job_int(J, "unreaped_pid"), -1);
        pid = read_pid_file();
        run_until(done_2, WAIT_MAX);
        ck_assert_int_eq(H->results[1], -ETIMEDOUT);
        ck_assert(no_unreaped());
}
END_TEST

/* A child's timeout kills what the child started, not the child alone: the
 * process it forked is killed with it.  The test is the subreaper, so that
 * process, orphaned, becomes its child and its end can be waited for. */
START_TEST(test_timeout_kills_what_child_started) {
        siginfo_t si = {};
        pid_t g;

        snprintf(pid_path, sizeof(pid_path), "/tmp/test-sched.%d.pid", (int) getpid());
        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
        block_sigchld();
        J = add_job((sunkd_job_spec){ .name = "t.forks",
                                      .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD,
                                      .timeout_usec = 300 * MS,
                                      .work = work_fork_pause });
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(j_running, WAIT_MAX);
        g = read_pid_file();
        run_until(done_1, WAIT_MAX);
        ck_assert_uint_eq(H->n_done, 1);
        ck_assert_int_eq(H->results[0], -ETIMEDOUT);
        /* killed with the child, not ended by its alarm */
        ck_assert_int_eq(waitid(P_PID, (id_t) g, &si, WEXITED), 0);
        ck_assert_int_eq(si.si_code, CLD_KILLED);
        ck_assert_int_eq(si.si_status, SIGKILL);
}
END_TEST

/* A module stopping while its child is stuck still stops; the child is
 * reaped later, after its job is gone. */
START_TEST(test_stop_with_stuck_child) {
        pid_t pid, tracer;

        snprintf(pid_path, sizeof(pid_path), "/tmp/test-sched.%d.pid", (int) getpid());
        block_sigchld();
        sched_set_kill_grace(H->sched, 200 * MS);
        J = add_job((sunkd_job_spec){ .name = "t.stuck",
                                      .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD,
                                      .timeout_usec = 3600 * USEC_PER_SEC,
                                      .work = work_pid_pause });
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(j_running, WAIT_MAX);
        pid = read_pid_file();
        tracer = start_tracer(pid);
        sched_stop_owner(H->sched, H);
        run_until(done_1, WAIT_MAX);
        ck_assert_int_eq(H->results[0], -ECANCELED);
        ck_assert_uint_eq(sched_n_running(H->sched, NULL), 0);
        ck_assert_uint_eq(sched_n_unreaped(H->sched, NULL), 1);
        sched_remove_owner(H->sched, H);
        ck_assert_uint_eq(sched_n_jobs(H->sched), 0);
        stop_tracer(tracer);
        run_until(no_unreaped, WAIT_MAX);
        ck_assert(no_unreaped());
}
END_TEST

static int prepare_async(void *state, void **ret_input) {
        return prepare_record(state, ret_input); /* starts nothing: only complete() ends it */
}

static unsigned n_cancels;
static void cancel_ignored(void *state, void *input) {
        n_cancels++;
}

/* An async run whose module never completes it ends all the same. */
START_TEST(test_async_without_cancel) {
        J = add_job((sunkd_job_spec){ .name = "t.async",
                                      .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_ASYNC,
                                      .timeout_usec = 100 * MS,
                                      .prepare = prepare_async });
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(done_1, WAIT_MAX);
        ck_assert_int_eq(H->results[0], -ETIMEDOUT);
        ck_assert_int_ne(sched_job_state(J), JOB_RUNNING);
        ck_assert_int_eq(job_int(J, "abandoned"), 1);

        /* Not again until the module has ended the old run; its late end calls no done. */
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(job_waiting, WAIT_MAX);
        ck_assert_uint_eq(H->n_starts, 1);
        ck_assert_int_eq(sched_job_complete(J, 0), 0);
        ck_assert_uint_eq(H->n_done, 1);
        run_until(started_2, WAIT_MAX);
        ck_assert_uint_eq(H->n_starts, 2);
        ck_assert_int_eq(sched_job_complete(J, 0), 0);
        ck_assert_uint_eq(H->n_done, 2);
        ck_assert_int_eq(H->results[1], 0);
        ck_assert_int_eq(sched_job_complete(J, 0), -ESTALE);
}
END_TEST

START_TEST(test_async_cancel_ignored) {
        n_cancels = 0;
        sched_set_kill_grace(H->sched, 100 * MS);
        J = add_job((sunkd_job_spec){ .name = "t.async",
                                      .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_ASYNC,
                                      .timeout_usec = 100 * MS,
                                      .prepare = prepare_async,
                                      .cancel = cancel_ignored });
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(done_1, WAIT_MAX);
        ck_assert_int_eq(H->results[0], -ETIMEDOUT);
        ck_assert_uint_eq(n_cancels, 1);
        ck_assert_int_eq(job_int(J, "abandoned"), 1);
}
END_TEST

START_TEST(test_async_stop_without_cancel) {
        J = add_job((sunkd_job_spec){ .name = "t.async",
                                      .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_ASYNC,
                                      .timeout_usec = 3600 * USEC_PER_SEC,
                                      .prepare = prepare_async });
        ck_assert_int_eq(sched_job_trigger(J, NULL), 0);
        run_until(j_running, WAIT_MAX);
        sched_stop_owner(H->sched, H);
        ck_assert_uint_eq(H->n_done, 1);
        ck_assert_int_eq(H->results[0], -ECANCELED);
        ck_assert_uint_eq(sched_n_running(H->sched, NULL), 0);
        sched_remove_owner(H->sched, H);
}
END_TEST

/* As spawn: a child that drops root's uid must drop its group too. */
START_TEST(test_child_uid_without_gid) {
        sunkd_job_spec spec = { .size = sizeof(spec),
                                .name = "t.drop",
                                .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD,
                                .work = work_pause,
                                .done = done_record,
                                .child_uid = 65534,
                                .child_gid = 0 };

        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", NULL), -EINVAL);
        spec.child_gid = 65534;
        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", NULL), 0);
}
END_TEST

/* ---- kept children (SUNKD_JOB_CHILD_REUSE) ----------------------------------- */

static int kept_pids[8];
static unsigned n_kept_pids;
static int kept_input_marker;

/* prepare's input is of this run; a kept child was forked before it */
static int prepare_marker(void *state, void **ret_input) {
        (void) state;
        *ret_input = &kept_input_marker;
        return 0;
}

static int work_own_pid(void *state, void *input, const sunkd_cancel *cancel, void **ret) {
        (void) state;
        (void) cancel;
        if (input)
                return -EBADE;
        *ret = json_object_new_int(getpid());
        return 0;
}

static int done_pid(void *state, int r, void *input, void *result) {
        Harness *h = state;

        (void) input;
        if (h->n_done < ELEMENTSOF(h->results))
                h->results[h->n_done] = r;
        h->n_done++;
        if (result && n_kept_pids < ELEMENTSOF(kept_pids))
                kept_pids[n_kept_pids++] = json_object_get_int(result);
        json_object_put(result);
        return r;
}

static Job *add_kept(const char *name, int (*work)(void *, void *, const sunkd_cancel *, void **),
                     uint64_t timeout_usec) {
        sunkd_job_spec spec = { .size = sizeof(spec),
                                .name = name,
                                .flags = SUNKD_JOB_TRIGGER_ONLY | SUNKD_JOB_CHILD | SUNKD_JOB_CHILD_REUSE,
                                .timeout_usec = timeout_usec,
                                .prepare = prepare_marker,
                                .work = work,
                                .done = done_pid };
        Job *j = NULL;

        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", &j), 0);
        return j;
}

static void run_once(Job *j) {
        want_done = H->n_done + 1;
        ck_assert_int_eq(sched_job_trigger(j, NULL), 0);
        run_until(done_want, WAIT_MAX);
        ck_assert_uint_eq(H->n_done, want_done);
}

/* One process serves run after run, of one job and of another added before
 * it was forked; its work gets no input (prepare's is not in its copy). */
START_TEST(test_kept_reused) {
        Job *a, *b;

        n_kept_pids = 0;
        block_sigchld();
        a = add_kept("t.kept-a", work_own_pid, 0);
        b = add_kept("t.kept-b", work_own_pid, 0);
        run_once(a);
        run_once(a);
        run_once(b);
        ck_assert_int_eq(H->results[0], 0);
        ck_assert_int_eq(H->results[1], 0);
        ck_assert_int_eq(H->results[2], 0);
        ck_assert_uint_eq(n_kept_pids, 3);
        ck_assert_int_ne(kept_pids[0], getpid());
        ck_assert_int_eq(kept_pids[1], kept_pids[0]);
        ck_assert_int_eq(kept_pids[2], kept_pids[0]);
}
END_TEST

/* A job added after the kept child was forked is not in its copy: its work
 * runs in a child forked since. */
START_TEST(test_kept_generation) {
        Job *a, *b;

        n_kept_pids = 0;
        block_sigchld();
        a = add_kept("t.kept-old", work_own_pid, 0);
        run_once(a);
        b = add_kept("t.kept-new", work_own_pid, 0);
        run_once(b);
        ck_assert_uint_eq(n_kept_pids, 2);
        ck_assert_int_ne(kept_pids[1], kept_pids[0]);
        /* the old one may serve the old job still; a removed job ends the idle ones */
        ck_assert_int_eq(kill(kept_pids[0], 0), 0);
}
END_TEST

static bool kept_0_gone(void) {
        return kill(kept_pids[0], 0) < 0;
}

/* A kept child killed at a timeout is never given work again; the idle
 * ones end when a job that may use them goes. */
START_TEST(test_kept_killed_not_reused) {
        Job *stuck, *q;

        n_kept_pids = 0;
        snprintf(pid_path, sizeof(pid_path), "/tmp/test-sched.%d.pid", (int) getpid());
        block_sigchld();
        stuck = add_kept("t.kept-stuck", work_pid_pause, 300 * MS);
        q = add_kept("t.kept-q", work_own_pid, 0);
        run_once(q);
        run_once(stuck);
        ck_assert_int_eq(H->results[1], -ETIMEDOUT);
        ck_assert_int_eq(read_pid_file(), kept_pids[0]); /* it ran in the kept child, which died */
        run_once(q);
        ck_assert_uint_eq(n_kept_pids, 2);
        ck_assert_int_ne(kept_pids[1], kept_pids[0]);
        kept_pids[0] = kept_pids[1];
        ck_assert_int_eq(kill(kept_pids[0], 0), 0);
        sched_remove_owner(H->sched, H);
        run_until(kept_0_gone, WAIT_MAX);
        ck_assert(kept_0_gone());
}
END_TEST

/* Each rule a job spec can break is named in one line with the job's name,
 * and nothing is registered. */
START_TEST(test_refusal_names_rule) {
        static const struct {
                sunkd_job_spec spec;
                const char *says;
        } cases[] = {
                { { .name = "", .work = work_pause, .done = done_record },
                  "Job '' refused: a job needs a name." },
                { { .name = "t.none", .done = done_record },
                  "Job 't.none' refused: a job needs work, or prepare for an async job." },
                { { .name = "t.both",
                    .flags = SUNKD_JOB_ASYNC | SUNKD_JOB_CHILD,
                    .prepare = prepare_record,
                    .work = work_pause,
                    .done = done_record },
                  "Job 't.both' refused: a job is SUNKD_JOB_ASYNC or SUNKD_JOB_CHILD, not both." },
                { { .name = "t.asyncwork",
                    .flags = SUNKD_JOB_ASYNC,
                    .prepare = prepare_record,
                    .work = work_pause,
                    .done = done_record },
                  "Job 't.asyncwork' refused: a SUNKD_JOB_ASYNC job has no work: its prepare starts the "
                  "run." },
                { { .name = "t.childprep",
                    .flags = SUNKD_JOB_CHILD,
                    .prepare = prepare_record,
                    .done = done_record },
                  "Job 't.childprep' refused: a SUNKD_JOB_CHILD job needs work, which the child runs." },
                { { .name = "t.drop",
                    .flags = SUNKD_JOB_CHILD,
                    .work = work_pause,
                    .done = done_record,
                    .child_uid = 65534 },
                  "Job 't.drop' refused: a SUNKD_JOB_CHILD job with a child_uid needs a child_gid other "
                  "than 0." },
                { { .name = "t.reuse",
                    .flags = SUNKD_JOB_CHILD_REUSE,
                    .work = work_pause,
                    .done = done_record },
                  "Job 't.reuse' refused: SUNKD_JOB_CHILD_REUSE goes with SUNKD_JOB_CHILD." },
                { { .name = "t.reusedrop",
                    .flags = SUNKD_JOB_CHILD | SUNKD_JOB_CHILD_REUSE,
                    .work = work_pause,
                    .done = done_record,
                    .child_uid = 65534,
                    .child_gid = 65534 },
                  "Job 't.reusedrop' refused: a SUNKD_JOB_CHILD_REUSE job runs as sunkd: its child_uid is "
                  "0." },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                sunkd_job_spec spec = cases[i].spec;
                char *said = NULL;

                spec.size = sizeof(spec);
                log_capture_begin(&said);
                ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", NULL), -EINVAL);
                log_capture_end();
                ck_assert_msg(said && strstr(said, cases[i].says), "case %zu said '%s', not '%s'", i,
                              said ?: "nothing", cases[i].says);
                free(said);
        }
        ck_assert_uint_eq(sched_n_jobs(H->sched), 0);
}
END_TEST

/* A spec too short for ABI 1.0, or none, is named as such; so is a name
 * already taken. */
START_TEST(test_refusal_names_layout) {
        sunkd_job_spec spec = {
                .size = sizeof(spec), .name = "t.short", .work = work_pause, .done = done_record
        };
        char *said = NULL;

        spec.size = offsetof(sunkd_job_spec, done);
        log_capture_begin(&said);
        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", NULL), -EINVAL);
        log_capture_end();
        ck_assert_ptr_nonnull(said);
        ck_assert_ptr_nonnull(strstr(said, "Job refused: its spec's size"));
        ck_assert_ptr_nonnull(strstr(said, "less than ABI 1.0's"));
        free(said);

        said = NULL;
        log_capture_begin(&said);
        ck_assert_int_eq(sched_job_add(H->sched, NULL, &H->state, H, "test", NULL), -EINVAL);
        log_capture_end();
        ck_assert_ptr_nonnull(said);
        ck_assert_ptr_nonnull(strstr(said, "refused: the spec is NULL."));
        free(said);

        spec = (sunkd_job_spec){ .size = sizeof(spec),
                                 .name = "t.twice",
                                 .flags = SUNKD_JOB_TRIGGER_ONLY,
                                 .work = work_pause,
                                 .done = done_record };
        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", NULL), 0);
        said = NULL;
        log_capture_begin(&said);
        ck_assert_int_eq(sched_job_add(H->sched, &spec, &H->state, H, "test", NULL), -EEXIST);
        log_capture_end();
        ck_assert_ptr_nonnull(said);
        ck_assert_ptr_nonnull(strstr(said, "Job 't.twice' refused: the name is taken."));
        free(said);
}
END_TEST

int main(void) {
        Suite *s = suite_create("sched");
        TCase *math = tcase_create("math"), *real = tcase_create("real");

        tcase_add_test(math, test_math);
        tcase_add_checked_fixture(real, harness_setup, harness_teardown);
        tcase_set_timeout(real, 300);
        tcase_add_test(real, test_splay_real);
        tcase_add_test(real, test_backoff_real);
        tcase_add_test(real, test_backoff_resets);
        tcase_add_test(real, test_coalesce);
        tcase_add_test(real, test_timeout);
        tcase_add_test(real, test_update);
        tcase_add_test(real, test_wait_and_stop);
        tcase_add_test(real, test_stop_kills_child_as_cancel);
        tcase_add_test(real, test_child_outlives_kill);
        tcase_add_test(real, test_timeout_kills_what_child_started);
        tcase_add_test(real, test_stop_with_stuck_child);
        tcase_add_test(real, test_async_without_cancel);
        tcase_add_test(real, test_refusal_names_rule);
        tcase_add_test(real, test_refusal_names_layout);
        tcase_add_test(real, test_async_cancel_ignored);
        tcase_add_test(real, test_async_stop_without_cancel);
        tcase_add_test(real, test_child_uid_without_gid);
        tcase_add_test(real, test_kept_reused);
        tcase_add_test(real, test_kept_generation);
        tcase_add_test(real, test_kept_killed_not_reused);
        suite_add_tcase(s, math);
        suite_add_tcase(s, real);
        return check_run(s);
}
