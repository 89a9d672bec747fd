/* The health module's rules of draining: whose reason a node carries, what
 * each wish does to each node, the fleet guard, the reason's form, and the
 * `scontrol show node` parser on real and hostile output. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/strv.h"

#include "../../modules/health/health-count.h"
#include "../../modules/health/health-node.h"
#include "../../modules/health/health-signal.h"
#include "../lib/check-run.h"

#define P "sunkd: "

START_TEST(test_owner_table) {
        static const struct {
                const char *reason;
                bool drained;
                const char *sticky;
                HealthOwner want;
        } t[] = {
                { NULL, false, "", HEALTH_OWNER_NONE },
                { "", false, "", HEALTH_OWNER_NONE },
                { NULL, true, "", HEALTH_OWNER_OTHER }, /* drained, no reason: someone's */
                { "sunkd: disk: full", true, "", HEALTH_OWNER_OURS },
                { "sunkd: prolog: job 12 failed", true, "sunkd: prolog: job 12 failed",
                  HEALTH_OWNER_STICKY },
                /* sticky is recorded with the drain, not read from the text:
                 * a check may be named prolog-gpu or epilog */
                { "sunkd: prolog: job 12 failed", true, "", HEALTH_OWNER_OURS },
                { "sunkd: prolog-gpu: no GPU", true, "", HEALTH_OWNER_OURS },
                { "sunkd: epilog: x", true, "sunkd: maintenance", HEALTH_OWNER_OURS },
                { "sunkd: maintenance", true, "sunkd: maintenance", HEALTH_OWNER_STICKY },
                { "sunkd:disk", true, "", HEALTH_OWNER_OTHER }, /* not our prefix exactly */
                { "SUNKD: disk", true, "", HEALTH_OWNER_OTHER },
                { "NHC: check_fs_mount: /scratch", true, "", HEALTH_OWNER_OTHER },
                { "k8s: node cordoned", true, "", HEALTH_OWNER_OTHER },
                { "slurm-operator: pod deleted", true, "", HEALTH_OWNER_OTHER },
                { "Prolog error", true, "", HEALTH_OWNER_OTHER },
                { "Epilog error", true, "", HEALTH_OWNER_OTHER },
                { "Kill task failed", true, "", HEALTH_OWNER_OTHER },
                { "Not responding", false, "", HEALTH_OWNER_OTHER },
                { "replacing PSU, ask bob", true, "", HEALTH_OWNER_OTHER },
                { " sunkd: disk", true, "", HEALTH_OWNER_OTHER },
        };
        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
                ck_assert_msg(health_signal_reason_owner(t[i].reason, t[i].drained, P, t[i].sticky) ==
                                      t[i].want,
                              "reason '%s'", t[i].reason ?: "(null)");
}
END_TEST

static HealthNode node(const char *state, const char *reason) {
        HealthNode n = { .name = strdup("n1"),
                         .state = strdup(state),
                         .reason = reason ? strdup(reason) : NULL };
        char **parts = NULL;

        ck_assert_int_ge(strv_extend(&parts, "debug"), 0);
        n.partitions = parts;
        return n;
}

static HealthSignal sig(HealthWant want, const char *reason, const char *set) {
        HealthSignal s = { .want = want, .max_drained_pct = 10 };

        snprintf(s.prefix, sizeof(s.prefix), "%s", P);
        snprintf(s.reason, sizeof(s.reason), "%s", reason ?: "");
        snprintf(s.set_reason, sizeof(s.set_reason), "%s", set ?: "");
        return s;
}

/* @s with @reason recorded as the sticky drain's. */
static HealthSignal sticky(HealthSignal s, const char *reason) {
        snprintf(s.sticky_reason, sizeof(s.sticky_reason), "%s", reason);
        return s;
}

static HealthOutcome run(HealthSignal *s, const char *state, const char *reason, HealthStep *ret_step) {
        HealthNode n = node(state, reason);

        health_signal_node(s, &n);
        health_node_clear(&n);
        *ret_step = s->step;
        if (s->step == HEALTH_STEP_QUERY_FLEET)
                health_signal_fleet(s, 100, 0);
        if (s->step == HEALTH_STEP_DRAIN || s->step == HEALTH_STEP_RESUME)
                health_signal_updated(s, 0, NULL);
        return s->outcome;
}

