/* SPDX-License-Identifier: MIT */
/* neuron-ls importer (text, JSON), Neuron sysfs source, --torus override, and the torus
 * algorithms: grid inference, two edge-disjoint Hamiltonian cycles, hypercube labels. */
#include "probe_test.h"

#include <ftw.h>

static void check_neighbours(const struct ct_topo *t)
{
    static const int some[][5] = {{0, 12, 3, 4, 1}, {5, 1, 4, 9, 6}, {15, 11, 14, 3, 12}};
    for (size_t i = 0; i < 3; i++) {
        const struct ct_accel *a = &t->accel[ct_topo_find_accel(t, some[i][0])];
        cr_assert_eq(a->n_nbrs, 4);
        for (int j = 0; j < 4; j++)
            cr_expect_eq(a->nbrs[j], some[i][1 + j], "device %d neighbour %d", some[i][0], j);
    }
    int links = 0;
    for (int d = 0; d < 16; d++) {
        const struct ct_accel *a = &t->accel[ct_topo_find_accel(t, d)];
        cr_assert_eq(a->n_nbrs, 4);
        int r = d / 4, c = d % 4; /* (north, west, south, east) with wrap-around */
        int want[4] = {((r + 3) % 4) * 4 + c, r * 4 + (c + 3) % 4, ((r + 1) % 4) * 4 + c,
                       r * 4 + (c + 1) % 4};
        for (int j = 0; j < 4; j++) {
            cr_expect_eq(a->nbrs[j], want[j], "device %d", d);
            for (int k = 0; k < j; k++)
                cr_expect_neq(a->nbrs[j], a->nbrs[k], "distinct neighbours");
            const struct ct_accel *b = &t->accel[ct_topo_find_accel(t, a->nbrs[j])];
            int back = 0;
            for (size_t k = 0; k < b->n_nbrs; k++)
                back |= b->nbrs[k] == d;
            cr_expect(back, "link %d-%d is symmetric", d, a->nbrs[j]);
            links += a->nbrs[j] > d;
        }
    }
    cr_expect_eq(links, 32);
    cr_expect_eq(t->torus_rows, 4);
    cr_expect_eq(t->torus_cols, 4);
}

Test(neuron, trn1_topology)
{
    struct ct_topo *t = load("neuron-ls", FIX_TRN1);
    cr_assert_eq(t->n_accel, 16);
    for (int d = 0; d < 16; d++) {
        const struct ct_accel *a = &t->accel[d];
        char bdf[32];
        snprintf(bdf, sizeof bdf, "0000:00:%02x.0", 4 + d);
        cr_expect_eq(a->index, d);
        cr_expect_eq(a->cores, 2);
        cr_expect_float_eq(a->mem_gb, 32, 1e-9);
        cr_expect_str_eq(a->busid, bdf);
    }
    check_neighbours(t);
    ct_topo_free(t);
}

Test(neuron, trn2_two_tables)
{
    struct ct_topo *t = load("neuron-ls", FIX_TRN2);
    static const char *const bdf[] = {"cc", "b5", "b6", "cb", "6f", "58", "59", "6e",
                                      "9b", "84", "85", "9a", "f8", "e1", "e2", "f7"};
    cr_assert_eq(t->n_accel, 16);
    cr_expect(has_note(t, "instance type trn2n.48xlarge"));
    for (int d = 0; d < 16; d++) {
        const struct ct_accel *a = &t->accel[d];
        char bus[32], ids[16];
        snprintf(bus, sizeof bus, "0000:%s:00.0", bdf[d]);
        cr_expect_str_eq(a->busid, bus, "BDFs are not in device order");
        cr_expect_eq(a->cores, 4);
        cr_expect_float_eq(a->mem_gb, 96, 1e-9);
        cr_expect_str_eq(a->model, "Trainium2");
        if (d > 12)
            continue; /* the excerpt's first table stops at device 12: no NUMA, core ids */
        snprintf(ids, sizeof ids, "%d-%d", 4 * d, 4 * d + 3);
        cr_expect_str_eq(a->core_ids, ids);
        int n1 = d < 4 || d >= 12;
        cr_expect_eq(a->numa, n1 ? 1 : 0, "device %d", d);
        cr_expect_str_eq(a->cpus, n1 ? "48-95,144-191" : "0-47,96-143");
    }
    check_neighbours(t);
    struct ct_topo *t1 = load("neuron-ls", FIX_TRN1);
    for (int d = 0; d < 16; d++) /* same torus as trn1 */
        for (int j = 0; j < 4; j++)
            cr_expect_eq(t->accel[d].nbrs[j], t1->accel[d].nbrs[j]);
    ct_topo_free(t1);
    ct_topo_free(t);
}

