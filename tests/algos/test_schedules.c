/* SPDX-License-Identifier: MIT */
/*
 * Every algorithm row x collective x rank count x shape x awkward count x datatype/op,
 * in and out of place: schedules match across ranks (ct_sched_check) and, run through
 * the serial simulator, give the serial reference bit for bit. Also bitwise determinism
 * of AllReduce, the cost claims, placement claims (rails, torus links), generation speed.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <time.h>

#include "algos/compose.h"
#include "sim.h"

/* ---- Cases ------------------------------------------------------------------------ */

struct dcase {
    enum ct_dtype t;
    enum ct_redop op;
};

/* Inputs are chosen so that every reduction order gives the same bits. */
static const struct dcase dcases[] = {
    {CT_INT32, CT_SUM},    {CT_UINT8, CT_MAX},   {CT_FLOAT32, CT_SUM},
    {CT_FLOAT32, CT_PROD}, {CT_FLOAT64, CT_MIN}, {CT_BFLOAT16, CT_SUM},
};
#define NDCASES ((int)(sizeof dcases / sizeof dcases[0]))

static const int ranks_list[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16};
#define NRANKS ((int)(sizeof ranks_list / sizeof ranks_list[0]))

struct tcase {
    const struct ct_algo *a;
    enum ct_coll coll;
    int N, rpn, rows, cols, rails, channels;
    uint64_t count;
    enum ct_dtype t;
    enum ct_redop op;
    bool in_place;
    const char *intra, *inter;
    bool random_floats; /* determinism runs: random values, no reference */
    bool reverse;       /* simulate ranks in reverse order (sim.h) */
};

static void describe(const struct tcase *c, char *out, size_t n)
{
    snprintf(out, n, "%s %s N=%d rpn=%d torus=%dx%d rails=%d ch=%d count=%llu %s %s %s%s%s%s%s",
             c->a->name, ct_coll_name(c->coll), c->N, c->rpn, c->rows, c->cols, c->rails,
             c->channels, (unsigned long long)c->count, ct_dtype_name(c->t), ct_redop_name(c->op),
             c->in_place ? "in-place" : "out-of-place", c->intra ? " intra=" : "",
             c->intra ? c->intra : "", c->inter ? " inter=" : "", c->inter ? c->inter : "");
}

static struct ct_job job_of(const struct tcase *c, int rank)
{
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = c->coll;
    j.dtype = c->t;
    j.op = c->op;
    j.count = c->count;
    j.in_place = c->in_place;
    j.shape.nranks = c->N;
    j.shape.rank = rank;
    j.shape.ranks_per_node = c->rpn;
    j.shape.torus_rows = c->rows;
    j.shape.torus_cols = c->cols;
    j.shape.rails = c->rails;
    j.params.v[CT_P_CHANNELS] = (uint64_t)c->channels;
    j.params.intra = c->intra;
    j.params.inter = c->inter;
    return j;
}

/* ---- Inputs and reference ---------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint16_t bf16_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

static uint16_t f16_of(float f)
{
    /* normal range only (|f| in [2^-14, 65504]), round toward zero: test inputs */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    uint32_t sign = (u >> 16) & 0x8000u, e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
    if (!(u & 0x7fffffffu))
        return (uint16_t)sign;
    return (uint16_t)(sign | ((e - 112) << 10) | (m >> 13));
}

static void fill(const struct tcase *c, uint8_t *p, uint64_t elems, uint64_t seed)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 12345;
    static const float prodv[] = {1.0f, -1.0f, 2.0f, 0.5f, -2.0f, -0.5f};
    for (uint64_t i = 0; i < elems; i++) {
        uint64_t x = rng_next(&s);
        float uni = (float)((double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0);
        switch (c->t) {
        case CT_INT32: {
            uint32_t v = (uint32_t)x;
            memcpy(p + 4 * i, &v, 4);
            break;
        }
        case CT_UINT8: p[i] = (uint8_t)x; break;
        case CT_FLOAT32: {
            float v = c->random_floats   ? uni
                      : c->op == CT_PROD ? prodv[x % 6]
                                         : (float)((int)(x % 17) - 8);
            memcpy(p + 4 * i, &v, 4);
            break;
        }
        case CT_FLOAT64: {
            double v = c->random_floats ? (double)uni * 1.0001 : (double)(int64_t)(x >> 20) / 7.0;
            memcpy(p + 8 * i, &v, 8);
            break;
        }
        case CT_BFLOAT16: {
            uint16_t v = bf16_of(c->random_floats ? uni : (float)((int)(x % 9) - 4));
            memcpy(p + 2 * i, &v, 2);
            break;
        }
        case CT_FLOAT16: {
            float f = uni;
            if (fabsf(f) < 0.001f)
                f = 0.5f;
            uint16_t v = f16_of(f);
            memcpy(p + 2 * i, &v, 2);
            break;
        }
        default: cr_assert_fail("no input generator for %s", ct_dtype_name(c->t));
        }
    }
}

/* ---- One case ------------------------------------------------------------------------ */

struct run {
    int N;
    struct ct_sched *scheds;
    uint8_t **in;                   /* per rank: the input (send bytes) */
    uint8_t **region[CT_BUF_COUNT]; /* per rank allocations */
    uint8_t *(*buf)[CT_BUF_COUNT];
    uint64_t send_bytes, recv_bytes, bb;
};

static void run_release(struct run *r)
{
    for (int q = 0; q < r->N; q++) {
        ct_sched_release(&r->scheds[q]);
        free(r->in[q]);
        for (int b = 0; b < CT_BUF_COUNT; b++)
            free(r->region[b][q]);
    }
    free(r->scheds);
    free(r->in);
    for (int b = 0; b < CT_BUF_COUNT; b++)
        free(r->region[b]);
    free(r->buf);
}

/*
 * Build, check and simulate one case. Returns 1 when the algorithm refuses it (with a
 * reason), 0 when it ran; fails the test on anything wrong. The run stays allocated
 * for the caller to inspect (run_release).
 */
