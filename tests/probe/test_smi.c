/* SPDX-License-Identifier: MIT */
/* `nvidia-smi topo -m` importer: the DGX A100 facts, tabs vs spaces, missing columns, older
 * layouts, and our own matrix view read back to the same matrix. */
#include "probe_test.h"

static struct ct_topo *import_text(const char *text, struct ct_err *err)
{
    struct ct_topo *t = ct_topo_new();
    if (ct_topo_import_buf(t, "nvidia-smi", text, strlen(text), "smi.txt", err) < 0) {
        ct_topo_free(t);
        return NULL;
    }
    return t;
}

static void check_dgx_a100(const struct ct_topo *t)
{
    static const char *const cpus[] = {"48-63,176-191", "16-31,144-159", "112-127,240-255",
                                       "80-95,208-223"};
    static const int numa[] = {3, 1, 7, 5};
    cr_assert_eq(t->n_gpu, 8);
    cr_assert_eq(t->n_nic, 10);
    for (int g = 0; g < 8; g++) {
        cr_expect_str_eq(t->gpu[g].cpus, cpus[g / 2]);
        cr_expect_eq(t->gpu[g].numa, numa[g / 2]);
    }
    for (int n = 0; n < 10; n++) {
        char dev[32];
        snprintf(dev, sizeof dev, "mlx5_%d", n);
        cr_expect_str_eq(t->nic[n].dev, dev, "NIC%d", n);
    }
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    cr_assert_eq(m.n, 18);
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 8; b++) {
            int nv;
            enum ct_path p = gpu_gpu(&m, a, b, &nv);
            cr_expect(a == b ? p == CT_PATH_X : p == CT_PATH_NV && nv == 12, "GPU%d-GPU%d", a, b);
        }
    for (int g = 0; g < 8; g++)
        for (int n = 0; n < 10; n++)
            cr_expect_eq(gpu_nic(&m, g, n), n < 8 && n / 2 == g / 2 ? CT_PATH_PXB : CT_PATH_SYS,
                         "GPU%d-NIC%d", g, n);
    cr_expect_eq(m.cls[16 * m.n + 17], CT_PATH_PIX, "NIC8-NIC9: a dual-port storage NIC");
    ct_matrix_release(&m);
}

Test(smi, dgx_a100_tabs)
{
    struct ct_topo *t = load("nvidia-smi", FIX_SMI);
    check_dgx_a100(t);
    cr_expect_eq(t->n_nvswitch, 1, "NV12 between all pairs: an NVSwitch fabric");
    for (int g = 0; g < 8; g++)
        cr_expect_eq(ct_topo_nvlink_total(t, g), 12);
    ct_topo_free(t);
}

/* Expand tabs to 8-column stops, as a terminal copy-paste does. */
static char *expand_tabs(const char *s)
{
    char *out = malloc(strlen(s) * 8 + 1), *w = out;
    int col = 0;
    for (; *s; s++) {
        if (*s == '\t') {
            do
                *w++ = ' ';
            while (++col % 8);
        } else {
            *w++ = *s;
            col = *s == '\n' ? 0 : col + 1;
        }
    }
    *w = 0;
    return out;
}

Test(smi, dgx_a100_spaces_and_mixed)
{
    char *text = slurp(fixture(FIX_SMI), NULL), *spaced = expand_tabs(text);
    struct ct_err err = {0};
    struct ct_topo *t = import_text(spaced, &err);
    cr_assert_not_null(t, "%s", err.msg);
    ct_topo_finalize(t);
    check_dgx_a100(t);
    ct_topo_free(t);
    /* half the lines with tabs, half with spaces */
    char *mixed = strdup(text);
    for (char *p = mixed; *p; p++)
        if (*p == '\t' && (p - mixed) % 3 == 0)
            *p = ' ';
    t = import_text(mixed, &err);
    cr_assert_not_null(t, "%s", err.msg);
    check_dgx_a100(t);
    ct_topo_free(t);
    free(mixed);
    free(spaced);
    free(text);
}

Test(smi, missing_and_bad_columns)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\n", "row 'GPU1' has 1 of 2 columns"},
        {"\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \t0-7\nGPU1\tNV4\t X \t0-7\n",
         "column GPU1 is '0-7'"},
        {"\tGPU0\tGPU1\nGPU0\t X \tNV4\n", "no row for column 'GPU1'"},
        {"\tGPU0\tGPU1\tFoo Bar\nGPU0\t X \tNV4\nGPU1\tNV4\t X \n", "unknown column 'Foo'"},
        {"\tGPU0\tGPU1\nGPU0\tPIX\tNV4\nGPU1\tNV4\t X \n", "not X on the diagonal"},
        {"\tGPU0\tGPU1\nGPU0\t X \tNVx\nGPU1\tNV4\t X \n", "'NVx'"},
        {"\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU0\tPIX\t X \n", "row 'GPU0' appears twice"},
        {"hello\nworld\n", "no `nvidia-smi topo -m` matrix"},
        {"", "no `nvidia-smi topo -m` matrix"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ct_err err = {0};
        struct ct_topo *t = import_text(cases[i].text, &err);
        cr_expect_null(t, "case %zu accepted", i);
        ct_topo_free(t);
        cr_expect(strstr(err.msg, cases[i].want) && strstr(err.msg, "smi.txt"),
                  "case %zu: '%s' lacks '%s'", i, err.msg, cases[i].want);
    }
}

/* A capture made with `nvidia-smi topo -m > file` (an H200 VM, SOURCES.md 16): the header
 * is underlined with terminal escapes, which the importer drops; one GPU and no NIC. */