/* Lines of the "Neuron Device Topology" drawing, trailing blanks removed. */
static size_t diagram(const char *text, char lines[][128], size_t max)
{
    const char *p = strstr(text, "[ 0 ]");
    cr_assert_not_null(p);
    for (int up = 0; up < 4 && p > text; up++) { /* back to the first marker line */
        p--;
        while (p > text && p[-1] != '\n')
            p--;
    }
    size_t n = 0;
    while (*p && n < max) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && p[len - 1] == ' ')
            len--;
        if (!len || (!strchr("*\xe2 ", p[0])))
            break;
        snprintf(lines[n++], 128, "%.*s", (int)len, p);
        if (!e)
            break;
        p = e + 1;
    }
    return n;
}

/* all-to-all on a 4x4 torus is bounded by its bisection (8 links each way carry half of each
 * device's data: 2 x B_link x 15/16), not by the rings' 4 x B_link an AllReduce reaches */
Test(neuron, torus_alltoall_bisection)
{
    struct ct_topo *t = load("neuron-ls", FIX_TRN2);
    struct ct_ceiling *c;
    size_t nc = ct_ceilings_compute(t, 2, &c);
    int seen = 0;
    for (size_t i = 0; i < nc; i++) {
        if (strcmp(c[i].scope, "intra"))
            continue;
        if (!strcmp(c[i].coll, "alltoall")) {
            seen++;
            cr_expect(strstr(c[i].formula, "bisection of the 4x4 torus: 8 links each way") &&
                          strstr(c[i].formula, "busbw <= 2 x B_link x 15/16"),
                      "%s", c[i].formula);
        } else {
            cr_expect(strstr(c[i].formula, "4 x B_link per device"), "%s", c[i].formula);
        }
    }
    cr_expect_eq(seen, 1);
    free(c);
    ct_topo_free(t);
}

Test(neuron, drawing_matches_neuron_ls)
{
    const char *names[] = {FIX_TRN1, FIX_TRN2};
    for (int f = 0; f < 2; f++) {
        struct ct_topo *t = load("neuron-ls", names[f]);
        char *ours = render(t, "torus"), *theirs = slurp(fixture(names[f]), NULL);
        char a[32][128], b[32][128];
        size_t na = diagram(ours, a, 32), nb = diagram(theirs, b, 32);
        cr_expect_eq(na, 19, "%s: %zu lines", names[f], na);
        cr_assert_eq(na, nb);
        for (size_t i = 0; i < na; i++)
            cr_expect_str_eq(a[i], b[i], "line %zu", i);
        cr_expect(strstr(a[0], "*"), "wrap-around links marked *");
        free(ours);
        free(theirs);
        ct_topo_free(t);
    }
}

static int adjacent(const struct ct_topo *t, int x, int y)
{
    const struct ct_accel *a = &t->accel[x];
    for (size_t j = 0; j < a->n_nbrs; j++)
        if (a->nbrs[j] == t->accel[y].index)
            return 1;
    return 0;
}

static void check_cycles(const struct ct_topo *t, const struct ct_torus *tt)
{
    int n = tt->rows * tt->cols;
    cr_assert_not_null(tt->cycle[0]);
    cr_assert_not_null(tt->cycle[1]);
    unsigned char *used = calloc((size_t)(n * n), 1);
    for (int k = 0; k < 2; k++) {
        unsigned char *seen = calloc((size_t)n, 1);
        for (int i = 0; i < n; i++) {
            int x = tt->cycle[k][i], y = tt->cycle[k][(i + 1) % n];
            cr_expect(!seen[x]++, "cycle %d visits %d twice", k, x);
            cr_expect(adjacent(t, x, y), "cycle %d: %d-%d not a link", k, x, y);
            int lo = x < y ? x : y, hi = x < y ? y : x;
            cr_expect(!used[lo * n + hi]++, "link %d-%d used twice", lo, hi);
        }
        free(seen);
    }
    int total = 0;
    for (int i = 0; i < n * n; i++)
        total += used[i];
    cr_expect_eq(total, 2 * n, "the two cycles cover every link");
    free(used);
}

