/* SPDX-License-Identifier: MIT */
/*
 * Launch settings that leave Open MPI's shared-memory transport out of a job. Its BTL (vader
 * in Open MPI 4.x, sm in 5.x) carves its fragments once out of each rank's segment
 * (btl_vader_segment_size: 4 MiB in 4.1.4, raised to 2 MiB where set lower; sm's 16 MiB in 5.x
 * on 64 bits): at MPI_Init, free_list_num (8, at most free_list_max) of each list, inline
 * (max_inline_send), eager (eager_limit) and, where the single copy is not XPMEM's, max send
 * (max_send_size), each fragment its size and its descriptor, cache-line aligned; the fast
 * boxes come later, and without room for them it runs without them. Where the first
 * fragments do not fit, the BTL does not start, and Open MPI says nothing and carries the
 * ranks of a host over TCP (with `--mca btl self,vader` MPI_Init fails: "An error occurred in
 * MPI_Init"). Measured with Open MPI 4.1.4 on 2 ranks (2026-12-05): an eager limit of 1 MiB
 * in an 8 MiB segment ran AllReduce at 512 KiB in 237 us, in a 9 MiB one in 54 us (4 MiB: 256
 * us; Open MPI's own eager limit with its own segment: 99 us). A setting that raises what the
 * segment must hold is checked against the segment in effect here, so that a sweep, a search
 * or an export does not measure or ship TCP in the shared memory's place.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../lib/parse.h"
#include "libmod.h"

/* The BTL's variables the rule reads, after its prefix ("OMPI_MCA_btl_vader_") */
static const char *const shm_var[CT_LIBMOD_SHM_VARS] = {
    "segment_size",  "eager_limit",   "max_send_size",        "max_inline_send",
    "free_list_num", "free_list_max", "single_copy_mechanism"};

#define SHM_SIZE_MAX (1ULL << 40)    /* a size or count read is capped here */
#define SHM_SEGMENT_MIN (2ULL << 20) /* the BTL raises a smaller segment to this */
#define SHM_FRAG_EXTRA 256ULL        /* a fragment's descriptor beside its data (x86-64: ~216 B) */
#define SHM_FIFO 128ULL

static unsigned long long sat_add(unsigned long long a, unsigned long long b)
{
    unsigned long long r;
    return __builtin_add_overflow(a, b, &r) ? ULLONG_MAX : r;
}

static unsigned long long sat_mul(unsigned long long a, unsigned long long b)
{
    unsigned long long r;
    return __builtin_mul_overflow(a, b, &r) ? ULLONG_MAX : r;
}

unsigned long long ct_libmod_shm_need(const unsigned long long v[CT_LIBMOD_SHM_VARS])
{
    unsigned long long n = v[CT_SHM_FREE_LIST], need = SHM_FIFO;
    if (v[CT_SHM_FREE_LIST_MAX] && v[CT_SHM_FREE_LIST_MAX] < n)
        n = v[CT_SHM_FREE_LIST_MAX];
    const int lists[] = {CT_SHM_INLINE, CT_SHM_EAGER, CT_SHM_MAX_SEND};
    for (int i = 0; i < 3; i++) {
        if (lists[i] == CT_SHM_MAX_SEND && v[CT_SHM_XPMEM])
            continue; /* no max-send list beside XPMEM's single copy */
        unsigned long long frag = sat_add(sat_add(v[lists[i]], SHM_FRAG_EXTRA), 63) & ~63ULL;
        need = sat_add(need, sat_mul(n, frag));
    }
    return need;
}

int ct_libmod_shm_size(const char *s, unsigned long long *x)
{
    char *end;
    if (!s || !*s || *s == '-' || *s == ' ')
        return -1;
    unsigned long long v = strtoull(s, &end, 0);
    int shift = *end == 'k' || *end == 'K'   ? 10
                : *end == 'm' || *end == 'M' ? 20
                : *end == 'g' || *end == 'G' ? 30
                                             : 0;
    if (end == s || (shift ? end[1] : end[0]))
        return -1;
    *x = v > SHM_SIZE_MAX >> shift ? SHM_SIZE_MAX : v << shift;
    return 0;
}

