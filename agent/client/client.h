/* A blocking client for the control socket, for sunkctl and the small
 * helpers sshd and slurmd run (sunkd-authkeys, sunkd-prolog).
 *
 * It depends on json-c and libsunkd-util only, never on libsystemd, so the
 * helpers stay small.  Non-logging: callers print what they need.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#define CLIENT_MAX_REPLY_DEFAULT (1024 * 1024)

/**
 * client_connect() - connect to the sunkd socket at @path within @timeout_usec.
 * Return: 0 and the fd (blocking off, close-on-exec) in *ret_fd; -ENOENT (no
 * socket: sunkd never started or the path is wrong), -ECONNREFUSED (a stale
 * socket: sunkd is not running), -EACCES, -ETIMEDOUT (the listen backlog
 * stayed full), -ENAMETOOLONG, or another negative errno.
 */
int client_connect(const char *path, uint64_t timeout_usec, int *ret_fd);

/**
 * client_call() - send one call and wait for its reply, @timeout_usec in all.
 * @params is borrowed (NULL = {}); the reply may be at most @max_reply bytes
 * (0 = CLIENT_MAX_REPLY_DEFAULT).
 * Return: 0 and the reply's parameters in *ret_reply (the caller puts it);
 * -EREMOTEIO when sunkd answered with an error: its name in *ret_error_name
 * (malloc'd; may be NULL if the caller does not care) and its parameters in
 * *ret_reply; -ETIMEDOUT; -ECONNRESET when sunkd closed the connection
 * without answering; -EBADMSG and the other varlink_parse() errors for a
 * reply that is not a well-formed Varlink reply.  On errors other than
 * -EREMOTEIO *ret_reply and *ret_error_name are set to NULL.
 */
int client_call(int fd, const char *method, json_object *params, uint64_t timeout_usec, size_t max_reply,
                json_object **ret_reply, char **ret_error_name);

/**
 * client_call_last() - client_call() for the last call on @fd: the sending
 * side is shut down after the call, which is what a one-shot client should
 * do (sunkd then answers and closes at once).  @fd can only read afterwards.
 */
int client_call_last(int fd, const char *method, json_object *params, uint64_t timeout_usec,
                     size_t max_reply, json_object **ret_reply, char **ret_error_name);

/**
 * client_call_last_sent() - client_call_last(), and whether the whole call
 * went out in *@ret_sent: a call that did not is one sunkd never saw (its
 * frame ends with the last byte), so nothing it asked for was done.
 */
int client_call_last_sent(int fd, const char *method, json_object *params, uint64_t timeout_usec,
                          size_t max_reply, json_object **ret_reply, char **ret_error_name, bool *ret_sent);
