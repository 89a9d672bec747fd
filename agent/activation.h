/* The control socket a service manager passes (socket activation). */
#pragma once

#include "conf.h"
#include "ipc.h"

/**
 * activation_take() - serve on the socket the service manager passed
 * (LISTEN_FDS), if it passed one.  sunkd.yaml's socket, socket_mode and
 * socket_group are not applied to it; where they differ from it, a warning
 * says so.  What cannot be the control socket is refused with the reason.
 * @ret_path: where the socket is, malloc'ed ("@NAME" for an abstract one)
 * Return: 1 taken, 0 none passed, -ENOTSOCK refused (logged: a configuration
 * error, which restarting does not fix), or another negative errno.
 */
int activation_take(Ipc *ipc, const Config *config, char **ret_path);
