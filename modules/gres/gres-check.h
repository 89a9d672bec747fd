/* What slurmctld expects of this node, and how the GPUs found compare.
 *
 * slurmctld marks a node INVAL when it reports fewer GPUs of a type than its
 * node line configures ("gres/gpu count reported lower than configured");
 * gres_check_compare() says the same before slurmd registers, precisely:
 * "7 of 8 nvidia_h100_80gb_hbm3 found, GPU-... at 0000:18:00.0 missing".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define GRES_SLURM_CONF_MAX (4U * 1024U * 1024U)

/**
 * gres_slurm_conf_node_gres() - the Gres= of node @node in the slurm.conf at
 * @path: from the NodeName= line whose host list names it (Slurm's own host
 * list syntax, "gpu[01-16]", through libslurm), else from NodeName=DEFAULT.
 * Keys are case-insensitive; '#' starts a comment; a line ending in '\'
 * continues on the next.  Include lines are not followed.
 * Return: 0 and a new string in *ret (NULL: the node line has no Gres=);
 * -ENOENT when no line names the node; -EFBIG over GRES_SLURM_CONF_MAX;
 * -EBADMSG with "file:line: reason" in *ret_error; another -errno.
 */
int gres_slurm_conf_node_gres(const char *path, const char *node, char **ret, char **ret_error);

/* One GPU as the comparison sees it. */
typedef struct GresCheckGpu {
        const char *type; /* after type_alias */
        const char *uuid;
        const char *bus_id;
} GresCheckGpu;

/**
 * gres_check_compare() - compare the GPUs found with a Gres= value.
 * @configured: "gpu:TYPE:N" and "gpu:N" entries, comma-separated; other GRES
 *              names are not GPUs and are skipped.
 * @known: GPUs seen earlier (the last discovery with the most GPUs), to name
 *         the ones missing now; may be empty.
 * Return: 1 when they match, 0 when they differ, with a message in
 * *ret_message either way; -EINVAL for a Gres= value that cannot be read
 * (the message says why); -ENOMEM.
 */
int gres_check_compare(const char *configured, const GresCheckGpu *found, size_t n_found,
                       const GresCheckGpu *known, size_t n_known, char **ret_message);
