/* Socket activation: the listening socket systemd (or systemd-socket-activate,
 * or anything speaking LISTEN_FDS) passes as fd 3.
 *
 * The service manager owns that socket: its path, mode and group come from
 * the socket unit, and it outlives sunkd across restarts, so sunkd neither
 * binds nor unlinks anything.  sunkd.yaml may still say where clients look
 * (sunkctl and sunkd-authkeys default to the same path) and who may
 * connect: a socket unit that disagrees is worth a warning, since clients
 * using the configured path would otherwise fail with no hint on sunkd's
 * side.  A passed fd that is not a listening unix stream socket is a broken
 * unit, not a transient failure. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <systemd/sd-daemon.h>

#include "activation.h"
#include "log.h"
#include "util/macro.h"

/* What ipc_adopt()'s refusals mean for a socket the service manager passed. */
static const char *refusal(int r) {
        switch (r) {
        case -ENOTSOCK:
                return "it is not a socket";
        case -EAFNOSUPPORT:
                return "it is not a unix socket";
        case -ESOCKTNOSUPPORT:
                return "it is not a stream socket";
        case -EINVAL:
                return "it is not listening";
        default:
                return NULL;
        }
}

static int socket_path(int fd, char **ret) {
        struct sockaddr_un sa = {};
        socklen_t len = sizeof(sa);
        size_t n;
        int k;

        if (getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                return negative_errno();
        n = len > offsetof(struct sockaddr_un, sun_path) ? len - offsetof(struct sockaddr_un, sun_path) : 0;
        if (n == 0)
                k = asprintf(ret, "(unnamed socket from the service manager)");
        else if (sa.sun_path[0] == '\0')
                k = asprintf(ret, "@%.*s", (int) (n - 1), sa.sun_path + 1);
        else
                k = asprintf(ret, "%.*s", (int) strnlen(sa.sun_path, n), sa.sun_path);
        return k < 0 ? -ENOMEM : 0;
}

static void compare_with_config(const char *path, const Config *c) {
        struct stat st;

        if (!streq(path, c->socket))
                log_warning(
                        "The socket passed by the service manager is '%s', not sunkd.yaml's '%s': clients "
                        "using that path will not reach sunkd.",
                        path, c->socket);
        if (path[0] != '/' || stat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
                return;
        if ((st.st_mode & 0777) != c->socket_mode)
                log_warning("The socket passed by the service manager has mode %04o, not sunkd.yaml's "
                            "socket_mode %04o.",
                            (unsigned) (st.st_mode & 0777), (unsigned) c->socket_mode);
        if (c->socket_gid != (gid_t) -1 && st.st_gid != c->socket_gid)
                log_warning("The socket passed by the service manager has group %u, not sunkd.yaml's "
                            "socket_group '%s'.",
                            (unsigned) st.st_gid, c->socket_group);
}

int activation_take(Ipc *ipc, const Config *config, char **ret_path) {
        int n, r;

        n = sd_listen_fds(true);
        if (n < 0)
                log_warning_errno(n, "Ignoring the sockets passed by the service manager (LISTEN_FDS): %m");
        if (n <= 0)
                return 0;
        if (n > 1) {
                log_error("Expected at most one socket from the service manager, got %d.", n);
                return -ENOTSOCK;
        }
        r = ipc_adopt(ipc, SD_LISTEN_FDS_START);
        if (r < 0 && refusal(r)) {
                log_error("The socket passed by the service manager cannot be the control socket: %s.",
                          refusal(r));
                return -ENOTSOCK;
        }
        if (r < 0)
                return log_error_errno(r, "Failed to use the socket passed by the service manager: %m");
        r = socket_path(SD_LISTEN_FDS_START, ret_path);
        if (r < 0)
                return log_error_errno(
                        r, "Failed to find the path of the socket passed by the service manager: %m");
        compare_with_config(*ret_path, config);
        return 1;
}
