/* SPDX-License-Identifier: MIT */
/* `colltune validate`: ceilings from topologies, and the diagnosis of pair and collective
 * measurements by the pair structure (host, NIC, link) with counter and probe evidence. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

static const struct {
    const char *kind;
    double eff;
} efficiencies[] = {
    /* shm against a local chunked memcpy: the exchange copies across cores and hands every
     * chunk over (65-90% measured on a 2-core VM, 1-4 MiB); tcp/fabric against the line rate */
    {"shm", 0.65},
    {"loop", 1.0},
    {"tcp", 0.9},
    {"fabric", 0.9},
    {"ib", 0.9},
    /* a GPU's copy engines against the link's rate: assumed, not measured here (the one
     * sourced figure: nvbandwidth's example output, 55.6 GB/s host to device, 0.88 of PCIe
     * 5.0 x16's 63 GB/s); NVLink the same until a GPU host measures it */
    {"pcie", 0.85},
    {"nvlink", 0.85},
};

double ct_val_efficiency(const char *transport, const struct ct_val_eff *over, size_t n_over)
{
    double e = 0;
    /* "shm+tcp": the lowest of the kinds named; a kind's override replaces its table row */
    for (size_t i = 0; i < sizeof efficiencies / sizeof efficiencies[0]; i++) {
        if (!transport || !strstr(transport, efficiencies[i].kind))
            continue;
        double k = efficiencies[i].eff;
        for (size_t j = 0; j < n_over; j++)
            if (!strcmp(over[j].kind, efficiencies[i].kind))
                k = over[j].eff;
        e = e == 0 || k < e ? k : e;
    }
    for (size_t j = 0; e == 0 && j < n_over; j++) /* a kind the table lacks */
        if (transport && strstr(transport, over[j].kind))
            e = over[j].eff;
    return e > 0 ? e : 0.9;
}

const char *ct_val_state_name(enum ct_val_state s)
{
    static const char *const n[] = {"ok", "slow", "failed", "unknown"};
    return (unsigned)s < 4 ? n[s] : "?";
}

const char *ct_val_find_name(enum ct_val_find_kind k)
{
    static const char *const n[] = {"host",  "link",   "nic", "failed", "collective",
                                    "probe", "hetero", "gpu", "pair"};
    return (unsigned)k < sizeof n / sizeof n[0] ? n[k] : "?";
}

void ct_val_report_init(struct ct_val_report *r)
{
    memset(r, 0, sizeof *r);
    r->min_pct = 80;
}

void ct_val_report_release(struct ct_val_report *r)
{
    free(r->unit);
    free(r->pair);
    free(r->rail);
    free(r->coll);
    free(r->finding);
    free(r->gcopy);
    ct_val_report_init(r);
}

size_t ct_val_report_find(struct ct_val_report *r, enum ct_val_find_kind k, int unit, int unit_b,
                          int nic, const char *fmt, ...)
{
    r->finding = ct_xrealloc(r->finding, (r->n_finding + 1) * sizeof *r->finding);
    struct ct_val_finding *f = &r->finding[r->n_finding];
    f->kind = k;
    f->unit = unit;
    f->unit_b = unit_b;
    f->nic = nic;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
    return r->n_finding++;
}

static void append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 3 >= len)
        return;
    if (n) {
        buf[n++] = ';';
        buf[n++] = ' ';
        buf[n] = 0;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, len - n, fmt, ap);
    va_end(ap);
}

/* ==== Expectation ========================================================================= */

static bool usable_nic(const struct ct_nic *n)
{
    if (!strcmp(n->netdev, "lo"))
        return false;
    return !n->oper[0] || strcmp(n->oper, "down") != 0 || n->dev[0];
}