static int run_case(const struct tcase *c, struct run *out)
{
    char d[256];
    describe(c, d, sizeof d);
    struct ct_job j = job_of(c, 0);
    struct ct_err err = {0};
    int rc = ct_algo_supports(c->a, &j, &err);
    if (rc == CT_EUNSUPP) {
        cr_assert(err.msg[0], "%s: refused without a reason", d);
        return 1;
    }
    cr_assert_eq(rc, 0, "%s: supports() failed: %s", d, err.msg);

    struct run r = {.N = c->N};
    r.scheds = calloc((size_t)c->N, sizeof *r.scheds);
    for (int q = 0; q < c->N; q++) {
        j = job_of(c, q);
        rc = ct_algo_build(c->a, &j, &r.scheds[q], &err);
        cr_assert_eq(rc, 0, "%s: rank %d build: %s", d, q, err.msg);
    }
    r.send_bytes = ct_job_send_bytes(&j);
    r.recv_bytes = ct_job_recv_bytes(&j);
    r.bb = c->count * ct_dtype_size(c->t);
    rc = ct_sched_check(r.scheds, c->N, r.send_bytes, r.recv_bytes, &err);
    cr_assert_eq(rc, 0, "%s: ct_sched_check: %s", d, err.msg);

    /* buffers, with the in-place aliasing of algo.h */
    r.in = calloc((size_t)c->N, sizeof *r.in);
    for (int b = 0; b < CT_BUF_COUNT; b++)
        r.region[b] = calloc((size_t)c->N, sizeof *r.region[b]);
    r.buf = calloc((size_t)c->N, sizeof *r.buf);
    for (int q = 0; q < c->N; q++) {
        uint64_t sb = r.send_bytes, rb = r.recv_bytes, scr = r.scheds[q].scratch_bytes;
        r.in[q] = malloc(sb ? sb : 1);
        fill(c, r.in[q], sb / ct_dtype_size(c->t), (uint64_t)q * 7919 + c->count * 31 + 1);
        r.region[CT_BUF_SCRATCH][q] = malloc(scr ? scr : 1);
        memset(r.region[CT_BUF_SCRATCH][q], 0x5a, scr);
        r.buf[q][CT_BUF_SCRATCH] = r.region[CT_BUF_SCRATCH][q];
        if (!c->in_place) {
            r.region[CT_BUF_SEND][q] = malloc(sb ? sb : 1);
            r.region[CT_BUF_RECV][q] = malloc(rb ? rb : 1);
            memset(r.region[CT_BUF_RECV][q], 0xa5, rb);
            r.buf[q][CT_BUF_SEND] = r.region[CT_BUF_SEND][q];
            r.buf[q][CT_BUF_RECV] = r.region[CT_BUF_RECV][q];
        } else {
            uint64_t big = sb > rb ? sb : rb;
            uint8_t *p = malloc(big ? big : 1);
            memset(p, 0xa5, big);
            r.region[CT_BUF_RECV][q] = p;
            r.buf[q][CT_BUF_SEND] = p;
            r.buf[q][CT_BUF_RECV] = p;
            if (c->coll == CT_ALLGATHER)
                r.buf[q][CT_BUF_SEND] = p + (uint64_t)q * r.bb;
            if (c->coll == CT_REDUCESCATTER)
                r.buf[q][CT_BUF_RECV] = p + (uint64_t)q * r.bb;
        }
        memcpy(r.buf[q][CT_BUF_SEND], r.in[q], sb);
    }
    struct sim sim = {.nranks = c->N,
                      .scheds = r.scheds,
                      .buf = r.buf,
                      .fn = ct_reduce_fn_get(c->t, c->op),
                      .esize = ct_dtype_size(c->t),
                      .reverse = c->reverse};
    rc = sim_run(&sim);
    cr_assert_eq(rc, 0, "%s: simulation: %s", d, sim.why);
    *out = r;
    return 0;
}

/* Compare every rank's result with the serial reference. */
static void verify(const struct tcase *c, const struct run *r)
{
    char d[256];
    describe(c, d, sizeof d);
    int N = c->N;
    uint64_t bb = r->bb, es = ct_dtype_size(c->t);
    ct_reduce_fn fn = ct_reduce_fn_get(c->t, c->op);
    uint8_t *ref = malloc(r->send_bytes + r->recv_bytes + 1);
    if (c->coll == CT_ALLREDUCE || c->coll == CT_REDUCESCATTER) {
        memcpy(ref, r->in[0], r->send_bytes);
        for (int q = 1; q < N; q++)
            fn(ref, ref, r->in[q], r->send_bytes / es);
    }
    for (int q = 0; q < N; q++) {
        const uint8_t *got = r->buf[q][CT_BUF_RECV];
        for (int p = 0; p < (c->coll == CT_ALLREDUCE || c->coll == CT_REDUCESCATTER ? 1 : N); p++) {
            const uint8_t *want;
            uint64_t at = 0, len = r->recv_bytes;
            if (c->coll == CT_ALLREDUCE) {
                want = ref;
            } else if (c->coll == CT_REDUCESCATTER) {
                want = ref + (uint64_t)q * bb;
            } else if (c->coll == CT_ALLGATHER) {
                want = r->in[p], at = (uint64_t)p * bb, len = bb;
            } else {
                want = r->in[p] + (uint64_t)q * bb, at = (uint64_t)p * bb, len = bb;
            }
            if (memcmp(got + at, want, len)) {
                uint64_t k = 0;
                while (got[at + k] == want[k])
                    k++;
                cr_assert_fail("%s: rank %d wrong at byte %llu (got %02x want %02x)", d, q,
                               (unsigned long long)(at + k), got[at + k], want[k]);
            }
        }
    }
    free(ref);
}

/* Run and verify, with the ranks simulated in both orders (a one-sided race shows as a
 * wrong result in one of them); 1 when refused. */
static int check_case(const struct tcase *c)
{
    for (int rev = 0; rev < 2; rev++) {
        struct tcase cc = *c;
        cc.reverse = rev;
        struct run r;
        if (run_case(&cc, &r))
            return 1;
        verify(&cc, &r);
        run_release(&r);
    }
    return 0;
}

/* ---- The correctness matrix ----------------------------------------------------------- */

struct tally {
    int ran[CT_COLL_COUNT], refused[CT_COLL_COUNT];
};

static int is_torus_algo(const struct ct_algo *a)
{
    return a->torus;
}

/* Shapes for N: ranks per node (0 = one node, 2, 4) or, for torus algorithms, every
 * rows x cols factorisation. */
static int shapes_of(const struct ct_algo *a, int N, int (*sh)[3])
{
    int n = 0;
    if (is_torus_algo(a)) {
        for (int rows = 1; rows <= N; rows++)
            if (N % rows == 0) {
                sh[n][0] = 0, sh[n][1] = rows, sh[n][2] = N / rows;
                n++;
            }
        return n;
    }
    sh[n][0] = 0, sh[n][1] = 0, sh[n][2] = 0, n++;
    for (int rpn = 2; rpn <= 4; rpn += 2)
        if (rpn < N && N % rpn == 0) {
            sh[n][0] = rpn, sh[n][1] = 0, sh[n][2] = 0;
            n++;
        }
    return n;
}

static void matrix_for(const struct ct_algo *a, struct tally *t)
{
    int sh[32][3];
    for (int coll = 0; coll < CT_COLL_COUNT; coll++) {
        if (!(a->colls & CT_COLL_BIT(coll)))
            continue;
        for (int ni = 0; ni < NRANKS; ni++) {
            int N = ranks_list[ni], nsh = shapes_of(a, N, sh);
            uint64_t counts[] = {0, 1, (uint64_t)N - 1, (uint64_t)N, (uint64_t)N + 1, 1001};
            for (int si = 0; si < nsh; si++)
                for (int ci = 0; ci < 6; ci++)
                    for (int di = 0; di < NDCASES; di++)
                        for (int ip = 0; ip < 2; ip++) {
                            /* every datatype on the first shape; further shapes (nodes,
                             * tori) take one datatype per count, in rotation */
                            if (si > 0 && di != (ci + si) % NDCASES)
                                continue;
                            if (coll == CT_ALLTOALL && (di == 1 || di == 3))
                                continue; /* no reduction: dtypes differ only in size */
                            struct tcase c = {.a = a,
                                              .coll = (enum ct_coll)coll,
                                              .N = N,
                                              .rpn = sh[si][0],
                                              .rows = sh[si][1],
                                              .cols = sh[si][2],
                                              .channels = 1,
                                              .count = counts[ci],
                                              .t = dcases[di].t,
                                              .op = dcases[di].op,
                                              .in_place = ip};
                            if (check_case(&c))
                                t->refused[coll]++;
                            else
                                t->ran[coll]++;
                        }
        }
    }
}

static void matrix(const char *name)
{
    const struct ct_algo *a = ct_algo_find(name);
    cr_assert(a, "no algorithm '%s' in the table", name);
    struct tally t = {0};
    matrix_for(a, &t);
    for (int coll = 0; coll < CT_COLL_COUNT; coll++)
        if (a->colls & CT_COLL_BIT(coll))
            cr_assert_gt(t.ran[coll], 0, "%s %s: every configuration refused (%d)", name,
                         ct_coll_name(coll), t.refused[coll]);
}

