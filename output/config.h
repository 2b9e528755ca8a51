/* SPDX-License-Identifier: MIT */
/*
 * The tuned config and the sweep results as files: colltune-config/1 (read and written,
 * strictly validated on read) and colltune-sweep/1 (every measured point with its sample
 * summary), both JSON through jansson with a stable key order; and the crossover table
 * `colltune show` and `colltune sweep` print.
 */
#ifndef CT_OUTPUT_CONFIG_H
#define CT_OUTPUT_CONFIG_H

#include <stdio.h>

#include "../tune/tune.h"
#include "../lib/err.h"
#include "../lib/parse.h"

#define CT_CONFIG_SCHEMA "colltune-config/1"
#define CT_SWEEP_SCHEMA "colltune-sweep/1"

/* The document as text (new memory, caller frees with free()); NULL only if out of memory. */
char *ct_config_json_dumps(const struct ct_config *c);
/* Written atomically (temp file + rename). */
int ct_config_json_write(const char *path, const struct ct_config *c, struct ct_err *err);
/* A copy of c through its document (new memory: ct_config_release, then free); NULL if it
 * does not read back. */
struct ct_config *ct_config_copy(const struct ct_config *c);
/* Set the range that starts at min_bytes in library lib's ruleset of (coll, nranks, nnodes)
 * back to the library's own choice, as verify does with a range it found slower or without a
 * gain (why, as ct_config_lib_demote; not recorded in a section kept as written): a range
 * named as the file's reader (NCCL's tuner plugin) saw it. A section colltune keeps as
 * written (NCCL's) is edited in its own words: "algo": "default", no "params", "id" 0,
 * "default" true, the old choice ("ring/LL128") as "runner_up". False when there is no such
 * range. */
bool ct_config_lib_demote_at(struct ct_config *c, const char *lib, enum ct_coll coll, int nranks,
                             int nnodes, uint64_t min_bytes, const char *why);
/* Cut library lib's range at min_bytes of its ruleset of (coll, nranks, nnodes) to [lo, hi),
 * as ct_config_lib_trim does by index; in a section colltune keeps as written (NCCL's) the
 * parts cut off become ranges of NCCL's own choice (or join a neighbour that is). False when
 * there is no such range or [lo, hi) is not inside it. */
/* A section colltune keeps as written (NCCL's, l->raw): its rules as rulesets (*out, n of
 * them: ct_ruleset_release each, then free), "ALGO/PROTO" or "default" as each range's algo
 * and its channel count as CT_P_CHANNELS, for showing it; the count. */
int ct_config_lib_raw_sets(const struct ct_librules *l, struct ct_ruleset **out);
bool ct_config_lib_trim_at(struct ct_config *c, const char *lib, enum ct_coll coll, int nranks,
                           int nnodes, uint64_t min_bytes, uint64_t lo, uint64_t hi);
/* Verify's verdict on ruleset s (the verified config's) applied to c, its copy: per rule k
 * (tune/stats.h), a slower rule with a cut (cut non-NULL, cut[k].rounds > 0) cut to it, the
 * other slower ones and those with no gain set back to the library's own choice; by index in
 * c's section (i, the set's index) or, i < 0, by s's shape and each rule's min_bytes (the
 * section colltune keeps as written). Counted in n by CT_JUDGED_* (tune/tune.h). c NULL:
 * nothing. */
struct ct_paired_cut;
void ct_config_lib_judged(struct ct_config *c, const char *lib, int i, const struct ct_ruleset *s,
                          const bool *slow, const bool *nogain, const struct ct_paired_cut *cut,
                          int n[CT_JUDGED_N]);
/* Whether lib's section (none: true) changes nothing a job runs, as ct_librules_keeps_own,
 * in a section kept as written (NCCL's) too: every range at the library's own choice. */
bool ct_config_lib_keeps_own(const struct ct_config *c, const char *lib);
/* Mark library lib's ruleset of (coll, nranks, nnodes) verified now with that geomean
 * (exported/default) and what the measure could tell, as ct_config_lib_verified does by index;
 * in a section colltune keeps as written (NCCL's) the rule gains "verified": {"at", "geomean"}
 * and "tell" where tell is in [1, 1e6]. A geomean that is not a positive number clears the
 * record instead, as does a rule of the library's own choice in every range. False when there
 * is no such set or nothing was marked. */
bool ct_config_lib_verified_at(struct ct_config *c, const char *lib, enum ct_coll coll, int nranks,
                               int nnodes, double geomean, double tell);

/*
 * Parse a colltune-config/1 document into c (initialised here; ct_config_release). Every
 * field the writer writes is required, with its type and range; names of collectives,
 * algorithms, datatypes, ops and parameters must be known; each ruleset's ranges must be
 * contiguous from 0 to null (infinity). Errors (CT_EINVAL) name the field:
 * "rules[0].ranges[2].max_bytes: expected an integer or null". Unknown keys are ignored.
 */
int ct_config_json_parse(const char *text, struct ct_config *c, struct ct_err *err);
int ct_config_json_read(const char *path, struct ct_config *c, struct ct_err *err);

/* colltune join: the configs paths[0..n) read and joined (ct_config_join, tune/tune.h) into c
 * (initialised here; ct_config_release), read back with every check of the reader and written
 * to out atomically. Nothing is written where one fails: CT_EINVAL (a config unusable or two
 * that do not join, naming the files) or the write's error; c is then empty. */
int ct_config_join_files(const char *const *paths, int n, const char *out, struct ct_config *c,
                         struct ct_err *err);

/*
 * colltune-sweep/1: cfg's metadata (version, date, fingerprint, settings, partial) and
 * every point. state: "running" (incremental save; partial is forced true), "done" or
 * "failed" (error says why), "interrupted" (ct_sweep_json_interrupted). Written atomically.
 */
int ct_sweep_json_write(const char *path, const struct ct_config *cfg,
                        const struct ct_sweep_point *pts, size_t n, const char *state,
                        const char *error, struct ct_err *err);
/* A results.json a stopped job left "running" (its ranks were stopped by a signal): state
 * "interrupted", error why, and *npts (may be NULL) its number of points. A file in another
 * state, or none, is left as it is (*npts = -1). */
int ct_sweep_json_interrupted(const char *path, const char *why, long *npts, struct ct_err *err);

/* "chunk=128K,pipeline=4" for the parameters that matter to algo (defaults filled). */
const char *ct_params_str(const char *algo, const struct ct_params *p, char *buf, size_t len);

/* The crossover table: per ruleset, ranges -> algorithm, parameters, confidence or tie. */
void ct_config_print(FILE *f, const struct ct_config *c);

#endif
