/* Deciding what to tell slurmctld, apart from how it is told.  A signal is
 * one round: look at the node, maybe count the fleet, maybe update the node.
 * The transports (scontrol, libslurm, slurmrestd) only fetch and send; every
 * rule about whose reason a node carries, when we may drain and when we may
 * resume lives here, the same for all of them, and is unit tested apart. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "health-node.h"

#define HEALTH_REASON_MAX 256

typedef enum HealthOwner {
        HEALTH_OWNER_NONE,   /* no reason */
        HEALTH_OWNER_OURS,   /* our prefix: our checks may update and resume it */
        HEALTH_OWNER_STICKY, /* ours, but only an operator's undrain resumes it */
        HEALTH_OWNER_OTHER,  /* an admin's, NHC's, Kubernetes', slurmctld's own... */
} HealthOwner;

/* health_signal_reason_owner() - whose @reason is.  A drained node without a
 * reason counts as someone else's; ours is sticky only when it is
 * @sticky_reason, the one a sticky drain set. */
HealthOwner health_signal_reason_owner(const char *reason, bool drained, const char *prefix,
                                       const char *sticky_reason);

/* health_signal_reason_format() - "<prefix><what>: <detail>" (or without detail)
 * as one printable line, at most HEALTH_REASON_MAX - 1 bytes, cut on a UTF-8
 * boundary; control bytes become '?'.  Slurm stores the reason verbatim. */
void health_signal_reason_format(char out[static HEALTH_REASON_MAX], const char *prefix, const char *what,
                                 const char *detail);

typedef enum HealthWant {
        HEALTH_WANT_HEALTHY,     /* resume what is ours, unless sticky */
        HEALTH_WANT_DRAIN,       /* a check fails: drain (or update) with @reason */
        HEALTH_WANT_FORCE_DRAIN, /* an operator or the prolog: drain now, sticky */
        HEALTH_WANT_UNDRAIN,     /* an operator: resume anything of ours, sticky too */
} HealthWant;

typedef enum HealthStep {
        HEALTH_STEP_QUERY_NODE,
        HEALTH_STEP_QUERY_FLEET,
        HEALTH_STEP_DRAIN,  /* set state=drain with signal->reason */
        HEALTH_STEP_REBOOT, /* scontrol reboot ASAP reason=signal->reason (a repair) */
        HEALTH_STEP_RESUME, /* state=resume */
        HEALTH_STEP_DONE,
} HealthStep;

typedef enum HealthOutcome {
        HEALTH_OUTCOME_UNCHANGED, /* the node already says what we would */
        HEALTH_OUTCOME_DRAINED,
        HEALTH_OUTCOME_UPDATED, /* our reason replaced by our new one */
        HEALTH_OUTCOME_RESUMED,
        HEALTH_OUTCOME_OTHER,       /* someone else's reason: left alone */
        HEALTH_OUTCOME_UNREACHABLE, /* down or not responding: left alone */
        HEALTH_OUTCOME_GUARDED,     /* the fleet guard: reported instead of drained */
        HEALTH_OUTCOME_LIFTED,      /* our drain was resumed by someone else */
        HEALTH_OUTCOME_NOT_FOUND,
        HEALTH_OUTCOME_FAILED, /* slurmctld refused or did not answer */
        HEALTH_OUTCOME_REPAIR, /* the node carries the repair's reason (or its reboot is asked): repair now
                                */
        HEALTH_OUTCOME_REPAIR_HELD, /* a limit: the repair is reported instead of taken */
} HealthOutcome;

/* What a repair does (`actions:`), beside drain. */
typedef enum HealthRepair {
        HEALTH_REPAIR_NONE, /* drain only */
        HEALTH_REPAIR_REBOOT,
        HEALTH_REPAIR_RESET_GPU,
        HEALTH_REPAIR_SCRIPT,
        _HEALTH_REPAIR_MAX,
} HealthRepair;

const char *health_signal_repair_to_string(HealthRepair r); /* "drain" for none */
int health_signal_repair_from_string(const char *s);        /* -EINVAL for anything else */

/* health_signal_repair_reason() - "<prefix>repair <action>: <rest>", @rest
 * being the reason after the prefix: what the node carries while a repair
 * runs, and by which the fleet counts the nodes under repair. */
void health_signal_repair_reason(char out[static HEALTH_REASON_MAX], const char *prefix, HealthRepair r,
                                 const char *reason);

const char *health_signal_outcome_to_string(HealthOutcome o);

typedef struct HealthSignal {
        /* in */
        HealthWant want;
        char reason[HEALTH_REASON_MAX]; /* for DRAIN and FORCE_DRAIN */
        char prefix[64];
        char set_reason[HEALTH_REASON_MAX];    /* the reason we last set, "" if none */
        char sticky_reason[HEALTH_REASON_MAX]; /* the sticky one we set, "" if none */
        unsigned max_drained_pct;
        char node[72]; /* the name asked for (node_name); then as slurmctld spells it */
        /* a repair for the finding, taken once the node is IDLE and drained
         * for @reason by us: NONE, or what it would do */
        HealthRepair repair;
        bool repair_allowed;   /* the node's own limit (max_per_hour) allows one now */
        char repair_held[128]; /* why not, when not */
        char repair_reason[HEALTH_REASON_MAX];
        unsigned max_repair_pct;
        char fleet_prefix[80]; /* the reasons the fleet step counts (filled by the rules) */
        /* undrain_foreign_token: a foreign reason carrying it is resumed by a
         * round that wants HEALTHY with @all_passed: every check passed,
         * each run since the token was first seen */
        char foreign_token[64];
        bool all_passed;
        /* progress */
        HealthStep step;
        /* out */
        HealthOwner owner; /* of the reason the node had */
        bool busy;         /* a job runs on the node */
        HealthOutcome outcome;
        bool idle;       /* IDLE: no job, none completing */
        bool token_seen; /* the node's foreign reason carries foreign_token */
        char message[512];
} HealthSignal;

/* health_signal_node() - the node as queried (NULL: it does not exist);
 * moves to the next step. */
void health_signal_node(HealthSignal *s, const HealthNode *node);

/* health_signal_fleet() - the nodes that share a partition with ours,
 * ours included: how many, and how many carry @fleet_prefix (ours, or for a
 * repair ours and "repair ", the nodes under repair). */
void health_signal_fleet(HealthSignal *s, size_t total, size_t ours);

/* health_signal_updated() - the update's result: 0, or r < 0 with
 * slurmctld's message.  "Invalid node state specified" on a resume means
 * the node was resumed already: the transport passes r = 0 for it. */
void health_signal_updated(HealthSignal *s, int r, const char *error);

/* health_signal_failed() - a query failed (slurmctld unreachable). */
void health_signal_failed(HealthSignal *s, int r, const char *error);

/* health_signal_fleet_count() - over @nodes, those sharing a partition with @self
 * (itself included), and of them those whose reason has @prefix. */
void health_signal_fleet_count(const HealthNode *nodes, size_t n, const HealthNode *self, const char *prefix,
                               size_t *ret_total, size_t *ret_ours);
