/* SPDX-License-Identifier: MIT */
/* Replays every file of the libFuzzer corpora (tests/fuzz/corpus/<parser>/) through its
 * importer, every view and the JSON round trip: no crash, and under `make test-asan` no
 * sanitizer report. Accepted or refused, each input must end in a clean state. */
#include "probe_test.h"

#include <dirent.h>

static size_t replay(const char *dir, const char *format)
{
    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus/%s", repo_root(), dir);
    DIR *d = opendir(path);
    cr_assert_not_null(d, "no corpus %s", path);
    FILE *sink = fopen("/dev/null", "w");
    size_t n = 0, accepted = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        char file[3 * PATH_MAX];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        size_t len;
        char *buf = slurp(file, &len);
        struct ct_topo *t = ct_topo_new();
        struct ct_err err = {0};
        int rc = ct_topo_import_buf(t, format, buf, len, e->d_name, &err);
        if (rc == 0) {
            accepted++;
            cr_expect_eq(ct_view_render_all(t, sink, &err), 0, "%s: %s", e->d_name, err.msg);
            char *json = ct_topo_to_json(t, &err);
            cr_expect_not_null(json, "%s: %s", e->d_name, err.msg);
            struct ct_topo *u = json ? ct_topo_from_json(json, strlen(json), &err) : NULL;
            cr_expect(!json || u, "%s: own JSON does not read back: %s", e->d_name, err.msg);
            ct_topo_free(u);
            free(json);
        } else {
            cr_expect(rc < 0 && err.msg[0], "%s: refused without a message", e->d_name);
        }
        ct_topo_free(t);
        free(buf);
        n++;
    }
    closedir(d);
    fclose(sink);
    cr_expect_gt(accepted, 0, "%s: no input accepted", dir);
    return n;
}

Test(fuzz_replay, nccl_xml)
{
    cr_expect_geq(replay("nccl", "nccl-xml"), 4);
}

Test(fuzz_replay, nvidia_smi)
{
    cr_expect_geq(replay("smi", "nvidia-smi"), 2);
}

Test(fuzz_replay, neuron_ls)
{
    cr_expect_geq(replay("neuron", "neuron-ls"), 3);
}

Test(fuzz_replay, report)
{
    cr_expect_geq(replay("report", "report"), 2);
    cr_expect_geq(replay("smi", "report"), 2, "the report reads nvidia-smi text too");
}
