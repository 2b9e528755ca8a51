/* SPDX-License-Identifier: MIT */
/*
 * The cost model against the textbook: on a uniform fully connected network without
 * sharing (every ordered pair its own link: latency a, a byte costs b, a reduced byte
 * costs g, local copies free, no slicing), the priced schedules equal the closed forms
 * of the literature to floating-point precision:
 *
 *   R. Thakur, R. Rabenseifner, W. Gropp, "Optimization of Collective Communication
 *   Operations in MPICH", IJHPCA 19(1), 2005 (section 4: ring and recursive-doubling
 *   allgather, Bruck allgather, recursive-halving reduce-scatter, pairwise-exchange and
 *   Bruck alltoall; Rabenseifner's reduce-scatter + allgather allreduce and its
 *   non-power-of-two fold).
 *   E. Chan, M. Heimlich, A. Purkayastha, R. van de Geijn, "Collective communication:
 *   theory, practice, and experience", CCPE 19(13), 2007 (ring/bucket allreduce
 *   2(p-1)a + 2((p-1)/p)nb + ((p-1)/p)ng).
 *
 * n is the whole vector (allreduce), the whole gathered/scattered buffer (allgather,
 * reducescatter) or the bytes one rank sends (alltoall), as in those papers.
 * Also: the symmetric (lockstep) path equals the full timeline, link sharing and
 * oversubscription slow what they should, and bad topologies fail with one message.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"

#define A_US 3.0    /* alpha */
#define GBPS 2.0    /* 1/beta */
#define GAMMA 8.0   /* 1/gamma */
#define B (1.0 / (GBPS * 1e3))
#define G (1.0 / (GAMMA * 1e3))

static const int plist[] = {2, 3, 4, 7, 8, 64, 1024};
#define NP ((int)(sizeof plist / sizeof plist[0]))

static struct ct_mtopo textbook(int p)
{
    struct ct_mtopo t;
    ct_mtopo_init(&t);
    snprintf(t.name, sizeof t.name, "textbook");
    t.ranks_per_node = p;
    t.full_mesh = true;
    t.intra.alpha_us = A_US;
    t.intra.gbps = GBPS;
    t.gamma_gbps = GAMMA;
    return t;
}

static int lg_floor(int p)
{
    int l = 0;
    while ((2 << l) <= p)
        l++;
    return l;
}

static int lg_ceil(int p)
{
    int l = 0;
    while ((1 << l) < p)
        l++;
    return l;
}

/* per-rank count: divisible by p and by every power of two up to 1024 in whole cache lines
 * (16 float32: the generators cut on lines), and small enough that no op exceeds the
 * largest chunk (1 GiB) */
static uint64_t count_of(int p)
{
    return (uint64_t)p << 8;
}

static double price(struct ct_model *m, const char *algo, enum ct_coll c, int p, uint64_t count)
{
    struct ct_job j;
    memset(&j, 0, sizeof j);
    j.coll = c;
    j.dtype = CT_FLOAT32;
    j.op = CT_SUM;
    j.count = count;
    j.params.v[CT_P_CHUNK] = 1ull << 30; /* one slice per op: no pipelining terms */
    struct ct_err err = {0};
    cr_assert_eq(ct_model_shape(ct_model_topo(m), p, &j.shape, &err), 0, "%s", err.msg);
    struct ct_model_cost cost;
    int rc = ct_model_price(m, ct_algo_find(algo), &j, &cost, &err);
    cr_assert_eq(rc, 0, "%s p=%d: %s", algo, p, err.msg);
    return cost.time_us;
}

static void expect(const char *what, int p, double got, double want)
{
    cr_expect(fabs(got - want) <= 1e-9 * want, "%s p=%d: priced %.12g us, formula %.12g us", what,
              p, got, want);
}

