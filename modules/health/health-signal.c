/* The rules of draining and resuming (see health-signal.h): whose reason a
 * node carries, the fleet guard, and what each answer of slurmctld means.
 * Pure: no I/O, no allocation but the node's own strings. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-signal.h"
#include "util/macro.h"
#include "util/text-clean.h"
#include "util/strv.h"

static bool has_prefix(const char *s, const char *prefix) {
        return !isempty(prefix) && strncmp(s, prefix, strlen(prefix)) == 0;
}

HealthOwner health_signal_reason_owner(const char *reason, bool drained, const char *prefix,
                                       const char *sticky_reason) {
        if (isempty(reason))
                return drained ? HEALTH_OWNER_OTHER : HEALTH_OWNER_NONE;
        if (!has_prefix(reason, prefix))
                return HEALTH_OWNER_OTHER;
        /* Sticky is what the drain was asked to be (Health.Drain's sticky),
         * recorded with it in our state, never read from the reason's text:
         * a check may be named "prolog-gpu". */
        if (!isempty(sticky_reason) && streq(reason, sticky_reason))
                return HEALTH_OWNER_STICKY;
        return HEALTH_OWNER_OURS;
}

void health_signal_reason_format(char out[static HEALTH_REASON_MAX], const char *prefix, const char *what,
                                 const char *detail) {
        size_t len = 0;

        out[0] = '\0';
        text_append_clean(out, HEALTH_REASON_MAX, &len, prefix);
        text_append_clean(out, HEALTH_REASON_MAX, &len, what);
        if (!isempty(detail)) {
                text_append_clean(out, HEALTH_REASON_MAX, &len, ": ");
                text_append_clean(out, HEALTH_REASON_MAX, &len, detail);
        }
        /* a reason ending in blanks would not compare equal once Slurm trims it */
        while (len > 0 && out[len - 1] == ' ')
                out[--len] = '\0';
}

const char *health_signal_outcome_to_string(HealthOutcome o) {
        static const char *const names[] = {
                [HEALTH_OUTCOME_UNCHANGED] = "unchanged", [HEALTH_OUTCOME_DRAINED] = "drained",
                [HEALTH_OUTCOME_UPDATED] = "updated",     [HEALTH_OUTCOME_RESUMED] = "resumed",
                [HEALTH_OUTCOME_OTHER] = "other-owner",   [HEALTH_OUTCOME_UNREACHABLE] = "unreachable",
                [HEALTH_OUTCOME_GUARDED] = "fleet-guard", [HEALTH_OUTCOME_LIFTED] = "lifted",
                [HEALTH_OUTCOME_NOT_FOUND] = "not-found", [HEALTH_OUTCOME_FAILED] = "failed",
                [HEALTH_OUTCOME_REPAIR] = "repair",       [HEALTH_OUTCOME_REPAIR_HELD] = "repair-held",
        };
        return (size_t) o < ELEMENTSOF(names) ? names[o] : "unknown";
}

static const char *const repair_names[_HEALTH_REPAIR_MAX] = {
        [HEALTH_REPAIR_NONE] = "drain",
        [HEALTH_REPAIR_REBOOT] = "reboot",
        [HEALTH_REPAIR_RESET_GPU] = "reset-gpu",
        [HEALTH_REPAIR_SCRIPT] = "script",
};

const char *health_signal_repair_to_string(HealthRepair r) {
        return (size_t) r < ELEMENTSOF(repair_names) ? repair_names[r] : "drain";
}

int health_signal_repair_from_string(const char *s) {
        for (size_t i = 0; s && i < ELEMENTSOF(repair_names); i++)
                if (streq(s, repair_names[i]))
                        return (int) i;
        return -EINVAL;
}

void health_signal_repair_reason(char out[static HEALTH_REASON_MAX], const char *prefix, HealthRepair r,
                                 const char *reason) {
        char what[64];

        if (has_prefix(reason, prefix))
                reason += strlen(prefix);
        (void) snprintf(what, sizeof(what), "repair %s", health_signal_repair_to_string(r));
        health_signal_reason_format(out, prefix, what, reason);
}

static void finish(HealthSignal *s, HealthOutcome o, const char *fmt, ...) _printf_(3, 4);
static void finish(HealthSignal *s, HealthOutcome o, const char *fmt, ...) {
        va_list ap;

        s->outcome = o;
        s->step = HEALTH_STEP_DONE;
        va_start(ap, fmt);
        (void) vsnprintf(s->message, sizeof(s->message), fmt, ap);
        va_end(ap);
}

/* The node carries @want: the same text, or with what slurmctld appends
 * once it passed our reboot to slurmd (" : reboot issued"). */
static bool same_reason(const char *have, const char *want) {
        size_t n = strlen(want);

        if (!have)
                return false;
        return streq(have, want) ||
               (strncmp(have, want, n) == 0 && strncmp(have + n, " : reboot ", 10) == 0);
}

