/* SPDX-License-Identifier: MIT */
/*
 * Parse-checks with the consumers' own rules, where the consumer cannot run here or before it
 * runs: NCCL's example tuner CSV parser (plugins/tuner/example/plugin.c, unchanged from 2.27.5
 * to 2.30.7: fgets into 256 bytes, '#' or empty lines skipped, strtok on ',', blanks trimmed,
 * 8..10 fields, unknown names silently become allreduce/ring/simple), Open MPI's classic rules
 * reader (fscanf "%li", '#' to end of line) and MPICH's csel tree rules (validate_tree).
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/config.h"
#include "output/export.h"

static void export(const char *cfg, const char *fmt, const char *version, int nranks,
                   struct ct_config *c, struct ct_export_out *out)
{
    struct ct_export_opts o;
    struct ct_err err = {0};
    cr_assert_eq(ct_config_json_read(cfg, c, &err), 0, "%s (run from the repository root)",
                 err.msg);
    ct_export_opts_init(&o);
    o.version = version;
    o.nranks = nranks;
    cr_assert_eq(ct_export_run(ct_emitter_find(fmt), c, &o, out, &err), 0, "%s", err.msg);
}

/* ---- NCCL example tuner ----------------------------------------------------------------- */

struct tline {
    char coll[32], algo[32], proto[32];
    unsigned long long min, max;
    int channels, nnodes, nranks;
};

/* The plugin's loadConfig, plus strictness where the plugin is silent: names must be known. */
static int parse_tuner(const char *text, struct tline *v, int cap)
{
    static const char *const colls[] = {"broadcast", "reduce", "allgather", "reducescatter",
                                        "allreduce"};
    static const char *const algos[] = {
        "tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"};
    static const char *const protos[] = {"ll", "ll128", "simple"};
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        cr_assert(strchr(line, '\n'), "a line longer than the plugin's 256-byte buffer: %.60s",
                  line);
        if (line[0] == '#' || line[0] == '\n')
            continue;
        line[strcspn(line, "\n")] = 0;
        char copy[256], *tok[10];
        int nt = 0;
        snprintf(copy, sizeof copy, "%s", line);
        for (char *t = strtok(copy, ","); t && nt < 10; t = strtok(NULL, ",")) {
            while (*t == ' ' || *t == '\t')
                t++;
            char *e = t + strlen(t) - 1;
            while (e > t && (*e == ' ' || *e == '\t'))
                *e-- = 0;
            tok[nt++] = t;
        }
        cr_assert(nt >= 8 && nt <= 10, "fields: %d in '%s'", nt, line);
        cr_assert_eq(strchr(line, ' '), NULL, "no blanks needed: '%s'", line);
        bool kc = false, ka = false, kp = false;
        for (size_t i = 0; i < 5; i++)
            kc |= !strcmp(tok[0], colls[i]);
        for (size_t i = 0; i < 7; i++)
            ka |= !strcmp(tok[3], algos[i]);
        for (size_t i = 0; i < 3; i++)
            kp |= !strcmp(tok[4], protos[i]);
        cr_assert(kc && ka && kp, "a name the plugin would silently replace: '%s'", line);
        cr_assert_lt(n, cap);
        struct tline *x = &v[n++];
        snprintf(x->coll, sizeof x->coll, "%s", tok[0]);
        snprintf(x->algo, sizeof x->algo, "%s", tok[3]);
        snprintf(x->proto, sizeof x->proto, "%s", tok[4]);
        x->min = strtoull(tok[1], NULL, 10);
        x->max = strtoull(tok[2], NULL, 10);
        x->channels = atoi(tok[5]);
        x->nnodes = atoi(tok[6]);
        x->nranks = atoi(tok[7]);
        cr_assert_leq(x->min, x->max, "'%s'", line);
        cr_assert_geq(x->channels, 0, "never -1 (the stock plugin makes it 1 channel)");
    }
    fclose(f);
    return n;
}