Test(matrix, ring)
{
    matrix("ring");
}
Test(matrix, mesh)
{
    matrix("mesh");
}
Test(matrix, simple_ring)
{
    matrix("simple-ring");
}
Test(matrix, bidir_ring)
{
    matrix("bidir-ring");
}
Test(matrix, mesh_1step)
{
    matrix("mesh-1step");
}
Test(matrix, rdh)
{
    matrix("rdh");
}
Test(matrix, kangaring)
{
    matrix("kangaring");
}
Test(matrix, hier)
{
    matrix("hier");
}
Test(matrix, flat_ring)
{
    matrix("flat-ring");
}
Test(matrix, rail_ring)
{
    matrix("rail-ring");
}
Test(matrix, bruck)
{
    matrix("bruck");
}
Test(matrix, torus_ring)
{
    matrix("torus-ring");
}
Test(matrix, torus_rdh)
{
    matrix("torus-rdh");
}
Test(matrix, symm)
{
    matrix("symm");
}

Test(matrix, oneshot)
{
    matrix("oneshot");
}

Test(matrix, table_is_covered)
{
    static const char *const tested[] = {"ring",       "mesh",      "simple-ring", "bidir-ring",
                                         "mesh-1step", "rdh",       "kangaring",   "hier",
                                         "flat-ring",  "rail-ring", "bruck",       "torus-ring",
                                         "torus-rdh",  "symm",      "oneshot"};
    size_t n = sizeof tested / sizeof tested[0];
    cr_assert_eq(ct_algo_count(), n, "table has %zu rows, the matrix tests %zu", ct_algo_count(),
                 n);
    for (size_t i = 0; i < n; i++)
        cr_assert(ct_algo_find(tested[i]), "'%s' missing from the table", tested[i]);
    cr_assert_str_eq(ct_algo_at(0)->name, "ring");
    cr_assert_str_eq(ct_algo_at(1)->name, "mesh");
}

/* Channels/rings split the data further; rails set the ring count of rail-ring. */
Test(matrix, channels_and_rails)
{
    int tried = 0;
    for (size_t i = 0; i < ct_algo_count(); i++) {
        const struct ct_algo *a = ct_algo_at(i);
        if (!(a->params & CT_PBIT(CT_P_CHANNELS)))
            continue;
        for (int coll = 0; coll < CT_COLL_COUNT; coll++) {
            if (!(a->colls & CT_COLL_BIT(coll)))
                continue;
            static const int Ns[] = {4, 6, 8};
            for (int ni = 0; ni < 3; ni++)
                for (int ch = 2; ch <= 3; ch++)
                    for (int ip = 0; ip < 2; ip++) {
                        int N = Ns[ni];
                        struct tcase c = {.a = a,
                                          .coll = (enum ct_coll)coll,
                                          .N = N,
                                          .rpn = N / 2,
                                          .rows = 2,
                                          .cols = N / 2,
                                          .channels = ch,
                                          .count = (uint64_t)N * 5 + 3,
                                          .t = CT_INT32,
                                          .op = CT_SUM,
                                          .in_place = ip};
                        tried += !check_case(&c);
                    }
        }
    }
    const struct ct_algo *rail = ct_algo_find("rail-ring");
    for (int rails = 1; rails <= 4; rails++)
        for (int coll = 0; coll < 3; coll++) {
            struct tcase c = {.a = rail,
                              .coll = (enum ct_coll)coll,
                              .N = 12,
                              .rpn = 4,
                              .rails = rails,
                              .channels = 1,
                              .count = 77,
                              .t = CT_FLOAT32,
                              .op = CT_SUM,
                              .in_place = coll == 1};
            cr_assert_eq(check_case(&c), 0);
        }
    cr_assert_gt(tried, 50);
}

/* Larger tori: the edge-disjoint decompositions (3x3, 5x3, 6x4, 8x8) and 4x4 for rdh. */
Test(matrix, torus_shapes)
{
    static const int shapes[][2] = {{3, 3}, {3, 5}, {5, 3}, {4, 6}, {8, 8}, {4, 4}, {2, 8}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int coll = 0; coll < 3; coll++)
            for (int ip = 0; ip < 2; ip++) {
                int N = shapes[s][0] * shapes[s][1];
                struct tcase c = {.a = ct_algo_find("torus-ring"),
                                  .coll = (enum ct_coll)coll,
                                  .N = N,
                                  .rows = shapes[s][0],
                                  .cols = shapes[s][1],
                                  .channels = 2,
                                  .count = (uint64_t)N + 5,
                                  .t = CT_FLOAT32,
                                  .op = CT_SUM,
                                  .in_place = ip};
                cr_assert_eq(check_case(&c), 0);
                c.a = ct_algo_find("torus-rdh");
                c.channels = 1;
                int pow2 =
                    !(shapes[s][0] & (shapes[s][0] - 1)) && !(shapes[s][1] & (shapes[s][1] - 1));
                cr_assert_eq(check_case(&c), !pow2);
            }
}

/* hier with sub-algorithms from the table, on 2..4 virtual nodes. */
Test(matrix, hier_combinations)
{
    static const char *const subs[] = {"ring",       "mesh",      "simple-ring", "bidir-ring",
                                       "rdh",        "kangaring", "flat-ring",   "rail-ring",
                                       "mesh-1step", "bruck"};
    static const int layouts[][2] = {{8, 4}, {6, 3}, {12, 2}, {16, 4}};
    int ran = 0, refused = 0;
    size_t ns = sizeof subs / sizeof subs[0];
    for (size_t a = 0; a < ns; a++)
        for (size_t b = 0; b < ns; b++)
            for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
                for (int coll = 0; coll < 3; coll++)
                    for (int ip = 0; ip < 2; ip++) {
                        if (l == 3 && (a + b + (size_t)coll + (size_t)ip) % 4)
                            continue; /* sample the largest layout */
                        /* 2N+5 leaves a tail of count % Y elements for AllReduce */
                        struct tcase c = {.a = ct_algo_find("hier"),
                                          .coll = (enum ct_coll)coll,
                                          .N = layouts[l][0],
                                          .rpn = layouts[l][1],
                                          .channels = 1,
                                          .count = 2u * (unsigned)layouts[l][0] + 5,
                                          .t = CT_FLOAT32,
                                          .op = CT_SUM,
                                          .in_place = ip,
                                          .intra = subs[a],
                                          .inter = subs[b]};
                        if (check_case(&c))
                            refused++;
                        else
                            ran++;
                    }
    cr_assert_gt(ran, 1000);
    cr_assert_gt(refused, 10); /* bruck / bidir-ring for ReduceScatter, kangaring inter */

    /* reasons name the sub-algorithm and its own reason */
    struct tcase c = {.a = ct_algo_find("hier"),
                      .coll = CT_ALLREDUCE,
                      .N = 8,
                      .rpn = 4,
                      .channels = 1,
                      .count = 8,
                      .t = CT_FLOAT32,
                      .op = CT_SUM,
                      .inter = "kangaring"};
    struct ct_job j = job_of(&c, 0);
    struct ct_err err = {0};
    cr_assert_eq(ct_algo_supports(c.a, &j, &err), CT_EUNSUPP);
    cr_assert(strstr(err.msg, "inter 'kangaring'") && strstr(err.msg, "even number"), "%s",
              err.msg);
    j.params.inter = "hier";
    cr_assert_eq(ct_algo_supports(c.a, &j, &err), CT_EUNSUPP);
    j.params.inter = "nonesuch";
    cr_assert_eq(ct_algo_supports(c.a, &j, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "nonesuch"), "%s", err.msg);
}

