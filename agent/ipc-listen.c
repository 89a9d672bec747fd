/* The control socket's listener: bind a path (or adopt the socket systemd
 * passes), accept, and refuse a peer at the global connection limit.
 *
 * A socket is bound under a temporary name and renamed into place, so it is
 * never reachable with the wrong permissions; the path is removed when
 * accepting stops, unless another instance has replaced it.  An accept
 * error (out of fds or memory) pauses the listener for a moment rather than
 * spin on it.  A new connection's first request is served from the accept
 * callback itself (conn_start()).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc-internal.h"
#include "log.h"
#include "util/cleanup.h"
#include "util/fileio.h"
#include "util/macro.h"
#include "util/rand-util.h"

#define IPC_ACCEPT_BATCH 64
#define IPC_ACCEPT_RETRY_USEC (100 * USEC_PER_MSEC)

static int ipc_on_accept_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        Ipc *ipc = userdata;

        if (ipc->listen_source)
                (void) sd_event_source_set_enabled(ipc->listen_source, SD_EVENT_ON);
        return 0;
}

/* Out of fds or memory: stop polling the listener for a moment, or a
 * level-triggered loop would spin on the same error. */
static void ipc_pause_accepting(Ipc *ipc) {
        int r;

        (void) sd_event_source_set_enabled(ipc->listen_source, SD_EVENT_OFF);
        if (!ipc->accept_retry) {
                r = sd_event_add_time_relative(ipc->event, &ipc->accept_retry, CLOCK_MONOTONIC,
                                               IPC_ACCEPT_RETRY_USEC, 0, ipc_on_accept_retry, ipc);
                if (r < 0) {
                        (void) sd_event_source_set_enabled(ipc->listen_source, SD_EVENT_ON);
                        return;
                }
        } else
                (void) sd_event_source_set_time_relative(ipc->accept_retry, IPC_ACCEPT_RETRY_USEC);
        (void) sd_event_source_set_enabled(ipc->accept_retry, SD_EVENT_ONESHOT);
}

static void ipc_refuse(Ipc *ipc, int fd) {
        struct ucred u = { .pid = 0, .uid = (uid_t) -1, .gid = (gid_t) -1 };
        socklen_t len = sizeof(u);
        unsigned suppressed;

        if (!ratelimit_pass(&ipc->refuse_rl, IPC_LOG_INTERVAL_USEC, 1, &suppressed))
                return;
        (void) getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &u, &len);
        log_warning("Refusing connection from uid=%u pid=%u: limit of %u connections reached%s",
                    (unsigned) u.uid, (unsigned) u.pid, ipc->limits.max_connections,
                    suppressed > 0 ? " (more refusals suppressed)" : "");
}

static int ipc_on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Ipc *ipc = userdata;
        unsigned suppressed;
        int r;

        for (unsigned i = 0; i < IPC_ACCEPT_BATCH; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

                if (cfd < 0) {
                        if (errno == EAGAIN)
                                return 0;
                        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                                continue;
                        r = -errno;
                        if (ratelimit_pass(&ipc->refuse_rl, IPC_LOG_INTERVAL_USEC, 1, &suppressed))
                                log_warning_errno(r, "Failed to accept a connection, pausing: %m");
                        ipc_pause_accepting(ipc);
                        return 0;
                }
                if (ipc->n_connections >= ipc->limits.max_connections) {
                        ipc_refuse(ipc, cfd);
                        close(cfd);
                        continue;
                }
                r = conn_new(ipc, cfd);
                if (r < 0 && r != -EUSERS &&
                    ratelimit_pass(&ipc->refuse_rl, IPC_LOG_INTERVAL_USEC, 1, &suppressed))
                        log_warning_errno(r, "Failed to set up a connection: %m");
                if (r >= 0)
                        conn_start(ipc->connections);
        }
        return 0;
}

static int ipc_watch(Ipc *ipc, int fd) {
        int r;

        r = sd_event_add_io(ipc->event, &ipc->listen_source, fd, EPOLLIN, ipc_on_accept, ipc);
        if (r < 0)
                return r;
        ipc->listen_fd = fd;
        return 0;
}

int ipc_adopt(Ipc *ipc, int fd) {
        int v = 0, flags;
        socklen_t len = sizeof(v);

        if (!ipc || fd < 0)
                return -EINVAL;
        if (ipc->listen_fd >= 0)
                return -EBUSY;
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) < 0)
                return -errno;
        if (v != AF_UNIX)
                return -EAFNOSUPPORT;
        len = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) < 0)
                return -errno;
        if (v != SOCK_STREAM)
                return -ESOCKTNOSUPPORT;
        len = sizeof(v);
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) < 0)
                return -errno;
        if (!v)
                return -EINVAL;

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        return ipc_watch(ipc, fd);
}

/* Is something answering on @path?  Only a socket nobody listens on is stale. */
static int socket_is_live(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        memcpy(sa.sun_path, path, strlen(path));
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) >= 0 || errno == EAGAIN)
                return 1;
        return 0;
}

int ipc_listen(Ipc *ipc, const char *path, mode_t mode, gid_t gid) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_free_ char *tmp = NULL, *p = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        int r;

        if (!ipc || !path || path[0] != '/')
                return -EINVAL;
        if (ipc->listen_fd >= 0)
                return -EBUSY;
        /* The socket is bound under a temporary name, given its mode and
         * group, and renamed into place: it is never reachable with the
         * wrong permissions, and a stale one is replaced atomically. */
        if (asprintf(&tmp, "%s.%08" PRIx32, path, (uint32_t) random_u64()) < 0)
                return -ENOMEM;
        if (strlen(tmp) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        p = strdup(path);
        if (!p)
                return -ENOMEM;

        r = fileio_mkdir_parents(path, 0755);
        if (r < 0)
                return r;
        r = socket_is_live(path);
        if (r < 0)
                return r;
        if (r > 0)
                return -EADDRINUSE;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        memcpy(sa.sun_path, tmp, strlen(tmp));
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        if (fchmodat(AT_FDCWD, tmp, mode, 0) < 0 ||
            (gid != (gid_t) -1 && fchownat(AT_FDCWD, tmp, (uid_t) -1, gid, AT_SYMLINK_NOFOLLOW) < 0) ||
            listen(fd, SOMAXCONN) < 0 || rename(tmp, path) < 0 || stat(path, &st) < 0) {
                r = -errno;
                (void) unlink(tmp);
                return r;
        }

        r = ipc_watch(ipc, fd);
        if (r < 0) {
                (void) unlink(path);
                return r;
        }
        TAKE_FD(fd);
        ipc->path = TAKE_PTR(p);
        ipc->path_dev = st.st_dev;
        ipc->path_ino = st.st_ino;
        return 0;
}

/* Removes the socket we bound, unless another instance has replaced it. */
static void ipc_unlink_path(Ipc *ipc) {
        struct stat st;

        if (ipc->path && stat(ipc->path, &st) >= 0 && st.st_dev == ipc->path_dev &&
            st.st_ino == ipc->path_ino)
                (void) unlink(ipc->path);
        ipc->path = mfree(ipc->path);
}

/* Also removes the path at once: a client that comes now is told sunkd is
 * not running, even if a stuck job keeps the process alive a while. */
void ipc_stop_accepting(Ipc *ipc) {
        if (!ipc)
                return;
        ipc->listen_source = sd_event_source_disable_unref(ipc->listen_source);
        ipc->accept_retry = sd_event_source_disable_unref(ipc->accept_retry);
        if (ipc->listen_fd >= 0)
                close(ipc->listen_fd);
        ipc->listen_fd = -1;
        ipc_unlink_path(ipc);
}