/* A repair: only for a node IDLE and drained by us for the finding, within
 * the node's own limit and then the fleet's (nodes whose reason says
 * "<prefix>repair "); a reboot is its own step, the others set their reason
 * first. */
static HealthSignal repair(HealthRepair r, bool allowed) {
        HealthSignal s = sig(HEALTH_WANT_DRAIN, P "gpu: XID 79 on GPU-1", P "gpu: XID 79 on GPU-1");

        s.repair = r;
        s.repair_allowed = allowed;
        s.max_repair_pct = 10;
        if (!allowed)
                snprintf(s.repair_held, sizeof(s.repair_held), "1 repair(s) within the hour");
        return s;
}

START_TEST(test_repair_paths) {
        HealthSignal s;
        HealthNode n;
        char out[HEALTH_REASON_MAX];

        /* idle and drained for it: the fleet is counted by the repair's reasons */
        s = repair(HEALTH_REPAIR_REBOOT, true);
        n = node("IDLE+DRAIN", P "gpu: XID 79 on GPU-1");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.step, HEALTH_STEP_QUERY_FLEET);
        ck_assert_str_eq(s.fleet_prefix, P "repair ");
        health_signal_fleet(&s, 100, 9);
        ck_assert_int_eq(s.step, HEALTH_STEP_REBOOT);
        ck_assert_str_eq(s.reason, P "repair reboot: gpu: XID 79 on GPU-1");
        health_signal_updated(&s, 0, NULL);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_REPAIR);
        /* the fleet's limit: 10% of 100 under repair already */
        s = repair(HEALTH_REPAIR_REBOOT, true);
        n = node("IDLE+DRAIN", P "gpu: XID 79 on GPU-1");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        health_signal_fleet(&s, 100, 10);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_REPAIR_HELD);
        ck_assert_ptr_nonnull(strstr(s.message, "repair limit: 10 of 100 nodes"));
        /* a small cluster repairs one node at a time */
        s = repair(HEALTH_REPAIR_SCRIPT, true);
        n = node("IDLE+DRAIN", P "gpu: XID 79 on GPU-1");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        health_signal_fleet(&s, 3, 0);
        ck_assert_int_eq(s.step, HEALTH_STEP_DRAIN); /* reset-gpu and script: the reason first */
        ck_assert_str_eq(s.reason, P "repair script: gpu: XID 79 on GPU-1");
        /* the node's own limit */
        s = repair(HEALTH_REPAIR_RESET_GPU, false);
        n = node("IDLE+DRAIN", P "gpu: XID 79 on GPU-1");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_REPAIR_HELD);
        ck_assert_ptr_nonnull(strstr(s.message, "1 repair(s) within the hour"));
        /* never under a job: drained (DRAINING) but a job runs, or one completes */
        s = repair(HEALTH_REPAIR_REBOOT, true);
        n = node("MIXED+DRAIN", P "gpu: XID 79 on GPU-1");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_UNCHANGED);
        ck_assert_ptr_nonnull(strstr(s.message, "waits for the node to be idle"));
        s = repair(HEALTH_REPAIR_REBOOT, true);
        n = node("IDLE+COMPLETING+DRAIN", P "gpu: XID 79 on GPU-1");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_UNCHANGED);
        /* not drained yet: drained first, repaired in a later round */
        s = repair(HEALTH_REPAIR_REBOOT, true);
        s.set_reason[0] = '\0';
        n = node("IDLE", NULL);
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.step, HEALTH_STEP_QUERY_FLEET);
        health_signal_fleet(&s, 100, 0);
        ck_assert_int_eq(s.step, HEALTH_STEP_DRAIN);
        ck_assert_str_eq(s.reason, P "gpu: XID 79 on GPU-1");
        /* drained for another finding of ours: updated, not repaired */
        s = repair(HEALTH_REPAIR_REBOOT, true);
        n = node("IDLE+DRAIN", P "disk: full");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.step, HEALTH_STEP_DRAIN);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_UPDATED);
        /* slurmctld's " : reboot issued" after ours is still ours, unchanged */
        s = sig(HEALTH_WANT_DRAIN, P "repair reboot: gpu: XID 79", P "repair reboot: gpu: XID 79");
        n = node("DOWN+DRAIN+REBOOT_ISSUED", P "repair reboot: gpu: XID 79 : reboot issued");
        s.want = HEALTH_WANT_DRAIN;
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_UNREACHABLE);
        s = sig(HEALTH_WANT_DRAIN, P "repair reboot: gpu: XID 79", P "repair reboot: gpu: XID 79");
        n = node("IDLE+DRAIN+REBOOT_ISSUED", P "repair reboot: gpu: XID 79 : reboot issued");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_UNCHANGED);
        /* someone else's reason: never */
        s = repair(HEALTH_REPAIR_REBOOT, true);
        n = node("IDLE+DRAIN", "replacing PSU");
        health_signal_node(&s, &n);
        health_node_clear(&n);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_OTHER);
        /* the words */
        health_signal_repair_reason(out, P, HEALTH_REPAIR_RESET_GPU, P "gpu: XID 48");
        ck_assert_str_eq(out, P "repair reset-gpu: gpu: XID 48");
        ck_assert_int_eq(health_signal_repair_from_string("reset-gpu"), HEALTH_REPAIR_RESET_GPU);
        ck_assert_int_eq(health_signal_repair_from_string("drain"), HEALTH_REPAIR_NONE);
        ck_assert_int_eq(health_signal_repair_from_string("reset"), -EINVAL);
}
END_TEST