Test(matrix, refusals_have_reasons)
{
    struct {
        const char *algo;
        int N, rpn, rows, cols;
        const char *needle;
    } cases[] = {
        {"kangaring", 6, 3, 0, 0, "even number of ranks per node"},
        {"kangaring", 5, 0, 0, 0, "even number of ranks per node"},
        {"torus-ring", 8, 0, 0, 0, "torus shape"},
        {"torus-ring", 8, 0, 3, 3, "does not hold"},
        {"torus-rdh", 12, 0, 3, 4, "power-of-two"},
        {"torus-rdh", 8, 0, 0, 0, "torus shape"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct tcase c = {.a = ct_algo_find(cases[i].algo),
                          .coll = CT_ALLREDUCE,
                          .N = cases[i].N,
                          .rpn = cases[i].rpn,
                          .rows = cases[i].rows,
                          .cols = cases[i].cols,
                          .count = 10,
                          .t = CT_INT32,
                          .op = CT_SUM};
        struct ct_job j = job_of(&c, 0);
        struct ct_err err = {0};
        cr_assert_eq(ct_algo_supports(c.a, &j, &err), CT_EUNSUPP, "%s", cases[i].algo);
        cr_assert(strstr(err.msg, cases[i].needle), "%s: '%s'", cases[i].algo, err.msg);
    }
    struct tcase c = {.a = ct_algo_find("mesh-1step"),
                      .coll = CT_ALLGATHER,
                      .N = 4,
                      .count = 10,
                      .t = CT_INT32,
                      .op = CT_SUM};
    struct ct_job j = job_of(&c, 0);
    struct ct_err err = {0};
    cr_assert_eq(ct_algo_supports(c.a, &j, &err), CT_EUNSUPP);
    cr_assert(err.msg[0]);
}

/* ---- Bitwise determinism ------------------------------------------------------------- */

Test(determinism, allreduce_same_bits_everywhere)
{
    static const enum ct_dtype floats[] = {CT_FLOAT32, CT_FLOAT16, CT_BFLOAT16, CT_FLOAT64};
    static const int shapes[][4] = {/* N, rpn, rows, cols */
                                    {2, 0, 1, 2},
                                    {3, 0, 1, 3},
                                    {6, 2, 2, 3},
                                    {8, 4, 2, 4},
                                    {12, 4, 3, 4},
                                    {16, 4, 4, 4}};
    int ran = 0;
    for (size_t i = 0; i < ct_algo_count(); i++) {
        const struct ct_algo *a = ct_algo_at(i);
        if (!(a->colls & CT_COLL_BIT(CT_ALLREDUCE)))
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t f = 0; f < sizeof floats / sizeof floats[0]; f++) {
                struct tcase c = {.a = a,
                                  .coll = CT_ALLREDUCE,
                                  .N = shapes[s][0],
                                  .rpn = shapes[s][1],
                                  .rows = shapes[s][2],
                                  .cols = shapes[s][3],
                                  .channels = 1 + (int)(f % 2),
                                  .count = 1001,
                                  .t = floats[f],
                                  .op = CT_SUM,
                                  .in_place = f % 2,
                                  .random_floats = true};
                struct run r;
                if (run_case(&c, &r))
                    continue;
                char d[256];
                describe(&c, d, sizeof d);
                for (int q = 1; q < c.N; q++)
                    cr_assert(!memcmp(r.buf[q][CT_BUF_RECV], r.buf[0][CT_BUF_RECV], r.recv_bytes),
                              "%s: rank %d differs from rank 0", d, q);
                ran++;
                run_release(&r);
            }
    }
    cr_assert_gt(ran, 200);
}

Test(determinism, two_rank_fused_mesh_keeps_rank_order)
{
    /* N = 2 mesh-1step reduces as the peer's buffer arrives: x0 first on both ranks */
    for (int in_place = 0; in_place < 2; in_place++)
        for (int r = 0; r < 2; r++) {
            struct tcase c = {.a = ct_algo_find("mesh-1step"),
                              .coll = CT_ALLREDUCE,
                              .N = 2,
                              .channels = 1,
                              .count = 100,
                              .t = CT_FLOAT32,
                              .op = CT_MAX,
                              .in_place = in_place};
            struct ct_job j = job_of(&c, r);
            struct ct_sched s;
            struct ct_err err = {0};
            cr_assert_eq(ct_algo_build(c.a, &j, &s, &err), 0, "%s", err.msg);
            int fused = 0;
            for (uint32_t i = 0; i < s.nops; i++) {
                cr_assert_neq(s.ops[i].kind, CT_OP_REDUCE, "rank %d: no separate reduce", r);
                if (s.ops[i].kind == CT_OP_RECV_REDUCE) {
                    cr_assert_eq(s.ops[i].rev, r == 1, "rank %d: operand order", r);
                    fused++;
                }
            }
            cr_assert_eq(fused, 1);
            cr_assert_eq(s.scratch_bytes, 0u);
            ct_sched_release(&s);
        }
}

/* ---- Cost claims ------------------------------------------------------------------- */

/* Build rank `rank`'s schedule of a simple job. */
static void build_one(const char *algo, enum ct_coll coll, int N, int rank, uint64_t count,
                      struct ct_sched *s)
{
    struct tcase c = {.a = ct_algo_find(algo),
                      .coll = coll,
                      .N = N,
                      .channels = 1,
                      .count = count,
                      .t = CT_FLOAT32,
                      .op = CT_SUM};
    struct ct_job j = job_of(&c, rank);
    struct ct_err err = {0};
    cr_assert_eq(ct_algo_build(c.a, &j, s, &err), 0, "%s N=%d: %s", algo, N, err.msg);
}

static int ilog2_ceil(int n)
{
    int l = 0;
    while ((1 << l) < n)
        l++;
    return l;
}

Test(cost, ring_allreduce_bytes_and_steps)
{
    for (int N = 2; N <= 16; N++) {
        uint64_t count = (uint64_t)N * 64, bytes = count * 4;
        for (int r = 0; r < N; r++) {
            struct ct_sched s;
            build_one("ring", CT_ALLREDUCE, N, r, count, &s);
            cr_assert_eq(s.bytes_sent * (uint64_t)N, 2 * (uint64_t)(N - 1) * bytes, "N=%d", N);
            cr_assert_eq(ct_sched_comm_steps(&s), 2u * (uint32_t)(N - 1));
            ct_sched_release(&s);
        }
    }
}

Test(cost, mesh_1step_sends_n_minus_1_buffers)
{
    for (int N = 1; N <= 16; N++) {
        struct ct_sched s;
        build_one("mesh-1step", CT_ALLREDUCE, N, N / 2, 1000, &s);
        cr_assert_eq(s.bytes_sent, (uint64_t)(N - 1) * 4000, "N=%d", N);
        cr_assert_eq(ct_sched_comm_steps(&s), N > 1 ? 1u : 0u);
        ct_sched_release(&s);
    }
}

