/* SPDX-License-Identifier: MIT */
/* What `colltune sweep` leaves behind and prints (see sweep_out.h). */
#include "sweep_out.h"

#include "config.h"
#include "report.h"

#include "../lib/file.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* The files a sweep leaves in its folder (ct_sweep_outputs_write, ct_report_write) */
static const char *const out_files[] = {"results.json", "config.json", "points.csv", "report.html"};

int ct_sweep_outputs_check(const char *dir, struct ct_err *err)
{
    char path[4200];
    for (size_t i = 0; i < sizeof out_files / sizeof *out_files; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, out_files[i]);
        CT_TRY(ct_file_check_writable(path, err));
    }
    return 0;
}

/* dir/name removed, where there is one (an earlier sweep's, in a folder reused). */
static int remove_in(const char *dir, const char *name, struct ct_err *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (unlink(path) < 0 && errno != ENOENT)
        return ct_err_set(err, CT_EIO, "cannot remove %s: %s", path, strerror(errno));
    return 0;
}

int ct_sweep_outputs_running(const char *dir, const struct ct_config *meta,
                             const struct ct_sweep_point *pts, size_t n, bool first,
                             struct ct_err *err)
{
    char path[4200];
    for (size_t i = 1; first && i < sizeof out_files / sizeof *out_files; i++)
        CT_TRY(remove_in(dir, out_files[i], err));
    /* and verify's copy of the earlier config (NAME.verified.json), which export would take */
    if (first)
        CT_TRY(remove_in(dir, "config.verified.json", err));
    snprintf(path, sizeof path, "%s/results.json", dir);
    return ct_sweep_json_write(path, meta, pts, n, "running", NULL, err);
}

static long stopped(const char *dir, int code, char *path, size_t len)
{
    char why[96];
    struct ct_err err = {0};
    long n = -1;
    if (!dir || code <= 128 || code >= 128 + 65)
        return -1;
    snprintf(path, len, "%s/results.json", dir);
    snprintf(why, sizeof why, "interrupted by signal %d (%s)", code - 128, strsignal(code - 128));
    (void)ct_sweep_json_interrupted(path, why, &n, &err);
    return n;
}

void ct_sweep_outputs_stopped(const char *dir, int code)
{
    char path[4200];
    (void)stopped(dir, code, path, sizeof path);
}

void ct_sweep_outputs_stop_note(void *dir, int sig, char *note, size_t len)
{
    char path[4200];
    long n = stopped(dir, 128 + sig, path, sizeof path);
    if (n < 0)
        snprintf(note, len, "%s", "");
    else
        snprintf(note, len, "; its %ld point%s kept in %s", n, n == 1 ? " is" : "s are", path);
}

int ct_sweep_outputs_write(const char *dir, const struct ct_config *meta,
                           const struct ct_sweep_point *pts, size_t n, const char *status,
                           const char *msg, struct ct_err *err)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/results.json", dir);
    CT_TRY(ct_sweep_json_write(path, meta, pts, n, status, msg, err));
    CT_TRY(remove_in(dir, "config.verified.json", err)); /* an earlier config's */
    snprintf(path, sizeof path, "%s/config.json", dir);
    if (meta->nsets || meta->nlibs)
        CT_TRY(ct_config_json_write(path, meta, err));
    else
        CT_TRY(remove_in(dir, "config.json", err));
    return ct_report_write(dir, meta, pts, n, err);
}

