/* Fuzz target: what slurmctld's side hands the health module, from
 * untrusted bytes: `scontrol show node` text and slurmrestd's JSON answers
 * (nodes and errors[]).  Each must give nodes or an error, never a crash,
 * a leak or a node without a name; the rules of draining then run over
 * every node found, as a round would. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "modules/health/health-node.h"
#include "modules/health/transport/health-restjson.h"
#include "modules/health/health-signal.h"
#include "util/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void judge(const HealthNode *nodes, size_t n) {
        size_t total, ours;

        for (size_t i = 0; i < n; i++) {
                HealthSignal s = { .want = (HealthWant) (i % 4), .max_drained_pct = 10 };

                if (!nodes[i].name)
                        __builtin_trap();
                strcpy(s.prefix, "sunkd: ");
                strcpy(s.reason, "sunkd: x: y");
                health_signal_node(&s, &nodes[i]);
                if (s.step == HEALTH_STEP_QUERY_FLEET) {
                        health_signal_fleet_count(nodes, n, &nodes[i], s.prefix, &total, &ours);
                        if (ours >= total)
                                __builtin_trap(); /* the node itself is never counted as ours */
                        health_signal_fleet(&s, total, ours);
                }
                if (strnlen(s.message, sizeof(s.message)) >= sizeof(s.message))
                        __builtin_trap();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *text = malloc(size + 1), *error = NULL;
        HealthNode *nodes = NULL;
        size_t n = 0;
        char buf[256];

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        if (health_nodes_parse(text, &nodes, &n) >= 0) {
                judge(nodes, n);
                health_nodes_free(nodes, n);
        }
        nodes = NULL;
        n = 0;
        if (health_rest_nodes_parse(text, size, &nodes, &n, &error) >= 0) {
                judge(nodes, n);
                health_nodes_free(nodes, n);
        }
        (void) health_rest_errors(text, size, buf, sizeof(buf));
        if (strnlen(buf, sizeof(buf)) >= sizeof(buf))
                __builtin_trap();
        return 0;
}