/* undrain_foreign_token: a foreign reason carrying it is resumed only by a
 * round wanting HEALTHY after every check passed since; no other foreign
 * reason is ever touched. */
static HealthSignal token(HealthWant want, bool all_passed) {
        HealthSignal s = sig(want, want == HEALTH_WANT_DRAIN ? P "disk: full" : NULL, NULL);

        snprintf(s.foreign_token, sizeof(s.foreign_token), "sunk:verify-undrain");
        s.all_passed = all_passed;
        return s;
}

START_TEST(test_foreign_token) {
        HealthSignal s;
        HealthStep st;

        s = token(HEALTH_WANT_HEALTHY, false);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "hourly check sunk:verify-undrain", &st),
                         HEALTH_OUTCOME_OTHER);
        ck_assert(s.token_seen);
        ck_assert_ptr_nonnull(strstr(s.message, "resumed after the next round in which every check passes"));
        s = token(HEALTH_WANT_HEALTHY, true);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "hourly check sunk:verify-undrain", &st),
                         HEALTH_OUTCOME_RESUMED);
        ck_assert_int_eq(st, HEALTH_STEP_RESUME);
        /* a check fails: left alone */
        s = token(HEALTH_WANT_DRAIN, true);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "hourly check sunk:verify-undrain", &st),
                         HEALTH_OUTCOME_OTHER);
        /* any other foreign reason: never */
        s = token(HEALTH_WANT_HEALTHY, true);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "k8s: cordoned", &st), HEALTH_OUTCOME_OTHER);
        ck_assert(!s.token_seen);
        s = token(HEALTH_WANT_HEALTHY, true);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "sunk:verify", &st), HEALTH_OUTCOME_OTHER);
        /* no token configured */
        s = sig(HEALTH_WANT_HEALTHY, NULL, NULL);
        s.all_passed = true;
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "hourly check sunk:verify-undrain", &st),
                         HEALTH_OUTCOME_OTHER);
        /* down: left alone */
        s = token(HEALTH_WANT_HEALTHY, true);
        ck_assert_int_eq(run(&s, "DOWN+DRAIN", "hourly check sunk:verify-undrain", &st),
                         HEALTH_OUTCOME_UNREACHABLE);
        /* an operator's undrain does not reach it either */
        s = token(HEALTH_WANT_UNDRAIN, true);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "hourly check sunk:verify-undrain", &st),
                         HEALTH_OUTCOME_OTHER);
}
END_TEST