/* The BTL prefix of m's that name starts with ("OMPI_MCA_btl_vader_"), its length; 0 when none.
 */
static size_t shm_prefix(const struct ct_libmod *m, const char *name)
{
    return ct_words_match(m ? m->shm_prefix : NULL, name, true);
}

/* Which of the rule's variables name is (after its prefix of n), or -1 */
static int shm_index(const char *name, size_t n)
{
    for (int i = 0; i < CT_LIBMOD_SHM_VARS; i++)
        if (!strcmp(name + n, shm_var[i]))
            return i;
    return -1;
}

/* value as the rule reads variable k: a size (Open MPI's way: 0x..., k/m/g), or for the
 * single-copy mechanism whether it is XPMEM's. -1 where a size is not one. */
static int shm_value(int k, const char *value, unsigned long long *x)
{
    if (k == CT_SHM_XPMEM) {
        *x = !strcasecmp(value, "xpmem");
        return 0;
    }
    return ct_libmod_shm_size(value, x);
}

/* The library's own values of the rule's variables under prefix pre, and its own list of
 * transports (m->shm_select: a site's parameter file may set it), in one run of its list
 * (once per prefix, into c) */
static void shm_defaults(const struct ct_libmod *m, struct ct_libmod_shm *c, const char *pre,
                         size_t pn)
{
    if (c->asked && strlen(c->prefix) == pn && !strncmp(c->prefix, pre, pn))
        return;
    memset(c, 0, sizeof *c);
    c->named = -1;
    snprintf(c->prefix, sizeof c->prefix, "%.*s", (int)pn, pre);
    enum { N = CT_LIBMOD_SHM_VARS + 1 };
    char names[CT_LIBMOD_SHM_VARS][CT_LIBMOD_ENV_NAME_MAX + 1], val[N][CT_LIBMOD_DVAL];
    const char *np[N];
    bool listed[N];
    for (int k = 0; k < CT_LIBMOD_SHM_VARS; k++) {
        snprintf(names[k], sizeof names[k], "%s%s", c->prefix, shm_var[k]);
        np[k] = names[k];
    }
    np[N - 1] = m->shm_select;
    struct ct_err e = {0};
    c->asked = true;
    if (ct_libmod_env_defaults(m, np, N - !m->shm_select, val, listed, &e))
        return;
    for (int k = 0; k < CT_LIBMOD_SHM_VARS; k++)
        c->listed[k] = listed[k] && !shm_value(k, val[k], &c->dflt[k]);
    if (m->shm_select && listed[N - 1] && strlen(val[N - 1]) < sizeof val[N - 1] - 1)
        snprintf(c->select, sizeof c->select, "%s", val[N - 1]); /* (one cut short: not read) */
}

/* Whether names[] unsets name (a NULL value: the ranks run without this environment's) */
static bool masked(const char *name, const char *const *names, const char *const *values, int n)
{
    for (int i = 0; i < n; i++)
        if (!values[i] && !strcmp(names[i], name))
            return true;
    return false;
}

/* The first of the row's prefixes under which this environment sets one of the rule's
 * variables (and names[] does not unset it), its length in *pn; NULL when none */
static const char *shm_env_prefix(const struct ct_libmod *m, const char *const *names,
                                  const char *const *values, int n, size_t *pn)
{
    for (const char *p = m && m->shm_prefix ? m->shm_prefix : ""; *p; p += *pn + (p[*pn] == ' ')) {
        *pn = strcspn(p, " ");
        for (int k = 0; *pn && k < CT_LIBMOD_SHM_VARS; k++) {
            char name[CT_LIBMOD_ENV_NAME_MAX + 1];
            snprintf(name, sizeof name, "%.*s%s", (int)*pn, p, shm_var[k]);
            if (getenv(name) && !masked(name, names, values, n))
                return p;
        }
    }
    return NULL;
}

