/* bench-echo: the reference server for bench-ping.
 *
 * Usage: bench-echo SOCKET
 *
 * Listens on SOCKET and, one connection at a time, reads one NUL-terminated
 * message and writes it back, then closes: the least a Varlink-framed
 * server can do per query, measured with the same client in the same run.
 * Runs until killed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/cleanup.h"

#define MSG_MAX 65536

static int listen_unix(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -1;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        (void) unlink(path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, SOMAXCONN) < 0)
                return -errno;
        return TAKE_FD(fd);
}

static void serve_one(int fd) {
        static char buf[MSG_MAX];
        size_t got = 0;

        for (;;) {
                ssize_t k = read(fd, buf + got, sizeof(buf) - got);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return;
                got += (size_t) k;
                if (memchr(buf + got - (size_t) k, '\0', (size_t) k))
                        break;
                if (got == sizeof(buf))
                        return;
        }
        (void) send(fd, buf, got, MSG_NOSIGNAL);
}

int main(int argc, char *argv[]) {
        int lfd;

        if (argc != 2) {
                fprintf(stderr, "usage: bench-echo SOCKET\n");
                return 2;
        }
        lfd = listen_unix(argv[1]);
        if (lfd < 0) {
                fprintf(stderr, "bench-echo: cannot listen on '%s': %s\n", argv[1], strerror(-lfd));
                return 1;
        }
        for (;;) {
                _cleanup_close_ int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

                if (fd >= 0)
                        serve_one(fd);
                else if (errno != EINTR && errno != ECONNABORTED)
                        return 1;
        }
}
