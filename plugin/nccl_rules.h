/* SPDX-License-Identifier: MIT */
/*
 * The NCCL section of a colltune config ("libraries": [{"library": "nccl", "rules": [...]}]),
 * read strictly with jansson, and the lookup the tuner plugin does per call. Self-contained
 * (libc + jansson) so that the plugin needs nothing else of colltune. Errors come back as one
 * line naming the field ("libraries[0].rules[2].ranges[1].params.proto: ...").
 */
#ifndef CT_PLUGIN_NCCL_RULES_H
#define CT_PLUGIN_NCCL_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_NR_INF UINT64_MAX /* max_bytes null */

struct ct_nr_range {
    uint64_t lo, hi; /* [lo, hi) in NCCL nBytes; hi CT_NR_INF: no upper end */
    bool keep;       /* "default": true: NCCL's own choice */
    int algo, proto; /* NCCL_ALGO_*, NCCL_PROTO_* (unset when keep) */
    int channels;    /* 0: NCCL's own channel count */
};

struct ct_nr_rule {
    int func; /* ncclFunc_t */
    long nnodes, nranks;
    int nranges;
    struct ct_nr_range *ranges; /* sorted, disjoint */
    /* sweep --verify --lib nccl's record, "verified": {"at", "geomean", "tell"}: when ("" never
     * verified) and the sizes' geomean exported/default */
    char verified_at[24];
    double verified_geomean;
    double verified_tell; /* what that verify could tell; 0: not recorded */
};

struct ct_nr_table {
    bool found;       /* the config has an NCCL section */
    char version[32]; /* its "version" ("" if none) */
    int nrules;
    struct ct_nr_rule *rules;
};

/* Read the NCCL section of the config at path into t (t->found false if it has none).
 * 0, or -1 with msg filled (t empty). */
int ct_nr_load(const char *path, struct ct_nr_table *t, char *msg, size_t len);
void ct_nr_free(struct ct_nr_table *t);

/* The range of the first rule for (func, nranks, nnodes) that holds nbytes, or NULL. */
const struct ct_nr_range *ct_nr_match(const struct ct_nr_table *t, int func, size_t nranks,
                                      size_t nnodes, size_t nbytes);

/* NCCL_ALGO_* / NCCL_PROTO_* of a name ("ring", "nvls_tree"; "LL", "LL128", "Simple", any
 * case), or -1; and back. */
int ct_nr_algo(const char *name);
int ct_nr_proto(const char *name);
const char *ct_nr_algo_name(int algo);
const char *ct_nr_proto_name(int proto);
const char *ct_nr_func_name(int func);

#endif