Test(cost, bidir_ring_steps)
{
    for (int N = 2; N <= 16; N++) {
        uint64_t count = (uint64_t)N * 128; /* whole lines per block: blocks of equal size */
        for (int r = 0; r < N; r++) {
            struct ct_sched s, ring;
            build_one("bidir-ring", CT_ALLREDUCE, N, r, count, &s);
            build_one("ring", CT_ALLREDUCE, N, r, count, &ring);
            uint32_t want = (uint32_t)((N - 1) + (N - 1 + 1) / 2);
            cr_assert_eq(ct_sched_comm_steps(&s), want, "N=%d", N);
            /* saves floor((N-1)/2) steps, same bytes */
            cr_assert_eq(ct_sched_comm_steps(&ring) - ct_sched_comm_steps(&s),
                         (uint32_t)((N - 1) / 2));
            cr_assert_eq(s.bytes_sent, ring.bytes_sent);
            ct_sched_release(&s);
            ct_sched_release(&ring);
            build_one("bidir-ring", CT_ALLGATHER, N, r, 8, &s);
            cr_assert_eq(ct_sched_comm_steps(&s), (uint32_t)(N / 2), "AG N=%d", N);
            ct_sched_release(&s);
        }
    }
}

Test(cost, rdh_kangaring_bruck_simple_ring)
{
    for (int N = 2; N <= 16; N++) {
        uint64_t count = (uint64_t)N * 16, bytes = count * 4;
        struct ct_sched s;
        if (!(N & (N - 1))) {
            build_one("rdh", CT_ALLREDUCE, N, N - 1, count, &s);
            cr_assert_eq(ct_sched_comm_steps(&s), 2u * (uint32_t)ilog2_ceil(N));
            cr_assert_eq(s.bytes_sent * (uint64_t)N, 2 * (uint64_t)(N - 1) * bytes);
            ct_sched_release(&s);
        } else {
            /* the fold: the core rank that absorbed rank 0 does two more steps */
            build_one("rdh", CT_ALLREDUCE, N, 1, count, &s);
            cr_assert_eq(ct_sched_comm_steps(&s), 2u * (uint32_t)(ilog2_ceil(N) - 1) + 2);
            ct_sched_release(&s);
        }
        if (N % 2 == 0) {
            build_one("kangaring", CT_ALLREDUCE, N, 0, count, &s);
            cr_assert_eq(ct_sched_comm_steps(&s), (uint32_t)N, "kangaring N=%d", N);
            ct_sched_release(&s);
        }
        build_one("bruck", CT_ALLTOALL, N, 0, 3, &s);
        cr_assert_eq(ct_sched_comm_steps(&s), (uint32_t)ilog2_ceil(N));
        ct_sched_release(&s);
        build_one("bruck", CT_ALLGATHER, N, 0, 3, &s);
        cr_assert_eq(ct_sched_comm_steps(&s), (uint32_t)ilog2_ceil(N));
        cr_assert_eq(s.bytes_sent, (uint64_t)(N - 1) * 12);
        ct_sched_release(&s);
        for (int r = 0; r < N; r++) {
            build_one("simple-ring", CT_ALLREDUCE, N, r, count, &s);
            cr_assert_leq(s.bytes_sent, 2 * bytes);
            ct_sched_release(&s);
        }
    }
}

/* ---- Placement claims ---------------------------------------------------------------- */

/* Every send of every rank satisfies ok(rank, peer). */
static void sends_where(const struct tcase *c, int (*ok)(const struct tcase *, int, int))
{
    char d[256];
    describe(c, d, sizeof d);
    for (int r = 0; r < c->N; r++) {
        struct ct_job j = job_of(c, r);
        struct ct_sched s;
        struct ct_err err = {0};
        cr_assert_eq(ct_algo_build(c->a, &j, &s, &err), 0, "%s: %s", d, err.msg);
        for (uint32_t i = 0; i < s.nops; i++)
            if (s.ops[i].kind == CT_OP_SEND)
                cr_assert(ok(c, r, s.ops[i].peer), "%s: rank %d sends to %d", d, r, s.ops[i].peer);
        ct_sched_release(&s);
    }
}

static int torus_neighbours(const struct tcase *c, int a, int b)
{
    int R = c->rows, C = c->cols;
    int dr = abs(a / C - b / C), dc = abs(a % C - b % C);
    dr = dr < R - dr ? dr : R - dr;
    dc = dc < C - dc ? dc : C - dc;
    return dr + dc == 1;
}

static int same_rail(const struct tcase *c, int a, int b)
{
    return a / c->rpn == b / c->rpn || a % c->rpn == b % c->rpn;
}

static int chain_ends(const struct tcase *c, int a, int b)
{
    return a / c->rpn == b / c->rpn ||
           (a % c->rpn == c->rpn - 1 && b % c->rpn == 0 && (b - a + c->N) % c->N == 1);
}

Test(placement, torus_algorithms_talk_to_neighbours)
{
    static const int shapes[][2] = {{4, 4}, {3, 3}, {2, 4}, {4, 8}, {5, 3}, {3, 4}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int coll = 0; coll < 3; coll++) {
            int R = shapes[s][0], C = shapes[s][1];
            struct tcase c = {.a = ct_algo_find("torus-ring"),
                              .coll = (enum ct_coll)coll,
                              .N = R * C,
                              .rows = R,
                              .cols = C,
                              .channels = 2,
                              .count = 100,
                              .t = CT_INT32,
                              .op = CT_SUM};
            sends_where(&c, torus_neighbours);
            if ((R == 4 || R == 2) && C <= 4) {
                /* a 4x4 (or 2x4) torus is a hypercube: rdh partners are neighbours */
                c.a = ct_algo_find("torus-rdh");
                sends_where(&c, torus_neighbours);
            }
        }
}

/* run and sweep refuse --torus and --rails where no algorithm they run reads it; the rows
 * that read them are the torus and rail algorithms, and the message names those. */
Test(placement, torus_and_rails_read_by_their_algorithms_alone)
{
    const struct ct_algo *ring = ct_algo_find("ring"), *tr = ct_algo_find("torus-ring"),
                         *rr = ct_algo_find("rail-ring");
    for (size_t i = 0; i < ct_algo_count(); i++) {
        const struct ct_algo *a = ct_algo_at(i);
        cr_expect_eq(a->torus, !strncmp(a->name, "torus-", 6), "%s", a->name);
        cr_expect_eq(a->rails, !strcmp(a->name, "rail-ring"), "%s", a->name);
    }
    struct ct_err why = {0};
    cr_expect_eq(ct_algo_shape_opts(&tr, 1, true, false, NULL, &why), 0);
    cr_expect_eq(ct_algo_shape_opts(&rr, 1, false, true, NULL, &why), 0);
    cr_expect_eq(ct_algo_shape_opts(&ring, 1, false, false, NULL, &why), 0);
    const struct ct_algo *two[] = {ring, tr};
    cr_expect_eq(ct_algo_shape_opts(two, 2, true, false, NULL, &why), 0);
    cr_expect_eq(ct_algo_shape_opts(two, 2, true, true, NULL, &why), CT_EINVAL);
    cr_expect_str_eq(why.msg,
                     "--rails: none of ring, torus-ring has a ring per rail (rail-ring does)");
    cr_expect_eq(ct_algo_shape_opts(&ring, 1, true, false, NULL, &why), CT_EINVAL);
    cr_expect_str_eq(why.msg, "--torus: ring maps no torus (torus-ring, torus-rdh do)");
    /* hier keeps the rails in its sub-jobs: read where --inter or --intra is rail-ring */
    const struct ct_algo *hier = ct_algo_find("hier");
    struct ct_params p = {.inter = "rail-ring"};
    cr_expect_eq(ct_algo_shape_opts(&hier, 1, false, true, &p, &why), 0);
    p.inter = "ring";
    cr_expect_eq(ct_algo_shape_opts(&hier, 1, false, true, &p, &why), CT_EINVAL);
    p.intra = "rail-ring";
    cr_expect_eq(ct_algo_shape_opts(&hier, 1, false, true, &p, &why), 0);
    cr_expect_eq(ct_algo_shape_opts(&hier, 1, true, false, &p, &why), CT_EINVAL);
}

