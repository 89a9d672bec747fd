/* The scheduler: periodic and triggered jobs on sd-event timers. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "log.h"
#include "sunkd/module.h"
#include "work.h"

typedef struct Sched Sched;
typedef struct sunkd_job Job;

typedef enum JobState {
        JOB_IDLE,    /* not armed: trigger-only, or stopped */
        JOB_ARMED,   /* timer set for the next run */
        JOB_RUNNING, /* work queued or running; timer set for the timeout */
        _JOB_STATE_MAX,
} JobState;

/* Called on the loop after every completed run. */
typedef void (*SchedDoneHook)(void *userdata, Job *j, int result);
/* Called once for each sched_job_wait(), with the result of the run. */
typedef void (*JobWaitFn)(void *userdata, Job *j, int result);

int sched_new(sd_event *event, WorkPool *pool, Sched **ret);
Sched *sched_free(Sched *s);
void sched_set_done_hook(Sched *s, SchedDoneHook hook, void *userdata);
/** sched_set_max_workers_per_owner() - cap the worker threads one owner's
 * runs may hold at once (0 = no cap); a due job beyond it waits. */
void sched_set_max_workers_per_owner(Sched *s, unsigned n);
/** sched_set_kill_grace() - how long a SIGKILLed child or a cancelled async
 * run may take to end before the run is given up on (default 5 s). */
void sched_set_kill_grace(Sched *s, uint64_t usec);
/** sched_n_unreaped() - children of given-up runs still not reaped, and
 * since when (CLOCK_REALTIME) the oldest was abandoned. */
unsigned sched_n_unreaped(Sched *s, uint64_t *ret_oldest_realtime);
/** sched_job_complete() - end the running run of a SUNKD_JOB_ASYNC job. */
int sched_job_complete(Job *j, int r);

/**
 * sched_job_add() - register a job and arm its first run at now + U(0, splay).
 * @statep: where the state handed to the spec's callbacks lives (read at
 * each call, so a module's state may be set after the job was added); @owner: groups jobs for
 * sched_stop_owner()/sched_remove_owner(); @log: module name for messages
 * (borrowed, must outlive the job).
 * Return: 0; -EINVAL for a spec that breaks a rule of sunkd_job_spec, -EEXIST
 * for a name already taken, each logged with the job's name and the rule.
 */
int sched_job_add(Sched *s, const sunkd_job_spec *spec, void **statep, const void *owner, const char *module,
                  Job **ret);
/** sched_job_refuse() - log "Job '@name' refused: @rule." for @module; -EINVAL. */
int sched_job_refuse(const char *module, const char *name, const char *rule);
/** sched_job_trigger() - run now; while running, coalesce into one rerun. */
int sched_job_trigger(Job *j, const char *reason);
/** sched_job_wait() - call @fn when the next run that starts from now completes. */
int sched_job_wait(Job *j, JobWaitFn fn, void *userdata);
/** sched_job_unwait() - forget the waits registered with @userdata. */
void sched_job_unwait(Job *j, void *userdata);
int sched_job_set_interval(Job *j, uint64_t interval_usec, uint64_t splay_usec);
/** sched_job_update() - new timing from @spec (same name, flags and callbacks). */
int sched_job_update(Job *j, const sunkd_job_spec *spec);
/** sched_job_set_message() - explain the current or last run (copied, capped). */
int sched_job_set_message(Job *j, const char *message);
/** sched_job_error() - the last run's error text: its message, else strerror; NULL on success. */
const char *sched_job_error(Job *j);

Job *sched_find(Sched *s, const char *name);
size_t sched_n_jobs(Sched *s);
Job *sched_job_at(Sched *s, size_t i);
const char *sched_job_name(Job *j);
JobState sched_job_state(Job *j);
unsigned sched_job_runs(Job *j);
const void *sched_job_owner(Job *j);
bool sched_job_is_gate(Job *j);
uint64_t sched_job_last_duration(Job *j);
int sched_job_to_json(Job *j, json_object **ret);

/** sched_stop_owner() - disarm @owner's jobs and cancel those running. */
void sched_stop_owner(Sched *s, const void *owner);
/** sched_n_running() - running jobs of @owner, or of everybody if NULL. */
unsigned sched_n_running(Sched *s, const void *owner);
/** sched_remove_owner() - free @owner's jobs; none may be running. */
void sched_remove_owner(Sched *s, const void *owner);

/* The timing rules, exposed for tests. */
uint64_t sched_splay_delay(uint64_t splay_usec);
uint64_t sched_interval_delay(uint64_t interval_usec, uint32_t jitter_pct);
uint64_t sched_backoff_bound(uint64_t min_usec, uint64_t max_usec, unsigned n_failures);
uint64_t sched_backoff_delay(uint64_t min_usec, uint64_t max_usec, unsigned n_failures);

const char *job_state_to_string(JobState s);
