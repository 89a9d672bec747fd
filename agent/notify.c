/* Service manager notification.
 *
 * systemd learns about readiness from NOTIFY_SOCKET (sd_notify does nothing
 * when it is unset); s6 gives the daemon a file descriptor, named in the
 * service directory's notification-fd file, and waits for a line on it.  We
 * speak both, so the same binary works as a Type=notify unit and as an s6
 * longrun in a slurmd pod.  Reloads are bracketed with RELOADING=1 and
 * MONOTONIC_USEC= so systemctl reload waits for the new config to apply.
 */
#include <errno.h>
#include <inttypes.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "notify.h"
#include "util/macro.h"
#include "util/time-util.h"

int notify_ready(int *notify_fd, const char *status) {
        int r = sd_notifyf(false, "READY=1\nSTATUS=%s", status ?: "Ready.");

        if (notify_fd && *notify_fd >= 0) {
                ssize_t n;
                do
                        n = write(*notify_fd, "\n", 1);
                while (n < 0 && errno == EINTR);
                if (n < 0 && r >= 0)
                        r = negative_errno();
                close(*notify_fd);
                *notify_fd = -1;
        }
        return r < 0 ? r : 0;
}

int notify_status(const char *status) {
        return sd_notifyf(false, "STATUS=%s", status);
}

int notify_reloading(void) {
        return sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading configuration...\nMONOTONIC_USEC=%" PRIu64,
                          now_usec(CLOCK_MONOTONIC));
}

int notify_reloaded(const char *status) {
        return sd_notifyf(false, "READY=1\nSTATUS=%s", status ?: "Ready.");
}

int notify_stopping(void) {
        return sd_notify(false, "STOPPING=1\nSTATUS=Shutting down...");
}
