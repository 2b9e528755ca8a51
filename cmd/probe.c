/* SPDX-License-Identifier: MIT */
/* `colltune probe`: discover this host's topology (or import a captured one) and print the
 * summary, GPU/NIC matrix, NIC table, torus, rails, ceilings and warnings, or JSON. */
#include "cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/file.h"
#include "../probe/cluster.h"
#include "../probe/topo.h"
#include "../transport/launch.h"

#define CMD "probe"

struct opts {
    const char *from, *file, *out, *view;
    int json, local;
    struct ct_probe_cfg cfg;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: colltune probe [--from FORMAT FILE | --sysfs-root DIR] [--torus RxC]\n"
               "                      [--view NAME | --json] [--out FILE] [--local N]\n\n"
               "  --from FORMAT FILE  import captured data instead of probing this host:\n");
    for (size_t i = 0; ct_importer_at(i); i++)
        fprintf(f, "                        %-11s %s\n", ct_importer_at(i)->name,
                ct_importer_at(i)->summary);
    fprintf(f, "  --sysfs-root DIR    read a captured /sys (and /proc) tree under DIR\n"
               "  --torus RxC         accelerators form an R x C torus (override)\n"
               "  --view NAME         all (default) or one of:\n");
    for (size_t i = 0; ct_view_at(i); i++)
        fprintf(f, "                        %-11s %s\n", ct_view_at(i)->name,
                ct_view_at(i)->summary);
    fprintf(f, "  --local N           cluster mode with N local ranks (launchers: see 'run'):\n"
               "                      every rank probes its host, rank 0 prints each distinct\n"
               "                      host shape once and the hosts that differ\n"
               "  --json              the topology as JSON (schema colltune-topo/1; in\n"
               "                      cluster mode colltune-cluster/1, every host's)\n"
               "  --out FILE          write to FILE instead of standard output\n"
               "  -h, --help          this help\n");
}

static int parse_torus(const char *s, struct ct_probe_cfg *cfg)
{
    char *x = strchr(s, 'x');
    long r, c;
    if (!x)
        return -1;
    char rows[16];
    size_t n = (size_t)(x - s);
    if (n == 0 || n >= sizeof rows)
        return -1;
    memcpy(rows, s, n);
    rows[n] = 0;
    if (ct_parse_int(rows, 1, 4096, &r) < 0 || ct_parse_int(x + 1, 1, 4096, &c) < 0 || r * c < 2 ||
        r * c > 4096)
        return -1;
    cfg->torus_rows = (int)r;
    cfg->torus_cols = (int)c;
    return 0;
}

/* Returns -1 to continue, else an exit code. */
static int parse(int argc, char **argv, struct opts *o)
{
    static const struct option lo[] = {
        {"from", required_argument, NULL, 'f'},  {"sysfs-root", required_argument, NULL, 's'},
        {"torus", required_argument, NULL, 't'}, {"json", no_argument, NULL, 'j'},
        {"out", required_argument, NULL, 'o'},   {"view", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},        {"local", required_argument, NULL, 'l'},
        {NULL, 0, NULL, 0},
    };
    optind = 0;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "+h", lo, NULL)) != -1;) {
        switch (c) {
        case 'f':
            o->from = optarg;
            if (optind >= argc)
                return ct_cmd_fail(CMD, CT_EXIT_USAGE, "--from needs FORMAT FILE");
            o->file = argv[optind++];
            break;
        case 's': o->cfg.sysfs_root = optarg; break;
        case 't':
            if (parse_torus(optarg, &o->cfg) < 0)
                return ct_cmd_fail(CMD, CT_EXIT_USAGE, "bad --torus '%s' (expected RxC, e.g. 4x4)",
                                   optarg);
            break;
        case 'j': o->json = 1; break;
        case 'l': {
            long n;
            if (ct_parse_int(optarg, 1, 1024, &n) < 0)
                return ct_cmd_fail(CMD, CT_EXIT_USAGE, "bad --local '%s' (1..1024 ranks)", optarg);
            o->local = (int)n;
            break;
        }
        case 'o': o->out = optarg; break;
        case 'v': o->view = optarg; break;
        case 'h': usage(stdout); return CT_EXIT_OK;
        default:
            return ct_cmd_fail(CMD, CT_EXIT_USAGE, "unknown or incomplete option '%s' (see -h)",
                               argv[optind - 1]);
        }
    }
    if (optind < argc)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (o->from && !ct_importer_find(o->from))
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "unknown --from format '%s' (see -h)", o->from);
    if (o->from && o->cfg.sysfs_root)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "--from and --sysfs-root exclude each other");
    if (o->view && strcmp(o->view, "all") && !ct_view_find(o->view))
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "unknown --view '%s' (see -h)", o->view);
    if (o->from && o->local)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "--from and --local exclude each other");
    if (o->view && o->json)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "--view and --json exclude each other");
    return -1;
}