Test(exact, ring)
{
    for (int i = 0; i < NP; i++) {
        int p = plist[i];
        struct ct_mtopo t = textbook(p);
        struct ct_model *m = ct_model_new(&t);
        uint64_t c = count_of(p);
        double n = (double)c * 4, f = (double)(p - 1) / p;
        expect("ring allreduce", p, price(m, "ring", CT_ALLREDUCE, p, c),
               2 * (p - 1) * A_US + 2 * f * n * B + f * n * G);
        double nt = n * p; /* gathered / scattered buffer */
        expect("ring allgather", p, price(m, "ring", CT_ALLGATHER, p, c),
               (p - 1) * A_US + f * nt * B);
        expect("ring reducescatter", p, price(m, "ring", CT_REDUCESCATTER, p, c),
               (p - 1) * A_US + f * nt * B + f * nt * G);
        expect("pairwise alltoall", p, price(m, "ring", CT_ALLTOALL, p, c),
               (p - 1) * A_US + f * nt * B);
        ct_model_free(m);
    }
}

Test(exact, rabenseifner_and_recursive_doubling)
{
    for (int i = 0; i < NP; i++) {
        int p = plist[i], q = 1 << lg_floor(p), l = lg_floor(p);
        struct ct_mtopo t = textbook(p);
        struct ct_model *m = ct_model_new(&t);
        uint64_t c = count_of(p);
        double n = (double)c * 4, fq = (double)(q - 1) / q;
        double core = 2 * l * A_US + 2 * fq * n * B + fq * n * G;
        /* non-power-of-two: fold the extra ranks in (a + nb + ng) and out (a + nb) */
        double fold = p == q ? 0 : (A_US + n * B + n * G) + (A_US + n * B);
        expect("rdh allreduce", p, price(m, "rdh", CT_ALLREDUCE, p, c), core + fold);
        if (p == q) {
            double nt = n * p, f = (double)(p - 1) / p;
            expect("recursive-doubling allgather", p, price(m, "rdh", CT_ALLGATHER, p, c),
                   l * A_US + f * nt * B);
            expect("recursive-halving reducescatter", p,
                   price(m, "rdh", CT_REDUCESCATTER, p, c), l * A_US + f * nt * B + f * nt * G);
        }
        ct_model_free(m);
    }
}

Test(exact, bruck)
{
    for (int i = 0; i < NP; i++) {
        int p = plist[i];
        struct ct_mtopo t = textbook(p);
        struct ct_model *m = ct_model_new(&t);
        uint64_t c = count_of(p);
        double n = (double)c * 4 * p, f = (double)(p - 1) / p;
        expect("bruck allgather", p, price(m, "bruck", CT_ALLGATHER, p, c),
               lg_ceil(p) * A_US + f * n * B);
        if ((p & (p - 1)) == 0) /* Thakur et al.: lg p a + (n/2) lg p b */
            expect("bruck alltoall", p, price(m, "bruck", CT_ALLTOALL, p, c),
                   lg_ceil(p) * A_US + n / 2 * lg_ceil(p) * B);
        ct_model_free(m);
    }
}

/* The lockstep paths (sym) and the full timeline (full) price algo's coll at size alike;
 * the lockstep path's period (ct_model_cost.period), -1 when the job is not supported. */
static int same_price(struct ct_model *sym, struct ct_model *full, const char *algo, int c,
                      uint64_t size, const char *where)
{
    struct ct_model_cost x, y;
    struct ct_err err = {0};
    const struct ct_algo *al = ct_algo_find(algo);
    int r1 = ct_model_price_size(sym, al, (enum ct_coll)c, CT_FLOAT32, CT_SUM, NULL, 0, size,
                                 &x, &err);
    int r2 = ct_model_price_size(full, al, (enum ct_coll)c, CT_FLOAT32, CT_SUM, NULL, 0, size,
                                 &y, &err);
    cr_assert_eq(r1, r2, "%s", err.msg);
    if (r1 < 0)
        return -1;
    cr_expect(fabs(x.time_us - y.time_us) <= 1e-9 * y.time_us,
              "%s %s %s: lockstep %.9g us (period %d), timeline %.9g us", algo,
              ct_coll_name((enum ct_coll)c), where, x.time_us, x.period, y.time_us);
    return x.period;
}

/* The lockstep path and the full timeline agree wherever both apply (sizes that divide
 * evenly: with uneven blocks lockstep prices every rank at the largest block). */