START_TEST(test_drain_paths) {
        HealthSignal s;
        HealthStep st;

        /* a failing check drains an idle node, after the fleet guard */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        ck_assert_int_eq(run(&s, "IDLE", NULL, &st), HEALTH_OUTCOME_DRAINED);
        ck_assert_int_eq(st, HEALTH_STEP_QUERY_FLEET);
        /* already drained for the same: no update */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", P "disk: full");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "disk: full", &st), HEALTH_OUTCOME_UNCHANGED);
        ck_assert_int_eq(st, HEALTH_STEP_DONE);
        /* our reason, another check now: updated, no fleet guard needed */
        s = sig(HEALTH_WANT_DRAIN, P "mem: low", P "disk: full");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "disk: full", &st), HEALTH_OUTCOME_UPDATED);
        ck_assert_int_eq(st, HEALTH_STEP_DRAIN);
        /* someone else's reason: never touched */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "replacing PSU", &st), HEALTH_OUTCOME_OTHER);
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        ck_assert_int_eq(run(&s, "MIXED+DRAIN", "Prolog error", &st), HEALTH_OUTCOME_OTHER);
        /* down or not responding: left alone */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        ck_assert_int_eq(run(&s, "DOWN", "Not responding", &st), HEALTH_OUTCOME_UNREACHABLE);
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        ck_assert_int_eq(run(&s, "IDLE+NOT_RESPONDING", NULL, &st), HEALTH_OUTCOME_UNREACHABLE);
        /* we drained it, someone resumed it: not again until the check passes */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", P "disk: full");
        ck_assert_int_eq(run(&s, "IDLE", NULL, &st), HEALTH_OUTCOME_LIFTED);
        /* ... but a different finding since then drains */
        s = sig(HEALTH_WANT_DRAIN, P "gpu: XID 95 on GPU-a1", P "gpu: XID 13 on GPU-a0");
        ck_assert_int_eq(run(&s, "IDLE", NULL, &st), HEALTH_OUTCOME_DRAINED);
        /* a sticky reason of ours is not replaced by a check's */
        s = sticky(sig(HEALTH_WANT_DRAIN, P "disk: full", NULL), P "prolog: job 7");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "prolog: job 7", &st), HEALTH_OUTCOME_UNCHANGED);
        /* ... but one not recorded sticky is a check's, whatever it says */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", P "prolog-gpu: no GPU");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "prolog-gpu: no GPU", &st), HEALTH_OUTCOME_UPDATED);
        /* an operator's drain replaces a check's reason and is sticky */
        s = sig(HEALTH_WANT_FORCE_DRAIN, P "maintenance", P "disk: full");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "disk: full", &st), HEALTH_OUTCOME_UPDATED);
        /* ... also a node that is not responding (as one is for a second after a resume) */
        s = sig(HEALTH_WANT_FORCE_DRAIN, P "maintenance", NULL);
        ck_assert_int_eq(run(&s, "IDLE+NOT_RESPONDING", NULL, &st), HEALTH_OUTCOME_DRAINED);
        /* ... and drains without the fleet guard */
        s = sig(HEALTH_WANT_FORCE_DRAIN, P "maintenance", NULL);
        ck_assert_int_eq(run(&s, "ALLOCATED", NULL, &st), HEALTH_OUTCOME_DRAINED);
        ck_assert_int_eq(st, HEALTH_STEP_DRAIN);
        ck_assert(s.busy);
}
END_TEST

START_TEST(test_resume_paths) {
        HealthSignal s;
        HealthStep st;

        s = sig(HEALTH_WANT_HEALTHY, NULL, P "disk: full");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "disk: full", &st), HEALTH_OUTCOME_RESUMED);
        /* a reason of ours we do not remember setting is still ours */
        s = sig(HEALTH_WANT_HEALTHY, NULL, NULL);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "disk: full", &st), HEALTH_OUTCOME_RESUMED);
        s = sig(HEALTH_WANT_HEALTHY, NULL, NULL);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "NHC: check_hw_eth", &st), HEALTH_OUTCOME_OTHER);
        s = sig(HEALTH_WANT_HEALTHY, NULL, NULL);
        ck_assert_int_eq(run(&s, "IDLE", NULL, &st), HEALTH_OUTCOME_UNCHANGED);
        /* sticky: only an undrain */
        s = sticky(sig(HEALTH_WANT_HEALTHY, NULL, NULL), P "prolog: job 7");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "prolog: job 7", &st), HEALTH_OUTCOME_UNCHANGED);
        s = sticky(sig(HEALTH_WANT_UNDRAIN, NULL, NULL), P "prolog: job 7");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "prolog: job 7", &st), HEALTH_OUTCOME_RESUMED);
        /* a check named prolog-gpu drained it, and passes now: resumed */
        s = sig(HEALTH_WANT_HEALTHY, NULL, P "prolog-gpu: no GPU");
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", P "prolog-gpu: no GPU", &st), HEALTH_OUTCOME_RESUMED);
        /* undrain never takes someone else's */
        s = sig(HEALTH_WANT_UNDRAIN, NULL, NULL);
        ck_assert_int_eq(run(&s, "IDLE+DRAIN", "k8s: cordoned", &st), HEALTH_OUTCOME_OTHER);
        /* a failed update is a failure, with slurmctld's words */
        s = sig(HEALTH_WANT_HEALTHY, NULL, NULL);
        health_signal_node(&s, &(HealthNode){ .name = (char *) "n1",
                                              .state = (char *) "IDLE+DRAIN",
                                              .reason = (char *) P "x" });
        ck_assert_int_eq(s.step, HEALTH_STEP_RESUME);
        health_signal_updated(&s, -EIO, "Access/permission denied");
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_FAILED);
        ck_assert_ptr_nonnull(strstr(s.message, "Access/permission denied"));
        /* a node slurmctld does not know */
        s = sig(HEALTH_WANT_HEALTHY, NULL, NULL);
        (void) snprintf(s.node, sizeof(s.node), "gpu-7");
        health_signal_node(&s, NULL);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_NOT_FOUND);
        /* naming the node asked for and the key that names it */
        ck_assert_msg(strstr(s.message, "'gpu-7'") && strstr(s.message, "health: node_name"), "%s",
                      s.message);
}
END_TEST