void ct_val_expect_unit(const struct ct_topo *t, const char *transport, double eff,
                        double link_gbps, struct ct_val_unit *u)
{
    struct ct_warning *w = NULL;
    size_t nw = t ? ct_warnings_compute(t, &w) : 0;
    u->n_nic = 0;
    u->ceil_gbs = 0;
    const char *best = NULL;
    double best_rate = 0;
    for (size_t i = 0; t && i < t->n_nic && u->n_nic < CT_VAL_MAX_NICS; i++) {
        const struct ct_nic *n = &t->nic[i];
        if (!usable_nic(n))
            continue;
        struct ct_val_nic *v = &u->nic[u->n_nic++];
        memset(v, 0, sizeof *v);
        if (n->dev[0])
            snprintf(v->name, sizeof v->name, "%.24s:%d", n->dev, n->port);
        else
            snprintf(v->name, sizeof v->name, "%s", n->netdev);
        snprintf(v->netdev, sizeof v->netdev, "%.31s", n->netdev);
        v->line_gbps = ct_nic_data_gbps(n); /* what the port carries, less its line code */
        /* the probe's verdict on this port */
        for (size_t k = 0; k < nw; k++) {
            if (w[k].kind != CT_WARN_PORT_DEGRADED && w[k].kind != CT_WARN_PORT_DOWN)
                continue;
            if ((n->dev[0] && strstr(w[k].msg, n->dev)) ||
                (n->netdev[0] && strstr(w[k].msg, n->netdev))) {
                v->degraded = true;
                snprintf(v->probe_msg, sizeof v->probe_msg, "%.150s", w[k].msg);
            }
        }
        if (v->line_gbps > best_rate && !v->degraded) {
            best_rate = v->line_gbps;
            best = v->name;
        }
    }
    free(w);
    if (link_gbps > 0) {
        u->ceil_gbs = link_gbps / 8 * eff;
        snprintf(u->formula, sizeof u->formula, "--link-gbps %g Gb/s / 8 x %.2f (%s) = %.3f GB/s",
                 link_gbps, eff, transport, u->ceil_gbs);
    } else if (best) {
        u->ceil_gbs = best_rate / 8 * eff;
        snprintf(u->formula, sizeof u->formula, "%s %g Gb/s / 8 x %.2f (%s) = %.3f GB/s", best,
                 best_rate, eff, transport, u->ceil_gbs);
    } else {
        snprintf(u->formula, sizeof u->formula,
                 "ceiling unknown: no NIC with a known rate (state it with --link-gbps)");
    }
}

double ct_val_coll_ceiling(const char *coll, int nunits, int per, double b, char *formula,
                           size_t len)
{
    if (b <= 0 || nunits < 2) {
        snprintf(formula, len, "ceiling unknown");
        return 0;
    }
    if (per < 1)
        per = 1;
    int n = nunits * per;
    if (!strcmp(coll, "alltoall")) {
        double c = b * (n - 1) / ((double)per * (n - per));
        snprintf(formula, len, "link %.3f x (n-1)/(per x (n-per)) = %.3f x %d/(%d x %d) = %.3f GB/s",
                 b, b, n - 1, per, n - per, c);
        return c;
    }
    snprintf(formula, len, "ring: slowest link %.3f GB/s (each unit sends and receives once per "
             "step)", b);
    return b;
}

/* ==== Diagnosis =========================================================================== */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (!n)
        return -1;
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void judge_pairs(struct ct_val_report *r)
{
    for (size_t i = 0; i < r->n_pair; i++) {
        struct ct_val_pair *p = &r->pair[i];
        double ca = r->unit[p->a].ceil_gbs, cb = r->unit[p->b].ceil_gbs;
        p->ceil_gbs = ca > 0 && cb > 0 ? fmin(ca, cb) : 0;
        p->pct = p->ceil_gbs > 0 && p->gbs >= 0 ? 100 * p->gbs / p->ceil_gbs : -1;
        if (p->gbs < 0 || r->unit[p->a].dead || r->unit[p->b].dead)
            p->state = CT_VAL_FAILED;
        else if (p->ceil_gbs <= 0)
            p->state = CT_VAL_UNKNOWN;
        else
            p->state = p->pct < r->min_pct && !p->cleared ? CT_VAL_SLOW : CT_VAL_OK;
        if (p->state == CT_VAL_UNKNOWN)
            r->n_unknown++;
    }
}