Test(placement, rails_and_chains)
{
    for (int coll = 0; coll < 3; coll++) {
        /* even node count: every inter-node hop joins the same local index */
        struct tcase c = {.a = ct_algo_find("rail-ring"),
                          .coll = (enum ct_coll)coll,
                          .N = 16,
                          .rpn = 4,
                          .rails = 2,
                          .channels = 1,
                          .count = 64,
                          .t = CT_INT32,
                          .op = CT_SUM};
        sends_where(&c, same_rail);
        c.rails = 0;
        c.channels = 4;
        sends_where(&c, same_rail);
        /* hier crosses nodes only within rail groups */
        c.a = ct_algo_find("hier");
        c.channels = 1;
        sends_where(&c, same_rail);
        c.inter = "rdh";
        sends_where(&c, same_rail);
        /* flat ring: only the chain ends cross nodes */
        struct tcase f = {.a = ct_algo_find("flat-ring"),
                          .coll = (enum ct_coll)coll,
                          .N = 12,
                          .rpn = 4,
                          .channels = 2,
                          .count = 64,
                          .t = CT_INT32,
                          .op = CT_SUM};
        sends_where(&f, chain_ends);
    }
}

/* Both ranks of every kangaring pair send on the ring (roles swap between the rings). */
Test(placement, kangaring_both_ranks_on_a_ring)
{
    for (int coll = 0; coll < 3; coll++)
        for (int N = 4; N <= 12; N += 2) {
            for (int r = 0; r < N; r++) {
                struct tcase c = {.a = ct_algo_find("kangaring"),
                                  .coll = (enum ct_coll)coll,
                                  .N = N,
                                  .rpn = 2,
                                  .channels = 1,
                                  .count = 64,
                                  .t = CT_INT32,
                                  .op = CT_SUM};
                struct ct_job j = job_of(&c, r);
                struct ct_sched s;
                struct ct_err err = {0};
                cr_assert_eq(ct_algo_build(c.a, &j, &s, &err), 0, "%s", err.msg);
                int off_pair = 0;
                for (uint32_t i = 0; i < s.nops; i++)
                    if (s.ops[i].kind == CT_OP_SEND && s.ops[i].peer != (r ^ 1))
                        off_pair++;
                cr_assert_gt(off_pair, 0, "N=%d rank %d never sends on a ring", N, r);
                ct_sched_release(&s);
            }
        }
}

/* ---- Torus geometry ------------------------------------------------------------------ */

Test(torus, cycles_are_hamiltonian_and_disjoint)
{
    for (int R = 1; R <= 9; R++)
        for (int C = 1; C <= 9; C++) {
            int N = R * C;
            int *c1 = malloc((size_t)N * sizeof *c1), *c2 = malloc((size_t)N * sizeof *c2);
            int *seen = calloc((size_t)N, sizeof *seen);
            int disjoint = ct_torus_cycles(R, C, c1, c2);
            struct tcase t = {.rows = R, .cols = C};
            for (int k = 0; k < 2; k++) {
                const int *cy = k ? c2 : c1;
                memset(seen, 0, (size_t)N * sizeof *seen);
                for (int p = 0; p < N; p++) {
                    cr_assert(cy[p] >= 0 && cy[p] < N && !seen[cy[p]], "%dx%d", R, C);
                    seen[cy[p]] = 1;
                    if (N > 1)
                        cr_assert(torus_neighbours(&t, cy[p], cy[(p + 1) % N]),
                                  "%dx%d cycle %d: %d -> %d", R, C, k, cy[p], cy[(p + 1) % N]);
                }
            }
            cr_assert_eq(disjoint, R >= 3 && C >= 3 && (R - C) % 2 == 0, "%dx%d", R, C);
            if (disjoint) {
                /* no undirected edge in both */
                for (int p = 0; p < N; p++)
                    for (int q = 0; q < N; q++) {
                        int a = c1[p], b = c1[(p + 1) % N], x = c2[q], y = c2[(q + 1) % N];
                        cr_assert(!((a == x && b == y) || (a == y && b == x)), "%dx%d", R, C);
                    }
            }
            free(c1);
            free(c2);
            free(seen);
        }
    for (unsigned x = 0; x < 1024; x++)
        cr_assert_eq(ct_gray_inv(ct_gray(x)), x);
}

/* ---- Speed --------------------------------------------------------------------------- */

static double build_ms(const char *algo, int N, int rpn, int rows, int cols)
{
    struct tcase c = {.a = ct_algo_find(algo),
                      .coll = CT_ALLREDUCE,
                      .N = N,
                      .rpn = rpn,
                      .rows = rows,
                      .cols = cols,
                      .channels = 1,
                      .count = 1u << 24,
                      .t = CT_FLOAT32,
                      .op = CT_SUM};
    struct ct_job j = job_of(&c, N / 3);
    struct ct_sched s;
    struct ct_err err = {0};
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = ct_algo_build(c.a, &j, &s, &err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    cr_assert_eq(rc, 0, "%s: %s", algo, err.msg);
    cr_assert_gt(s.nops, 0u);
    ct_sched_release(&s);
    return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/* The best of three builds (ms). */
static double best_ms(const char *algo, int N, int rpn, int rows, int cols)
{
    double best = build_ms(algo, N, rpn, rows, cols);
    for (int k = 0; k < 2; k++)
        best = fmin(best, build_ms(algo, N, rpn, rows, cols));
    return best;
}

/* One rank's schedule among 16384 is built in time that grows about linearly with the ranks
 * (a quadratic build takes seconds there): 8x the ranks take at most 32x the time of 2048
 * (linear: 8x, N log N: about 10x, quadratic: 64x), on any machine's speed; a bound in
 * milliseconds failed under ASan on a loaded VM (228.5 ms against 200). */
Test(speed, one_rank_of_16384_grows_about_linearly)
{
    static const char *const algos[] = {"ring",      "simple-ring", "bidir-ring", "rdh",
                                        "flat-ring", "rail-ring",   "hier",       "kangaring",
                                        "torus-rdh", "torus-ring"};
    for (size_t i = 0; i < sizeof algos / sizeof algos[0]; i++) {
        double small = best_ms(algos[i], 2048, 8, 32, 64),
               big = best_ms(algos[i], 16384, 8, 128, 128);
        cr_assert_lt(big, 32 * fmax(small, 0.5), "%s: %.2f ms for one rank of 16384, %.2f of 2048",
                     algos[i], big, small);
    }
}

/* ---- identical schedules: the sweep folds candidates by their generated ops ---- */

static struct ct_job fold_job(enum ct_coll c, int n, int rpn)
{
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = c;
    j.dtype = CT_FLOAT32;
    j.op = CT_SUM;
    j.count = 1 << 16;
    j.shape.nranks = n;
    j.shape.ranks_per_node = rpn;
    ct_params_defaults(&j.params);
    return j;
}

Test(fold, same_schedule_is_decided_on_the_ops)
{
    const struct ct_algo *ring = ct_algo_find("ring"), *mesh = ct_algo_find("mesh");
    /* 2 ranks on one node: hier (mesh inside the node) is mesh, and so are the rail and
     * flat rings of two ranks; the bidirectional ring is the ring */
    struct ct_job j = fold_job(CT_ALLGATHER, 2, 2);
    cr_assert(ct_algo_same_schedule(ct_algo_find("hier"), mesh, &j));
    cr_assert(ct_algo_same_schedule(ct_algo_find("rail-ring"), mesh, &j));
    cr_assert(ct_algo_same_schedule(ct_algo_find("bidir-ring"), ring, &j));
    /* the ring copies its own block after the first exchange, as mesh does: on 2 ranks the
     * two exchange the same block in one step, for AllGather and AllToAll; kangaring's
     * second rank posts its receive first, which is the same step (posted together) */
    cr_assert(ct_algo_same_schedule(ring, mesh, &j));
    cr_assert(ct_algo_same_schedule(ct_algo_find("kangaring"), mesh, &j));
    /* recursive doubling sends its own block from the send buffer and copies it after
     * posting, as the ring: one exchange on 2 ranks (copied first, it lost 0.91 us to the
     * ring's 0.80 at 14.4 KiB in a verify); in place there is no copy either way */
    cr_assert(ct_algo_same_schedule(ct_algo_find("rdh"), ring, &j));
    j.in_place = true;
    cr_assert(ct_algo_same_schedule(ct_algo_find("rdh"), ring, &j));
    j = fold_job(CT_ALLTOALL, 2, 2);
    cr_assert(ct_algo_same_schedule(ring, mesh, &j));
    j.in_place = true;
    cr_assert(ct_algo_same_schedule(ring, mesh, &j));
    /* on 3 ranks they differ */
    j = fold_job(CT_ALLGATHER, 3, 3);
    cr_assert_not(ct_algo_same_schedule(ring, mesh, &j));
    j = fold_job(CT_ALLTOALL, 3, 3);
    cr_assert_not(ct_algo_same_schedule(ring, mesh, &j));
    /* two nodes of two: hier is no longer mesh */
    j = fold_job(CT_ALLGATHER, 4, 2);
    cr_assert_not(ct_algo_same_schedule(ct_algo_find("hier"), mesh, &j));
}

Test(fold, operand_order_and_wire_format_make_schedules_differ)
{
    struct ct_sched a, b;
    ct_sched_init(&a);
    ct_sched_init(&b);
    ct_sched_step(&a);
    ct_sched_step(&b);
    ct_sched_recv_reduce(&a, 1, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), 4096);
    ct_sched_recv_reduce(&b, 1, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), 4096);
    cr_assert(ct_sched_equal(&a, &b));
    ct_sched_recv_reduce_rev(&b, 1, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), 4096);
    ct_sched_recv_reduce(&a, 1, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), 4096);
    cr_assert_not(ct_sched_equal(&a, &b), "incoming operand first in one of them");
    ct_sched_release(&a);
    ct_sched_release(&b);
}