/* Drained by us for the finding, idle: a repair, within the node's own
 * limit and then the fleet's. */
static void want_repair(HealthSignal *s, const HealthNode *node) {
        if (!s->repair_allowed)
                return finish(s, HEALTH_OUTCOME_REPAIR_HELD,
                              "node %s: %s for \"%s\" held: %s: reporting instead of repairing", node->name,
                              health_signal_repair_to_string(s->repair), s->reason,
                              *s->repair_held ? s->repair_held : "over its limit");
        health_signal_repair_reason(s->repair_reason, s->prefix, s->repair, s->reason);
        (void) snprintf(s->fleet_prefix, sizeof(s->fleet_prefix), "%srepair ", s->prefix);
        s->step = HEALTH_STEP_QUERY_FLEET;
        s->outcome = HEALTH_OUTCOME_REPAIR;
}

static void want_drain(HealthSignal *s, const HealthNode *node, HealthOwner owner) {
        bool force = s->want == HEALTH_WANT_FORCE_DRAIN;

        switch (owner) {
        case HEALTH_OWNER_OTHER:
                return finish(s, HEALTH_OUTCOME_OTHER,
                              "node %s has a reason that is not ours (\"%s\"): left alone", node->name,
                              node->reason ?: "drained without a reason");
        case HEALTH_OWNER_STICKY:
                if (!force || streq(node->reason, s->reason))
                        return finish(s, HEALTH_OUTCOME_UNCHANGED,
                                      "node %s stays drained for \"%s\" until an operator undrains it",
                                      node->name, node->reason);
                break;
        case HEALTH_OWNER_OURS:
                if (same_reason(node->reason, s->reason) && health_node_drained(node)) {
                        if (!force && s->repair != HEALTH_REPAIR_NONE && s->idle)
                                return want_repair(s, node);
                        return finish(s, HEALTH_OUTCOME_UNCHANGED, "node %s already drained for \"%s\"%s",
                                      node->name, s->reason,
                                      !force && s->repair != HEALTH_REPAIR_NONE
                                              ? ": its repair waits for the node to be idle"
                                              : "");
                }
                break;
        case HEALTH_OWNER_NONE:
                /* We drained it for this, and it is no longer: someone resumed
                 * it.  A different finding drains again. */
                if (!force && !isempty(s->set_reason) && streq(s->set_reason, s->reason) &&
                    !health_node_drained(node))
                        return finish(s, HEALTH_OUTCOME_LIFTED,
                                      "node %s was resumed by someone else after we drained it for \"%s\": "
                                      "not draining it again until the check passes",
                                      node->name, s->set_reason);
                if (!force) {
                        s->step = HEALTH_STEP_QUERY_FLEET;
                        return;
                }
                break;
        }
        s->step = HEALTH_STEP_DRAIN;
        s->outcome = owner == HEALTH_OWNER_NONE ? HEALTH_OUTCOME_DRAINED : HEALTH_OUTCOME_UPDATED;
}

static void want_healthy(HealthSignal *s, const HealthNode *node, HealthOwner owner) {
        bool undrain = s->want == HEALTH_WANT_UNDRAIN;

        switch (owner) {
        case HEALTH_OWNER_NONE:
                return finish(s, HEALTH_OUTCOME_UNCHANGED, "node %s is not drained", node->name);
        case HEALTH_OWNER_OTHER:
                /* the one foreign reason we may lift: the site asked for it
                 * with its token, and every check passed since */
                if (s->token_seen && s->want == HEALTH_WANT_HEALTHY && !s->all_passed)
                        return finish(s, HEALTH_OUTCOME_OTHER,
                                      "node %s has a reason carrying \"%s\" (\"%s\"): resumed after the "
                                      "next round in which every check passes",
                                      node->name, s->foreign_token, node->reason);
                if (s->token_seen && s->want == HEALTH_WANT_HEALTHY) {
                        s->step = HEALTH_STEP_RESUME;
                        s->outcome = HEALTH_OUTCOME_RESUMED;
                        return;
                }
                return finish(s, HEALTH_OUTCOME_OTHER,
                              "node %s has a reason that is not ours (\"%s\"): left alone", node->name,
                              node->reason ?: "drained without a reason");
        case HEALTH_OWNER_STICKY:
                if (!undrain)
                        return finish(s, HEALTH_OUTCOME_UNCHANGED,
                                      "node %s stays drained for \"%s\" until an operator undrains it",
                                      node->name, node->reason);
                break;
        case HEALTH_OWNER_OURS:
                break;
        }
        s->step = HEALTH_STEP_RESUME;
        s->outcome = HEALTH_OUTCOME_RESUMED;
}

