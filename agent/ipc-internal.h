/* What the files of the control socket server (agent/ipc*.c) share: its
 * types and the functions one of them calls in another.  Nothing else
 * includes this; the rest of the daemon has ipc.h. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <json-c/json.h>
#include <systemd/sd-event.h>

#include "ipc.h"
#include "util/macro.h"
#include "util/ratelimit.h"

/* The interval of the server's log rate limits (util/ratelimit.h). */
#define IPC_LOG_INTERVAL_USEC (10 * USEC_PER_SEC)

typedef struct IpcMethod {
        char *name;
        unsigned flags;
        IpcMethodFn fn;
        void *userdata;
        const IpcAllow *allow;
        const void *owner;
        uint64_t n_refused; /* calls the policy refused (ipc_owner_refused()) */
} IpcMethod;

typedef struct IpcConnection IpcConnection;

/* What one peer uid holds; present while it holds anything. */
typedef struct IpcUid {
        uid_t uid;
        unsigned n_connections;
        unsigned n_calls;   /* unanswered, orphaned ones included */
        unsigned n_refused; /* since the first refusal, which was logged */
} IpcUid;

struct sunkd_call {
        Ipc *ipc;                  /* NULL after ipc_free() */
        sunkd_call *prev, *next;   /* in ipc->calls */
        IpcConnection *connection; /* NULL once the peer is gone */
        json_object *message;      /* owns method and parameters */
        const char *method;
        const void *owner;
        struct ucred ucred;
        void (*gone_cb)(sunkd_call *call, void *userdata);
        void *gone_userdata;
        bool accounted;    /* counted in its uid's n_calls */
        bool gone_pending; /* gone_cb is due */
        bool oneway;
        bool replied;
        bool dispatching;
};

struct IpcConnection {
        Ipc *ipc;
        IpcConnection *prev, *next;
        int fd;
        sd_event_source *io;
        sd_event_source *idle;
        sd_event_source *defer;
        struct ucred ucred; /* valid once creds_known */
        bool creds_known;
        bool accounted; /* counted in its uid's n_connections */
        gid_t *groups;  /* read when a policy first needs them */
        size_t n_groups;
        bool groups_loaded;
        uint64_t active_usec;  /* the last read, write or reply */
        uint64_t request_usec; /* when the partial request in `in` began; 0: none */
        uint64_t armed_usec;   /* what the idle timer is set to */

        /* Input: bytes [in_start, in_len) are unconsumed, [in_start, in_scanned) hold no NUL. */
        char *in;
        size_t in_alloc, in_start, in_scanned, in_len;
        /* Output: bytes [out_done, out_len) are still to be written. */
        char *out;
        size_t out_done, out_len;

        sunkd_call *call; /* the call in flight */
        bool eof;         /* the peer shut down its sending side */
        bool closing;     /* close once the output is flushed */
        bool dead;        /* close at the next chance */
};

struct Ipc {
        sd_event *event;
        IpcLimits limits;

        int listen_fd;
        sd_event_source *listen_source;
        sd_event_source *accept_retry;
        char *path; /* bound by ipc_listen(); removed by ipc_free() if still ours */
        dev_t path_dev;
        ino_t path_ino;

        IpcMethod *methods; /* sorted by name */
        size_t n_methods;

        IpcConnection *connections;
        unsigned n_connections;
        IpcUid *uids;
        size_t n_uids;
        sunkd_call *calls; /* every call not yet freed */
        sd_event_source *gone_defer;
        IpcAllow privileged; /* owned copy */
        const void **suspended;
        size_t n_suspended;

        Ratelimit refuse_rl; /* connection limit and accept errors */
        Ratelimit deny_rl;   /* policy refusals */
        Ratelimit reply_rl;  /* replies we could not send as they were */
        Ratelimit busy_rl;   /* per-uid call limit */
};

/* ipc-admit.c: per-uid accounting, policy, admission */
IpcUid *ipc_admit_uid_get(Ipc *ipc, uid_t uid);
void ipc_admit_put_connection(Ipc *ipc, uid_t uid);
void ipc_admit_put_call(Ipc *ipc, uid_t uid);
int ipc_admit_creds(IpcConnection *c);
int ipc_admit_account(IpcConnection *c);
void ipc_admit_allow_clear(IpcAllow *a);
bool ipc_admit_peer_allowed(IpcConnection *c, const IpcMethod *m);
bool ipc_admit_call(IpcConnection *c);
int ipc_admit_connection(Ipc *ipc, IpcConnection *c);

/* ipc-call.c: methods, calls, replies */
IpcMethod *ipc_find_method(Ipc *ipc, const char *name);
bool ipc_owner_suspended(Ipc *ipc, const void *owner);
sunkd_call *call_free(sunkd_call *call);
void call_link(Ipc *ipc, sunkd_call *call);
void call_orphan(sunkd_call *call);
int ipc_on_gone(sd_event_source *s, void *userdata);
int ipc_reply_internal(sunkd_call *call, const char *error, json_object *params);

/* ipc-conn.c: a connection */
json_object *errno_params(int error);
int conn_send(IpcConnection *c, const char *method, const char *error, json_object *params);
IpcConnection *conn_free(IpcConnection *c);
void conn_touch(IpcConnection *c);
void conn_kick(IpcConnection *c);
int conn_write(IpcConnection *c);
int conn_new(Ipc *ipc, int fd);
void conn_start(IpcConnection *c);