/* Per unit, and per unit and NIC, up to two distinct partners of a pair measured fine (-1:
 * none): enough to say whether one other than a given unit is among them, in one pass over
 * the pairs (a scan of the pairs per question made the diagnosis quadratic in pairs: worked
 * out from the code for a rail down on 512 hosts x 8 rails, about 10^11 steps; not timed). */
struct fine_tab {
    int (*unit)[2];
    int (*nic)[CT_VAL_MAX_NICS][2];
};

static void fine_add(int *l, int q)
{
    if (l[0] == q || l[1] == q)
        return;
    if (l[0] < 0)
        l[0] = q;
    else if (l[1] < 0)
        l[1] = q;
}

static void fine_tab_build(const struct ct_val_report *r, struct fine_tab *f)
{
    f->unit = ct_xmalloc((r->n_unit + 1) * sizeof *f->unit);
    f->nic = ct_xmalloc((r->n_unit + 1) * sizeof *f->nic);
    memset(f->unit, 0xff, (r->n_unit + 1) * sizeof *f->unit); /* -1 everywhere */
    memset(f->nic, 0xff, (r->n_unit + 1) * sizeof *f->nic);
    for (size_t i = 0; i < r->n_pair; i++) {
        const struct ct_val_pair *p = &r->pair[i];
        if (p->state != CT_VAL_OK || p->a < 0 || p->b < 0 || (size_t)p->a >= r->n_unit ||
            (size_t)p->b >= r->n_unit)
            continue;
        fine_add(f->unit[p->a], p->b);
        fine_add(f->unit[p->b], p->a);
        if (p->nic_a >= 0 && p->nic_a < CT_VAL_MAX_NICS)
            fine_add(f->nic[p->a][p->nic_a], p->b);
        if (p->nic_b >= 0 && p->nic_b < CT_VAL_MAX_NICS)
            fine_add(f->nic[p->b][p->nic_b], p->a);
    }
}

/* Whether unit has a pair measured fine with a unit other than not_with (through its NIC nic;
 * any where nic < 0): the end of a slow pair that shows it can do better elsewhere. Blame
 * needs such a reference: between two hosts alone, or hosts none of whose partners has a
 * fine pair, which end is slow cannot be told. */
static bool fine_without(const struct fine_tab *f, int unit, int nic, int not_with)
{
    const int *l = nic >= 0 && nic < CT_VAL_MAX_NICS ? f->nic[unit][nic] : f->unit[unit];
    return (l[0] >= 0 && l[0] != not_with) || (l[1] >= 0 && l[1] != not_with);
}

/* Whether a partner of unit u on one of its slow pairs (through u's NIC nic; any where nic <
 * 0) has a pair measured fine without u (on its NIC of that pair where nic >= 0). */
static bool partner_fine(const struct ct_val_report *r, const struct fine_tab *f, int u, int nic)
{
    for (size_t i = 0; i < r->n_pair; i++) {
        const struct ct_val_pair *p = &r->pair[i];
        bool a = p->a == u && (nic < 0 || p->nic_a == nic);
        bool b = p->b == u && (nic < 0 || p->nic_b == nic);
        if (p->state == CT_VAL_SLOW && (a || b) &&
            fine_without(f, a ? p->b : p->a,
                         nic < 0 ? -1
                         : a     ? p->nic_b
                                 : p->nic_a,
                         u))
            return true;
    }
    return false;
}

/* Per unit: its numbers, and whether it is dead, failed or slow. explained[i] marks pairs a
 * unit or NIC verdict accounts for. */
