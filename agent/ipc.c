/* The control socket server: an Ipc, its limits and its lifetime.
 *
 * The server is split by concern: ipc-listen.c binds (or adopts) the socket
 * and accepts; ipc-admit.c decides who may hold a connection and call what,
 * per peer uid; ipc-conn.c drives each connection; ipc-call.c holds the
 * method table, the calls and their replies.  ipc-internal.h is what they
 * share.  Nothing here blocks: sockets are non-blocking and driven by
 * sd-event.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "ipc-internal.h"
#include "util/macro.h"
#include "util/time-util.h"

unsigned ipc_n_connections(Ipc *ipc) {
        return ipc ? ipc->n_connections : 0;
}

int ipc_new(sd_event *event, const IpcLimits *limits, Ipc **ret) {
        IpcLimits d = IPC_LIMITS_DEFAULT;
        Ipc *ipc;
        int r;

        if (!event || !ret)
                return -EINVAL;

        ipc = calloc(1, sizeof(Ipc));
        if (!ipc)
                return -ENOMEM;
        ipc->event = sd_event_ref(event);
        ipc->listen_fd = -1;
        ipc->limits = limits ? *limits : d;
        if (ipc->limits.max_request < 2)
                ipc->limits.max_request = d.max_request;
        if (ipc->limits.max_request_root == 0)
                ipc->limits.max_request_root = d.max_request_root;
        if (ipc->limits.max_reply == 0)
                ipc->limits.max_reply = d.max_reply;
        if (ipc->limits.max_connections == 0)
                ipc->limits.max_connections = d.max_connections;
        if (ipc->limits.idle_timeout_usec == 0)
                ipc->limits.idle_timeout_usec = d.idle_timeout_usec;
        if (ipc->limits.max_depth == 0)
                ipc->limits.max_depth = d.max_depth;
        if (ipc->limits.max_connections_per_uid == 0)
                ipc->limits.max_connections_per_uid = d.max_connections_per_uid;
        if (ipc->limits.max_calls_per_uid == 0)
                ipc->limits.max_calls_per_uid = d.max_calls_per_uid;
        if (ipc->limits.reserved_connections == 0)
                ipc->limits.reserved_connections = d.reserved_connections;
        if (ipc->limits.reserved_connections >= ipc->limits.max_connections)
                ipc->limits.reserved_connections = ipc->limits.max_connections / 4;
        if (ipc->limits.request_timeout_usec == 0)
                ipc->limits.request_timeout_usec = d.request_timeout_usec;

        r = sd_event_add_defer(event, &ipc->gone_defer, ipc_on_gone, ipc);
        if (r >= 0)
                r = sd_event_source_set_enabled(ipc->gone_defer, SD_EVENT_OFF);
        if (r < 0) {
                ipc_free(ipc);
                return r;
        }
        *ret = ipc;
        return 0;
}

Ipc *ipc_free(Ipc *ipc) {
        if (!ipc)
                return NULL;

        /* Replies queued in the loop's last iteration (a module answering its
         * pending calls in fini at shutdown) go out if the socket takes them:
         * a client waiting for an answer gets it, not a reset. */
        while (ipc->connections) {
                (void) conn_write(ipc->connections);
                conn_free(ipc->connections);
        }
        /* Calls still unanswered outlive us; their replies just free them. */
        while (ipc->calls) {
                sunkd_call *call = ipc->calls;

                ipc->calls = call->next;
                *call = (sunkd_call){ .message = call->message,
                                      .method = call->method,
                                      .ucred = call->ucred,
                                      .oneway = call->oneway,
                                      .replied = call->replied,
                                      .dispatching = call->dispatching };
        }
        ipc->gone_defer = sd_event_source_disable_unref(ipc->gone_defer);
        ipc_stop_accepting(ipc);
        free(ipc->uids);
        ipc_admit_allow_clear(&ipc->privileged);
        free(ipc->suspended);
        for (size_t i = 0; i < ipc->n_methods; i++)
                free(ipc->methods[i].name);
        free(ipc->methods);
        sd_event_unref(ipc->event);
        free(ipc);
        return NULL;
}
