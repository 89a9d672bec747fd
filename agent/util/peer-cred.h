/* The credentials of a Unix socket's peer, as the kernel recorded them at
 * connect().  Non-logging. */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/**
 * peer_cred_groups() - the peer's supplementary groups (SO_PEERGROUPS) into
 * *@groups, reallocated to fit (free it; it may be set even on failure),
 * their number in *@ret_n: none where the kernel does not report them.
 * Return: 0, -ENOMEM, or getsockopt()'s -errno.
 */
int peer_cred_groups(int fd, gid_t **groups, size_t *ret_n);