/* pluginGetCollInfo: the first line matching collective, size, nodes and ranks. */
static const struct tline *match(const struct tline *v, int n, const char *coll,
                                 unsigned long long bytes, int nnodes, int nranks)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].coll, coll) && bytes >= v[i].min && bytes <= v[i].max &&
            (v[i].nnodes == -1 || v[i].nnodes == nnodes) &&
            (v[i].nranks == -1 || v[i].nranks == nranks))
            return &v[i];
    return NULL;
}

Test(nccl_tuner, the_plugin_parses_every_line_and_picks_each_rules_algorithm)
{
    struct ct_config c;
    struct ct_export_out out;
    struct tline v[64];
    export("tests/fixtures/export/config-cluster.json", "nccl-tuner", NULL, 0, &c, &out);
    int n = parse_tuner(ct_text_str(&out.body), v, 64);
    cr_assert_eq(n, 9, "lines: %d", n);
    int checked = 0;
    for (int i = 0; i < c.nsets; i++) {
        const struct ct_ruleset *s = &c.sets[i];
        for (int k = 0; k < s->nrules; k++) {
            const struct ct_rule *r = &s->rules[k];
            const struct ct_algomap_row *m =
                s->coll == CT_ALLTOALL ? NULL
                                       : ct_algomap_find(CT_LIB_NCCL, s->coll, r->algo, NULL, NULL);
            uint64_t at[2] = {r->min_bytes,
                              r->max_bytes == CT_BYTES_INF ? 1ull << 40 : r->max_bytes - 1};
            for (int e = 0; e < 2; e++) {
                const struct tline *l =
                    match(v, n, ct_coll_name(s->coll), at[e], s->nnodes, s->nranks);
                if (!m) {
                    cr_assert_null(l, "%s %llu: no line for an unmapped rule",
                                   ct_coll_name(s->coll), (unsigned long long)at[e]);
                    continue;
                }
                cr_assert_not_null(l, "%s on %d ranks at %llu", ct_coll_name(s->coll), s->nranks,
                                   (unsigned long long)at[e]);
                cr_assert_str_eq(l->algo, m->target);
                cr_assert_str_eq(l->proto, "simple");
                checked++;
            }
        }
    }
    cr_assert_eq(checked, 18);
    /* a mapped line leaves the channels to NCCL (0), the ring rule with channels=2 too: a
     * host-memory ring's count says nothing of NCCL's (1 would cap every call) */
    const struct tline *l = match(v, n, "allreduce", 100000, 2, 8);
    cr_assert_eq(l->channels, 0);
    cr_assert_eq(match(v, n, "allreduce", 100, 2, 8)->channels, 0);
    cr_assert_null(match(v, n, "allreduce", 100, 2, 16), "other rank counts are not matched");
    cr_assert_eq(match(v, n, "allgather", 1ull << 34, 2, 8)->max, 18446744073709551615ull,
                 "open ranges end at 2^64-1, past 4 GiB");
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* ---- Open MPI classic rules ------------------------------------------------------------- */

/* ompi_coll_base_file_getnext_long: fscanf("%li"), else skip one character, '#' to EOL. */
static int getnext(FILE *f, long *v)
{
    for (;;) {
        int rc = fscanf(f, "%li", v);
        if (rc == EOF)
            return -1;
        if (rc == 1)
            return 0;
        int ch = fgetc(f);
        if (ch == EOF)
            return -1;
        if (ch == '#')
            while ((ch = fgetc(f)) != EOF && ch != '\n') {
            }
    }
}

Test(ompi_rules, the_classic_reader_gets_the_rules)
{
    struct ct_config c;
    struct ct_export_out out;
    export("tests/fixtures/export/config-cluster.json", "ompi-rules", NULL, 8, &c, &out);
    const char *t = ct_text_str(&out.body);
    for (const char *p = t; *p; p = strchr(p, '\n') + 1) /* %li reads 010 as octal */
        cr_assert(!(p[0] == '0' && p[1] >= '0' && p[1] <= '9'), "zero-padded: %.40s", p);
    FILE *f = fmemopen((void *)t, strlen(t), "r");
    long ncoll, id, ncs, cs, nms, ms, alg, fan, seg;
    bool bruck = false;
    cr_assert_eq(getnext(f, &ncoll), 0);
    cr_assert_eq(ncoll, 4);
    static const long ids[] = {2, 0, 12, 3};
    static const long max_alg[] = {6, 6, 4, 5}; /* Open MPI 4.1 */
    for (int i = 0; i < ncoll; i++) {
        const struct ct_ruleset *s = &c.sets[i];
        cr_assert_eq(getnext(f, &id), 0);
        cr_assert_eq(id, ids[i]);
        /* the fixed decision below and above the set's rank count, its rules at it */
        cr_assert(getnext(f, &ncs) == 0 && ncs == 3 && getnext(f, &cs) == 0 && cs == 0,
                  "three comm-size sections, from key 0");
        for (int k = 0; k < 5; k++)
            cr_assert(getnext(f, &ms) == 0 && ms == (k == 0), "one rule, alg 0 (%d)", k);
        cr_assert(getnext(f, &cs) == 0 && cs == s->nranks, "the rules at %d ranks", s->nranks);
        cr_assert_eq(getnext(f, &nms), 0);
        cr_assert_eq(nms, s->nrules);
        for (int k = 0; k < nms; k++) {
            cr_assert(getnext(f, &ms) == 0 && getnext(f, &alg) == 0 && getnext(f, &fan) == 0 &&
                      getnext(f, &seg) == 0);
            cr_assert_eq((uint64_t)ms, s->rules[k].min_bytes, "rule %d starts where colltune's", k);
            cr_assert(alg >= 0 && alg <= max_alg[i], "alg %ld", alg);
            const struct ct_algomap_row *m =
                ct_algomap_find(CT_LIB_OMPI, s->coll, s->rules[k].algo, NULL, NULL);
            cr_assert_eq(alg, m ? m->id : 0);
            cr_assert_eq(seg, alg == 5 ? 131072 : 0, "segsize only for segmented_ring");
            /* 6.0's allgather alg 2 (bruck-k-fanout) reads it as its radix: 0 never ends */
            cr_assert_eq(fan, id == 0 && alg == 2 ? 4 : 0, "faninout %ld for alg %ld", fan, alg);
            bruck |= id == 0 && alg == 2;
        }
        cr_assert(getnext(f, &cs) == 0 && cs == s->nranks + 1, "then from %d ranks", s->nranks + 1);
        for (int k = 0; k < 5; k++)
            cr_assert(getnext(f, &ms) == 0 && ms == (k == 0), "one rule, alg 0 (%d)", k);
    }
    cr_assert_eq(getnext(f, &ms), -1, "nothing after the last rule");
    cr_assert(bruck, "an allgather bruck rule among them");
    fclose(f);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* ---- MPICH csel tree ------------------------------------------------------------------ */

static bool boolean_key(const char *k)
{
    return !strncmp(k, "is_", 3) || !strncmp(k, "comm_type=", 10) ||
           !strncmp(k, "comm_hierarchy=", 15) || !strncmp(k, "collective=", 11);
}

static bool any_key(const char *k)
{
    size_t n = strlen(k);
    return !strcmp(k, "any") || (n > 4 && !strcmp(k + n - 4, "=any"));
}

/* validate_tree's rules, and every leaf a known algorithm. */
static void check_tree(json_t *node, const char *path, int *leaves)
{
    const char *key;
    json_t *v;
    bool chain = false, closed = false;
    size_t i = 0, n = json_object_size(node);
    json_object_foreach(node, key, v)
    {
        cr_assert(json_is_object(v), "%s/%s: values are objects", path, key);
        i++;
        if (!strncmp(key, "algorithm=", 10) || !strncmp(key, "composition=", 12)) {
            cr_assert_eq(n, 1, "%s: a leaf stands alone", path);
            (*leaves)++;
            continue;
        }
        cr_assert(!closed, "%s/%s: nothing may follow an =any key", path, key);
        if (any_key(key))
            closed = true;
        else if (!boolean_key(key))
            chain = true;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", path, key);
        const char *lt = strchr(key, '<');
        if (lt && lt[1] != 'p') {
            long long th = atoll(lt[1] == '=' ? lt + 2 : lt + 1);
            cr_assert(th >= 0 && th <= INT_MAX, "%s: MPICH reads thresholds with atoi", sub);
        }
        check_tree(v, sub, leaves);
    }
    cr_assert(!chain || closed, "%s: a predicate chain must end with an =any key", path);
}

static void leaves_named(json_t *node, const char *coll, const char *const *names, size_t nn)
{
    const char *key;
    json_t *v;
    json_object_foreach(node, key, v)
    {
        if (!strncmp(key, "algorithm=", 10) && strstr(key, coll)) {
            bool known = false;
            for (size_t i = 0; i < nn; i++)
                known |= !strcmp(key + 10, names[i]);
            cr_assert(known, "'%s' is not an MPICH 4.0 algorithm", key + 10);
        }
        leaves_named(v, coll, names, nn);
    }
}

Test(mpich_json, a_complete_valid_tree)
{
    struct ct_config c;
    struct ct_export_out out;
    json_error_t je;
    export("tests/fixtures/export/config-cluster.json", "mpich-json", NULL, 0, &c, &out);
    json_t *doc = json_loads(ct_text_str(&out.body), JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(doc, "%s", je.text);
    cr_assert_eq(json_object_size(doc), 44, "every collective MPICH selects for (incl. i*)");
    int leaves = 0;
    check_tree(doc, "", &leaves);
    cr_assert_gt(leaves, 150);
    /* src/mpi/coll/src/csel_container.c at v4.0.2 */
    static const char *const known[] = {"MPIR_Allreduce_intra_recursive_doubling",
                                        "MPIR_Allreduce_intra_reduce_scatter_allgather",
                                        "MPIR_Allreduce_intra_smp",
                                        "MPIR_Allreduce_inter_reduce_exchange_bcast",
                                        "MPIR_Allgather_intra_brucks",
                                        "MPIR_Allgather_intra_recursive_doubling",
                                        "MPIR_Allgather_intra_ring",
                                        "MPIR_Allgather_inter_local_gather_remote_bcast",
                                        "MPIR_Reduce_scatter_intra_noncommutative",
                                        "MPIR_Reduce_scatter_intra_pairwise",
                                        "MPIR_Reduce_scatter_intra_recursive_doubling",
                                        "MPIR_Reduce_scatter_intra_recursive_halving",
                                        "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter",
                                        "MPIR_Alltoall_intra_brucks",
                                        "MPIR_Alltoall_intra_pairwise",
                                        "MPIR_Alltoall_intra_pairwise_sendrecv_replace",
                                        "MPIR_Alltoall_intra_scattered",
                                        "MPIR_Alltoall_inter_pairwise_exchange"};
    static const char *const colls[] = {"MPIR_Allreduce_", "MPIR_Allgather_",
                                        "MPIR_Reduce_scatter_in", "MPIR_Alltoall_"};
    for (size_t i = 0; i < 4; i++)
        leaves_named(doc, colls[i], known, sizeof known / sizeof known[0]);
    /* the tuned part: 8- and 16-rank allreduce rules behind the commutativity guard */
    json_t *ar = json_object_get(
        json_object_get(json_object_get(doc, "collective=allreduce"), "comm_type=intra"),
        "is_commutative=yes");
    cr_assert_not_null(json_object_get(ar, "comm_size<=8"));
    cr_assert_not_null(json_object_get(ar, "comm_size<=16"));
    cr_assert_not_null(json_object_get(json_object_get(ar, "comm_size<=8"), "avg_msg_size<4096"));
    json_decref(doc);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* The composition leaves under AllReduce's intra-node subtree of a CH4 tree, in file order. */
static void compositions(json_t *node, char *buf, size_t len)
{
    const char *key;
    json_t *v;
    json_object_foreach(node, key, v)
    {
        if (!strncmp(key, "composition=MPIDI_Allreduce_intra_composition_", 46))
            snprintf(buf + strlen(buf), len - strlen(buf), "%s ", key + 46);
        compositions(v, buf, len);
    }
}

/* The measured MPICH section of 2 ranks: AllReduce recursive_doubling, auto, default;
 * AllGather ring, default. */
static void mpich_2ranks(struct ct_config *c)
{
    struct ct_err err = {0};
    cr_assert_eq(ct_config_json_read("tests/fixtures/export/config-mpich-2ranks.json", c, &err), 0,
                 "%s", err.msg);
}

/* MPICH reads a tree's thresholds as int: a measured range that ends above INT_MAX is the
 * last key ("=any"), and the measured ranges above it are said in a note, not dropped
 * silently. */
Test(mpich_json, measured_ranges_past_int_are_said)
{
    struct ct_config c;
    struct ct_export_out out;
    struct ct_export_opts o;
    struct ct_err err = {0};
    mpich_2ranks(&c);
    struct ct_ruleset *ag = &c.libs[0].sets[1];
    cr_assert_eq(ag->coll, CT_ALLGATHER);
    ag->rules[0].max_bytes = ag->rules[1].min_bytes = 3ull << 30;
    snprintf(ag->rules[1].algo, sizeof ag->rules[1].algo, "brucks");
    ag->rules[1].id = 1;
    ct_export_opts_init(&o);
    o.path = "FILE";
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), 0, "%s",
                 err.msg);
    bool said = false;
    for (size_t i = 0; i < out.nnotes; i++)
        said = said || (strstr(out.notes[i], "allgather on 2 ranks") &&
                        strstr(out.notes[i], "MPICH reads thresholds as int"));
    cr_assert(said, "the range above 2 GiB is said");
    cr_assert_null(strstr(ct_text_str(&out.body), "total_msg_size<3221225472"),
                   "no threshold past int");
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* A measured AllReduce: MPICH's CH4 tree runs first, so the tuned ranges are sent to
 * composition beta (the MPIR tree) and the others keep MPICH's CH4 subtree; no device
 * collective is turned off. AllGather has one CH4 composition and needs nothing. */
Test(mpich_json, measured_allreduce_goes_past_the_device_layer_where_tuned)
{
    struct ct_config c;
    struct ct_export_out out;
    json_error_t je;
    struct ct_export_opts o;
    struct ct_err err = {0};
    mpich_2ranks(&c);
    ct_export_opts_init(&o);
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), CT_EINVAL,
                 "two files cannot go to standard output");
    cr_assert(strstr(err.msg, "FILE.ch4.json"), "%s", err.msg);
    cr_assert_eq(out.body.len, 0, "nothing kept");
    o.path = "FILE";
    o.one_file = true;
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), CT_EINVAL,
                 "nor to --push");
    o.one_file = false;
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), 0, "%s",
                 err.msg);
    const char *env = ct_text_str(&out.env);
    cr_assert_null(strstr(env, "DEVICE_COLLECTIVE"), "%s", env);
    cr_assert(strstr(env, "export MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE='FILE.ch4.json'"),
              "%s", env);
    cr_assert_str_eq(out.side_suffix, ".ch4.json");
    json_t *doc = json_loads(ct_text_str(&out.side), JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(doc, "%s", je.text);
    cr_assert_eq(json_object_size(doc), 17, "every collective of MPICH 4.0.2's CH4 tree");
    int leaves = 0;
    check_tree(doc, "", &leaves);
    json_t *ar = json_object_get(json_object_get(doc, "collective=allreduce"), "comm_type=intra");
    json_t *two = json_object_get(json_object_get(ar, "is_commutative=yes"), "comm_size<=2");
    char got[512] = "";
    cr_assert_null(json_object_get(two, "avg_msg_size<8192"),
                   "recursive_doubling's range and auto's: both the MPIR tree, one key");
    compositions(json_object_get(two, "avg_msg_size<1048576"), got, sizeof got);
    cr_assert_str_eq(got, "beta ", "recursive_doubling's and auto's ranges: the MPIR tree");
    got[0] = 0;
    compositions(json_object_get(two, "avg_msg_size=any"), got, sizeof got);
    cr_assert_str_eq(got, "gamma alpha beta beta ", "MPICH as shipped: its CH4 subtree");
    got[0] = 0;
    compositions(json_object_get(ar, "is_commutative=no"), got, sizeof got);
    cr_assert_str_eq(got, "gamma alpha beta beta ");
    json_decref(doc);
    ct_export_out_release(&out);
    ct_config_release(&c);

    /* AllReduce's auto alone is a change: MPICH as shipped runs the device layer's choice,
     * and only the CH4 tree's beta reaches the MPIR tree's own (auto) */
    mpich_2ranks(&c);
    ct_export_opts_init(&o);
    struct ct_ruleset *a = &c.libs[0].sets[0];
    cr_assert_eq(a->coll, CT_ALLREDUCE);
    cr_assert_str_eq(a->rules[1].algo, "auto");
    snprintf(a->rules[0].algo, sizeof a->rules[0].algo, "default");
    snprintf(c.libs[0].sets[1].rules[0].algo, sizeof c.libs[0].sets[1].rules[0].algo, "default");
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), CT_EINVAL,
                 "auto's range needs the CH4 file: two files");
    o.path = "FILE";
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), 0, "%s",
                 err.msg);
    doc = json_loads(ct_text_str(&out.side), JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(doc, "%s", je.text);
    ar = json_object_get(json_object_get(doc, "collective=allreduce"), "comm_type=intra");
    two = json_object_get(json_object_get(ar, "is_commutative=yes"), "comm_size<=2");
    got[0] = 0;
    compositions(json_object_get(two, "avg_msg_size<1048576"), got, sizeof got);
    cr_assert_str_eq(got, "beta ", "auto's range: the MPIR tree");
    cr_assert(strstr(ct_text_str(&out.env), "the CH4 tree sends it there"), "%s",
              ct_text_str(&out.env));
    json_decref(doc);
    ct_export_out_release(&out);
    ct_config_release(&c);

    /* only AllGather tuned: no CH4 file, so standard output carries it whole */
    mpich_2ranks(&c);
    ct_export_opts_init(&o);
    a = &c.libs[0].sets[0];
    for (int i = 0; i < 2; i++) /* recursive_doubling's range and auto's */
        snprintf(a->rules[i].algo, sizeof a->rules[i].algo, "default");
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(out.side.len, 0);
    cr_assert_null(strstr(ct_text_str(&out.env), "MPIR_CVAR_CH4"));
    cr_assert(strstr(ct_text_str(&out.body), "MPIR_Allgather_intra_ring"));
    ct_export_out_release(&out);

    /* env --rules-file writes both files and sets what mpich-json's own lines set */
    o.lib = CT_LIB_MPICH;
    o.rules_path = "/shared/m.json";
    snprintf(c.libs[0].sets[0].rules[0].algo, sizeof c.libs[0].sets[0].rules[0].algo,
             "recursive_doubling");
    cr_assert_eq(ct_export_run(ct_emitter_find("env"), &c, &o, &out, &err), 0, "%s", err.msg);
    struct ct_export_files f;
    ct_export_files(ct_emitter_find("env"), &out, "/shared/m.env", &f);
    cr_assert_eq(f.n, 3);
    cr_assert_str_eq(f.path[2], "/shared/m.json.ch4.json");
    cr_assert(strstr(ct_text_str(f.text[2]), "composition=MPIDI_Allreduce_intra_composition_beta"));
    cr_assert(
        strstr(ct_text_str(&out.body),
               "export MPIR_CVAR_CH4_COLL_SELECTION_TUNING_JSON_FILE='/shared/m.json.ch4.json'"));
    ct_export_files_release(&f);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* Neighbouring ranges of one algorithm (a range verify set back beside MPICH's own choice,
 * one beside the same row) are one key of the tree and one line of its map. */
Test(mpich_json, neighbours_of_one_algorithm_are_one_key)
{
    struct ct_config c;
    struct ct_export_out out;
    struct ct_export_opts o;
    struct ct_err err = {0};
    mpich_2ranks(&c);
    struct ct_ruleset *ar = &c.libs[0].sets[0]; /* recursive_doubling, auto, default */
    snprintf(ar->rules[1].algo, sizeof ar->rules[1].algo, "recursive_doubling");
    ar->rules[1].id = ar->rules[0].id;
    ct_export_opts_init(&o);
    o.path = "FILE";
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), 0, "%s",
                 err.msg);
    const char *body = ct_text_str(&out.body), *map = ct_text_str(&out.env);
    cr_assert_null(strstr(body, "avg_msg_size<8192"), "%s", body);
    cr_assert(strstr(body, "\"avg_msg_size<1048576\""), "%s", body);
    const char *line = strstr(map, "MPIR_Allreduce_intra_recursive_doubling (measured)");
    cr_assert(line && !strstr(line + 1, "MPIR_Allreduce_intra_recursive_doubling (measured)"),
              "one line: %s", map);
    cr_assert(strstr(map, "[0 B, 1 MiB): MPIR_Allreduce_intra_recursive_doubling"), "%s", map);
    ct_export_out_release(&out);
    ct_config_release(&c);
}

