/* SPDX-License-Identifier: MIT */
/* `colltune probe` end to end: the live run on this machine (no GPU, no InfiniBand) and its
 * speed, every option, and exit code 2 with one stderr line for bad input. */
#include "probe_test.h"

#include <sys/wait.h>
#include <time.h>

/* Speed is measured by `make bench` (probe time), not asserted here. */

/* BUILD/colltune, next to BUILD/tests/probe/<this binary>. */
static const char *binary(void)
{
    static char bin[PATH_MAX + 16];
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0);
    exe[n] = 0;
    for (int up = 0; up < 3; up++)
        *strrchr(exe, '/') = 0;
    snprintf(bin, sizeof bin, "%s/colltune", exe);
    cr_assert_eq(access(bin, X_OK), 0, "%s is not built", bin);
    return bin;
}

struct run {
    int rc;
    char *out, *err;
    double secs;
};

static struct run run(const char *args)
{
    char out[] = "/tmp/ct-cli-out-XXXXXX", err[] = "/tmp/ct-cli-err-XXXXXX", cmd[8192];
    close(mkstemp(out));
    close(mkstemp(err));
    snprintf(cmd, sizeof cmd, "'%s' probe %s >%s 2>%s", binary(), args, out, err);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int st = system(cmd);
    clock_gettime(CLOCK_MONOTONIC, &b);
    struct run r = {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(out, NULL), slurp(err, NULL),
                    (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9};
    unlink(out);
    unlink(err);
    return r;
}

static void done(struct run *r)
{
    free(r->out);
    free(r->err);
}

static int lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(cli, live_machine)
{
    struct run r = run("");
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(r.err, "");
    cr_expect(strstr(r.out, "host: "));
    cr_expect(strstr(r.out, "CPU: "));
    cr_expect(strstr(r.out, "NUMA: "));
    cr_expect(strstr(r.out, " host bridge"), "PCI tree shown");
    if (access("/sys/class/net/eth0/device", F_OK) == 0)
        cr_expect(strstr(r.out, "eth0"), "eth0 shown");
    if (access("/sys/class/infiniband", F_OK) != 0 && access("/dev/nvidiactl", F_OK) != 0) {
        cr_expect(strstr(r.out, "GPUs: none found"), "says there is no GPU");
        cr_expect(strstr(r.out, "no RDMA NIC"), "says there is no InfiniBand");
        cr_expect(strstr(r.out, "GPU/NIC matrix: no GPU and no RDMA NIC"));
    }
    done(&r);
}

Test(cli, json_out_and_back)
{
    char path[] = "/tmp/ct-cli-json-XXXXXX", args[PATH_MAX + 64];
    close(mkstemp(path));
    snprintf(args, sizeof args, "--json --out %s", path);
    struct run r = run(args);
    cr_assert_eq(r.rc, 0, "%s", r.err);
    cr_expect_str_eq(r.out, "", "--out: nothing on stdout");
    done(&r);
    char *json = slurp(path, NULL);
    cr_expect(strstr(json, "\"schema\": \"colltune-topo/1\""));
    snprintf(args, sizeof args, "--from json %s --view nics", path);
    r = run(args);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "NIC ports"));
    done(&r);
    free(json);
    unlink(path);
}

Test(cli, imports_and_views)
{
    char args[PATH_MAX + 64];
    snprintf(args, sizeof args, "--from nccl-xml '%s' --view matrix", fixture(FIX_ALIBABA));
    struct run r = run(args);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "GPU0\t X \tNV12"));
    done(&r);
    snprintf(args, sizeof args, "--from nccl-xml '%s' --view torus", fixture(FIX_ALIBABA));
    r = run(args); /* GPUs: no torus, and where to look ("no accelerator" said of 8 A100s) */
    cr_expect(strstr(r.out, "Torus: no Trainium-style accelerator (the 8 GPU(s): --view matrix)"),
              "%s", r.out);
    done(&r);
    snprintf(args, sizeof args, "--sysfs-root '%s'", fixture(FIX_SYSFS)); /* as shipped */
    r = run(args);
    cr_expect(r.rc == 2 && strstr(r.err, "is an archive: unpack it (tar xf)"), "%s", r.err);
    done(&r);
    snprintf(args, sizeof args, "--from neuron-ls '%s' --torus 4x4 --view torus",
             fixture(FIX_TRN1));
    r = run(args);
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "Torus 4x4"));
    done(&r);
    r = run("--torus 3x3 --view torus");
    cr_expect_eq(r.rc, 0, "%s", r.err);
    cr_expect(strstr(r.out, "Two edge-disjoint Hamiltonian cycles"), "placeholders: %s", r.out);
    done(&r);
    r = run("-h");
    cr_expect_eq(r.rc, 0);
    cr_expect(strstr(r.out, "usage: colltune probe"));
    cr_expect(strstr(r.out, "nccl-xml") && strstr(r.out, "warnings"), "help from the tables");
    done(&r);
}

Test(cli, bad_input_exit_2_one_line)
{
    char trunc[] = "/tmp/ct-cli-trunc-XXXXXX";
    int fd = mkstemp(trunc);
    static const char text[] = "<system version=\"1\">\n  <cpu numaid=\"0\">\n";
    cr_assert(write(fd, text, sizeof text - 1) == (ssize_t)sizeof text - 1);
    close(fd);
    char a0[PATH_MAX + 64];
    snprintf(a0, sizeof a0, "--from nccl-xml %s", trunc);
    static const struct {
        const char *args, *want;
    } cases[] = {
        {"--from nccl-xml /nonexistent.xml", "cannot open '/nonexistent.xml'"},
        {NULL, "is not closed"},
        {"--from nvidia-smi /etc/hostname", "no `nvidia-smi topo -m` matrix"},
        {"--from bogus x", "unknown --from format 'bogus'"},
        {"--from nccl-xml", "--from needs FORMAT FILE"},
        {"--view bogus", "unknown --view 'bogus'"},
        {"--torus 4y4", "bad --torus '4y4'"},
        {"--torus 0x4", "bad --torus '0x4'"},
        {"--sysfs-root /nonexistent", "has no sys/ directory"},
        {"--sysfs-root /nonexistent/capture.tar.bz2", "has no sys/ directory"},
        {"--frobnicate", "unknown or incomplete option"},
        {"extra", "unexpected argument 'extra'"},
        {"--json --view nics", "exclude each other"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct run r = run(cases[i].args ? cases[i].args : a0);
        cr_expect_eq(r.rc, 2, "case %zu: exit %d", i, r.rc);
        cr_expect_eq(lines(r.err), 1, "case %zu: stderr '%s'", i, r.err);
        cr_expect(!strncmp(r.err, "colltune probe: error: ", 23), "case %zu: %s", i, r.err);
        cr_expect(strstr(r.err, cases[i].want), "case %zu: '%s' lacks '%s'", i, r.err,
                  cases[i].want);
        done(&r);
    }
    unlink(trunc);
}