Test(exact, symmetry_equals_full_timeline)
{
    const char *algos[] = {"ring", "rdh", "bruck", "mesh", "simple-ring", "bidir-ring"};
    const int ps[] = {2, 3, 4, 7, 8, 16};
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        int p = ps[k];
        struct ct_mtopo t;
        struct ct_err err = {0};
        cr_assert_eq(ct_mtopo_preset("dgx-h100", &t, &err), 0, "%s", err.msg);
        t.ranks_per_node = p > 4 && p % 2 == 0 ? p / 2 : p;
        t.rails = t.ranks_per_node;
        t.nodes = p / t.ranks_per_node;
        struct ct_model *sym = ct_model_new(&t), *full = ct_model_new(&t);
        ct_model_set_symmetry(full, false);
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
            for (int c = 0; c < CT_COLL_COUNT; c++) {
                char where[32];
                snprintf(where, sizeof where, "p=%d", p);
                if (ct_algo_find(algos[a])->colls & CT_COLL_BIT(c))
                    same_price(sym, full, algos[a], c, (uint64_t)p << 16, where);
            }
        ct_model_free(sym);
        ct_model_free(full);
    }
}

/* Ring over 4 nodes of 2: the one inter-node flow per node shares nothing; a mesh
 * allgather puts 6 flows on every NIC. Oversubscription slows spine-crossing flows. */
