/* A job's work run in a forked child: killable, optionally unprivileged.
 *
 * A thread cannot be stopped: work stuck in statfs() on a dead NFS mount or
 * in a hung driver call holds its worker forever.  A child process can be
 * killed at the job's timeout, and it can run with a dropped uid.  The work
 * hands back a JSON result, which crosses a pipe as text.
 */
#pragma once

#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

typedef struct JobChild JobChild;

/* In the child.  Returns 0 or negative errno; *ret_result may be set either way. */
typedef int (*JobChildWorkFn)(void *userdata, json_object **ret_result);
/* On the loop, once: @r is the work's return, or negative errno when the
 * child died or said nothing; @result is owned by the callee (may be NULL). */
typedef void (*JobChildDoneFn)(void *userdata, int r, json_object *result, const char *why);

/* The largest result accepted from a child. */
#define JOB_CHILD_RESULT_MAX (1024 * 1024)

/**
 * job_child_start() - fork and run @work(@work_userdata) in the child, as
 * @uid/@gid unless @uid is 0 (then as the daemon).  @done runs on the loop
 * when the child has exited and its result is read.
 */
int job_child_start(sd_event *event, JobChildWorkFn work, void *work_userdata, uid_t uid, gid_t gid,
                    JobChildDoneFn done, void *userdata, JobChild **ret);
/** job_child_kill() - SIGKILL the child's process group; @done still runs. */
void job_child_kill(JobChild *c);
/** job_child_free() - kill if still running and reap it; @done is not called. */
JobChild *job_child_free(JobChild *c);
/**
 * job_child_disown() - free @c without killing or waiting for its process,
 * whose pid it returns: the caller reaps it.  For a child that SIGKILL did
 * not end (stuck in the kernel), where a waitpid() would block the loop.
 */
pid_t job_child_disown(JobChild *c);
pid_t job_child_pid(JobChild *c);

/* Kept children: forked once, given one piece of work after another (see
 * job-child.c).  Work given to one runs in a copy of the daemon made when
 * the child was forked: it must read only what existed then. */
typedef struct JobChildPool JobChildPool;

int job_child_pool_new(sd_event *event, JobChildPool **ret);
/** job_child_pool_free() - kill and reap every kept child; their runs' JobChild are freed first. */
JobChildPool *job_child_pool_free(JobChildPool *p);
/**
 * job_child_pool_mark() - a job whose work may run in a kept child was
 * added: the generation it needs, which children forked before it lack.
 */
uint64_t job_child_pool_mark(JobChildPool *p);
/** job_child_pool_retire_idle() - end the idle ones (a job went away: its memory with it). */
void job_child_pool_retire_idle(JobChildPool *p);
/**
 * job_child_start_kept() - as job_child_start(), as the daemon (uid 0), in
 * an idle kept child of generation @since or later, forked when there is
 * none.  kill, free and disown work on the JobChild as on a fresh one; a
 * killed kept child is not used again.
 */
int job_child_start_kept(JobChildPool *p, uint64_t since, JobChildWorkFn work, void *work_userdata,
                         JobChildDoneFn done, void *userdata, JobChild **ret);