Test(neuron, hamiltonian_cycles_and_hypercube)
{
    struct ct_topo *t = load("neuron-ls", FIX_TRN2);
    struct ct_torus tt;
    struct ct_err err = {0};
    cr_assert_eq(ct_torus_build(t, &tt, &err), 0, "%s", err.msg);
    check_cycles(t, &tt);
    cr_assert_eq(tt.dims, 4, "a 4x4 torus is a 4D hypercube");
    for (int p = 0; p < 16; p++)
        for (int q = 0; q < 16; q++) {
            unsigned x = tt.label[p] ^ tt.label[q];
            int one_bit = x && !(x & (x - 1));
            cr_expect_eq(one_bit, adjacent(t, tt.dev[p], tt.dev[q]), "%d %d", p, q);
        }
    ct_torus_release(&tt);
    char *s = render(t, "torus");
    cr_expect(strstr(s, "4x4 torus = 4D hypercube"));
    free(s);
    ct_topo_free(t);
}

Test(neuron, torus_override)
{
    static const int shapes[][2] = {{4, 4}, {3, 4}, {5, 3}, {6, 6}, {8, 8}, {2, 8}, {1, 4}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        struct ct_topo *t = ct_topo_new();
        struct ct_err err = {0};
        cr_assert_eq(ct_topo_set_torus(t, shapes[s][0], shapes[s][1], &err), 0, "%s", err.msg);
        ct_topo_finalize(t);
        cr_expect(has_note(t, "placeholders"));
        struct ct_torus tt;
        cr_assert_eq(ct_torus_build(t, &tt, &err), 0, "%s", err.msg);
        if (shapes[s][0] >= 3 && shapes[s][1] >= 3)
            check_cycles(t, &tt);
        else
            cr_expect_null(tt.cycle[0], "a side of 1 or 2 has no two disjoint cycles");
        cr_expect_eq(tt.dims, (shapes[s][0] == 4 && shapes[s][1] == 4)   ? 4
                              : (shapes[s][0] == 1 && shapes[s][1] == 4) ? 2
                                                                         : 0);
        ct_torus_release(&tt);
        ct_topo_free(t);
    }
    struct ct_topo *t = load("neuron-ls", FIX_TRN1);
    struct ct_err err = {0};
    /* a shape against the listed links is refused (it drew a 2x8 grid beside the 4x4 table) */
    cr_expect_eq(ct_topo_set_torus(t, 2, 8, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "--torus 2x8: device 0's listed neighbours are not a 2x8 torus's"),
              "%s", err.msg);
    cr_expect_eq(t->torus_rows, 4, "the input's shape kept");
    cr_expect_eq(ct_topo_set_torus(t, 4, 4, &err), 0, "%s", err.msg);
    cr_expect_eq(ct_topo_set_torus(t, 3, 3, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "needs 9 devices, found 16"), "%s", err.msg);
    ct_topo_free(t);
}

/* --torus on a topology of GPUs and no accelerator: one device per GPU, so the shape must hold
 * them all, as for accelerators (it was placeholders of any count) */
Test(neuron, torus_over_gpus_must_count_them)
{
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    char bus[32];
    for (int g = 0; g < 8; g++) {
        snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + g);
        ct_topo_add_gpu(t, bus);
    }
    cr_expect_eq(ct_topo_set_torus(t, 3, 3, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "needs 9 devices, found 8 GPUs"), "%s", err.msg);
    cr_expect_eq(ct_topo_set_torus(t, 2, 4, &err), 0, "%s", err.msg);
    cr_expect_eq(t->n_accel, 8u);
    ct_topo_free(t);
}

