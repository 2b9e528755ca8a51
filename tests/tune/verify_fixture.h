/* SPDX-License-Identifier: MIT */
/* The rule set and config the verify tests judge (test_libverify.c, test_ncclverify.c):
 * AllReduce float32 sum on 2 ranks of one node, the library's own choice below 8 KiB and the
 * rule (id, algo) from there; swept at 1 KiB-1 MiB x4. */
#ifndef CT_TEST_VERIFY_FIXTURE_H
#define CT_TEST_VERIFY_FIXTURE_H

#include <stdio.h>

#include "tune/tune.h"

static inline struct ct_ruleset verify_set_of(struct ct_rule *rules, int id, const char *algo)
{
    rules[0] = (struct ct_rule){.min_bytes = 0, .max_bytes = 8192, .id = 0};
    rules[1] = (struct ct_rule){.min_bytes = 8192, .max_bytes = CT_BYTES_INF, .id = id};
    snprintf(rules[0].algo, sizeof rules[0].algo, "default");
    snprintf(rules[1].algo, sizeof rules[1].algo, "%s", algo);
    return (struct ct_ruleset){.coll = CT_ALLREDUCE,
                               .nnodes = 1,
                               .ranks_per_node = 2,
                               .nranks = 2,
                               .dtype = CT_FLOAT32,
                               .op = CT_SUM,
                               .rules = rules,
                               .nrules = 2};
}

static inline void verify_config_of(struct ct_config *c)
{
    ct_config_init(c);
    c->sweep.minbytes = 1024;
    c->sweep.maxbytes = 1 << 20;
    c->sweep.stepfactor = 4;
}

#endif