static int emit(const struct ct_topo *t, const struct opts *o, FILE *out, struct ct_err *err)
{
    if (o->json) {
        char *s = ct_topo_to_json(t, err);
        if (!s)
            return -1;
        fprintf(out, "%s\n", s);
        free(s);
        return 0;
    }
    if (!o->view || !strcmp(o->view, "all"))
        return ct_view_render_all(t, out, err);
    return ct_view_find(o->view)->render(t, out, err);
}

static FILE *open_out(const struct opts *o)
{
    return o->out ? fopen(o->out, "w") : stdout;
}

static int close_out(const struct opts *o, FILE *out)
{
    int e = ct_file_stream_error(out);
    if (o->out && fclose(out) != 0 && !e)
        e = errno ? errno : EIO;
    if (e)
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "cannot write %s%s%s: %s", o->out ? "'" : "",
                           o->out ? o->out : "output", o->out ? "'" : "", strerror(e));
    return CT_EXIT_OK;
}

/* Rank 0: one topology per host (the host's first rank), each distinct shape printed once;
 * a failed write of it is said, its code in *said. */
static int print_cluster(struct ct_boot *b, const char *all, size_t stride, const struct opts *o,
                         int *said, struct ct_err *err)
{
    const char **names = ct_xcalloc((size_t)b->size, sizeof *names);
    for (int r = 0; r < b->size; r++)
        names[r] = b->hosts[r];
    struct ct_topo **hosts = NULL;
    size_t nh = 0;
    int rc = ct_cluster_hosts(names, b->size, all, stride, &hosts, &nh, err);
    FILE *out = rc == 0 ? open_out(o) : NULL;
    if (rc == 0 && !out)
        rc = ct_err_sys(err, CT_EIO, "cannot open '%s' for writing", o->out);
    struct ct_hetero het = {0};
    if (rc == 0)
        rc = ct_topo_hetero((const struct ct_topo *const *)hosts, nh, &het, err);
    if (rc == 0 && o->json)
        rc = ct_cluster_json(out, names, all, stride, hosts, nh, &het, err);
    for (size_t g = 0; rc == 0 && !o->json && g < het.n_groups; g++) {
        const struct ct_topo *t = hosts[het.group_rep[g]];
        fprintf(out, "==== host shape %zu of %zu: %zu host(s), e.g. %s (ranks %d..%d)\n\n", g + 1,
                het.n_groups, het.group_size[g], names[t->rank_first], t->rank_first,
                t->rank_first + t->rank_count - 1);
        rc = emit(t, o, out, err);
        fputc('\n', out);
    }
    if (rc == 0 && !o->json)
        rc = ct_hetero_render((const struct ct_topo *const *)hosts, nh, &het, out, err);
    ct_hetero_release(&het);
    ct_cluster_hosts_free(hosts, nh);
    free(names);
    if (out && (*said = close_out(o, out)) != CT_EXIT_OK && rc == 0)
        rc = CT_EIO;
    return rc;
}

static int probe_rank(struct ct_boot *b, void *arg)
{
    const struct opts *o = arg;
    struct ct_err err = {0};
    struct ct_topo *t = ct_topo_new();
    char *mine = NULL, *all = NULL;
    size_t stride = 0;
    int rc = ct_probe_local(t, &o->cfg, &err), said = CT_EXIT_FAIL;
    if (rc == 0 && !(mine = ct_topo_to_json(t, &err)))
        rc = -1;
    ct_topo_free(t);
    if (rc == 0 && !(all = ct_boot_allgatherv(b, mine, strlen(mine) + 1, &stride, &err)))
        rc = -1;
    if (rc == 0 && b->rank == 0)
        rc = print_cluster(b, all, stride, o, &said, &err);
    free(mine);
    free(all);
    if (rc < 0 && err.msg[0]) /* else said (a failed write of the output) */
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "rank %d (%s): %s", b->rank, b->host, err.msg);
    return rc < 0 ? said : CT_EXIT_OK;
}

int cmd_probe(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse(argc, argv, &o); /* then --out refused before anything runs (exit 2) */
    if (rc >= 0 || (rc = ct_cmd_out_check(CMD, "out", o.out, false)) != 0)
        return rc;
    struct ct_err err = {0};
    if (o.local) {
        struct ct_launch_cfg lc = {o.local, 0, 60 * 1000000000LL};
        int dead, sig;
        rc = ct_launch(&lc, probe_rank, &o, &dead, &sig, &err);
        if (rc < 0)
            return ct_cmd_fail(CMD, CT_EXIT_FAIL, "%s", err.msg);
        return rc;
    }
    struct ct_topo *t = ct_topo_new();
    rc = o.from ? ct_topo_import(t, o.from, o.file, &o.cfg, &err) : ct_probe_local(t, &o.cfg, &err);
    if (rc < 0) {
        ct_topo_free(t);
        return ct_cmd_fail(CMD, o.from || rc == CT_EINVAL ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s",
                           err.msg);
    }
    FILE *out = open_out(&o);
    if (!out) {
        ct_topo_free(t);
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "cannot open '%s' for writing", o.out);
    }
    rc = emit(t, &o, out, &err);
    int wrc = close_out(&o, out);
    ct_topo_free(t);
    if (rc < 0)
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "%s", err.msg);
    return wrc;
}