void ct_sweep_summary_print(FILE *out, FILE *errf, const char *dir, const struct ct_config *meta,
                            const struct ct_sweep_result *res, bool failed, uint64_t maxbytes)
{
    if (meta->nsets || meta->nlibs) {
        ct_config_print(out, meta);
        fprintf(out, "\n");
    }
    if (failed)
        fprintf(errf,
                "colltune sweep: the results so far (%zu points) saved in %s/results.json; no "
                "config.json: the sweep stopped before it measured every size\n",
                res->n, dir);
    uint64_t top = 0;
    for (size_t i = 0; i < res->n; i++)
        top = res->pts[i].size > top ? res->pts[i].size : top;
    if (!failed && res->budget_out) {
        char a[32], b[32], what[96] = "some sizes or candidates were skipped";
        if (top < maxbytes)
            snprintf(what, sizeof what, "sizes measured up to %s of %s",
                     ct_bytes_str(top, a, sizeof a), ct_bytes_str(maxbytes, b, sizeof b));
        fprintf(out,
                "note: the budget was short for the full plan (%s); a larger --budget measures "
                "more\n",
                what);
    }
    if (meta->nsets || meta->nlibs) /* ct_sweep_outputs_write wrote it */
        fprintf(out, "wrote %s/config.json (tuned config), ", dir);
    else
        fprintf(out, "no config.json (nothing tuned); wrote ");
    fprintf(out, "%s/results.json (%zu points), %s/report.html, %s/points.csv\n", dir, res->n, dir,
            dir);
}

int ct_regret_print(FILE *f, const char *path, const struct ct_config *conf, int nranks,
                    const struct ct_sweep_regret *g, size_t n, double max_regret,
                    const struct ct_algo *const *algos, size_t nalgos)
{
    int bad = 0;
    size_t worst = n;
    char against[512] = "every alternative";
    for (size_t i = 0, off = 0; i < nalgos && off < sizeof against; i++)
        off += (size_t)snprintf(against + off, sizeof against - off, "%s%s%s", i ? "," : "",
                                algos[i]->name, i + 1 < nalgos ? "" : " (--algos)");
    fprintf(f,
            "verifying %s: %d ranks, midpoint of every range, chosen vs %s;\n"
            "a choice slower than %.2f is measured again with the winner, up to %d rounds in\n"
            "alternating order: regret = ratio of those rounds' geometric means, [its interval:\n"
            "99.5%% before the last round, 96%% at it]; it fails where the whole interval lies\n"
            "above %.2f\n\n",
            path, nranks, against, max_regret, CT_VERIFY_ROUNDS - 1, max_regret);
    fprintf(f, "%-13s %-21s %10s  %-12s %10s  %-12s %10s  %s\n", "collective", "range", "at",
            "chosen", "time(us)", "best", "time(us)", "regret");
    for (size_t i = 0; i < n; i++) {
        const struct ct_rule *r = &conf->sets[g[i].set].rules[g[i].rule];
        char lo[32], hi[32], at[32], range[64], rounds[64] = "";
        snprintf(range, sizeof range, "%s..%s", ct_bytes_str(r->min_bytes, lo, sizeof lo),
                 ct_bytes_str(r->max_bytes, hi, sizeof hi));
        bad += g[i].significant;
        if (g[i].rounds > 1)
            snprintf(rounds, sizeof rounds, " [%.2f, %.2f] (%d rounds)", g[i].lo, g[i].hi,
                     g[i].rounds);
        if (worst == n || g[i].regret > g[worst].regret)
            worst = i;
        fprintf(f, "%-13s %-21s %10s  %-12s %10.2f  %-12s %10.2f  %.2f%s%s\n",
                ct_coll_name(conf->sets[g[i].set].coll), range,
                ct_bytes_str(g[i].size, at, sizeof at), g[i].chosen.algo, g[i].chosen_us,
                g[i].best.algo, g[i].best_us, g[i].regret, rounds,
                g[i].significant           ? "  FAIL"
                : g[i].regret > max_regret ? "  (within noise)"
                                           : "");
    }
    for (int i = 0; i < conf->nsets; i++) /* a joined config's sets of other rank counts */
        if (conf->sets[i].nranks != nranks)
            fprintf(f, "%-13s on %d ranks: not verified here (this run has %d ranks)\n",
                    ct_coll_name(conf->sets[i].coll), conf->sets[i].nranks, nranks);
    double w = worst < n ? g[worst].regret : 1;
    fprintf(f, "\nworst regret %.2f (limit %.2f): %s\n", w, max_regret,
            bad              ? "some choices are slower than an alternative beyond the noise"
            : w > max_regret ? "ok (above the limit within the noise of the rounds)"
                             : "ok");
    return bad;
}
