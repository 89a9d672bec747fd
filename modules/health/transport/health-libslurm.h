/* One round of draining or resuming through libslurm (see
 * health-libslurm.c): only ever in a child process of its own. */
#pragma once

#include "health-node.h"
#include "health-signal.h"

/* libslurm_round() - run @sig from its first step to DONE against the
 * slurmctld that @slurm_conf (NULL: Slurm's default) names. */
void libslurm_round(HealthSignal *sig, const char *slurm_conf, const char *node_name);
