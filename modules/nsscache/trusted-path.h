/* Files whose owner decides what the module publishes.  Non-logging. */
#pragma once

/**
 * trusted_path_check() - refuse @path unless root (or our own uid) owns it
 * and neither group nor others may write it.  nsscache.conf and the state
 * directory (where force-next-run lets its writer publish an empty passwd
 * map) must be no easier to change than the caches in /etc.
 * @what: "config file", "state directory", for the message
 * Return: 0; -EPERM with "PATH: refusing a WHAT that is group- or
 * world-writable|not owned by root (owner uid U, mode M)" in *ret_error;
 * or the stat() error.
 */
int trusted_path_check(const char *path, const char *what, char **ret_error);
