/* Render discovered GPUs in Slurm's syntax: gres.conf lines and the Gres=
 * value of a node line (slurm.conf, or slurmd -Z --conf). */
#pragma once

#include <stddef.h>

#include "gres-gpu.h"

/* One type_alias entry: a normalised type and the short name to use instead. */
typedef struct GresTypeAlias {
        const char *from;
        const char *to;
} GresTypeAlias;

/* gres_type_normalise() - Slurm's form of a GPU name: lower case, spaces to
 * '_' ("NVIDIA H100 80GB HBM3" -> "nvidia_h100_80gb_hbm3"); other blanks,
 * control bytes and Slurm separators ("=,:#") also become '_'.  Returns a new
 * string, NULL on OOM. */
char *gres_type_normalise(const char *name);

/* gres_conf_render() - one "Name=gpu Type=... File=... [Cores=...] [Links=...]"
 * line per GPU, in PCI bus order; a MIG instance has MultipleFiles= (its
 * GPU's device file and its two nvidia-caps files) instead of File=.  Links= (Slurm: -1 for the GPU itself,
 * the NVLink count to each other GPU, in the same order) appears only when some GPU has NVLink.  @gpus is
 * sorted in place.  Returns 0 or -ENOMEM. */
int gres_conf_render(GresGpu *gpus, size_t n, const GresTypeAlias *aliases, size_t n_aliases, char **ret);

/* gres_conf_gres_value() - "gpu:<type>:<count>[,gpu:<type>:<count>...]", types
 * in order of first appearance in PCI bus order; "" for no GPU. */
int gres_conf_gres_value(GresGpu *gpus, size_t n, const GresTypeAlias *aliases, size_t n_aliases,
                         char **ret);

/* gres_conf_block() - this node's line of a topology.conf for Slurm's
 * topology/block plugin, when its GPUs are in a multi-node NVLink domain:
 * "BlockName=nvl-<fabric cluster uuid>-<clique> Nodes=<node>".  The nodes of
 * one domain print the same BlockName, so the lines of all nodes merge into
 * the file.  *ret is NULL when no GPU is in a fabric.  Return: 0; -EINVAL
 * with *ret_error saying how when the GPUs disagree (some in a fabric and
 * some not, or two domains: a fabric problem to fix, not a block). */
int gres_conf_block(const GresGpu *gpus, size_t n, const char *node, char **ret, char **ret_error);
