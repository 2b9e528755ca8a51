/* SPDX-License-Identifier: MIT */
/* Median, its order-statistic confidence interval, and convergence of a point. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/err.h"

bool ct_stats_ci_ranks(int n, int *lo, int *hi)
{
    *lo = 1;
    *hi = n;
    if (n < CT_STATS_MIN_CI)
        return false;
    int j = 0;
    if (n <= 1000) {
        /* cdf(k) of Binomial(n, 1/2), summed in log space to survive large n */
        double cdf = 0, ln2n = n * log(2.0), lgn = lgamma(n + 1.0);
        for (int k = 0; k < n; k++) {
            cdf += exp(lgn - lgamma(k + 1.0) - lgamma(n - k + 1.0) - ln2n);
            if (cdf > 0.025)
                break;
            j = k + 1; /* P(B <= j - 1) <= 0.025 */
        }
    } else {
        j = (int)floor(n / 2.0 - 0.98 * sqrt((double)n));
    }
    if (j < 1)
        return false;
    *lo = j;
    *hi = n + 1 - j;
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void ct_stats_compute(const double *x, int n, struct ct_stats *st)
{
    memset(st, 0, sizeof *st);
    if (n < 1)
        return;
    double *s = ct_xmalloc(sizeof(double) * (size_t)n);
    memcpy(s, x, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    st->n = n;
    st->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    int lo, hi;
    ct_stats_ci_ranks(n, &lo, &hi);
    st->lo = s[lo - 1];
    st->hi = s[hi - 1];
    st->min = s[0];
    st->max = s[n - 1];
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    st->mean = sum / n;
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (s[i] - st->mean) * (s[i] - st->mean);
    st->stdev = n > 1 ? sqrt(ss / (n - 1)) : 0;
    free(s);
}

double ct_stats_rel_width(const struct ct_stats *st)
{
    if (st->n < CT_STATS_MIN_CI || !(st->median > 0))
        return INFINITY;
    return (st->hi - st->lo) / st->median;
}

bool ct_stats_converged(const struct ct_stats *st, double target)
{
    return ct_stats_rel_width(st) <= target;
}

int ct_stats_more(const struct ct_stats *st, double target)
{
    if (st->n < CT_STATS_MIN_CI)
        return CT_STATS_MIN_CI - st->n;
    double w = ct_stats_rel_width(st);
    if (w <= target)
        return 0;
    if (!(target > 0) || !isfinite(w))
        return st->n; /* no estimate: double */
    double want = st->n * (w / target) * (w / target) - st->n;
    if (want > 1e9)
        want = 1e9;
    return want < 1 ? 1 : (int)ceil(want);
}

static double log_mean(const double *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += log(x[i]);
    return s / n;
}

double ct_stats_geomean(const double *x, int n)
{
    return exp(log_mean(x, n));
}

/* Mean and sample standard deviation of log x. */
static void log_mean_sd(const double *x, int n, double *m, double *sd)
{
    double q = 0;
    *m = log_mean(x, n);
    for (int i = 0; i < n; i++)
        q += (log(x[i]) - *m) * (log(x[i]) - *m);
    *sd = n > 1 ? sqrt(q / (n - 1)) : 0;
}

/* Student's t, two-sided 95%, on df >= 1 degrees of freedom: the table to 30, then the
 * Cornish-Fisher expansion about the normal's 1.96 (within 1e-4 from 31 on). */
static double t95(int df)
{
    static const double t[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                               2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                               2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                               2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    const double z = 1.959964, n = df;
    if (df < (int)(sizeof t / sizeof t[0]))
        return t[df < 0 ? 0 : df];
    return z + (z * z * z + z) / (4 * n) + (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * n * n);
}

/* The regularized incomplete beta function I_x(a, b), 0 <= x <= 1, by its continued
 * fraction (modified Lentz), taken on the side where it converges fast. */
static double ibeta(double a, double b, double x)
{
    if (x <= 0 || x >= 1)
        return x <= 0 ? 0 : 1;
    if (x > (a + 1) / (a + b + 2))
        return 1 - ibeta(b, a, 1 - x);
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x)) / a;
    const double tiny = 1e-300;
    double f = 1, c = 1, d = 0;
    for (int i = 0; i <= 400; i++) {
        int m = i / 2;
        double num = !i      ? 1
                     : i % 2 ? -((a + m) * (a + b + m) * x) / ((a + 2 * m) * (a + 2 * m + 1))
                             : (m * (b - m) * x) / ((a + 2 * m - 1) * (a + 2 * m));
        d = 1 + num * d;
        d = 1 / (fabs(d) < tiny ? tiny : d);
        c = 1 + num / c;
        c = fabs(c) < tiny ? tiny : c;
        f *= c * d;
        if (fabs(1 - c * d) < 1e-14)
            break;
    }
    return front * (f - 1);
}

double ct_stats_t_tail(double t, int df)
{
    double p = 0.5 * ibeta(df / 2.0, 0.5, df / (df + t * t));
    return t < 0 ? 1 - p : p;
}

double ct_stats_t_quantile(double tail, int df)
{
    if (!(tail > 0 && tail < 0.5) || df < 1)
        return tail == 0.5 && df >= 1 ? 0 : NAN;
    double lo = 0, hi = 1;
    while (ct_stats_t_tail(hi, df) > tail)
        lo = hi, hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        *(ct_stats_t_tail(mid, df) > tail ? &lo : &hi) = mid;
    }
    return (lo + hi) / 2;
}

/* exp(d) with the interval d +- t se: t95 (95%), or Student's t for the tail asked for, on
 * the df degrees of freedom of d's standard error se. */
static void ratio_of(double d, double se, double t, struct ct_ratio *r)
{
    r->ratio = exp(d);
    r->lo = exp(d - t * se);
    r->hi = exp(d + t * se);
}

void ct_stats_ratio_paired(const double *a, const double *b, int n, struct ct_ratio *r)
{
    ct_stats_ratio_paired_at(a, b, n, 0.025, r);
}

void ct_stats_ratio_paired_at(const double *a, const double *b, int n, double tail,
                              struct ct_ratio *r)
{
    memset(r, 0, sizeof *r);
    if (n < 2)
        return;
    double *q = ct_xmalloc(sizeof *q * (size_t)n), m, sd; /* the pairs' own ratios */
    int ok = 1;
    for (int i = 0; i < n; i++) {
        ok = ok && a[i] > 0 && b[i] > 0;
        q[i] = ok ? a[i] / b[i] : 0;
    }
    if (ok) {
        log_mean_sd(q, n, &m, &sd);
        ratio_of(m, sd / sqrt(n), tail == 0.025 ? t95(n - 1) : ct_stats_t_quantile(tail, n - 1), r);
    }
    free(q);
}

void ct_stats_ratio(const double *a, int na, const double *b, int nb, struct ct_ratio *r)
{
    double ma, sa, mb, sb;
    memset(r, 0, sizeof *r);
    if (na < 2 || nb < 2)
        return;
    for (int i = 0; i < na || i < nb; i++)
        if ((i < na && !(a[i] > 0)) || (i < nb && !(b[i] > 0)))
            return;
    log_mean_sd(a, na, &ma, &sa);
    log_mean_sd(b, nb, &mb, &sb);
    ratio_of(ma - mb, sqrt(sa * sa / na + sb * sb / nb), t95((na < nb ? na : nb) - 1), r);
}