static void judge_units(struct ct_val_report *r, const struct fine_tab *f, bool *explained)
{
    double *v = ct_xcalloc(r->n_pair + 1, sizeof *v), *l = ct_xcalloc(r->n_pair + 1, sizeof *l),
           *pc = ct_xcalloc(r->n_pair + 1, sizeof *pc);
    bool any_fine = false; /* a pair of the job measured fine: a reference exists */
    for (size_t i = 0; i < r->n_pair; i++)
        any_fine |= r->pair[i].state == CT_VAL_OK;
    for (size_t u = 0; u < r->n_unit; u++) {
        struct ct_val_unit *x = &r->unit[u];
        size_t nv = 0, nl = 0, npc = 0, total = 0, failed = 0, slow = 0, known = 0;
        int partner = -1, partners = 0; /* distinct partners of its judged pairs, 2 at most */
        int dead_with = -1; /* the failed host its pairs were with (one host dies in a run) */
        size_t n_dead = 0;  /* its pairs that failed with a failed partner */
        for (size_t i = 0; i < r->n_pair; i++) {
            const struct ct_val_pair *p = &r->pair[i];
            if (p->a != (int)u && p->b != (int)u)
                continue;
            int other = p->a == (int)u ? p->b : p->a;
            total++;
            if (p->state == CT_VAL_FAILED) {
                if (r->unit[other].dead) /* not its failure */
                    n_dead++, dead_with = other;
                else
                    failed++;
                continue;
            }
            v[nv++] = p->gbs;
            if (p->lat_us >= 0)
                l[nl++] = p->lat_us;
            known += p->state != CT_VAL_UNKNOWN;
            if (p->state != CT_VAL_UNKNOWN && other != partner && partners < 2)
                partner = other, partners++;
            if (p->ceil_gbs > 0)
                pc[npc++] = p->ceil_gbs;
            slow += p->state == CT_VAL_SLOW;
        }
        x->measured_gbs = median(v, nv);
        x->lat_us = median(l, nl);
        /* the percent its verdict rests on: against the ceilings its pairs were judged by (a
         * pair's is the lower end's), not the host's own */
        x->pair_ceil_gbs = npc ? median(pc, npc) : 0;
        x->pct = x->pair_ceil_gbs > 0 && x->measured_gbs >= 0
                     ? 100 * x->measured_gbs / x->pair_ceil_gbs
                     : -1;
        if (x->pair_ceil_gbs > 0 && x->pair_ceil_gbs < x->ceil_gbs * 0.995)
            append(x->evidence, sizeof x->evidence,
                   "judged against its pairs' lower-end ceiling %.3f (its own %.3f)",
                   x->pair_ceil_gbs, x->ceil_gbs);
        if (x->dead) {
            x->state = CT_VAL_FAILED;
            append(x->evidence, sizeof x->evidence, "did not answer");
            ct_val_report_find(r, CT_VALF_FAILED, (int)u, -1, -1,
                               "host %s failed: it did not answer (killed or hung)", x->name);
        } else if (total && failed == total) {
            x->state = CT_VAL_FAILED;
            append(x->evidence, sizeof x->evidence, "every exchange failed");
            ct_val_report_find(r, CT_VALF_FAILED, (int)u, -1, -1,
                               "host %s failed: all %zu of its exchanges failed", x->name, total);
        } else if (known && slow == known &&
                   (partners < 2 || (any_fine && !partner_fine(r, f, (int)u, -1)))) {
            /* slow against one host alone, or against partners none of which shows a fine
             * pair without it where others do: which end is slow, unknown (where no pair of
             * the job is fine, every host is below its ceiling, each named) */
            x->state = CT_VAL_UNKNOWN;
            append(x->evidence, sizeof x->evidence, "its pairs slow, %s: which end, unknown",
                   partners < 2 ? "all with one host" : "no partner fine without it");
        } else if (known >= 2 && slow == known) {
            x->state = CT_VAL_SLOW;
            append(x->evidence, sizeof x->evidence, "all %zu pairs slow", known);
            ct_val_report_find(r, CT_VALF_UNIT, (int)u, -1, -1,
                               "host %s is slow: all %zu of its pairs below %g%%: median "
                               "%.3f GB/s of %.3f GB/s (%.0f%%)",
                               x->name, known, r->min_pct, x->measured_gbs, x->pair_ceil_gbs,
                               ct_val_pct_shown(x->pct, r->min_pct));
        } else {
            x->state = known ? CT_VAL_OK : CT_VAL_UNKNOWN; /* nothing measured: not "ok" */
            if (!known && !total && r->stopped)            /* (its evidence was "-": why, unsaid) */
                append(x->evidence, sizeof x->evidence,
                       "not measured: the battery stopped before a pair of this host was measured");
            else if (!known && total && n_dead == total) /* (its evidence was "-" too) */
                append(x->evidence, sizeof x->evidence, "not judged: %s with failed host %s",
                       total > 1 ? "its pairs were all" : "its one pair was",
                       r->unit[dead_with].name);
        }
    }
    for (size_t i = 0; i < r->n_pair; i++) {
        const struct ct_val_pair *p = &r->pair[i];
        const struct ct_val_unit *a = &r->unit[p->a], *b = &r->unit[p->b];
        if (a->state == CT_VAL_SLOW || b->state == CT_VAL_SLOW || a->state == CT_VAL_FAILED ||
            b->state == CT_VAL_FAILED)
            explained[i] = true;
    }
    free(v);
    free(l);
    free(pc);
}

