/* sunkctl's generic renderer: any answer as a person reads it. */
#pragma once

#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/** render_ago() - a wall-clock time as "3m ago", "in 2h", "just now"; "-" for none (<= 0). */
const char *render_ago(char *buf, size_t len, int64_t when_usec);

/** render_duration() - a duration to the millisecond, "<1ms", or "-" for none (< 0). */
const char *render_duration(char *buf, size_t len, int64_t usec);

/**
 * render_scalar() - the text of the scalar @v under @key, malloc'd: strings
 * as they are but for control bytes (written \xHH), null "-", numbers in
 * JSON; by the convention of sunkd/module.h an integer *_duration_usec is a
 * duration and any other *_usec a wall-clock time, unless it is too small to
 * be one (before 2001): then it is a duration too.  A non-scalar is compact
 * JSON.  NULL on OOM.
 */
char *render_scalar(const char *key, json_object *v);

/**
 * render_reply() - @reply (an object) on @f: a "key: value" line per scalar
 * member, keys aligned; an object member as "key:" and its members indented
 * below; an array of flat objects as a table under "key:", an array of
 * scalars one item a line.  Returns 0 or -ENOMEM.
 */
int render_reply(FILE *f, json_object *reply);