START_TEST(test_fleet_guard) {
        HealthSignal s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);

        /* 10% of 100 = 10: the 11th is refused */
        s.step = HEALTH_STEP_QUERY_FLEET;
        health_signal_fleet(&s, 100, 9);
        ck_assert_int_eq(s.step, HEALTH_STEP_DRAIN);
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        health_signal_fleet(&s, 100, 10);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_GUARDED);
        ck_assert_ptr_nonnull(strstr(s.message, "fleet guard"));
        /* a small cluster can always drain one node */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        health_signal_fleet(&s, 3, 0);
        ck_assert_int_eq(s.step, HEALTH_STEP_DRAIN);
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        health_signal_fleet(&s, 3, 1);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_GUARDED);
}
END_TEST

START_TEST(test_reason_format) {
        char out[HEALTH_REASON_MAX], big[1000];

        health_signal_reason_format(out, P, "disk", "/scratch 3% free");
        ck_assert_str_eq(out, "sunkd: disk: /scratch 3% free");
        health_signal_reason_format(out, P, "x", "a\nb\tc\x1b[31m");
        ck_assert_str_eq(out, "sunkd: x: a\\x0ab\\x09c\\x1b[31m");
        health_signal_reason_format(out, P, "gpu", "XID 79 on GPU-\xc3\xa9t\xff");
        ck_assert_str_eq(out, "sunkd: gpu: XID 79 on GPU-\xc3\xa9t\\xff");
        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        health_signal_reason_format(out, P, "x", big);
        ck_assert_uint_eq(strlen(out), HEALTH_REASON_MAX - 1);
        /* a multi-byte character is never cut in half */
        for (size_t i = 0; i + 2 < sizeof(big); i += 2)
                memcpy(big + i, "\xc3\xa9", 2);
        big[sizeof(big) - 1] = '\0';
        health_signal_reason_format(out, P, "x", big);
        ck_assert_uint_lt(strlen(out), HEALTH_REASON_MAX);
        ck_assert_int_ne((unsigned char) out[strlen(out) - 1], 0xc3);
        health_signal_reason_format(out, P, "x", "trailing   ");
        ck_assert_str_eq(out, "sunkd: x: trailing");
}
END_TEST

static const char show_two[] =
        "NodeName=n1 Arch=x86_64 CoresPerSocket=1 \n"
        "   CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=1.69\n"
        "   OS=Linux 6.1 #1 SMP PREEMPT_DYNAMIC State=FAKE \n"
        "   State=IDLE+DRAIN+DYNAMIC_NORM ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Partitions=debug,gpu \n"
        "   Reason=sunkd: disk: full [root@2026-11-26T14:21:54]\n"
        "   Comment=Reason=evil [x@y]\n"
        "\n"
        "NodeName=n2 Arch=x86_64 CoresPerSocket=1 \n"
        "   State=IDLE+DYNAMIC_NORM ThreadsPerCore=1\n"
        "   Partitions=debug \n"
        "\n";

