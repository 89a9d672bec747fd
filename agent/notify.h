/* Readiness and state for the service manager: systemd (sd_notify) and s6
 * (notification-fd), behind one API. */
#pragma once

/** notify_ready() - READY=1 for systemd, and a newline on @notify_fd (then
 * closed) for s6.  @notify_fd < 0 means none.  Safe to call once. */
int notify_ready(int *notify_fd, const char *status);
int notify_status(const char *status);
int notify_reloading(void);
int notify_reloaded(const char *status);
int notify_stopping(void);
