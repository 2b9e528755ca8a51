/* SPDX-License-Identifier: MIT */
/* `colltune probe`: discover this host's topology (or import a captured one) and print the
 * summary, GPU/NIC matrix, NIC table, torus, rails, ceilings and warnings, or JSON. */
#include "cmd.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../probe/topo.h"

#define CMD "probe"

struct opts {
    const char *from, *file, *out, *view;
    int json;
    struct ct_probe_cfg cfg;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: colltune probe [--from FORMAT FILE | --sysfs-root DIR] [--torus RxC]\n"
               "                      [--view NAME | --json] [--out FILE]\n\n"
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
    fprintf(f, "  --json              the topology as JSON (schema colltune-topo/1)\n"
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
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
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

int cmd_probe(int argc, char **argv)
{
    struct opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    struct ct_err err = {0};
    struct ct_topo *t = ct_topo_new();
    rc = o.from ? ct_topo_import(t, o.from, o.file, &o.cfg, &err) : ct_probe_local(t, &o.cfg, &err);
    if (rc < 0) {
        ct_topo_free(t);
        return ct_cmd_fail(CMD, o.from || rc == CT_EINVAL ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s",
                           err.msg);
    }
    FILE *out = o.out ? fopen(o.out, "w") : stdout;
    if (!out) {
        ct_topo_free(t);
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "cannot open '%s' for writing", o.out);
    }
    rc = emit(t, &o, out, &err);
    int werr = fflush(out) != 0 || ferror(out);
    if (o.out && fclose(out) != 0)
        werr = 1;
    ct_topo_free(t);
    if (rc < 0)
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "%s", err.msg);
    if (werr)
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "cannot write '%s'", o.out ? o.out : "stdout");
    return CT_EXIT_OK;
}