START_TEST(test_parse_show_node) {
        HealthNode *nodes = NULL;
        size_t n = 0, total, ours;
        const HealthNode *a;

        ck_assert_int_eq(health_nodes_parse(show_two, &nodes, &n), 0);
        ck_assert_uint_eq(n, 2);
        a = health_nodes_find(nodes, n, "n1");
        ck_assert_ptr_nonnull(a);
        ck_assert_str_eq(a->state, "IDLE+DRAIN+DYNAMIC_NORM");
        ck_assert_str_eq(a->reason, "sunkd: disk: full");
        ck_assert_str_eq(a->partitions[0], "debug");
        ck_assert_str_eq(a->partitions[1], "gpu");
        ck_assert(health_node_drained(a));
        ck_assert(!health_node_unreachable(a));
        ck_assert_ptr_null(health_nodes_find(nodes, n, "n2")->reason);
        health_signal_fleet_count(nodes, n, health_nodes_find(nodes, n, "n2"), P, &total, &ours);
        ck_assert_uint_eq(total, 2);
        ck_assert_uint_eq(ours, 1);
        health_nodes_free(nodes, n);
}
END_TEST

/* The fleet guard counts the nodes of this node's partitions only: a
 * partition of its own is not held back by another partition's drains. */
static const char show_partitions[] =
        "NodeName=self\n   State=IDLE\n   Partitions=gpu \n\n"
        "NodeName=gpu-a\n   State=IDLE+DRAIN\n   Partitions=gpu \n   Reason=sunkd: xid: 79 [root@t]\n\n"
        "NodeName=gpu-b\n   State=IDLE\n   Partitions=debug,gpu \n\n"
        "NodeName=cpu-a\n   State=IDLE+DRAIN\n   Partitions=cpu \n   Reason=sunkd: disk: full [root@t]\n\n"
        "NodeName=cpu-b\n   State=IDLE+DRAIN\n   Partitions=cpu,debug \n   Reason=sunkd: disk: full "
        "[root@t]\n\n"
        "NodeName=none\n   State=IDLE+DRAIN\n   Reason=sunkd: disk: full [root@t]\n\n";

START_TEST(test_fleet_partitions) {
        HealthNode *nodes = NULL;
        size_t n = 0, total, ours;

        ck_assert_int_eq(health_nodes_parse(show_partitions, &nodes, &n), 0);
        ck_assert_uint_eq(n, 6);
        /* gpu: self, gpu-a (ours), gpu-b */
        health_signal_fleet_count(nodes, n, health_nodes_find(nodes, n, "self"), P, &total, &ours);
        ck_assert_uint_eq(total, 3);
        ck_assert_uint_eq(ours, 1);
        /* cpu: cpu-a and cpu-b, both ours, but a node's own reason is not counted */
        health_signal_fleet_count(nodes, n, health_nodes_find(nodes, n, "cpu-a"), P, &total, &ours);
        ck_assert_uint_eq(total, 2);
        ck_assert_uint_eq(ours, 1);
        /* debug and gpu: every node of either, none of the others' */
        health_signal_fleet_count(nodes, n, health_nodes_find(nodes, n, "gpu-b"), P, &total, &ours);
        ck_assert_uint_eq(total, 4);
        ck_assert_uint_eq(ours, 2);
        /* a node in no partition counts itself only */
        health_signal_fleet_count(nodes, n, health_nodes_find(nodes, n, "none"), P, &total, &ours);
        ck_assert_uint_eq(total, 1);
        ck_assert_uint_eq(ours, 0);
        health_nodes_free(nodes, n);
}
END_TEST

/* Slurm 24.11's scontrol show node (its own words, trimmed): it keeps a
 * drain's reason on a node after the resume (22.05 cleared it), which
 * sinfo -R no longer shows; `scontrol reboot` leaves the node DOWN with
 * REBOOT_ISSUED and a reason of its own. */
static const char show_24_11[] =
        "NodeName=node-1 Arch=x86_64 CoresPerSocket=1 \n"
        "   CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=3.32\n"
        "   NodeAddr=127.0.0.1 NodeHostName=vm Version=24.11.5\n"
        "   State=IDLE+DYNAMIC_NORM ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Partitions=debug \n"
        "   LastBusyTime=2026-11-28T15:42:39 ResumeAfterTime=None\n"
        "   \n"
        "   Reason=sunkd: disk: full [root@2026-11-28T15:42:39]\n\n"
        "NodeName=node-2 Arch=x86_64 CoresPerSocket=1 \n"
        "   State=IDLE+DRAIN+DYNAMIC_NORM ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Partitions=debug \n"
        "   Reason=sunkd: disk: full [root@2026-11-28T15:42:39]\n\n"
        "NodeName=node-3 Arch=x86_64 CoresPerSocket=1 \n"
        "   State=IDLE+DYNAMIC_NORM ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n"
        "   Partitions=debug \n"
        "   Reason=sunkd: xid: 79 [root@2026-11-28T15:40:01]\n\n"
        "NodeName=node-4 Arch=x86_64 CoresPerSocket=1 \n"
        "   State=DOWN+DYNAMIC_NORM+REBOOT_ISSUED ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A "
        "MCS_label=N/A\n"
        "   Partitions=debug \n"
        "   Reason=kernel : reboot issued [root@2026-11-28T15:42:40]\n\n";