/* A NIC is slow when every pair through it is slow and a sibling NIC of its unit carried a
 * good pair. */
static void judge_nics(struct ct_val_report *r, const struct fine_tab *f, bool *explained)
{
    double *v = ct_xcalloc(r->n_pair + 1, sizeof *v);
    for (size_t u = 0; u < r->n_unit; u++) {
        struct ct_val_unit *x = &r->unit[u];
        int ok_by[CT_VAL_MAX_NICS] = {0}, slow_by[CT_VAL_MAX_NICS] = {0};
        for (size_t i = 0; i < r->n_pair; i++) {
            const struct ct_val_pair *p = &r->pair[i];
            int k = p->a == (int)u ? p->nic_a : p->b == (int)u ? p->nic_b : -1;
            if (k < 0 || k >= x->n_nic)
                continue;
            ok_by[k] += p->state == CT_VAL_OK;
            slow_by[k] += p->state == CT_VAL_SLOW;
        }
        for (int k = 0; k < x->n_nic; k++) {
            struct ct_val_nic *n = &x->nic[k];
            size_t nv = 0;
            for (size_t i = 0; i < r->n_pair; i++) {
                const struct ct_val_pair *p = &r->pair[i];
                int kk = p->a == (int)u ? p->nic_a : p->b == (int)u ? p->nic_b : -1;
                if (kk == k && p->state != CT_VAL_FAILED)
                    v[nv++] = p->gbs;
            }
            n->measured_gbs = median(v, nv);
            n->pct = x->pair_ceil_gbs > 0 && nv ? 100 * n->measured_gbs / x->pair_ceil_gbs : -1;
            n->state = !nv ? CT_VAL_UNKNOWN : slow_by[k] ? CT_VAL_SLOW : CT_VAL_OK;
            bool sibling_ok = false;
            for (int j = 0; j < x->n_nic; j++)
                sibling_ok |= j != k && ok_by[j] > 0;
            if (x->state == CT_VAL_SLOW || !slow_by[k] || ok_by[k] || !sibling_ok ||
                !partner_fine(r, f, (int)u, k)) {
                if (n->state == CT_VAL_SLOW && !ok_by[k] && x->state != CT_VAL_SLOW)
                    n->state = CT_VAL_SLOW; /* a link verdict will follow */
                continue;
            }
            n->blamed = true;
            append(n->evidence, sizeof n->evidence, "all %d pairs through it slow", slow_by[k]);
            append(x->evidence, sizeof x->evidence, "NIC %s slow", n->name);
            ct_val_report_find(r, CT_VALF_NIC, (int)u, -1, k,
                               "NIC %s of host %s is slow: all %d pairs through it below %g%% "
                               "(median %.3f GB/s) while other NICs of the host are fine",
                               n->name, x->name, slow_by[k], r->min_pct, n->measured_gbs);
            for (size_t i = 0; i < r->n_pair; i++) {
                const struct ct_val_pair *p = &r->pair[i];
                if ((p->a == (int)u && p->nic_a == k) || (p->b == (int)u && p->nic_b == k))
                    explained[i] = true;
            }
        }
    }
    free(v);
}

