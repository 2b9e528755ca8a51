/* SPDX-License-Identifier: MIT */
/* colltune-topo/1 JSON: write/read round trips for every fixture, errors for bad documents,
 * and the heterogeneity report over several hosts' topologies. */
#include "probe_test.h"

static const struct {
    const char *fmt, *name;
} all[] = {{"hwloc-xml", FIX_DGX2}, {"hwloc-xml", FIX_MINSKY}, {"nccl-xml", FIX_P4D},
           {"nccl-xml", FIX_AZURE}, {"nccl-xml", FIX_ALIBABA}, {"nccl-xml", FIX_IBM},
           {"nvidia-smi", FIX_SMI}, {"report", FIX_ASUS},      {"neuron-ls", FIX_TRN1},
           {"neuron-ls", FIX_TRN2}};

static struct ct_topo *reread(const char *json)
{
    struct ct_err err = {0};
    struct ct_topo *t = ct_topo_from_json(json, strlen(json), &err);
    cr_assert_not_null(t, "%s", err.msg);
    return t;
}

Test(json, round_trip_every_fixture)
{
    for (size_t f = 0; f < sizeof all / sizeof all[0]; f++) {
        struct ct_topo *t = load(all[f].fmt, all[f].name);
        struct ct_err err = {0};
        char *a = ct_topo_to_json(t, &err);
        cr_assert_not_null(a, "%s", err.msg);
        cr_expect(!strncmp(a, "{\n  \"schema\": \"colltune-topo/1\",", 31), "schema key first");
        struct ct_topo *u = reread(a);
        char *b = ct_topo_to_json(u, &err);
        cr_expect_str_eq(a, b, "%s does not round-trip", all[f].name);
        char *va = render(t, "all"), *vb = render(u, "all");
        cr_expect_str_eq(va, vb, "%s: views differ after the round trip", all[f].name);
        free(va);
        free(vb);
        free(a);
        free(b);
        ct_topo_free(u);
        ct_topo_free(t);
    }
}

Test(json, live_round_trip_and_importer)
{
    struct ct_topo *t = ct_topo_new();
    struct ct_err err = {0};
    cr_assert_eq(ct_probe_local(t, NULL, &err), 0, "%s", err.msg);
    char *a = ct_topo_to_json(t, &err);
    char path[] = "/tmp/ct-topo-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, a, strlen(a)), (ssize_t)strlen(a));
    close(fd);
    struct ct_topo *u = ct_topo_new();
    cr_assert_eq(ct_topo_import(u, "json", path, NULL, &err), 0, "%s", err.msg);
    char *b = ct_topo_to_json(u, &err);
    cr_expect_str_eq(a, b);
    unlink(path);
    free(a);
    free(b);
    ct_topo_free(u);
    ct_topo_free(t);
}

Test(json, bad_documents)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"{", "line 1"},
        {"[]", "not an object"},
        {"{\"schema\": \"colltune-topo/2\"}", "\"schema\" is not"},
        {"{\"schema\": \"colltune-topo/1\", \"gpus\": [{\"busid\": 7}]}", "gpus[0].busid"},
        {"{\"schema\": \"colltune-topo/1\", \"gpus\": [{\"pci\": 3}]}", "gpus[0].pci"},
        {"{\"schema\": \"colltune-topo/1\", \"nics\": [{\"kind\": \"carrier-pigeon\"}]}",
         "nics[0].kind"},
        {"{\"schema\": \"colltune-topo/1\", \"nvlinks\": [{\"gpu\": 0}]}", "nvlinks[0].gpu"},
        {"{\"schema\": \"colltune-topo/1\", \"pci\": [{\"parent\": 0}]}", "pci[0].parent"},
        {"{\"schema\": \"colltune-topo/1\", \"nics\": 5}", "nics: expected an array"},
        {"{\"schema\": \"colltune-topo/1\", \"schema\": \"colltune-topo/1\"}", "duplicate"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct ct_err err = {0};
        struct ct_topo *t = ct_topo_from_json(cases[i].text, strlen(cases[i].text), &err);
        cr_expect_null(t, "case %zu accepted", i);
        ct_topo_free(t);
        cr_expect(strstr(err.msg, cases[i].want), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].want);
    }
}

static int diff_has(const struct ct_hetero *h, size_t host, const char *needle)
{
    for (size_t i = 0; i < h->n_diffs; i++)
        if (h->diffs[i].host == host && strstr(h->diffs[i].what, needle))
            return 1;
    return 0;
}

Test(json, heterogeneity)
{
    struct ct_topo *h[5];
    for (int i = 0; i < 5; i++) {
        h[i] = load("nccl-xml", FIX_ALIBABA);
        char name[16];
        snprintf(name, sizeof name, "node%02d", i);
        h[i]->hostname = strdup(name);
        snprintf(h[i]->nic[0].guid, sizeof h[i]->nic[0].guid, "0x%d", i); /* GUIDs differ */
    }
    h[2]->nic[nic_by_dev(h[2], "mlx5_bond_3")].rate_gbps = 100; /* half rate on one node */
    /* one node lost a GPU: gather it through JSON as rank 0 would */
    struct ct_err err = {0};
    char *j = ct_topo_to_json(h[4], &err);
    ct_topo_free(h[4]);
    h[4] = reread(j);
    free(j);
    struct ct_gpu *last = &h[4]->gpu[--h[4]->n_gpu];
    free(last->model);
    free(last->osname);
    free(last->cpus);
    struct ct_hetero het;
    cr_assert_eq(ct_topo_hetero((const struct ct_topo *const *)h, 5, &het, &err), 0);
    cr_expect_eq(het.n_groups, 3);
    cr_expect_eq(het.group_size[0], 3, "majority: node00 node01 node03");
    cr_expect_eq(het.group_of[0], 0);
    cr_expect_eq(het.group_of[1], 0);
    cr_expect_eq(het.group_of[3], 0);
    cr_expect_neq(het.group_of[2], 0);
    cr_expect_neq(het.group_of[4], 0);
    cr_expect(diff_has(&het, 2, "nic mlx5_bond_3:1 rate_gbps: 100 (majority 200)"));
    cr_expect(diff_has(&het, 4, "gpu count: 7 (majority 8)"));
    /* a whole object one side lacks is one difference with its identifying facts */
    cr_expect(diff_has(&het, 4, "gpu7: missing, the majority has it (model "));
    cr_expect(!diff_has(&het, 4, "gpu7 model"), "not one line per fact");
    cr_expect(!diff_has(&het, 0, ""), "majority hosts have no differences");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ct_hetero_render((const struct ct_topo *const *)h, 5, &het, f, &err);
    fclose(f);
    cr_expect(strstr(buf, "5 host(s), 3 shape(s)"));
    cr_expect(strstr(buf, "node02 differs from the majority:"));
    free(buf);
    ct_hetero_release(&het);
    for (int i = 0; i < 5; i++)
        ct_topo_free(h[i]);
}

Test(json, heterogeneity_of_identical_hosts)
{
    struct ct_topo *h[2] = {load("neuron-ls", FIX_TRN2), load("neuron-ls", FIX_TRN2)};
    struct ct_hetero het;
    struct ct_err err = {0};
    cr_assert_eq(ct_topo_hetero((const struct ct_topo *const *)h, 2, &het, &err), 0);
    cr_expect_eq(het.n_groups, 1);
    cr_expect_eq(het.n_diffs, 0);
    ct_hetero_release(&het);
    cr_expect_eq(ct_topo_hetero(NULL, 0, &het, &err), CT_EINVAL);
    ct_topo_free(h[0]);
    ct_topo_free(h[1]);
}