START_TEST(test_resumed_reason) {
        HealthNode *nodes = NULL;
        size_t n = 0, total, ours;
        HealthSignal s;

        ck_assert_int_eq(health_nodes_parse(show_24_11, &nodes, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_str_eq(nodes[0].reason, "sunkd: disk: full");
        ck_assert_ptr_null(health_node_reason(&nodes[0]));
        ck_assert_str_eq(health_node_reason(&nodes[1]), "sunkd: disk: full");
        ck_assert_str_eq(health_node_reason(&nodes[3]), "kernel : reboot issued");

        /* the resumed node is nobody's: a failing check drains it, after the guard */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        health_signal_node(&s, &nodes[0]);
        ck_assert_int_eq(s.owner, HEALTH_OWNER_NONE);
        ck_assert_int_eq(s.step, HEALTH_STEP_QUERY_FLEET);
        /* passing checks send no resume */
        s = sig(HEALTH_WANT_HEALTHY, NULL, P "disk: full");
        health_signal_node(&s, &nodes[0]);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_UNCHANGED);
        ck_assert_int_eq(s.step, HEALTH_STEP_DONE);
        /* resumed by someone after our drain for the same finding: lifted */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", P "disk: full");
        health_signal_node(&s, &nodes[0]);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_LIFTED);
        /* the drained one is ours as before */
        s = sig(HEALTH_WANT_HEALTHY, NULL, P "disk: full");
        health_signal_node(&s, &nodes[1]);
        ck_assert_int_eq(s.step, HEALTH_STEP_RESUME);
        /* a node rebooting is down: left alone */
        s = sig(HEALTH_WANT_DRAIN, P "disk: full", NULL);
        health_signal_node(&s, &nodes[3]);
        ck_assert_int_eq(s.outcome, HEALTH_OUTCOME_UNREACHABLE);

        /* the guard counts node-2 only: node-3's reason is an old one */
        health_signal_fleet_count(nodes, n, &nodes[0], P, &total, &ours);
        ck_assert_uint_eq(total, 4);
        ck_assert_uint_eq(ours, 1);
        health_nodes_free(nodes, n);
}
END_TEST

START_TEST(test_parse_hostile) {
        HealthNode *nodes = NULL;
        size_t n = 0;
        _cleanup_free_ char *big = NULL;
        const size_t big_len = 4u << 20;

        ck_assert_int_eq(health_nodes_parse("", &nodes, &n), 0);
        ck_assert_uint_eq(n, 0);
        free(nodes);
        ck_assert_int_eq(health_nodes_parse("slurm_load_node error: Unable to contact slurm controller\n",
                                            &nodes, &n),
                         -EBADMSG);
        /* a reason of only the user suffix, one without it, one with brackets */
        ck_assert_int_eq(health_nodes_parse("NodeName=a\n Reason=[root@t]\nNodeName=b\n Reason=x [y] \n"
                                            "NodeName=c\n Reason=a [b@c] [root@t]\nNodeName=\n",
                                            &nodes, &n),
                         0);
        ck_assert_uint_eq(n, 4);
        ck_assert_str_eq(nodes[0].reason, "[root@t]");
        ck_assert_str_eq(nodes[1].reason, "x [y]");
        ck_assert_str_eq(nodes[2].reason, "a [b@c]");
        ck_assert_ptr_null(nodes[0].state);
        ck_assert(!health_node_busy(&nodes[0]));
        health_nodes_free(nodes, n);
        /* 4 MB without a newline */
        big = malloc(big_len + 1);
        ck_assert_ptr_nonnull(big);
        memset(big, 'S', big_len);
        memcpy(big, "NodeName=x State=", 17);
        big[big_len] = '\0';
        ck_assert_int_eq(health_nodes_parse(big, &nodes, &n), 0);
        ck_assert_uint_eq(n, 1);
        health_nodes_free(nodes, n);
}
END_TEST