/* A NIC not blamed itself whose slow pairs are all explained by another verdict (its
 * partner's slow NIC or host) is fine. */
static void settle_nics(struct ct_val_report *r, const bool *explained)
{
    for (size_t u = 0; u < r->n_unit; u++)
        for (int k = 0; k < r->unit[u].n_nic; k++) {
            struct ct_val_nic *n = &r->unit[u].nic[k];
            if (n->state != CT_VAL_SLOW || n->blamed || r->unit[u].state == CT_VAL_SLOW)
                continue;
            bool all = true;
            for (size_t i = 0; i < r->n_pair && all; i++) {
                const struct ct_val_pair *p = &r->pair[i];
                bool mine =
                    (p->a == (int)u && p->nic_a == k) || (p->b == (int)u && p->nic_b == k);
                all = !mine || p->state != CT_VAL_SLOW || explained[i];
            }
            if (all)
                n->state = CT_VAL_OK;
        }
}

static void judge_links(struct ct_val_report *r, const struct fine_tab *f, const bool *explained)
{
    for (size_t i = 0; i < r->n_pair; i++) {
        const struct ct_val_pair *p = &r->pair[i];
        if (explained[i] || (p->state != CT_VAL_SLOW && p->state != CT_VAL_FAILED))
            continue;
        struct ct_val_unit *a = &r->unit[p->a], *b = &r->unit[p->b];
        append(a->evidence, sizeof a->evidence, "link to %s %s", b->name,
               ct_val_state_name(p->state));
        append(b->evidence, sizeof b->evidence, "link to %s %s", a->name,
               ct_val_state_name(p->state));
        bool fa = fine_without(f, p->a, -1, p->b), fb = fine_without(f, p->b, -1, p->a);
        if (p->state == CT_VAL_FAILED)
            ct_val_report_find(r, CT_VALF_FAILED, p->a, p->b, -1,
                               "link %s <-> %s failed (round %d)", a->name, b->name, p->round);
        else if (!fa || !fb) {
            ct_val_report_find(r, CT_VALF_PAIR, p->a, p->b, -1,
                               "pair %s <-> %s is slow: %.3f GB/s of %.3f GB/s (%.0f%%), with "
                               "no fine pair with another host at %s: which host, NIC or link "
                               "is slow cannot be told (validate with a third host)",
                               a->name, b->name, p->gbs, p->ceil_gbs,
                               ct_val_pct_shown(p->pct, r->min_pct),
                               !fa && !fb ? "either end"
                               : !fa      ? a->name
                                          : b->name);
            for (int e = 0; e < 2; e++) { /* an end it may be: not ok (2 hosts, 2 NICs each) */
                struct ct_val_unit *x = e ? b : a;
                if (x->state == CT_VAL_OK)
                    x->state = CT_VAL_UNKNOWN;
            }
        } else
            ct_val_report_find(r, CT_VALF_LINK, p->a, p->b, -1,
                               "link %s <-> %s is slow: %.3f GB/s of %.3f GB/s (%.0f%%) while "
                               "both hosts' other pairs are fine",
                               a->name, b->name, p->gbs, p->ceil_gbs,
                               ct_val_pct_shown(p->pct, r->min_pct));
    }
}

