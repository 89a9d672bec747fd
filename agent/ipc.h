/* The control socket: Varlink-framed JSON over AF_UNIX.
 *
 * One Ipc owns the listening socket and every connection.  A connection
 * carries one call at a time: a request is read (up to the NUL), parsed and
 * checked against limits, its method is looked up in the table and the
 * peer's SO_PEERCRED is checked against the method's policy; the handler
 * replies at once or later (SUNKD_CALL_PENDING).  Malformed input gets an
 * error reply and the connection is closed; everybody else is unaffected.
 * Nothing here blocks: sockets are non-blocking and driven by sd-event.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "sunkd/module.h"

typedef struct Ipc Ipc;

/* A zero field takes its default. */
typedef struct IpcLimits {
        size_t max_request;          /* bytes, NUL included; default 64 KiB */
        size_t max_reply;            /* bytes; default 1 MiB */
        unsigned max_connections;    /* default 256 */
        uint64_t idle_timeout_usec;  /* default 30 s */
        unsigned max_depth;          /* JSON nesting; default 16 */
} IpcLimits;

#define IPC_LIMITS_DEFAULT                                                                       \
        ((IpcLimits){ .max_request = 64 * 1024,                                                  \
                      .max_reply = 1024 * 1024,                                                  \
                      .max_connections = 256,                                                    \
                      .idle_timeout_usec = 30 * UINT64_C(1000000),                               \
                      .max_depth = 16 })

/* Who may call a SUNKD_METHOD_ALLOW method besides root. */
typedef struct IpcAllow {
        uid_t *uids;
        size_t n_uids;
        gid_t *gids;
        size_t n_gids;
} IpcAllow;

typedef int (*IpcMethodFn)(sunkd_call *call, json_object *params, void *userdata);

int ipc_new(sd_event *event, const IpcLimits *limits, Ipc **ret);
Ipc *ipc_free(Ipc *ipc);

/** ipc_listen() - bind @path (replacing a stale socket), chmod @mode, chown to
 * gid @gid unless (gid_t)-1, listen.  The parent directory is created 0755. */
int ipc_listen(Ipc *ipc, const char *path, mode_t mode, gid_t gid);
/** ipc_adopt() - use an already listening socket (socket activation). */
int ipc_adopt(Ipc *ipc, int fd);
/** ipc_stop_accepting() - lame duck: close the listener, keep connections. */
void ipc_stop_accepting(Ipc *ipc);
unsigned ipc_n_connections(Ipc *ipc);

/**
 * ipc_add_method() - register @name with policy @flags (SUNKD_METHOD_*).
 * @allow is borrowed and must outlive the method (NULL = nobody besides
 * root).  @owner groups methods for ipc_remove_methods().  -EEXIST when the
 * name is taken.
 */
int ipc_add_method(Ipc *ipc, const char *name, unsigned flags, IpcMethodFn fn, void *userdata,
                   const IpcAllow *allow, const void *owner);
void ipc_remove_methods(Ipc *ipc, const void *owner);

/* Replies; each takes ownership of @params (may be NULL = {}).  A call is
 * answered exactly once; a second reply from inside the handler is
 * -EALREADY (a reply to a pending call frees the handle: do not touch it
 * afterwards).  Replying to a call whose peer went away frees the call and
 * returns 0.  A oneway call is answered like any other; nothing is sent. */
int ipc_reply(sunkd_call *call, json_object *params);
int ipc_reply_error(sunkd_call *call, const char *error, json_object *params);
uid_t ipc_call_uid(sunkd_call *call);
gid_t ipc_call_gid(sunkd_call *call);
pid_t ipc_call_pid(sunkd_call *call);
/* The method name; valid until the call is answered. */
const char *ipc_call_method(sunkd_call *call);
/* True once the peer has gone away; a reply would only free the call. */
bool ipc_call_is_orphaned(sunkd_call *call);