START_TEST(test_flags) {
        HealthNode n = { .state = (char *) "MIXED+DRAIN" };

        ck_assert(health_node_busy(&n));
        ck_assert(health_node_drained(&n));
        n.state = (char *) "IDLE+DRAINX";
        ck_assert(!health_node_drained(&n));
        n.state = (char *) "DOWN+DRAIN+NOT_RESPONDING";
        ck_assert(health_node_unreachable(&n));
        n.state = (char *) "IDLE+POWERED_DOWN";
        ck_assert(health_node_unreachable(&n));
}
END_TEST

/* The debounce at start-up: a code needing 3 in a row counts from the
 * third; another code starts again; after the first pass or the first
 * counted failure it is over: later findings count at once. */
START_TEST(test_debounce) {
        HealthDebounce d = {};

        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "gpu-nvlink", 3), HEALTH_UNKNOWN);
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_UNKNOWN, "gpu-unknown", 3), HEALTH_UNKNOWN);
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "gpu-nvlink", 3), HEALTH_UNKNOWN);
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "gpu-xid", 3), HEALTH_UNKNOWN); /* another */
        ck_assert_uint_eq(d.seen, 1);
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "gpu-xid", 3), HEALTH_UNKNOWN);
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "gpu-xid", 3), HEALTH_FAIL);
        ck_assert(d.over);
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "gpu-nvlink", 3), HEALTH_FAIL);
        /* a pass first: over, the next failure counts */
        d = (HealthDebounce){};
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_PASS, "ok", 3), HEALTH_PASS);
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "gpu-nvlink", 3), HEALTH_FAIL);
        /* no debounce for the code */
        d = (HealthDebounce){};
        ck_assert_int_eq(health_count_debounce(&d, HEALTH_FAIL, "disk_free-low", 0), HEALTH_FAIL);
        ck_assert(d.over);
}
END_TEST

START_TEST(test_hysteresis) {
        HealthCount c = {};

        /* fail_after 3, pass_after 2 */
        ck_assert(!health_count_feed(&c, HEALTH_FAIL, 3, 2));
        ck_assert(!health_count_feed(&c, HEALTH_FAIL, 3, 2));
        /* unknown counts neither way: the run of failures goes on */
        ck_assert(!health_count_feed(&c, HEALTH_UNKNOWN, 3, 2));
        ck_assert_uint_eq(c.fails, 2);
        ck_assert(health_count_feed(&c, HEALTH_FAIL, 3, 2));
        ck_assert(c.failing);
        /* a pass between failures starts the count again */
        ck_assert(!health_count_feed(&c, HEALTH_PASS, 3, 2));
        ck_assert(c.failing);
        ck_assert(!health_count_feed(&c, HEALTH_FAIL, 3, 2));
        ck_assert(!health_count_feed(&c, HEALTH_PASS, 3, 2));
        ck_assert(health_count_feed(&c, HEALTH_PASS, 3, 2));
        ck_assert(!c.failing);
        /* a flapping check never reaches fail_after */
        for (int i = 0; i < 100; i++) {
                ck_assert(!health_count_feed(&c, HEALTH_FAIL, 3, 2));
                ck_assert(!health_count_feed(&c, HEALTH_FAIL, 3, 2));
                ck_assert(!health_count_feed(&c, HEALTH_PASS, 3, 2));
        }
        /* the counts are bounded */
        c = (HealthCount){ .fails = 999999, .failing = true };
        for (int i = 0; i < 5; i++)
                health_count_feed(&c, HEALTH_FAIL, 1, 1);
        ck_assert_uint_eq(c.fails, 1000000);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("health-signal");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_owner_table);
        tcase_add_test(tc, test_drain_paths);
        tcase_add_test(tc, test_repair_paths);
        tcase_add_test(tc, test_foreign_token);
        tcase_add_test(tc, test_resume_paths);
        tcase_add_test(tc, test_fleet_guard);
        tcase_add_test(tc, test_reason_format);
        tcase_add_test(tc, test_parse_show_node);
        tcase_add_test(tc, test_parse_hostile);
        tcase_add_test(tc, test_fleet_partitions);
        tcase_add_test(tc, test_resumed_reason);
        tcase_add_test(tc, test_flags);
        tcase_add_test(tc, test_hysteresis);
        tcase_add_test(tc, test_debounce);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_run(suite());
}
