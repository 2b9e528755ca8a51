/* SPDX-License-Identifier: MIT */
/* Helpers shared by the probe tests: locate the fixtures, import one, render a view into a
 * string, find GPUs/NICs by name, extract the sysfs tarball into a temporary directory. */
#ifndef CT_PROBE_TEST_H
#define CT_PROBE_TEST_H

#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "probe/topo.h"

#define FIX_DGX2 "hwloc-xml_nvidia-dgx2h_16xV100_12xNVSwitch.xml"
#define FIX_MINSKY "hwloc-xml_ibm-power8-minsky_4xP100_nvlink.xml"
#define FIX_SYSFS "sysfs-root_2xE5-2680_connectx3-mlx4-FDR56_mic.tar.bz2"
#define FIX_P4D "nccl-topo_aws-p4d.24xlarge_8xA100_4xEFA_static.xml"
#define FIX_AZURE "nccl-topo_azure-ndv4_8xA100_8xIB.xml"
#define FIX_ALIBABA "nccl-topo-dump_alibaba_8xA100_5xCX6Dx-RoCE-bond.xml"
#define FIX_IBM "nccl-topo-dump_ibm-cloud-gx3d_8xH100_8xCX7-RoCE.xml"
#define FIX_SMI "nvidia-smi-topo-m_dgx-a100_8xA100_10xmlx5.txt"
#define FIX_ASUS "system-report-excerpt_asus-esc8000a-e12_4xRTX6000Ada_2xCX7_pcie-only.md"
#define FIX_TRN1 "neuron-ls-topology_trn1.32xlarge_16xTrainium_2D-torus.txt"
#define FIX_TRN2 "neuron-ls_trn2n.48xlarge_16xTrainium2_4x4-torus.txt"

/* Repository root: the working directory when run by make, else derived from the binary
 * (BUILD/tests/probe/NAME). */
static inline const char *repo_root(void)
{
    static char root[PATH_MAX];
    struct stat st;
    if (root[0])
        return root;
    if (stat("tests/fixtures/topologies", &st) == 0) {
        strcpy(root, ".");
        return root;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0);
    exe[n] = 0;
    for (int up = 0; up < 4; up++)
        *strrchr(exe, '/') = 0;
    snprintf(root, sizeof root, "%s", exe);
    return root;
}

static inline const char *fixture(const char *name)
{
    static char path[4][2 * PATH_MAX];
    static int k;
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/tests/fixtures/topologies/%s", repo_root(), name);
    return path[k];
}

static inline struct ct_topo *load(const char *format, const char *name)
{
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    int rc = ct_topo_import(t, format, fixture(name), NULL, &err);
    cr_assert_eq(rc, 0, "import %s %s: %s", format, name, err.msg);
    return t;
}

/* Whole file into a NUL-terminated buffer (caller frees). */
static inline char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "cannot open %s", path);
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap)
            buf = realloc(buf, cap = 2 * cap + 8192);
        size_t r = fread(buf + n, 1, 4096, f);
        n += r;
        if (!r)
            break;
    }
    fclose(f);
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

/* Render a view (or "all" / "json") into a malloc'ed string. */
static inline char *render(const struct ct_topo *t, const char *view)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct ct_err err = {0};
    int rc = !strcmp(view, "all") ? ct_view_render_all(t, f, &err)
                                  : ct_view_find(view)->render(t, f, &err);
    fclose(f);
    cr_assert_eq(rc, 0, "view %s: %s", view, err.msg);
    return buf;
}

static inline int gpu_by_bus(const struct ct_topo *t, const char *bus)
{
    int g = ct_topo_find_gpu(t, bus);
    cr_assert_geq(g, 0, "no GPU at %s", bus);
    return g;
}

static inline int nic_by_dev(const struct ct_topo *t, const char *dev)
{
    int n = ct_topo_find_nic(t, dev, 1);
    cr_assert_geq(n, 0, "no NIC %s port 1", dev);
    return n;
}

static inline int nic_by_bus(const struct ct_topo *t, const char *bus)
{
    for (size_t i = 0; i < t->n_nic; i++)
        if (!strcmp(t->nic[i].busid, bus))
            return (int)i;
    cr_assert_fail("no NIC at %s", bus);
    return -1;
}

/* Matrix class between topo GPU g and topo NIC n. */
static inline enum ct_path gpu_nic(const struct ct_matrix *m, int g, int n)
{
    for (size_t k = 0; k < m->n - m->n_gpu; k++)
        if (m->nic[k] == n)
            return m->cls[(size_t)g * m->n + m->n_gpu + k];
    cr_assert_fail("NIC %d not in the matrix", n);
    return CT_PATH_UNKNOWN;
}

static inline enum ct_path gpu_gpu(const struct ct_matrix *m, int a, int b, int *nv)
{
    if (nv)
        *nv = m->nv[(size_t)a * m->n + (size_t)b];
    return m->cls[(size_t)a * m->n + (size_t)b];
}

static inline int has_note(const struct ct_topo *t, const char *needle)
{
    for (size_t i = 0; i < t->n_notes; i++)
        if (strstr(t->notes[i], needle))
            return 1;
    return 0;
}

/* Extract the sysfs tarball into a fresh directory (tmpfs when there is one: thousands of
 * small files) and return the capture root. Subtrees no source reads are left out. */
static inline const char *sysfs_capture(void)
{
    static char dir[PATH_MAX];
    char tmpl[64], cmd[3 * PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/ct-sysfs-XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    cr_assert_not_null(mkdtemp(tmpl));
    snprintf(
        cmd, sizeof cmd,
        "tar xjf '%s' -C '%s' --wildcards --exclude='*/pci0000:7f/*' "
        "--exclude='*/pci0000:ff/*' --exclude='*/LNXSYSTM:00/*' --exclude='*/cpu/cpu*/cache/*' "
        "--exclude='*/cpufreq/*' --exclude='*/cpuidle/*' --exclude='*/msi_irqs/*' "
        "--exclude='*/memory[0-9]*' --exclude='*/sys/firmware/*' --exclude='*/statistics/*'",
        fixture(FIX_SYSFS), tmpl);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    snprintf(dir, sizeof dir, "%s/32em64t-2n8c+1mic", tmpl);
    return dir;
}

static inline void rm_rf(const char *capture_root)
{
    char cmd[2 * PATH_MAX], parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s", capture_root);
    char *slash = strrchr(parent, '/');
    if (slash)
        *slash = 0;
    if (strstr(parent, "/ct-sysfs-")) {
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", parent);
        cr_assert_eq(system(cmd), 0);
    }
}

#endif