/* A step's messages are posted together: their order is free, but two messages in one
 * direction with one peer match in order, and local ops run in order. */
/* Ops of a one-rank schedule, 64 bytes each: "sP:OFF" sends SEND+OFF to peer P, "rP:OFF"
 * receives from P into RECV+OFF, "c" copies SEND+0 to RECV+64, "|" starts a step. */
static void fill_ops(struct ct_sched *s, const char *ops)
{
    ct_sched_step(s);
    for (const char *p = ops; *p; p++) {
        int peer, off, n = 0;
        if (*p == '|')
            ct_sched_step(s);
        else if (*p == 'c')
            ct_sched_copy(s, ct_loc(CT_BUF_RECV, 64), ct_loc(CT_BUF_SEND, 0), 64);
        else if ((*p == 's' || *p == 'r') && sscanf(p + 1, "%d:%d%n", &peer, &off, &n) == 2) {
            if (*p == 's')
                ct_sched_send(s, peer, ct_loc(CT_BUF_SEND, (uint64_t)off), 64);
            else
                ct_sched_recv(s, peer, ct_loc(CT_BUF_RECV, (uint64_t)off), 64);
            p += n;
        }
    }
    ct_sched_finish(s);
}

static bool equal_as_built(const char *x, const char *y)
{
    struct ct_sched a, b;
    ct_sched_init(&a);
    ct_sched_init(&b);
    fill_ops(&a, x);
    fill_ops(&b, y);
    bool same = ct_sched_equal(&a, &b);
    ct_sched_release(&a);
    ct_sched_release(&b);
    return same;
}

/* A step's messages are posted together: their order is free, but two messages in one
 * direction with one peer match in order, and local ops run in order. */
Test(fold, message_order_in_a_step_is_free_within_the_matching_rule)
{
    cr_assert(equal_as_built("s1:0 r1:0 c", "r1:0 s1:0 c"), "send and receive swapped");
    cr_assert(equal_as_built("s1:0 s2:0", "s2:0 s1:0"), "sends to two peers swapped");
    cr_assert_not(equal_as_built("s1:0 s1:64", "s1:64 s1:0"), "two sends to one peer swapped");
    cr_assert_not(equal_as_built("s1:0 r2:0 | c", "r2:0 | s1:0 c"), "a send in another step");
    cr_assert_not(equal_as_built("s1:0 r1:0", "s1:0 r1:64"), "another receive buffer");
}

/* ---- One-sided rules of ct_sched_check --------------------------------------------------- */

/* Two ranks: rank 0 puts 8 bytes into rank 1's receive buffer between fences; `drop` leaves
 * out rank 0's closing fence (1) or rank 1's (2). */
static int onesided_pair(int drop, struct ct_err *err)
{
    struct ct_sched s[2];
    for (int r = 0; r < 2; r++) {
        ct_sched_init(&s[r]);
        ct_sched_step(&s[r]);
        ct_sched_sync(&s[r], 1 - r);
        if (r == 0)
            ct_sched_put(&s[r], 1, ct_loc(CT_BUF_RECV, 0), ct_loc(CT_BUF_SEND, 0), 8);
        ct_sched_step(&s[r]);
        if (drop != r + 1)
            ct_sched_sync(&s[r], 1 - r);
        ct_sched_finish(&s[r]);
    }
    int rc = ct_sched_check(s, 2, 8, 8, err);
    ct_sched_release(&s[0]);
    ct_sched_release(&s[1]);
    return rc;
}

Test(sched_check, one_sided_ops_between_paired_fences)
{
    struct ct_err err = {0};
    cr_assert_eq(onesided_pair(0, &err), 0, "%s", err.msg);
    cr_assert_eq(onesided_pair(1, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "without a fence after it"), "%s", err.msg);
    cr_assert_eq(onesided_pair(2, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "rank 0 has 2 fences with 1, rank 1 has 1"), "%s", err.msg);
}

/* ---- Mailbox rules of ct_sched_check ----------------------------------------------------- */

/*
 * Three ranks, each publishing 16 bytes and reading 8 of every peer's publish at offset 8;
 * a fault in rank 1's schedule: 1 reads only one peer, 2 reads beyond the publish, 3 reads
 * without publishing, 4 publishes after a read, 5 publishes again in a step of its own that
 * reads nobody, 6 sends a message in the publishing step.
 */
static int mbox_trio(int fault, struct ct_err *err)
{
    struct ct_sched s[3];
    for (int r = 0; r < 3; r++) {
        bool f = r == 1;
        ct_sched_init(&s[r]);
        ct_sched_step(&s[r]);
        if (!(f && (fault == 3 || fault == 4)))
            ct_sched_publish(&s[r], ct_loc(CT_BUF_SEND, 0), 16);
        for (int k = 1; k < 3; k++) {
            if (f && fault == 1 && k == 2)
                continue;
            ct_sched_mget(&s[r], (r + k) % 3, ct_loc(CT_BUF_RECV, 8 * (uint64_t)k),
                          f && fault == 2 ? 12 : 8, 8);
        }
        if (f && fault == 4)
            ct_sched_publish(&s[r], ct_loc(CT_BUF_SEND, 0), 16);
        if (f && fault == 5) {
            ct_sched_step(&s[r]);
            ct_sched_publish(&s[r], ct_loc(CT_BUF_SEND, 0), 16);
        }
        if (f && fault == 6)
            ct_sched_send(&s[r], 0, ct_loc(CT_BUF_SEND, 0), 8);
        ct_sched_finish(&s[r]);
    }
    int rc = ct_sched_check(s, 3, 16, 24, err);
    for (int r = 0; r < 3; r++)
        ct_sched_release(&s[r]);
    return rc;
}