Test(sharing, nic_and_spine)
{
    struct ct_mtopo t;
    ct_mtopo_init(&t);
    snprintf(t.name, sizeof t.name, "small");
    t.nodes = 4;
    t.ranks_per_node = 2;
    t.rails = 1;
    t.intra.gbps = 100;
    t.nic.gbps = 10;
    t.nodes_per_leaf = 2;
    struct ct_err err = {0};
    cr_assert_eq(ct_mtopo_check(&t, &err), 0, "%s", err.msg);
    struct ct_model *m = ct_model_new(&t);
    struct ct_model_cost ring, mesh;
    uint64_t size = 8 << 20;
    cr_assert_eq(ct_model_price_size(m, ct_algo_find("ring"), CT_ALLGATHER, CT_FLOAT32, CT_SUM,
                                     NULL, 0, size, &ring, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_model_price_size(m, ct_algo_find("mesh"), CT_ALLGATHER, CT_FLOAT32, CT_SUM,
                                     NULL, 0, size, &mesh, &err), 0, "%s", err.msg);
    /* ring: 7 steps of size/8 at the NIC rate; mesh: each NIC carries 2 ranks x 6 remote
     * peers = 12 flows of size/8 each */
    double blk = size / 8.0 / 1e4;
    cr_expect(fabs(ring.time_us - 7 * blk) < 1e-6 * ring.time_us, "ring %.6g vs %.6g",
              ring.time_us, 7 * blk);
    cr_expect(fabs(mesh.time_us - 12 * blk) < 1e-6 * mesh.time_us, "mesh %.6g vs %.6g",
              mesh.time_us, 12 * blk);
    ct_model_free(m);
    /* 2:1 oversubscribed: the leaf uplink carries half of its nodes' NIC rate */
    cr_assert_eq(ct_mtopo_net(&t, "railfat:2:1", &err), 0, "%s", err.msg);
    m = ct_model_new(&t);
    struct ct_model_cost mesh2;
    cr_assert_eq(ct_model_price_size(m, ct_algo_find("mesh"), CT_ALLGATHER, CT_FLOAT32, CT_SUM,
                                     NULL, 0, size, &mesh2, &err), 0, "%s", err.msg);
    /* per leaf: 2 nodes x 2 ranks x 4 far peers = 16 flows over an uplink of 10 GB/s */
    cr_expect(fabs(mesh2.time_us - 16 * blk) < 1e-6 * mesh2.time_us, "oversubscribed %.6g vs %.6g",
              mesh2.time_us, 16 * blk);
    ct_model_free(m);
}

Test(topo, presets_load_and_bad_files_fail)
{
    struct ct_err err = {0};
    struct ct_mtopo t;
    for (size_t i = 0; ct_mtopo_preset_at(i); i++)
        cr_expect_eq(ct_mtopo_preset(ct_mtopo_preset_at(i), &t, &err), 0, "%s", err.msg);
    cr_expect_eq(ct_mtopo_preset("trn2", &t, &err), 0);
    cr_expect_eq(t.torus_rows * t.torus_cols, 16);
    const char *missing = "{\"schema\":\"colltune-model-topology/1\",\"name\":\"x\","
                          "\"node\":{\"ranks\":8,\"intra\":{\"alpha_us\":1}}}";
    ct_mtopo_init(&t);
    cr_expect_lt(ct_mtopo_parse(missing, "x.json", &t, &err), 0);
    cr_expect(strstr(err.msg, "missing link rate"), "%s", err.msg);
    const char *neg = "{\"schema\":\"colltune-model-topology/1\",\"name\":\"x\","
                      "\"node\":{\"ranks\":8,\"intra\":{\"alpha_us\":1,\"gbps\":-3}}}";
    ct_mtopo_init(&t);
    cr_expect_lt(ct_mtopo_parse(neg, "x.json", &t, &err), 0);
    cr_expect(strstr(err.msg, "-3"), "%s", err.msg);
    cr_assert_eq(ct_mtopo_preset("dgx-h100", &t, &err), 0);
    struct ct_shape s;
    cr_expect_lt(ct_model_shape(&t, 12, &s, &err), 0);
    cr_expect(strstr(err.msg, "cannot place 12"), "%s", err.msg);
    cr_expect_lt(ct_mtopo_net(&t, "railfat:1:2", &err), 0);
}

/* Schedules that repeat every pair, node or two nodes of ranks (kangaring, hier,
 * rail-ring, flat-ring) are priced one period in lockstep; that equals the full timeline
 * on a uniform fabric: one leaf, and leaves of two nodes under a 2:1 oversubscribed spine
 * (a period of two nodes then fills one leaf). With 3 nodes nothing is periodic (rail-ring
 * closes its ring across rails) and both sides take the full timeline. */
Test(exact, periodic_equals_full_timeline)
{
    const char *algos[] = {"rail-ring", "kangaring", "hier", "flat-ring", "ring", "mesh"};
    const int nodes[] = {3, 4, 8, 16};
    const char *nets[] = {"railfat", "railfat:2:1"};
    const int leaf[] = {0, 2}; /* nodes per leaf: 2 makes the spine matter */
    int lockstep = 0;
    for (size_t k = 0; k < sizeof nodes / sizeof nodes[0]; k++)
        for (size_t n = 0; n < sizeof nets / sizeof nets[0]; n++) {
            struct ct_mtopo t;
            struct ct_err err = {0};
            cr_assert_eq(ct_mtopo_preset("dgx-h100", &t, &err), 0, "%s", err.msg);
            t.nodes = nodes[k];
            cr_assert_eq(ct_mtopo_net(&t, nets[n], &err), 0, "%s", err.msg);
            t.nodes_per_leaf = leaf[n];
            int p = ct_mtopo_ranks(&t);
            struct ct_model *sym = ct_model_new(&t), *full = ct_model_new(&t);
            ct_model_set_symmetry(full, false);
            for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
                for (int c = 0; c < CT_COLL_COUNT; c++) {
                    char where[48];
                    snprintf(where, sizeof where, "%d nodes %s", nodes[k], nets[n]);
                    if (!(ct_algo_find(algos[a])->colls & CT_COLL_BIT(c)))
                        continue;
                    int period = same_price(sym, full, algos[a], c, (uint64_t)p << 18, where);
                    lockstep += period == 16 && !strcmp(algos[a], "rail-ring");
                }
            ct_model_free(sym);
            ct_model_free(full);
        }
    /* rail-ring (period two nodes, 16 ranks) went the periodic way wherever it could: 4, 8
     * and 16 nodes, both fabrics, its three collectives */
    cr_expect_geq(lockstep, 3 * 2 * 3, "rail-ring priced in lockstep %d times", lockstep);
}

/* msg_us: every peer a rank sends to in a step costs it msg_us more (posting its sends one
 * after another). Ring allreduce sends once in each of its 2(p-1) steps, mesh to p-1 peers
 * in each of its two, recursive doubling once in each of its 2 lg p (power-of-two p). */
Test(exact, message_overhead_counts_every_send)
{
    const double M = 0.25;
    for (int k = 0; k < NP; k++) {
        int p = plist[k];
        if (p > 64)
            continue;
        struct ct_mtopo t0 = textbook(p), t1 = textbook(p);
        t1.msg_us = M;
        struct ct_model *m0 = ct_model_new(&t0), *m1 = ct_model_new(&t1);
        uint64_t c = count_of(p);
        expect("ring + messages", p, price(m1, "ring", CT_ALLREDUCE, p, c),
               price(m0, "ring", CT_ALLREDUCE, p, c) + 2 * (p - 1) * M);
        expect("mesh + messages", p, price(m1, "mesh", CT_ALLREDUCE, p, c),
               price(m0, "mesh", CT_ALLREDUCE, p, c) + 2 * (p - 1) * M);
        if ((p & (p - 1)) == 0)
            expect("rdh + messages", p, price(m1, "rdh", CT_ALLREDUCE, p, c),
                   price(m0, "rdh", CT_ALLREDUCE, p, c) + 2 * lg_floor(p) * M);
        ct_model_free(m0);
        ct_model_free(m1);
    }
}

/* Time sharing: 4 ranks on a node of 2 cores. In lockstep every rank is busy in every step,
 * so each step takes twice as long: ring allreduce costs exactly twice its price without
 * sharing, and so does its full timeline (each rank's steps overlap the other three's).
 * simple-ring's chain keeps two ranks busy at a time (the sender and the receiver of a
 * hop): on 2 cores its price does not change, on 1 core it doubles. 4 cores: no sharing. */
Test(sharing, ranks_beyond_cores_share_them)
{
    const int p = 4;
    uint64_t c = count_of(p) << 6;
    struct ct_mtopo t0 = textbook(p), t2 = textbook(p), t1 = textbook(p), t4 = textbook(p);
    t2.cores_per_node = 2;
    t1.cores_per_node = 1;
    t4.cores_per_node = 4;
    struct ct_model *m0 = ct_model_new(&t0), *m2 = ct_model_new(&t2), *m1 = ct_model_new(&t1),
                    *m4 = ct_model_new(&t4), *f0 = ct_model_new(&t0), *f2 = ct_model_new(&t2);
    ct_model_set_symmetry(f0, false);
    ct_model_set_symmetry(f2, false);
    double ring0 = price(m0, "ring", CT_ALLREDUCE, p, c);
    expect("ring, 2 cores", p, price(m2, "ring", CT_ALLREDUCE, p, c), 2 * ring0);
    expect("ring, 4 cores", p, price(m4, "ring", CT_ALLREDUCE, p, c), ring0);
    double full0 = price(f0, "ring", CT_ALLREDUCE, p, c),
           full2 = price(f2, "ring", CT_ALLREDUCE, p, c);
    cr_expect(full2 > 1.9 * full0 && full2 <= 2 * full0 * (1 + 1e-9),
              "ring's full timeline on 2 cores: %.6g us, without sharing %.6g", full2, full0);
    double chain0 = price(m0, "simple-ring", CT_ALLREDUCE, p, c);
    expect("simple-ring, 2 cores", p, price(m2, "simple-ring", CT_ALLREDUCE, p, c), chain0);
    double chain1 = price(m1, "simple-ring", CT_ALLREDUCE, p, c);
    cr_expect(chain1 > 1.9 * chain0 && chain1 <= 2 * chain0 * (1 + 1e-9),
              "simple-ring on 1 core: %.6g us, without sharing %.6g", chain1, chain0);
    ct_model_free(m0);
    ct_model_free(m2);
    ct_model_free(m1);
    ct_model_free(m4);
    ct_model_free(f0);
    ct_model_free(f2);
}

/* t saved to a file and loaded back into u */
static void round_trip(const struct ct_mtopo *t, struct ct_mtopo *u)
{
    struct ct_err err = {0};
    char path[] = "/tmp/ct-topo-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    close(fd);
    cr_assert_eq(ct_mtopo_save(path, t, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_mtopo_load(path, u, &err), 0, "%s", err.msg);
    unlink(path);
}

Test(topo, cores_round_trip_and_bad_counts_fail)
{
    struct ct_err err = {0};
    struct ct_mtopo t = textbook(4), u;
    t.cores_per_node = 2;
    round_trip(&t, &u);
    cr_expect_eq(u.cores_per_node, 2);
    const char *neg = "{\"schema\":\"colltune-model-topology/1\",\"name\":\"x\","
                      "\"node\":{\"ranks\":4,\"cores\":-2,\"intra\":{\"alpha_us\":1,\"gbps\":3}}}";
    ct_mtopo_init(&u);
    cr_expect_lt(ct_mtopo_parse(neg, "x.json", &u, &err), 0);
    cr_expect(strstr(err.msg, "cores"), "%s", err.msg);
}

/* The memory hierarchy: a node's working set (every rank's input and output) beyond its
 * cache makes each byte that misses (the part the cache cannot hold) mem_factor times as
 * dear: the transfer inside a node, the reduction and the copies; latencies unchanged, and
 * a transfer through a NIC unchanged. */
Test(memory, a_working_set_beyond_the_cache_slows_the_bytes_inside_a_node)
{
    const int p = 4;
    const double F = 3;
    uint64_t c = count_of(p) << 6;
    double n = (double)c * 4, f = (double)(p - 1) / p, ws = p * 2 * n;
    struct ct_mtopo t = textbook(p);
    t.mem_factor = F;
    t.cache_mib = ws / 1048576.0; /* the working set fits exactly: no miss */
    struct ct_model *m = ct_model_new(&t);
    double bytes = 2 * f * n * B + f * n * G;
    expect("ring allreduce in cache", p, price(m, "ring", CT_ALLREDUCE, p, c),
           2 * (p - 1) * A_US + bytes);
    ct_model_free(m);
    t.cache_mib = ws / 4 / 1048576.0; /* three quarters miss */
    m = ct_model_new(&t);
    expect("ring allreduce beyond the cache", p, price(m, "ring", CT_ALLREDUCE, p, c),
           2 * (p - 1) * A_US + (1 + (F - 1) * 0.75) * bytes);
    ct_model_free(m);
    /* two nodes of one rank: the NIC's bytes as they were, the reduction from memory */
    struct ct_mtopo u = textbook(1);
    u.nodes = 2;
    u.rails = 1;
    u.nic.alpha_us = 7;
    u.nic.gbps = 1;
    u.mem_factor = F;
    u.cache_mib = 2 * n / 4 / 1048576.0;
    m = ct_model_new(&u);
    expect("ring allreduce over a NIC beyond the cache", 2, price(m, "ring", CT_ALLREDUCE, 2, c),
           2 * 7 + n / 1e3 + (1 + (F - 1) * 0.75) * 0.5 * n * G);
    ct_model_free(m);
    /* a file keeps them and the one-sided rate; a negative cache is refused */
    struct ct_err err = {0};
    struct ct_mtopo v;
    t.onesided_gbps = 7;
    round_trip(&t, &v);
    cr_expect(v.cache_mib == t.cache_mib && v.mem_factor == F && v.onesided_gbps == 7,
              "%g MiB, %gx, one-sided %g GB/s", v.cache_mib, v.mem_factor, v.onesided_gbps);
    const char *neg = "{\"schema\":\"colltune-model-topology/1\",\"name\":\"x\",\"node\":"
                      "{\"ranks\":4,\"cache_mib\":-1,\"intra\":{\"alpha_us\":1,\"gbps\":3}}}";
    ct_mtopo_init(&v);
    cr_expect_lt(ct_mtopo_parse(neg, "x.json", &v, &err), 0);
    cr_expect(strstr(err.msg, "negative"), "%s", err.msg);
}

/* One-sided gets and puts (symm) take their own rate where a topology gives one, the
 * two-sided rate otherwise: symm's price is affine in 1 / onesided_gbps (its fences and
 * latencies fixed, its bytes moved once) and a two-sided schedule (ring) does not change. */
Test(onesided, gets_and_puts_take_their_own_rate)
{
    const int p = 4;
    uint64_t c = count_of(p) << 6;
    double sym[4], ring[2];
    const double rate[] = {0, GBPS, 2 * GBPS, 4 * GBPS};
    for (int i = 0; i < 4; i++) {
        struct ct_mtopo t = textbook(p);
        t.gamma_gbps = 0; /* free reductions: a get-reduce costs its read */
        t.onesided_gbps = rate[i];
        struct ct_model *m = ct_model_new(&t);
        sym[i] = price(m, "symm", CT_ALLREDUCE, p, c);
        if (i < 2)
            ring[i] = price(m, "ring", CT_ALLREDUCE, p, c);
        ct_model_free(m);
    }
    expect("symm, no one-sided rate = the two-sided rate", p, sym[0], sym[1]);
    expect("ring, a one-sided rate given", p, ring[1], ring[0]);
    cr_expect(sym[2] < sym[1], "symm at twice the one-sided rate %.6g, at the rate %.6g", sym[2],
              sym[1]);
    expect("symm, affine in 1 / rate", p, sym[2] - sym[3], (sym[1] - sym[2]) / 2);
}

/* The fit recovers a topology from points priced on it: 4 ranks sharing 2 cores, every
 * knob the fit moves set away from its start, points of six algorithms over 4 KiB..16
 * MiB (every 4x); fitted from the this-host preset's starting values, every point is
 * predicted back within 2% (the knobs trade off against each other, so the check is on the
 * prices). */
Test(calibrate, recovers_what_it_was_priced_on)
{
    struct ct_err err = {0};
    struct ct_mtopo truth;
    cr_assert_eq(ct_mtopo_preset("this-host", &truth, &err), 0, "%s", err.msg);
    truth.ranks_per_node = 4;
    truth.nodes = 1;
    truth.cores_per_node = 2;
    truth.intra.alpha_us = 12;
    truth.intra.gbps = 9;
    truth.gamma_gbps = 6;
    truth.copy_gbps = 15;
    truth.step_us = 20;
    truth.slice_us = 3;
    truth.msg_us = 5;
    truth.cache_mib = 12; /* 4 ranks x 2 buffers: the knee at 1.5 MiB, inside the sizes */
    truth.mem_factor = 3;
    truth.onesided_gbps = 20;
    const char *algos[] = {"ring", "mesh", "rdh", "simple-ring", "mesh-1step", "symm"};
    struct ct_mcalib c = {0};
    c.nranks = 4;
    c.nnodes = 1;
    c.pts = ct_xcalloc(6 * 7, sizeof *c.pts);
    for (size_t a = 0; a < 6; a++)
        for (uint64_t s = 4096; s <= (16u << 20); s *= 4) {
            struct ct_mpoint *p = &c.pts[c.n++];
            p->coll = CT_ALLREDUCE;
            snprintf(p->algo, sizeof p->algo, "%s", algos[a]);
            p->size = s;
        }
    cr_assert_eq(ct_mcalib_predict(&c, &truth, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < c.n; i++)
        c.pts[i].measured_us = c.pts[i].predicted_us;
    struct ct_mtopo fit;
    cr_assert_eq(ct_mtopo_preset("this-host", &fit, &err), 0, "%s", err.msg);
    fit.cores_per_node = 2;
    cr_assert_eq(ct_mcalib_fit(&c, &fit, &err), 0, "%s", err.msg);
    for (size_t i = 0; i < c.n; i++)
        cr_expect(fabs(c.pts[i].predicted_us / c.pts[i].measured_us - 1) < 0.02,
                  "%s at %llu B: fitted %.3f us, priced on the truth %.3f", c.pts[i].algo,
                  (unsigned long long)c.pts[i].size, c.pts[i].predicted_us, c.pts[i].measured_us);
    free(c.pts);
}