Test(smi, escapes_of_a_real_capture)
{
    struct ct_topo *t = load("nvidia-smi", "nvidia-smi-topo-m_h200-vm_1xH200-ansi.txt");
    cr_assert_eq(t->n_gpu, 1);
    cr_expect_eq(t->n_nic, 0);
    cr_expect_str_eq(t->gpu[0].cpus, "0-15");
    cr_expect_eq(t->gpu[0].numa, 0);
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    cr_expect_eq(m.n, 1);
    cr_expect_eq(gpu_gpu(&m, 0, 0, NULL), CT_PATH_X);
    ct_matrix_release(&m);
    ct_topo_free(t);
    /* escapes anywhere on a line, of any parameters, leave the same matrix */
    struct ct_err err = {0};
    t = import_text("\t\x1b[1;4mGPU0\x1b[0m\tGPU1\t\x1b[4mCPU Affinity\tNUMA Affinity\x1b[m\n"
                    "\x1b[32mGPU0\t X \tNV4\t0-7\t0\nGPU1\tNV4\t X \t0-7\t0\x1b[0m\n",
                    &err);
    cr_assert_not_null(t, "%s", err.msg);
    ct_topo_finalize(t);
    cr_expect_eq(t->n_gpu, 2);
    ct_matrix_build(t, 0, &m);
    int nv = 0;
    cr_expect_eq(gpu_gpu(&m, 0, 1, &nv), CT_PATH_NV);
    cr_expect_eq(nv, 4);
    ct_matrix_release(&m);
    ct_topo_free(t);
}

Test(smi, missing_affinity_is_a_note)
{
    struct ct_err err = {0};
    struct ct_topo *t = import_text("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
                                    "GPU0\t X \tSOC\t0-7\t0\nGPU1\tSOC\t X \t8-15\n",
                                    &err);
    cr_assert_not_null(t, "%s", err.msg);
    ct_topo_finalize(t);
    cr_expect(has_note(t, "row 'GPU1' lacks 1 of the affinity columns"));
    cr_expect_eq(t->gpu[0].numa, 0);
    cr_expect_eq(t->gpu[1].numa, -1);
    cr_expect_str_eq(t->gpu[1].cpus, "8-15");
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    cr_expect_eq(gpu_gpu(&m, 0, 1, NULL), CT_PATH_SYS, "SOC is the old name of SYS");
    ct_matrix_release(&m);
    ct_topo_free(t);
}

Test(smi, old_layout_with_device_columns)
{
    struct ct_err err = {0};
    struct ct_topo *t = import_text("        GPU0    GPU1    mlx5_0  CPU Affinity\n"
                                    "GPU0     X      NV1     PHB     0-9\n"
                                    "GPU1    NV1      X      PHB     0-9\n"
                                    "mlx5_0  PHB     PHB      X\n",
                                    &err);
    cr_assert_not_null(t, "%s", err.msg);
    ct_topo_finalize(t);
    cr_expect_str_eq(t->nic[0].dev, "mlx5_0");
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    cr_expect_eq(gpu_nic(&m, 0, 0), CT_PATH_PHB);
    cr_expect_eq(ct_topo_nvlink_count(t, 0, 1), 1, "two GPUs: a direct link, not a switch");
    ct_matrix_release(&m);
    ct_topo_free(t);
}

/* Our view, read back, gives the same matrix: for every fixture that has GPUs or NICs. */
Test(smi, view_reads_back)
{
    static const struct {
        const char *fmt, *name;
    } fx[] = {{"nvidia-smi", FIX_SMI}, {"nccl-xml", FIX_ALIBABA}, {"nccl-xml", FIX_IBM},
              {"nccl-xml", FIX_P4D},   {"hwloc-xml", FIX_MINSKY}, {"report", FIX_ASUS},
              {"hwloc-xml", FIX_DGX2}};
    for (size_t f = 0; f < sizeof fx / sizeof fx[0]; f++) {
        struct ct_topo *t = load(fx[f].fmt, fx[f].name);
        char *text = render(t, "matrix");
        struct ct_err err = {0};
        struct ct_topo *u = import_text(text, &err);
        cr_assert_not_null(u, "%s: %s", fx[f].name, err.msg);
        ct_topo_finalize(u);
        struct ct_matrix a, b;
        ct_matrix_build(t, 0, &a);
        ct_matrix_build(u, 0, &b);
        cr_assert_eq(a.n, b.n, "%s", fx[f].name);
        for (size_t i = 0; i < a.n * a.n; i++)
            cr_expect(a.cls[i] == b.cls[i] && a.nv[i] == b.nv[i], "%s: cell %zu", fx[f].name, i);
        for (size_t g = 0; g < a.n_gpu; g++)
            cr_expect_eq(t->gpu[g].numa, u->gpu[g].numa);
        ct_matrix_release(&a);
        ct_matrix_release(&b);
        ct_topo_free(u);
        ct_topo_free(t);
        free(text);
    }
}

Test(smi, embedded_in_a_report)
{
    struct ct_topo *t = load("nvidia-smi", FIX_ASUS); /* markdown around a space-aligned one */
    cr_expect_eq(t->n_gpu, 4);
    cr_expect_eq(t->n_nic, 4);
    struct ct_matrix m;
    ct_matrix_build(t, 0, &m);
    cr_expect_eq(gpu_gpu(&m, 0, 1, NULL), CT_PATH_NODE);
    cr_expect_eq(gpu_nic(&m, 3, 3), CT_PATH_NODE);
    ct_matrix_release(&m);
    ct_topo_free(t);
}