void health_signal_node(HealthSignal *s, const HealthNode *node) {
        HealthOwner owner;

        if (!node)
                return finish(s, HEALTH_OUTCOME_NOT_FOUND,
                              "slurmctld knows no node '%s': set health: node_name to this node's NodeName= "
                              "in slurm.conf",
                              s->node);
        owner = health_signal_reason_owner(health_node_reason(node), health_node_drained(node), s->prefix,
                                           s->sticky_reason);
        s->owner = owner;
        s->busy = health_node_busy(node);
        s->idle = !s->busy && health_node_has_flag(node, "IDLE");
        s->token_seen = owner == HEALTH_OWNER_OTHER && !isempty(s->foreign_token) && node->reason &&
                        strstr(node->reason, s->foreign_token);
        (void) snprintf(s->fleet_prefix, sizeof(s->fleet_prefix), "%s", s->prefix);
        (void) snprintf(s->node, sizeof(s->node), "%s", node->name ?: "");
        /* Checks leave a node that is down or not responding alone; an
         * operator's drain or undrain (of our own reason) works on any. */
        if (health_node_unreachable(node) && s->want != HEALTH_WANT_FORCE_DRAIN &&
            !(s->want == HEALTH_WANT_UNDRAIN &&
              (owner == HEALTH_OWNER_OURS || owner == HEALTH_OWNER_STICKY)))
                return finish(s, HEALTH_OUTCOME_UNREACHABLE, "node %s is %s: left alone", node->name,
                              node->state ?: "down");
        if (s->want == HEALTH_WANT_DRAIN || s->want == HEALTH_WANT_FORCE_DRAIN)
                want_drain(s, node, owner);
        else
                want_healthy(s, node, owner);
}

void health_signal_fleet(HealthSignal *s, size_t total, size_t ours) {
        /* Always at least one node, so a small cluster can drain a bad node. */
        size_t allowed = MAX((size_t) 1, total * s->max_drained_pct / 100);

        if (s->outcome == HEALTH_OUTCOME_REPAIR) {
                allowed = MAX((size_t) 1, total * s->max_repair_pct / 100);
                if (ours >= allowed)
                        return finish(s, HEALTH_OUTCOME_REPAIR_HELD,
                                      "repair limit: %zu of %zu nodes in this node's partitions are under "
                                      "repair already (max_pct %u allows %zu): reporting %s for \"%s\" "
                                      "instead of repairing",
                                      ours, total, s->max_repair_pct, allowed,
                                      health_signal_repair_to_string(s->repair), s->reason);
                /* a reboot sets its own reason; the others theirs first */
                memcpy(s->reason, s->repair_reason, sizeof(s->reason));
                s->step = s->repair == HEALTH_REPAIR_REBOOT ? HEALTH_STEP_REBOOT : HEALTH_STEP_DRAIN;
                return;
        }
        if (ours >= allowed)
                return finish(
                        s, HEALTH_OUTCOME_GUARDED,
                        "fleet guard: %zu of %zu nodes in this node's partitions are drained by us already "
                        "(max_drained_pct %u allows %zu): reporting \"%s\" instead of draining",
                        ours, total, s->max_drained_pct, allowed, s->reason);
        s->step = HEALTH_STEP_DRAIN;
        s->outcome = HEALTH_OUTCOME_DRAINED;
}

void health_signal_updated(HealthSignal *s, int r, const char *error) {
        if (r < 0)
                return finish(s, HEALTH_OUTCOME_FAILED, "slurmctld refused the update: %s",
                              error ?: strerror(-r));
        if (s->outcome == HEALTH_OUTCOME_RESUMED)
                return finish(s, s->outcome, "node %s resumed", s->node);
        if (s->outcome == HEALTH_OUTCOME_REPAIR)
                return finish(s, s->outcome, "node %s idle and drained by us: %s \"%s\"", s->node,
                              s->repair == HEALTH_REPAIR_REBOOT ? "reboot asked, reason"
                                                                : "repairing, reason",
                              s->reason);
        finish(s, s->outcome, "node %s %s: \"%s\"", s->node,
               s->outcome == HEALTH_OUTCOME_UPDATED ? "reason updated" : "drained", s->reason);
}

void health_signal_failed(HealthSignal *s, int r, const char *error) {
        finish(s, HEALTH_OUTCOME_FAILED, "cannot reach slurmctld: %s", error ?: strerror(-r));
}

static bool share_partition(const HealthNode *a, const HealthNode *b) {
        for (char **p = a->partitions; p && *p; p++)
                if (strv_contains(b->partitions, *p))
                        return true;
        return false;
}

void health_signal_fleet_count(const HealthNode *nodes, size_t n, const HealthNode *self, const char *prefix,
                               size_t *ret_total, size_t *ret_ours) {
        size_t total = 0, ours = 0;

        for (size_t i = 0; i < n; i++) {
                if (!streq_ptr(nodes[i].name, self->name) && !share_partition(&nodes[i], self))
                        continue;
                total++;
                const char *reason = health_node_reason(&nodes[i]);

                if (reason && has_prefix(reason, prefix) && !streq_ptr(nodes[i].name, self->name))
                        ours++;
        }
        *ret_total = MAX(total, (size_t) 1);
        *ret_ours = ours;
}