Test(neuron, json_forms)
{
    static const char arr[] =
        "[{\"neuron_device\": 0, \"bdf\": \"00:1e.0\", \"connected_to\": [1, 1],"
        "  \"nc_count\": 8, \"memory_size\": 103079215104, \"numa_node\": 0,"
        "  \"instance_type\": \"trn2.48xlarge\"},"
        " {\"neuron_device\": 1, \"bdf\": \"00:1f.0\", \"connected_to\": [0, 0], \"nc_count\": 8,"
        "  \"memory_size\": 103079215104}]";
    static const char obj[] =
        "{\"neuron_devices\": [{\"neuron_device\": 3, \"connected_to\": null}]}";
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_assert_eq(ct_topo_import_buf(t, "neuron-ls", arr, sizeof arr - 1, "j.json", &err), 0, "%s",
                 err.msg);
    cr_expect_eq(t->n_accel, 2);
    cr_expect_str_eq(t->accel[0].busid, "0000:00:1e.0");
    cr_expect_eq(t->accel[1].cores, 8);
    cr_expect_float_eq(t->accel[1].mem_gb, 96, 1e-9);
    cr_expect_str_eq(t->accel[0].model, "Trainium2");
    cr_expect_eq(t->accel[0].numa, 0);
    ct_topo_free(t);
    t = ct_topo_new();
    cr_assert_eq(ct_topo_import_buf(t, "neuron-ls", obj, sizeof obj - 1, "o.json", &err), 0);
    cr_expect_eq(t->accel[0].index, 3);
    cr_expect_eq(t->accel[0].n_nbrs, 0);
    ct_topo_free(t);
}

Test(neuron, malformed)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[{\"neuron_device\": 0,", "line 1"},
        {"[{\"neuron_device\": \"zero\"}]", "neuron_device is missing or not a number"},
        {"[{\"neuron_device\": 0, \"connected_to\": [\"x\"]}]", "connected_to[0]"},
        {"{\"devices\": 3}", "expected an array"},
        {"just some text\n", "no neuron-ls device table"},
        {"+---+---+\n| NEURON | NEURON |\n| DEVICE | CORES |\n+---+---+\n| 0 | 2 | 9 |\n",
         "row has 3 cells, the table has 2 columns"},
        {"+---+---+\n| NEURON | PCI |\n| DEVICE | BDF |\n+---+---+\n| 0 | 00:zz.0 |\n",
         "PCI BDF '00:zz.0'"},
        {"+---+---+\n| NEURON | CONNECTED |\n| DEVICE | DEVICES |\n+---+---+\n| x | 1 |\n",
         "NEURON DEVICE 'x'"},
        {"+---+---+\n| NEURON | CONNECTED |\n| DEVICE | DEVICES |\n+---+---+\n| 0 | 1, a |\n",
         "CONNECTED DEVICES '1, a'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ct_topo *t = ct_topo_new();
        struct ct_err err = {0};
        cr_expect_eq(
            ct_topo_import_buf(t, "neuron-ls", cases[i].text, strlen(cases[i].text), "n.txt", &err),
            CT_EINVAL, "case %zu", i);
        cr_expect(strstr(err.msg, cases[i].want) && strstr(err.msg, "n.txt"),
                  "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
        ct_topo_free(t);
    }
}

static int rm_entry(const char *p, const struct stat *s, int f, struct FTW *w)
{
    return remove(p);
}

Test(neuron, sysfs_source)
{
    char root[] = "/tmp/ct-neuron-XXXXXX", path[PATH_MAX];
    cr_assert_not_null(mkdtemp(root));
    static const char *const nb[] = {"2, 1, 2, 1", "3, 0, 3, 0", "0, 3, 0, 3", "1, 2, 1, 2"};
    for (int d = 0; d < 4; d++) {
        snprintf(path, sizeof path, "mkdir -p %s/sys/devices/virtual/neuron_device/neuron%d", root,
                 d);
        cr_assert_eq(system(path), 0);
        snprintf(path, sizeof path,
                 "%s/sys/devices/virtual/neuron_device/neuron%d/"
                 "connected_devices",
                 root, d);
        FILE *f = fopen(path, "w");
        fprintf(f, "%s\n", nb[d]);
        fclose(f);
        snprintf(path, sizeof path, "%s/sys/devices/virtual/neuron_device/neuron%d/core_count",
                 root, d);
        f = fopen(path, "w");
        fprintf(f, "2\n");
        fclose(f);
    }
    struct ct_probe_cfg cfg = {.sysfs_root = root};
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_assert_eq(ct_probe_local(t, &cfg, &err), 0, "%s", err.msg);
    cr_expect_eq(t->n_accel, 4);
    cr_expect_eq(t->accel[3].cores, 2);
    cr_expect_eq(t->torus_rows, 2);
    cr_expect_eq(t->torus_cols, 2);
    ct_topo_free(t);
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}
