/* SPDX-License-Identifier: MIT */
/* The NVML source against a stand-in libnvidia-ml.so.1 (this machine has no NVIDIA driver):
 * the test compiles a small library with the NVML entry points colltune resolves, describing
 * 4 A100s with 12 NVLinks each to 6 NVSwitches, and runs `colltune probe` with it first on
 * LD_LIBRARY_PATH. Also the failure paths: no library, nvmlInit failing. */
#include "probe_test.h"

#include <sys/wait.h>

static const char fake_nvml[] =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "typedef struct { char legacy[16]; unsigned dom, bus, dev, id, sub; char busId[32]; } pci_t;\n"
    "static long ix(void *d) { return (long)(size_t)d - 1; }\n"
    "int nvmlInit_v2(void) { return getenv(\"FAKE_NVML_FAIL\") ? 9 : 0; }\n"
    "int nvmlShutdown(void) { return 0; }\n"
    "const char *nvmlErrorString(int r) { return r == 9 ? \"Driver Not Loaded\" : \"?\"; }\n"
    "int nvmlDeviceGetCount_v2(unsigned *n) { *n = 4; return 0; }\n"
    "int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **d) { *d = (void *)(size_t)(i + 1);"
    " return 0; }\n"
    "int nvmlDeviceGetName(void *d, char *b, unsigned n) { snprintf(b, n, \"NVIDIA "
    "A100-SXM4-80GB\"); return 0; }\n"
    "int nvmlDeviceGetPciInfo_v3(void *d, pci_t *p) { memset(p, 0, sizeof *p);"
    " snprintf(p->busId, 32, \"00000000:%02lX:00.0\", 0x10 * (ix(d) + 1));"
    " p->id = 0x20b210de; return 0; }\n"
    "int nvmlDeviceGetCudaComputeCapability(void *d, int *a, int *b) {"
    " *a = getenv(\"FAKE_NVML_SM\") ? atoi(getenv(\"FAKE_NVML_SM\")) / 10 : 8; *b = 0;"
    " return 0; }\n"
    "int nvmlDeviceGetNvLinkState(void *d, unsigned l, int *on) { *on = l < 12; return 0; }\n"
    "int nvmlDeviceGetNvLinkRemotePciInfo_v2(void *d, unsigned l, pci_t *p) {"
    " memset(p, 0, sizeof *p); snprintf(p->busId, 32, \"00000000:C%u:00.0\", l / 2);"
    " return 0; }\n"
    "int nvmlDeviceGetNvLinkVersion(void *d, unsigned l, unsigned *v) {"
    " *v = getenv(\"FAKE_NVLINK\") ? atoi(getenv(\"FAKE_NVLINK\")) : 5; return 0; }\n"
    "int nvmlDeviceGetTopologyCommonAncestor(void *a, void *b, int *lvl) {"
    " *lvl = ix(a) / 2 == ix(b) / 2 ? 20 : 50; return 0; }\n";

static char libdir[] = "/tmp/ct-nvml-XXXXXX";