/* Counter and probe evidence per NIC. */
static void judge_evidence(struct ct_val_report *r)
{
    for (size_t u = 0; u < r->n_unit; u++) {
        struct ct_val_unit *x = &r->unit[u];
        double carried = 0;
        for (int k = 0; k < x->n_nic; k++) {
            struct ct_val_nic *n = &x->nic[k];
            carried += n->tx_bytes + n->rx_bytes;
            if (n->degraded) {
                append(n->evidence, sizeof n->evidence, "probe: %s", n->probe_msg);
                append(x->evidence, sizeof x->evidence, "probe flags %s", n->name);
                ct_val_report_find(r, CT_VALF_PROBE, (int)u, -1, k, "host %s: probe: %s",
                                   x->name, n->probe_msg);
            }
            if (n->errors) {
                append(n->evidence, sizeof n->evidence, "%llu errors",
                       (unsigned long long)n->errors);
                ct_val_report_find(r, CT_VALF_PROBE, (int)u, -1, k,
                                   "NIC %s of host %s counted %llu errors/discards during the "
                                   "pair rounds",
                                   n->name, x->name, (unsigned long long)n->errors);
            }
        }
        if (r->expect_nic && x->n_nic && !x->dead && x->measured_gbs > 0 && carried <= 0) {
            append(x->evidence, sizeof x->evidence, "no NIC counter moved");
            ct_val_report_find(r, CT_VALF_PROBE, (int)u, -1, -1,
                               "host %s: none of its NICs carried the pair traffic (counters "
                               "did not move): it took another path",
                               x->name);
        }
    }
}

static void judge_colls(struct ct_val_report *r)
{
    for (size_t i = 0; i < r->n_coll; i++) {
        struct ct_val_coll *c = &r->coll[i];
        c->pct = c->ceil_gbs > 0 && c->busbw >= 0 ? 100 * c->busbw / c->ceil_gbs : -1;
        if (c->busbw < 0) {
            c->state = CT_VAL_FAILED;
            ct_val_report_find(r, CT_VALF_FAILED, -1, -1, -1, "%s:%s failed", c->coll, c->algo);
        } else if (c->ceil_gbs <= 0) {
            c->state = CT_VAL_UNKNOWN;
            r->n_unknown++;
        } else if (c->pct < r->min_pct) {
            c->state = CT_VAL_SLOW;
            ct_val_report_find(r, CT_VALF_COLL, -1, -1, -1,
                               "%s:%s busbw %.3f GB/s is %.0f%% of its ceiling %.3f GB/s", c->coll,
                               c->algo, c->busbw, ct_val_pct_shown(c->pct, r->min_pct),
                               c->ceil_gbs);
        } else {
            c->state = CT_VAL_OK;
        }
    }
}

void ct_val_diagnose(struct ct_val_report *r)
{
    bool *explained = ct_xcalloc(r->n_pair + 1, sizeof *explained);
    r->n_unknown = 0;
    judge_pairs(r);
    struct fine_tab f;
    fine_tab_build(r, &f);
    judge_units(r, &f, explained);
    judge_nics(r, &f, explained);
    settle_nics(r, explained);
    judge_links(r, &f, explained);
    free(f.unit);
    free(f.nic);
    judge_evidence(r);
    judge_colls(r);
    free(explained);
}

size_t ct_val_findings(const struct ct_val_report *r)
{
    return r->n_finding;
}

double ct_val_pct_shown(double pct, double bar)
{
    return pct < bar && round(pct) >= bar   ? floor(pct)
           : pct >= bar && round(pct) < bar ? ceil(pct) /* a bar of 80.3: 80.4 shows 81 */
                                            : round(pct);
}

void ct_val_baseline_apply(const struct ct_val_baseline *b, struct ct_val_report *r)
{
    for (size_t u = 0; u < r->n_unit; u++) {
        struct ct_val_unit *x = &r->unit[u];
        double g = b->default_gbs;
        for (size_t i = 0; i < b->n_host; i++)
            if (!strcmp(b->host[i], x->name))
                g = b->host_gbs[i];
        if (g > 0) {
            x->ceil_gbs = g;
            snprintf(x->formula, sizeof x->formula, "baseline %.150s: %.3f GB/s", b->path, g);
        }
    }
    for (size_t c = 0; c < r->n_coll; c++)
        for (size_t i = 0; i < b->n_coll; i++)
            if (!strcmp(b->coll[i], r->coll[c].coll)) {
                r->coll[c].ceil_gbs = b->coll_gbs[i];
                snprintf(r->coll[c].formula, sizeof r->coll[c].formula,
                         "baseline %.150s: %.3f GB/s", b->path, b->coll_gbs[i]);
            }
    if (b->min_pct > 0)
        r->min_pct = b->min_pct;
}
