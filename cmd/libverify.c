/* SPDX-License-Identifier: MIT */
/*
 * sweep --verify CONFIG --lib LIB: the library loading the file `export` writes from CONFIG's
 * measured section (A: the export's loader variables set) against its defaults (B: cleared),
 * paired launches (tune/paired.c) of `colltune run --lib LIB --sizes ...` at the sweep's sizes
 * and every range's midpoint (ct_paired_sizes), warmed up past the library's one-time costs.
 * Per size the ratio A/B with a 95% interval over the pairs and, where the file keeps the
 * library's choice near it, against those sizes in the same launches (ct_paired_judge);
 * exit 3 when a size is slower than the defaults by > 3% beyond either interval. A rule that
 * does not show a gain of > 3% beyond its interval over its sizes (ct_paired_gains) is set
 * back to the library's choice in the copy verify writes, as a slower one is. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../algos/coll.h"
#include "../backend/libmod.h"
#include "../lib/file.h"
#include "../lib/parse.h"
#include "../output/config.h"
#include "../output/export.h"
#include "../output/sweep_out.h"
#include "../tune/stats.h"
#include "cmd.h"
#include "librun.h"

#define MAXSZ 128
#define WARM_MAX (256u << 10)

struct side {
    const struct ct_libmod *m;
    const struct ct_opts *o; /* --hosts, --no-bind */
    const struct ct_ruleset *s;
    const struct ct_loader *ld;
    const char *timeout; /* run's --timeout: verify's own */
};

/* One run of `run --lib` over the sizes with -w warm, the export's loader variables set (A)
 * or not (B); t[k] = out-of-place time at size k. */
static int run_part(const struct side *x, bool with, const uint64_t *sz, int nsz, double *t,
                    char *warm)
{
    const struct ct_ruleset *s = x->s;
    char n[16], sizes[MAXSZ * 24];
    size_t off = 0;
    for (int k = 0; k < nsz; k++)
        off += (size_t)snprintf(sizes + off, sizeof sizes - off, "%s%llu", k ? "," : "",
                                (unsigned long long)sz[k]);
    snprintf(n, sizeof n, "%d", s->nranks);
    char *args[] = {"run",
                    "--lib",
                    (char *)x->m->name,
                    "--coll",
                    (char *)ct_coll_name(s->coll),
                    "--sizes",
                    (char *)sizes,
                    "-n",
                    "20",
                    "-w",
                    warm,
                    "-c",
                    "0",
                    "-d",
                    (char *)ct_dtype_name(s->dtype),
                    "-o",
                    (char *)ct_redop_name(s->op),
                    "--timeout",
                    (char *)x->timeout,
                    "--keep-rules"}; /* A: the file the loader variables name */
    ct_verify_side_env(x->m, x->ld, with);
    char *out;
    bool said;
    int rc = ct_lib_job(x->o, "sweep", s->nranks, (int)(sizeof args / sizeof args[0]) - !with, args,
                        &out, &said),
        got = 0;
    for (char *line = out && !rc ? strtok(out, "\n") : NULL; line; line = strtok(NULL, "\n")) {
        unsigned long long size;
        double us;
        if (line[0] != '#' && sscanf(line, "%llu %*s %*s %*s %*s %*s %lf", &size, &us) == 2)
            for (int k = 0; k < nsz; k++)
                if (sz[k] == size) {
                    t[k] = us;
                    got++;
                }
    }
    free(out);
    if (said) /* interrupted, or the launcher could not bring the job up: said */
        return rc;
    if (rc != 0 || got != nsz)
        return ct_cmd_fail("sweep", rc == 2 ? CT_EXIT_USAGE : CT_EXIT_FAIL,
                           "--verify: a run with %s %s failed (exit %d, %d of %d sizes)",
                           x->m->title, with ? "and the exported file" : "defaults", rc, got, nsz);
    return 0;
}

/* One launch (ct_paired_launch_fn): the sizes up to WARM_MAX after 200 warmup calls each,
 * the larger ones after 3. A library's one-time costs (MPICH 4.0.2's recursive doubling read
 * 18 us at 128 B on 2 ranks after 3 warmup calls, 0.7 us after 100) are not what a job's
 * calls cost; 200 calls at 256 KiB take about 10 ms here. */
static int launch(void *ctx, bool with, const uint64_t *sz, int nsz, double *t)
{
    int small = 0, code;
    while (small < nsz && sz[small] <= WARM_MAX) /* sz is sorted */
        small++;
    code = small ? run_part(ctx, with, sz, small, t, "200") : 0;
    return code || small == nsz ? code
                                : run_part(ctx, with, sz + small, nsz - small, t + small, "3");
}

/* One ruleset: paired launches, then the table; 0, CT_EXIT_CHECK or a failure code. slow[r]:
 * rule r of s was slower than the defaults at a size it tunes; nogain[r]: it showed no gain;
 * cut[r]: a slower rule's cut to the sizes that gained (ct_verify_judge); *geo: the sizes'
 * geomean. */
static int verify_set(const struct side *base, const struct ct_config *c,
                      const struct ct_ruleset *s, bool *slow, bool *nogain,
                      struct ct_paired_cut *cut, double *geo)
{
    uint64_t sz[MAXSZ];
    bool own[MAXSZ]; /* the file keeps the library's choice there: both sides run the same */
    const struct ct_rule *rule[MAXSZ];
    int group[MAXSZ], nsz = ct_paired_sizes(&c->sweep, s, sz, MAXSZ);
    ct_verify_rules(s, sz, nsz, rule, own, group);
    struct side x = *base;
    x.s = s;
    struct ct_paired pr;
    int code = ct_paired_measure(sz, nsz, own, group, WARM_MAX, launch, &x, &pr);
    *geo = 0;
    if (!code)
        code = ct_verify_judge(base->m->title, "alternating launches (A B B A A B ...)", s, sz, nsz,
                               rule, own, &pr, true, slow, nogain, cut, geo);
    ct_paired_release(&pr);
    return code;
}