Test(mpich_json, version_41_renames_the_barrier)
{
    struct ct_config c;
    struct ct_export_out out;
    export("tests/fixtures/export/config-4ranks.json", "mpich-json", "4.1", 0, &c, &out);
    cr_assert(strstr(ct_text_str(&out.body), "MPIR_Barrier_intra_k_dissemination"));
    cr_assert_null(strstr(ct_text_str(&out.body), "\"algorithm=MPIR_Barrier_intra_dissemination"));
    cr_assert(strstr(ct_text_str(&out.body), "MPIR_Allreduce_intra_ring"), "ring from 4.1");
    ct_export_out_release(&out);
    ct_config_release(&c);
}

/* A measured leaf behind what MPICH's algorithm needs and does not check when the tree names
 * it: smp allreduce a node hierarchy (on a communicator without one it copies, no sum),
 * noncommutative reduce-scatter equal counts on a power of two (it asserts them). */
Test(mpich_json, measured_leaves_behind_their_guards)
{
    struct ct_config c;
    struct ct_export_out out;
    struct ct_export_opts o;
    struct ct_err err = {0};
    json_error_t je;
    mpich_2ranks(&c);
    struct ct_ruleset *ar = &c.libs[0].sets[0], *rs = &c.libs[0].sets[1];
    snprintf(ar->rules[0].algo, sizeof ar->rules[0].algo, "smp");
    rs->coll = CT_REDUCESCATTER;
    snprintf(rs->rules[0].algo, sizeof rs->rules[0].algo, "noncommutative");
    ct_export_opts_init(&o);
    o.path = "FILE";
    cr_assert_eq(ct_export_run(ct_emitter_find("mpich-json"), &c, &o, &out, &err), 0, "%s",
                 err.msg);
    json_t *doc = json_loads(ct_text_str(&out.body), JSON_REJECT_DUPLICATES, &je);
    cr_assert_not_null(doc, "%s", je.text);
    int leaves = 0;
    check_tree(doc, "", &leaves);
    json_t *a = json_object_get(
        json_object_get(
            json_object_get(
                json_object_get(json_object_get(doc, "collective=allreduce"), "comm_type=intra"),
                "is_commutative=yes"),
            "comm_size<=2"),
        "avg_msg_size<8192");
    cr_assert_not_null(json_object_get(json_object_get(a, "comm_hierarchy=parent"),
                                       "algorithm=MPIR_Allreduce_intra_smp"),
                       "smp under comm_hierarchy=parent");
    cr_assert_not_null(json_object_get(a, "comm_hierarchy=any"), "MPICH's own tree beside it");
    json_t *r = json_object_get(
        json_object_get(
            json_object_get(json_object_get(json_object_get(doc, "collective=reduce_scatter"),
                                            "comm_type=intra"),
                            "is_commutative=yes"),
            "comm_size<=2"),
        "total_msg_size<16384");
    json_t *regular = json_object_get(r, "is_block_regular=yes");
    cr_assert_not_null(json_object_get(json_object_get(regular, "comm_size=pow2"),
                                       "algorithm=MPIR_Reduce_scatter_intra_noncommutative"),
                       "noncommutative under is_block_regular=yes, comm_size=pow2");
    cr_assert_not_null(json_object_get(regular, "comm_size=any"));
    cr_assert_not_null(json_object_get(r, "is_block_regular=no"), "unequal counts: MPICH's");
    json_decref(doc);
    ct_export_out_release(&out);
    ct_config_release(&c);
}
