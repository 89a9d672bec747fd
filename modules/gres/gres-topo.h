/* CPU ids to the core indexes gres.conf's Cores= wants.
 *
 * gres.conf(5) counts cores, not CPUs, and counts them its own way: socket
 * by socket, each socket's cores in order, whatever ids the kernel gave their
 * hyperthreads.  slurmd builds that numbering from hwloc (xcpuinfo.c), where
 * sockets and the cores in a socket come in the order of their first CPU; it
 * is rebuilt here from <root>/sys/devices/system/cpu/cpuN/topology, so that a
 * GPU whose affinity is "0-47,96-143" on a 2 x 48-core node with SMT gets
 * Cores=0-47, not a list naming cores of the other socket.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "gres-gpu.h"

/* Slurm's own bound (gpu_nvml.c MAX_CPUS); a tree claiming more is not believed. */
#define GRES_CPUS_MAX 32768U

typedef struct GresTopo {
        int32_t *core_of; /* CPU id -> core index; -1: no such CPU (offline, absent) */
        size_t n_cpus;    /* entries of core_of: the highest CPU id + 1 */
        size_t n_cores;
} GresTopo;

/**
 * gres_topo_load() - read the CPU topology under @root.
 * Return: 0; -ENOENT if no CPU there has a readable topology (a container
 * without /sys, a fake root without it), -EBADMSG for a topology file that is
 * not a number, -E2BIG past GRES_CPUS_MAX, -ENOMEM.
 */
int gres_topo_load(const char *root, GresTopo *ret);
void gres_topo_done(GresTopo *t);

/**
 * gres_topo_cores() - a CPU list ("0-15,32-47") as a core index list ("0-15").
 * CPUs the topology does not know are left out, as slurmd leaves them out.
 * Return: 0 with *ret NULL if none is known; -EINVAL for a malformed list.
 */
int gres_topo_cores(const GresTopo *t, const char *cpus, char **ret);

/**
 * gres_topo_map_gpus() - fill each GPU's cores from its cpus.
 * Return: 0; a negative errno from gres_topo_load() when a GPU has CPUs but
 * the topology cannot be read: then no GPU has cores (no Cores= at all is
 * right for Slurm, a wrong one is not).
 */
int gres_topo_map_gpus(const char *root, GresGpu *gpus, size_t n);

/* A CPU (or core) list as the kernel and Slurm write it: "0-3,8,10-11". */
int gres_cpulist_parse(const char *s, unsigned long *mask, size_t bits);
char *gres_cpulist_format(const unsigned long *mask, size_t bits);