Test(sched_check, a_publishing_step_reads_every_peer_within_its_publish)
{
    struct ct_err err = {0};
    cr_assert_eq(mbox_trio(0, &err), 0, "%s", err.msg);
    static const char *const want[] = {NULL,
                                       "reads from 1 of 2 peers",
                                       "reads [12,+8) of rank",
                                       "publish 0, which it never makes",
                                       "not the first op of its step",
                                       "1 publishes, reads from 0 of 2",
                                       "1 messages or fences"};
    for (int f = 1; f <= 6; f++) {
        memset(&err, 0, sizeof err);
        cr_assert_eq(mbox_trio(f, &err), CT_EINVAL, "fault %d passed", f);
        cr_assert(strstr(err.msg, want[f]), "fault %d: %s", f, err.msg);
    }
}

/* Parts in whole units: they cover 0..n in order, start on a unit (or at n), and differ by
 * at most one unit; symm's AllReduce slices start on cache lines for any count (off a line
 * every vector store straddled two: 2.5-3.1x slower at 63.6, 127 and 257 KiB). */
Test(parts, whole_units_and_symm_slices_on_cache_lines)
{
    for (uint64_t n = 0; n < 300; n += 7)
        for (uint64_t parts = 1; parts <= 9; parts++)
            for (uint64_t unit = 1; unit <= 32; unit *= 2) {
                uint64_t lo = UINT64_MAX, hi = 0;
                cr_assert_eq(ct_part_off_unit(n, parts, 0, unit), 0);
                cr_assert_eq(ct_part_off_unit(n, parts, parts, unit), n);
                for (uint64_t i = 0; i < parts; i++) {
                    uint64_t off = ct_part_off_unit(n, parts, i, unit),
                             len = ct_part_len_unit(n, parts, i, unit);
                    cr_assert(off % unit == 0 || off == n, "n %lu parts %lu unit %lu", n, parts,
                              unit);
                    cr_assert_eq(off + len, ct_part_off_unit(n, parts, i + 1, unit));
                    uint64_t whole = (len + unit - 1) / unit;
                    lo = whole < lo ? whole : lo;
                    hi = whole > hi ? whole : hi;
                }
                cr_assert_leq(hi - lo, 1, "n %lu parts %lu unit %lu", n, parts, unit);
            }
    const struct ct_algo *symm = ct_algo_find("symm");
    for (int nr = 2; nr <= 5; nr++)
        for (int r = 0; r < nr; r++) {
            struct ct_job j = fold_job(CT_ALLREDUCE, nr, nr);
            j.count = 16282; /* 63.6 KiB of float32 */
            j.shape.rank = r;
            struct ct_sched s;
            struct ct_err err = {0};
            cr_assert_eq(ct_algo_build(symm, &j, &s, &err), 0, "%s", err.msg);
            int seen = 0;
            for (uint32_t k = 0; k < s.nops; k++)
                if (s.ops[k].kind == CT_OP_GET_REDUCE || s.ops[k].kind == CT_OP_PUT) {
                    cr_assert_eq(s.ops[k].dst.off % 64, 0, "rank %d of %d", r, nr);
                    seen++;
                }
            cr_assert_gt(seen, 0);
            ct_sched_release(&s);
        }
}

/* Every AllReduce generator cuts the buffer on cache lines: at a count off a power of two
 * (16,282 float32, 63.6 KiB) every op of every rank starts on a 64-byte line, in every
 * buffer, for 2-5 ranks and 1 or 2 channels (split by element, ring took 11.2 us at
 * 263,000 B against 10.2 on lines; symm 2.5-3.1x the time). Not hier:
 * its parts are its ReduceScatter's blocks, equal by definition (the rest is its tail). */
Test(parts, every_allreduce_cuts_its_buffer_on_cache_lines)
{
    int checked = 0;
    for (size_t a = 0; ct_algo_at(a); a++) {
        const struct ct_algo *al = ct_algo_at(a);
        if (!strcmp(al->name, "hier"))
            continue;
        for (int nr = 2; nr <= 5; nr++)
            for (int ch = 1; ch <= 2; ch++)
                for (int r = 0; r < nr; r++) {
                    struct ct_job j = fold_job(CT_ALLREDUCE, nr, nr);
                    j.count = 16282;
                    j.shape.rank = r;
                    j.params.v[CT_P_CHANNELS] = (uint64_t)ch;
                    if (ct_algo_supports(al, &j, NULL) < 0)
                        continue;
                    struct ct_sched s;
                    struct ct_err err = {0};
                    cr_assert_eq(ct_algo_build(al, &j, &s, &err), 0, "%s: %s", al->name, err.msg);
                    for (uint32_t k = 0; k < s.nops; k++) {
                        const struct ct_op *op = &s.ops[k];
                        if (op->kind == CT_OP_SYNC)
                            continue;
                        const struct ct_loc *at[3] = {&op->dst, &op->src, &op->src2};
                        for (int q = 0; q < 3; q++)
                            cr_assert(!ct_op_loc_bytes(op, q) || at[q]->off % 64 == 0,
                                      "%s, %d ranks, %d channels, rank %d: op %u (kind %d) at "
                                      "%lu in buffer %d",
                                      al->name, nr, ch, r, k, op->kind, (unsigned long)at[q]->off,
                                      at[q]->buf);
                    }
                    ct_sched_release(&s);
                    checked++;
                }
    }
    cr_assert_gt(checked, 100);
}

/* symm's AllGather and AllToAll below 256 KiB blocks: every rank writes only its own output
 * (gets), so at a block size off a cache line no line has two writers; from there puts. */
Test(parts, symm_small_blocks_are_written_by_their_owner_only)
{
    const struct ct_algo *symm = ct_algo_find("symm");
    enum ct_coll colls[2] = {CT_ALLGATHER, CT_ALLTOALL};
    for (int c = 0; c < 2; c++)
        for (int nr = 2; nr <= 4; nr++)
            for (uint64_t count = 81; count <= (128u << 10); count *= 1024) {
                int puts = 0, gets = 0;
                for (int r = 0; r < nr; r++) {
                    struct ct_job j = fold_job(colls[c], nr, nr);
                    j.count = count; /* 324 B or 512 KiB blocks */
                    j.shape.rank = r;
                    struct ct_sched s;
                    struct ct_err err = {0};
                    cr_assert_eq(ct_algo_build(symm, &j, &s, &err), 0, "%s", err.msg);
                    for (uint32_t k = 0; k < s.nops; k++) {
                        puts += s.ops[k].kind == CT_OP_PUT;
                        gets += s.ops[k].kind == CT_OP_GET;
                    }
                    ct_sched_release(&s);
                }
                bool small = count * 4 < (256u << 10);
                cr_assert_eq(puts, small ? 0 : nr * (nr - 1), "%s, %d ranks, %lu",
                             ct_coll_name(colls[c]), nr, (unsigned long)count);
                cr_assert_eq(gets, small ? nr * (nr - 1) : 0, "%s, %d ranks, %lu",
                             ct_coll_name(colls[c]), nr, (unsigned long)count);
            }
}
