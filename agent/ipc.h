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

/* The largest request root may send by default, whatever max_request says. */
#define IPC_ROOT_REQUEST_MAX ((size_t) 16 << 20)

/* A zero field takes its default. */
typedef struct IpcLimits {
        size_t max_request;         /* bytes, NUL included; default 64 KiB */
        size_t max_request_root;    /* root's (when larger); default IPC_ROOT_REQUEST_MAX */
        size_t max_reply;           /* bytes; default 1 MiB */
        unsigned max_connections;   /* default 256 */
        uint64_t idle_timeout_usec; /* default 30 s */
        unsigned max_depth;         /* JSON nesting; default 16 */
        /* Per peer uid, root exempt: connections open, and calls not yet
         * answered (a pending call counts until answered, even after its
         * caller hung up).  Defaults 32 and 16. */
        unsigned max_connections_per_uid;
        unsigned max_calls_per_uid;
        /* The last slots of max_connections only root and privileged uids
         * (ipc_admit_set_privileged()) may take.  Default 16; at most a quarter of
         * max_connections when it is as large as max_connections. */
        unsigned reserved_connections;
        /* A request must be complete this long after its first byte, however
         * it trickles in; the idle timeout applies between requests.
         * Default 10 s. */
        uint64_t request_timeout_usec;
} IpcLimits;

#define IPC_LIMITS_DEFAULT                                                                                  \
        ((IpcLimits){ .max_request = 64 * 1024,                                                             \
                      .max_request_root = IPC_ROOT_REQUEST_MAX,                                             \
                      .max_reply = 1024 * 1024,                                                             \
                      .max_connections = 256,                                                               \
                      .idle_timeout_usec = 30 * UINT64_C(1000000),                                          \
                      .max_depth = 16,                                                                      \
                      .max_connections_per_uid = 32,                                                        \
                      .max_calls_per_uid = 16,                                                              \
                      .reserved_connections = 16,                                                           \
                      .request_timeout_usec = 10 * UINT64_C(1000000) })

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

/* With SUNKD_METHOD_ANY_UID, for the agent's own methods only: the method
 * answers anyone the same and holds nothing once it has answered, so a
 * connection calling only it never needs its peer's credentials read (one
 * system call fewer per connection; see conn_new()). */
#define IPC_METHOD_ANONYMOUS (1u << 16)

/**
 * ipc_add_method() - register @name with policy @flags (SUNKD_METHOD_*).
 * @allow is borrowed and must outlive the method (NULL = nobody besides
 * root).  @owner groups methods for ipc_remove_methods().  -EEXIST when the
 * name is taken.
 */
int ipc_add_method(Ipc *ipc, const char *name, unsigned flags, IpcMethodFn fn, void *userdata,
                   const IpcAllow *allow, const void *owner);
/**
 * ipc_remove_methods() - unregister @owner's methods.  Every call of them
 * still unanswered is answered io.sunkd.Unavailable and freed now (the
 * owner must not touch its handles afterwards), its on-gone callback
 * dropped; a suspension of @owner ends with it.
 */
void ipc_remove_methods(Ipc *ipc, const void *owner);
/**
 * ipc_owner_refused() - the calls of @owner's methods the policy refused (a
 * caller neither root nor, for SUNKD_METHOD_ALLOW, on the allow list),
 * since they were registered, in *ret.  -ENOENT when @owner has none.
 */
int ipc_owner_refused(Ipc *ipc, const void *owner, uint64_t *ret);
/** ipc_suspend_owner() - from now on, calls of @owner's methods are answered
 * io.sunkd.Unavailable without being dispatched; pending ones stay. */
void ipc_suspend_owner(Ipc *ipc, const void *owner);

/**
 * ipc_admit_set_privileged() - the uids and groups besides root that may take the
 * reserved connection slots: the union of @allows (copied; NULL entries are
 * skipped).  Replaces the previous set.
 */
int ipc_admit_set_privileged(Ipc *ipc, const IpcAllow *const *allows, size_t n);

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
/**
 * ipc_call_on_gone() - run @cb on the loop (never from inside this call)
 * once the peer of the unanswered @call has hung up; at once if it already
 * has.  The call stays valid until answered.  @cb NULL removes it.
 * -EINVAL for NULL or an answered call.
 */
int ipc_call_on_gone(sunkd_call *call, void (*cb)(sunkd_call *call, void *userdata), void *userdata);
