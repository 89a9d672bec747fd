/* The peer credentials of peer-cred.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "util/macro.h"
#include "util/peer-cred.h"

#define PEER_CRED_GROUPS_INITIAL 32

int peer_cred_groups(int fd, gid_t **groups, size_t *ret_n) {
        socklen_t len = PEER_CRED_GROUPS_INITIAL * sizeof(gid_t);

        for (;;) {
                gid_t *g = realloc(*groups, MAX(len, (socklen_t) sizeof(gid_t)));

                if (!g)
                        return -ENOMEM;
                *groups = g;
                if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g, &len) >= 0) {
                        *ret_n = len / sizeof(gid_t);
                        return 0;
                }
                if (errno == ENOPROTOOPT || errno == ENODATA) {
                        *ret_n = 0;
                        return 0;
                }
                if (errno != ERANGE)
                        return -errno;
        }
}