static void build_fake(void)
{
    char path[PATH_MAX], cmd[3 * PATH_MAX];
    cr_assert_not_null(mkdtemp(libdir));
    snprintf(path, sizeof path, "%s/fake.c", libdir);
    FILE *f = fopen(path, "w");
    fputs(fake_nvml, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o %s/libnvidia-ml.so.1 %s", libdir, path);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static void cleanup(void)
{
    char cmd[PATH_MAX];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", libdir);
    if (system(cmd)) {
    }
}

/* Run BUILD/colltune probe ARGS with env; return stdout (caller frees). */
static char *probe_with(const char *env, const char *args, int *rc)
{
    char exe[PATH_MAX], out[] = "/tmp/ct-nvml-out-XXXXXX", cmd[4 * PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0);
    exe[n] = 0;
    for (int up = 0; up < 3; up++)
        *strrchr(exe, '/') = 0;
    close(mkstemp(out));
    snprintf(cmd, sizeof cmd, "%s '%s/colltune' probe %s >%s", env, exe, args, out);
    int st = system(cmd);
    *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    char *text = slurp(out, NULL);
    unlink(out);
    return text;
}

Test(nvml, gpus_nvlinks_and_ancestors, .init = build_fake, .fini = cleanup)
{
    char env[PATH_MAX + 64];
    int rc;
    snprintf(env, sizeof env, "LD_LIBRARY_PATH=%s", libdir);
    char *json = probe_with(env, "--json", &rc);
    cr_assert_eq(rc, 0);
    struct ct_err err = {0};
    struct ct_topo *t = ct_topo_from_json(json, strlen(json), &err);
    cr_assert_not_null(t, "%s", err.msg);
    cr_assert_eq(t->n_gpu, 4);
    for (int g = 0; g < 4; g++) {
        char bus[32], os[16];
        snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 * (g + 1));
        snprintf(os, sizeof os, "nvml%d", g);
        cr_expect_str_eq(t->gpu[g].busid, bus);
        cr_expect_str_eq(t->gpu[g].model, "NVIDIA A100-SXM4-80GB");
        cr_expect_str_eq(t->gpu[g].osname, os);
        cr_expect_eq(t->gpu[g].vendor, 0x10de);
        cr_expect_eq(t->gpu[g].device, 0x20b2);
        cr_expect_eq(t->gpu[g].sm, 80);
        cr_expect_float_eq(t->gpu[g].nvlink_gbps, 25, 1e-9,
                           "NVML_NVLINK_VERSION_3_1 (5): an A100's");
        cr_expect_eq(ct_topo_nvlink_total(t, g), 12);
    }
    cr_expect_eq(t->n_nvswitch, 6);
    cr_expect_eq(ct_topo_nvlink_count(t, 0, 3), 12, "6 switches x min(2, 2)");
    struct ct_matrix m;
    ct_matrix_build(t, CT_MATRIX_PCI_ONLY, &m);
    cr_expect_eq(gpu_gpu(&m, 0, 1, NULL), CT_PATH_PXB, "NVML's common ancestor, level 20");
    cr_expect_eq(gpu_gpu(&m, 1, 2, NULL), CT_PATH_SYS);
    ct_matrix_release(&m);
    cr_expect(!has_note(t, "nvml:"), "no NVML note when it works");
    ct_topo_free(t);
    free(json);
    char *text = probe_with(env, "--view matrix", &rc);
    cr_expect(strstr(text, "GPU0\t X \tNV12\tNV12\tNV12"), "%s", text);
    free(text);
}

/* nvmlDeviceGetNvLinkVersion answers an nvmlNvlinkVersion_t, not the generation: 5 is NVLink
 * 3.1 (A100), 6 is 4.0 (H100), 7 is 5.0 (B200), which some H100 drivers also answer. */
Test(nvml, nvlink_version_enum_to_link_rate, .init = build_fake, .fini = cleanup)
{
    static const struct {
        int version, sm;
        double gbps;
    } c[] = {{1, 60, 20}, {2, 70, 25}, {4, 80, 25}, {6, 90, 25}, {7, 90, 25}, {7, 100, 50}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char env[PATH_MAX + 96];
        int rc;
        snprintf(env, sizeof env, "FAKE_NVLINK=%d FAKE_NVML_SM=%d LD_LIBRARY_PATH=%s", c[i].version,
                 c[i].sm, libdir);
        char *json = probe_with(env, "--json", &rc);
        cr_assert_eq(rc, 0);
        struct ct_err err = {0};
        struct ct_topo *t = ct_topo_from_json(json, strlen(json), &err);
        cr_assert_not_null(t, "%s", err.msg);
        cr_expect_float_eq(t->gpu[0].nvlink_gbps, c[i].gbps, 1e-9, "version %d on sm_%d: %g",
                           c[i].version, c[i].sm, t->gpu[0].nvlink_gbps);
        ct_topo_free(t);
        free(json);
    }
}

Test(nvml, init_failure_is_a_note, .init = build_fake, .fini = cleanup)
{
    char env[PATH_MAX + 64];
    int rc;
    snprintf(env, sizeof env, "FAKE_NVML_FAIL=1 LD_LIBRARY_PATH=%s", libdir);
    char *text = probe_with(env, "--view summary", &rc);
    cr_expect_eq(rc, 0);
    cr_expect(strstr(text, "nvml: init failed: Driver Not Loaded"), "%s", text);
    free(text);
}

Test(nvml, missing_library_is_a_note)
{
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_assert_eq(ct_probe_local(t, NULL, &err), 0);
    if (!t->n_gpu) /* this machine: no driver */
        cr_expect(has_note(t, "nvml: libnvidia-ml.so.1 not found"));
    ct_topo_free(t);
}