/* Whether the list of transports sel (Open MPI's component list: "a,b", or "^a,b" for all but
 * those) leaves out the one of prefix pre: named by its component (the word between
 * m->shm_select and the prefix's last '_'), or by an earlier prefix's of the row, which a
 * later version reads as an alias (Open MPI 5's sm reads "vader"; 4.x's vader does not read
 * "sm", a component of its own there that starts nothing) */
static bool shm_left_out(const struct ct_libmod *m, const char *sel, const char *pre, size_t prn)
{
    if (!sel || !*sel)
        return false;
    size_t sl = strlen(m->shm_select), hats = strspn(sel, "^");
    bool named = false;
    for (const char *p = m->shm_prefix; *p && !named;
         p += strcspn(p, " ") + (p[strcspn(p, " ")] == ' ')) {
        size_t pn = strcspn(p, " "); /* "OMPI_MCA_btl" "_" "vader" "_" */
        named = pn > sl + 2 && !strncmp(p, m->shm_select, sl) && p[sl] == '_' &&
                ct_list_has(sel + hats, p + sl + 1, pn - sl - 2);
        if (pn == prn && !strncmp(p, pre, pn))
            break; /* the later names are not this version's */
    }
    return hats ? named : !named;
}

int ct_libmod_shm_fits(const struct ct_libmod *m, struct ct_libmod_shm *c, const char *const *names,
                       const char *const *values, int n, struct ct_err *err)
{
    c->named = -1;
    const char *pre = NULL; /* the first setting of the rule's, its prefix (pn bytes) */
    size_t pn = 0;
    for (int i = 0; i < n && !pre; i++)
        if (values[i] && (pn = shm_prefix(m, names[i])) && shm_index(names[i], pn) >= 0)
            pre = names[i];
    if (!pre) /* else one this environment sets, which the ranks inherit */
        pre = shm_env_prefix(m, names, values, n, &pn);
    /* the transports the job selects: a setting's list, else this environment's, else (read
     * below, where it would be refused) the site's */
    int si = -1; /* (a setting's NULL: unset for the ranks, the site's then) */
    for (int i = 0; m && m->shm_select && i < n; i++)
        if (!strcmp(names[i], m->shm_select))
            si = i;
    const char *sel = si >= 0 ? values[si] : m && m->shm_select ? getenv(m->shm_select) : NULL;
    bool sel_set = sel != NULL;
    if (!pre || (m->shm_select && shm_left_out(m, sel, pre, pn)))
        return 0; /* nothing the segment must hold more of, or no segment */
    unsigned long long v[CT_LIBMOD_SHM_VARS];
    int given[CT_LIBMOD_SHM_VARS];
    const char *envs[CT_LIBMOD_SHM_VARS];
    for (int k = 0; k < CT_LIBMOD_SHM_VARS; k++) {
        given[k] = -1;
        for (int i = 0; i < n; i++)
            if (shm_prefix(m, names[i]) == pn && !strncmp(names[i], pre, pn) &&
                shm_index(names[i], pn) == k)
                given[k] = i;
        char name[CT_LIBMOD_ENV_NAME_MAX + 1];
        snprintf(name, sizeof name, "%.*s%s", (int)pn, pre, shm_var[k]);
        envs[k] = given[k] < 0 ? getenv(name) : NULL; /* this environment's: the ranks inherit */
        const char *s = given[k] >= 0 ? values[given[k]] : envs[k];
        /* sizes Open MPI takes without a word and then misreads: a negative one (an unsigned
         * 2^64 less it: eager_limit=-5 gave wrong results and a hang here), a segment past an
         * int (refused in a box, its default used: a 1 MiB eager limit then ran over TCP) */
        bool neg = s && k != CT_SHM_XPMEM && s[strspn(s, " \t")] == '-';
        if (neg || (s && k == CT_SHM_SEGMENT && !shm_value(k, s, &v[k]) && v[k] > INT_MAX)) {
            c->named = given[k];
            return ct_err_set(err, CT_EINVAL, "%.*s%s=%s%s: %s", (int)pn, pre, shm_var[k], s,
                              given[k] >= 0 ? "" : " (this environment's)",
                              neg ? "a negative size, which Open MPI reads as an unsigned one "
                                    "(2^64 less it: wrong results and hangs)"
                                  : "past 2147483647, which Open MPI refuses for its segment, "
                                    "using its default instead");
        }
        if (s) {
            if (shm_value(k, s, &v[k]))
                return 0; /* not a size: the library says what it makes of it */
            continue;
        }
        shm_defaults(m, c, pre, pn);
        if (!c->listed[k])
            return 0; /* this Open MPI does not list it: another BTL, another layout */
        v[k] = c->dflt[k];
    }
    unsigned long long need = ct_libmod_shm_need(v), seg = v[CT_SHM_SEGMENT];
    if ((seg > SHM_SEGMENT_MIN ? seg : SHM_SEGMENT_MIN) >= need)
        return 0;
    if (!sel_set && m->shm_select) { /* the site's list of transports */
        shm_defaults(m, c, pre, pn);
        if (shm_left_out(m, c->select, pre, pn))
            return 0;
    }
    /* the setting named: the last one given where it is the transport's (the value a search
     * judges, which the caller puts last), else the first given in this order */
    static const int order[] = {CT_SHM_EAGER,     CT_SHM_MAX_SEND,      CT_SHM_INLINE,
                                CT_SHM_FREE_LIST, CT_SHM_FREE_LIST_MAX, CT_SHM_SEGMENT,
                                CT_SHM_XPMEM};
    int by = -1;
    for (int k = 0; k < CT_LIBMOD_SHM_VARS; k++)
        if (given[k] >= 0 && given[k] == n - 1 && values[given[k]])
            by = k;
    for (int j = 0; by < 0 && j < CT_LIBMOD_SHM_VARS; j++)
        if (given[order[j]] >= 0 && values[given[order[j]]])
            by = order[j];
    c->named = by >= 0 ? given[by] : -1; /* (after shm_defaults, which clears c) */
    for (int j = 0; by < 0 && j < CT_LIBMOD_SHM_VARS; j++)
        if (envs[order[j]])
            by = order[j];
    if (by < 0) /* (a name both given and unset: not a job the option checks let through) */
        return 0;
    char head[CT_LIBMOD_ENV_NAME_MAX + 200];
    snprintf(head, sizeof head, "%.*s%s=%s%s", (int)pn, pre, shm_var[by],
             c->named >= 0 ? values[c->named] : envs[by],
             c->named >= 0 ? "" : " (this environment's, which the ranks inherit)");
    unsigned long long mib = need > INT_MAX ? 0 : (need + (1ULL << 20) - 1) >> 20;
    if (!mib || mib << 20 > INT_MAX) /* Open MPI reads the segment's size as an int */
        return ct_err_set(err, CT_EINVAL,
                          "%s: %s's shared-memory transport would carve %llu bytes of first "
                          "fragments out of each rank's segment, more than a segment can be "
                          "(%d bytes): it would run a host's ranks over TCP",
                          head, m->title, need, INT_MAX);
    return ct_err_set(err, CT_EINVAL,
                      "%s: %s's shared-memory segment (%.*s%s=%llu%s) holds less than the first "
                      "%llu fragments of each size its transport carves (%llu bytes), and "
                      "without them %s runs a host's ranks over TCP: set %.*s%s=%llu%s",
                      head, m->title, (int)pn, pre, shm_var[CT_SHM_SEGMENT], seg,
                      seg < SHM_SEGMENT_MIN ? ", raised to 2 MiB" : "",
                      v[CT_SHM_FREE_LIST_MAX] && v[CT_SHM_FREE_LIST_MAX] < v[CT_SHM_FREE_LIST]
                          ? v[CT_SHM_FREE_LIST_MAX]
                          : v[CT_SHM_FREE_LIST],
                      need, m->title, (int)pn, pre, shm_var[CT_SHM_SEGMENT], mib << 20,
                      by == CT_SHM_SEGMENT ? "" : " beside it");
}