int ct_libverify(const struct ct_opts *o, const struct ct_config *c, const char *path)
{
    const struct ct_libmod *m = ct_libmod_find(o->lib);
    const struct ct_librules *l = ct_config_lib(c, o->lib);
    const struct ct_emitter *e = ct_emitter_find(m->format);
    struct ct_err err = {0};
    /* across hosts the library reads the file on every host: beside the config (shared) */
    char *mod = NULL, *tmp = o->hosts ? ct_path_sibling(path, ".colltune-verify-XXXXXX")
                                      : ct_xstrdup("/tmp/colltune-verify-XXXXXX");
    int code = 0, verified = 0, nstamped = 0, n[3] = {0}; /* n: slower, no gain, cut */
    /* CONFIG with the slower ranges and those with no gain set back to the defaults and the
     * sets found no slower marked verified */
    struct ct_config *fixed = NULL;
    if (!l)
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE,
                           "--verify: '%s' has no measured %s section (colltune sweep --lib %s)",
                           path, m->title, m->name);
    else if (ct_libmod_path(m, &mod, &err) < 0 || ct_libmod_launcher_check(m, &err) < 0)
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE, "%s", err.msg);
    free(mod);
    if (code) {
        free(tmp);
        return code;
    }
    struct ct_export_opts eo;
    struct ct_export_out out;
    ct_export_opts_init(&eo);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return code;
    }
    eo.path = tmp;
    int rc = ct_export_run(e, c, &eo, &out, &err);
    struct ct_export_files f = {0}; /* the file and what goes beside it (MPICH's CH4 tree) */
    if (rc == CT_EUNSUPP && out.unchanged)
        printf("the export keeps %s's defaults everywhere: nothing to verify (%s)\n", m->title,
               err.msg);
    else if (rc < 0)
        code = ct_cmd_fail("sweep", CT_EXIT_USAGE, "--verify: %s", err.msg);
    else {
        ct_export_files(e, &out, tmp, &f);
        if (ct_export_files_write(&f, &err) < 0)
            code = ct_cmd_fail("sweep", CT_EXIT_FAIL, "%s", err.msg);
    }
    close(fd);
    if (rc == 0 && !code) {
        struct ct_loader *ld = ct_xmalloc(sizeof *ld);
        char tmo[32];
        snprintf(tmo, sizeof tmo, "%g", o->timeout_s);
        ct_export_loader(&out, ld);
        printf("verify %s with %s %s (measured section) against its defaults\n", path, l->name,
               l->version);
        for (int i = 0; i < ld->n; i++)
            printf("  with the export: %s=%s\n", ld->name[i], ld->value[i]);
        printf("\n");
        for (int i = 0; i < l->nsets && code != CT_EXIT_FAIL && code != CT_EXIT_USAGE; i++) {
            const struct ct_ruleset *s = &l->sets[i];
            bool left = false; /* not in the file: a job of its shape runs another set's */
            for (int k = 0; k < out.nleft_out; k++)
                left |= out.left_out[k] == s;
            if (left || (o->hosts ? s->nranks != o->hosts_ranks : s->nnodes > 1)) {
                printf("%s on %d ranks, %d nodes: not verified here (%s)\n\n",
                       ct_coll_name(s->coll), s->nranks, s->nnodes,
                       left       ? "the file carries one rule set per collective, not this"
                       : o->hosts ? "--hosts places other ranks"
                                  : "--hosts LIST runs it across hosts");
                continue;
            }
            bool *slow = ct_xcalloc((size_t)s->nrules, sizeof *slow),
                 *nogain = ct_xcalloc((size_t)s->nrules, sizeof *nogain);
            struct ct_paired_cut *cut = ct_xcalloc((size_t)s->nrules, sizeof *cut);
            double geo;
            int r = verify_set(&(struct side){m, o, NULL, ld, tmo}, c, s, slow, nogain, cut, &geo);
            if (r && (r != CT_EXIT_CHECK || !code)) /* a failure outweighs exit 3 */
                code = r;
            verified++;
            fixed = fixed ? fixed : ct_config_copy(c);
            ct_config_lib_judged(fixed, m->name, i, s, slow, nogain, cut, n);
            /* after the demotions, which clear it: a set found slower loses a record it had
             * from an earlier verify; one that only lost rules with no gain keeps this one */
            nstamped += fixed && ct_config_lib_verified(fixed, m->name, i, r ? 0 : geo);
            free(slow);
            free(nogain);
            free(cut);
        }
        free(ld);
        if (!verified && !code)
            code = ct_cmd_fail(
                "sweep", CT_EXIT_USAGE, "--verify: '%s' has no %s section for %s", path, m->title,
                o->hosts ? "the ranks --hosts places" : "one host (--hosts LIST runs the others)");
        if (code == CT_EXIT_CHECK)
            fprintf(stderr,
                    "colltune sweep: the exported file is slower than %s's defaults at "
                    "some size (by more than 3%%, beyond the intervals)\n",
                    m->title);
        if (fixed && (nstamped || n[0] || n[1] || n[2]) && (code == 0 || code == CT_EXIT_CHECK))
            code = ct_verify_write_fixed(fixed, path, n[0], n[1], n[2], nstamped, m->title, code);
    }
    ct_export_out_release(&out);
    if (fixed)
        ct_config_release(fixed);
    free(fixed);
    unlink(tmp);
    for (int i = 1; i < f.n; i++)
        unlink(f.path[i]);
    ct_export_files_release(&f);
    free(tmp);
    fflush(stdout);
    return code;
}
