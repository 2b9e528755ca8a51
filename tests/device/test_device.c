/* SPDX-License-Identifier: MIT */
/*
 * Memory kinds through their one interface (device/device.h). The same checks run on every
 * kind: host here, cuda where a GPU is present (suite gpu: skipped, with the reason, where
 * none is; `make test-gpu` runs and counts them). Results are exact: inputs from
 * ct_verify_fill for 2 ranks, reduced by the kind, compared bit for bit with
 * ct_verify_expected, for bf16, fp16, fp32, fp64 and sum, prod, min, max.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "algos/algo.h"
#include "backend/verify.h"
#include "device/device.h"

static const enum ct_dtype types[] = {CT_BFLOAT16, CT_FLOAT16, CT_FLOAT32, CT_FLOAT64};
static const enum ct_redop ops[] = {CT_SUM, CT_PROD, CT_MIN, CT_MAX};

struct fill_arg {
    enum ct_dtype t;
    enum ct_redop op;
    int rank;
    uint64_t first;
};

static void fill(void *buf, size_t n, void *arg)
{
    struct fill_arg *f = arg;
    ct_verify_fill(f->t, f->op, f->rank, 2, 0x5eed, f->first, buf, n);
}

static size_t cmp(const void *got, const void *want, size_t n, void *arg)
{
    return ct_verify_count_wrong(*(enum ct_dtype *)arg, got, want, n);
}

/* Open kind; on a host where it cannot run, skip loudly with the reason. */
static void open_or_skip(struct ct_mem *m, const char *kind)
{
    struct ct_err err = {0};
    if (ct_mem_open(m, kind, 0, &err) < 0) {
        cr_assert_eq(err.code, CT_EUNSUPP, "%s", err.msg);
        cr_skip_test("%s memory cannot run here: %s", kind, err.msg);
    }
}

/* Every type x op: fill two buffers as ranks 0 and 1, reduce in place, check exactly. */
static void reduce_all(const char *kind)
{
    struct ct_mem m;
    struct ct_err err = {0};
    open_or_skip(&m, kind);
    const size_t n = 100003; /* odd: the tails of vector and GPU grid loops */
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
            enum ct_dtype t = types[ti];
            enum ct_redop op = ops[oi];
            size_t es = ct_dtype_size(t);
            void *a, *b, *want = malloc(n * es);
            cr_assert_eq(ct_mem_alloc(&m, n * es, &a, &err), 0, "%s", err.msg);
            cr_assert_eq(ct_mem_alloc(&m, n * es, &b, &err), 0, "%s", err.msg);
            struct fill_arg f0 = {t, op, 0, 7}, f1 = {t, op, 1, 7};
            cr_assert_eq(ct_mem_fill(&m, a, n, es, fill, &f0, &err), 0, "%s", err.msg);
            cr_assert_eq(ct_mem_fill(&m, b, n, es, fill, &f1, &err), 0, "%s", err.msg);
            struct ct_mem_red r = {ct_dtype_name(t), ct_redop_name(op), es,
                                   ct_reduce_fn_get(t, op)};
            cr_assert_eq(ct_mem_reduce(&m, a, a, b, n, &r, &err), 0, "%s %s %s: %s", kind,
                         r.op, r.dtype, err.msg);
            ct_verify_expected(t, op, 2, 0x5eed, 7, want, n);
            size_t wrong = 99;
            cr_assert_eq(ct_mem_check(&m, a, want, n, es, cmp, &t, &wrong, &err), 0, "%s",
                         err.msg);
            cr_expect_eq(wrong, 0, "%s %s %s: %zu of %zu wrong", kind, r.op, r.dtype, wrong, n);
            /* the other operand is untouched, and comes back through to_host */
            void *h = malloc(n * es), *hb = malloc(n * es);
            ct_verify_fill(t, op, 1, 2, 0x5eed, 7, hb, n);
            cr_assert_eq(ct_mem_to_host(&m, h, b, n * es, &err), 0, "%s", err.msg);
            cr_expect_eq(memcmp(h, hb, n * es), 0, "%s: b changed", kind);
            free(h);
            free(hb);
            free(want);
            ct_mem_free(&m, a);
            ct_mem_free(&m, b);
        }
    }
    ct_mem_close(&m);
}

/* from_host then to_host gives the same bytes, at odd sizes and offsets. */
static void roundtrip(const char *kind)
{
    struct ct_mem m;
    struct ct_err err = {0};
    open_or_skip(&m, kind);
    for (size_t bytes = 1; bytes < (1u << 22); bytes = bytes * 7 + 3) {
        unsigned char *src = malloc(bytes), *back = malloc(bytes);
        void *d;
        for (size_t i = 0; i < bytes; i++)
            src[i] = (unsigned char)(i * 131 + bytes);
        cr_assert_eq(ct_mem_alloc(&m, bytes, &d, &err), 0, "%s", err.msg);
        cr_assert_eq(ct_mem_from_host(&m, d, src, bytes, &err), 0, "%s", err.msg);
        memset(back, 0, bytes);
        cr_assert_eq(ct_mem_to_host(&m, back, d, bytes, &err), 0, "%s", err.msg);
        cr_expect_eq(memcmp(src, back, bytes), 0, "%s: %zu bytes", kind, bytes);
        ct_mem_free(&m, d);
        free(src);
        free(back);
    }
    ct_mem_close(&m);
}

/*
 * A buffer shared between two processes by handle: the child makes it (pattern a in its first
 * half), the parent maps it, reads the first half and writes pattern b into the second half
 * by the kind's own copy (the resident path's get and put), the child then sees b. The parent
 * opens the kind only after the fork (CUDA does not survive one).
 */
static void shared(const char *kind)
{
    const size_t bytes = (3u << 20) + 4096 + 7, half = bytes / 2;
    int h2p[2], p2h[2];
    cr_assert_eq(pipe(h2p), 0);
    cr_assert_eq(pipe(p2h), 0);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    unsigned char *pat = malloc(bytes);
    for (size_t i = 0; i < bytes; i++)
        pat[i] = (unsigned char)(i < half ? i * 7 + 1 : i * 13 + 5);
    if (pid == 0) {
        struct ct_mem m;
        struct ct_err err = {0};
        struct ct_mem_ipc h;
        void *d;
        int ok = ct_mem_open(&m, kind, 0, &err) == 0 && ct_mem_alloc(&m, bytes, &d, &err) == 0 &&
                 ct_mem_from_host(&m, d, pat, half, &err) == 0 &&
                 ct_mem_ipc_get(&m, d, bytes, &h, &err) == 0;
        if (!ok)
            h.bytes = 0;
        if (write(h2p[1], &h, sizeof h) != (ssize_t)sizeof h || !ok)
            _exit(2);
        char go;
        if (read(p2h[0], &go, 1) != 1)
            _exit(3);
        unsigned char *back = malloc(bytes);
        if (ct_mem_to_host(&m, back, d, bytes, &err) < 0)
            _exit(4);
        _exit(memcmp(back, pat, bytes) ? 5 : 0); /* both halves: a kept, b landed */
    }
    struct ct_mem_ipc h;
    cr_assert_eq(read(h2p[0], &h, sizeof h), (ssize_t)sizeof h);
    if (!h.bytes) {
        int st;
        waitpid(pid, &st, 0);
        struct ct_mem m;
        open_or_skip(&m, kind); /* where the kind cannot run, the child could not: skip */
        cr_assert_fail("%s: the child could not share a buffer", kind);
    }
    struct ct_mem m;
    struct ct_err err = {0};
    open_or_skip(&m, kind);
    cr_assert(ct_mem_shares(&m), "%s shares", kind);
    void *peer, *mine;
    cr_assert_eq(ct_mem_ipc_open(&m, &h, &peer, &err), 0, "%s", err.msg);
    unsigned char *got = malloc(half);
    cr_assert_eq(ct_mem_to_host(&m, got, peer, half, &err), 0, "%s", err.msg);
    cr_expect_eq(memcmp(got, pat, half), 0, "%s: the first half as the child wrote it", kind);
    cr_assert_eq(ct_mem_alloc(&m, bytes - half, &mine, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_mem_from_host(&m, mine, pat + half, bytes - half, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_mem_copy_queued(&m, (char *)peer + half, mine, bytes - half, &err), 0, "%s",
                 err.msg);
    cr_assert_eq(ct_mem_sync(&m, &err), 0, "%s", err.msg);
    ct_mem_ipc_close(&m, peer, bytes);
    ct_mem_free(&m, mine);
    cr_assert_eq(write(p2h[1], "g", 1), 1);
    int st = 0;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the child saw exit %d", kind,
              WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    ct_mem_close(&m);
    free(got);
    free(pat);
}

/* A handle that names no buffer of a live process: one line, no crash. */
Test(host, ipc_stale_handle_fails_cleanly)
{
    struct ct_mem m;
    struct ct_err err = {0};
    void *d, *p = NULL;
    struct ct_mem_ipc h;
    cr_assert_eq(ct_mem_open(&m, "host-ipc", 0, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_mem_alloc(&m, 4096, &d, &err), 0, "%s", err.msg);
    cr_assert_eq(ct_mem_ipc_get(&m, d, 4096, &h, &err), 0, "%s", err.msg);
    ct_mem_free(&m, d); /* its descriptor is closed */
    cr_assert_eq(ct_mem_ipc_open(&m, &h, &p, &err), CT_EPEER);
    cr_assert(strstr(err.msg, "host-ipc memory: opening process"), "%s", err.msg);
    /* the descriptor number given to another buffer: its inode is not the handle's */
    void *d2;
    cr_assert_eq(ct_mem_alloc(&m, 8192, &d2, &err), 0, "%s", err.msg);
    struct ct_mem_ipc h2;
    cr_assert_eq(ct_mem_ipc_get(&m, d2, 8192, &h2, &err), 0, "%s", err.msg);
    cr_assert_eq(memcmp(h2.b, h.b, 8), 0, "the descriptor number is reused (pid, fd)");
    cr_assert_eq(ct_mem_ipc_open(&m, &h, &p, &err), CT_EPEER);
    cr_assert(strstr(err.msg, "Stale"), "%s", err.msg);
    ct_mem_free(&m, d2);
    cr_assert_eq(ct_mem_ipc_get(&m, &h, 8, &h, &err), CT_EINVAL, "not a buffer of the kind");
    struct ct_mem host;
    cr_assert_eq(ct_mem_open(&host, "host", 0, &err), 0);
    cr_assert_not(ct_mem_shares(&host));
    cr_assert_eq(ct_mem_ipc_get(&host, d, 8, &h, &err), CT_EUNSUPP);
    ct_mem_close(&host);
    ct_mem_close(&m);
}

Test(host, reduce_every_type_and_op_exactly) { reduce_all("host"); }
Test(host, copies_round_trip) { roundtrip("host"); }
Test(host, ipc_reduce_every_type_and_op_exactly) { reduce_all("host-ipc"); }
Test(host, ipc_copies_round_trip) { roundtrip("host-ipc"); }
Test(host, ipc_shared_between_processes) { shared("host-ipc"); }
Test(gpu, cuda_reduce_every_type_and_op_exactly) { reduce_all("cuda"); }
Test(gpu, cuda_copies_round_trip) { roundtrip("cuda"); }
Test(gpu, cuda_shared_between_processes) { shared("cuda"); }

/* The table's device line: " 0 [cpu]" without a device (host memory, none opened); the GPU's
 * number, PCI domain:bus:device (its bus id less the function) and name as nccl-tests prints. */
static void describe(const char *kind)
{
    struct ct_mem m;
    char d[128], bus[64];
    struct ct_err err = {0};
    ct_mem_describe(NULL, d, sizeof d);
    cr_expect_str_eq(d, " 0 [cpu]");
    open_or_skip(&m, kind);
    ct_mem_describe(&m, d, sizeof d);
    if (ct_mem_bus_id(&m, bus, sizeof bus, &err) < 0) {
        cr_expect_str_eq(d, " 0 [cpu]", "%s", kind);
    } else {
        char want[80];
        *strrchr(bus, '.') = 0;
        snprintf(want, sizeof want, "%2d [%s] ", m.gpu, bus);
        cr_expect_eq(strncmp(d, want, strlen(want)), 0, "%s: '%s', wanted '%s' and a name", kind, d,
                     want);
        cr_expect_gt(strlen(d), strlen(want) + 3, "%s: no name: '%s'", kind, d);
        for (const char *p = d + strlen(want); *p; p++) /* a name, not bytes read amiss */
            cr_expect(*p >= ' ' && *p < 127, "%s: '%s'", kind, d);
    }
    ct_mem_close(&m);
}

Test(host, describe_without_a_device)
{
    describe("host");
}
Test(gpu, cuda_describe_names_the_gpu)
{
    describe("cuda");
}

/* ct_mem_describe on a kind with a device, without a GPU: a stub kind whose runtime says the
 * address (as NVML and CUDA do, upper case, 8-digit domain) and name as set below. */
static const char *stub_bus, *stub_name;
static int stub_bus_id(struct ct_mem *m, char *buf, size_t len, struct ct_err *err)
{
    (void)m;
    if (!stub_bus)
        return ct_err_set(err, CT_EIO, "no address");
    snprintf(buf, len, "%s", stub_bus);
    return 0;
}
static int stub_device_name(struct ct_mem *m, char *buf, size_t len)
{
    (void)m;
    if (!stub_name)
        return -1;
    snprintf(buf, len, "%s", stub_name);
    return 0;
}
static void stub_said(const char *bus, const char *name, int gpu, size_t len, const char *want)
{
    static const struct ct_mem_kind k = {
        .name = "stub", .bus_id = stub_bus_id, .device_name = stub_device_name};
    int state;
    struct ct_mem m = {.kind = &k, .gpu = gpu, .state = &state};
    char d[128];
    stub_bus = bus, stub_name = name;
    ct_mem_describe(&m, d, len);
    cr_expect_str_eq(d, want, "bus %s, name %s", bus ? bus : "-", name ? name : "-");
}

Test(device, describe_a_device_as_nccl_tests_does)
{
    stub_said("00000000:A4:00.0", "NVIDIA H200", 3, 128, " 3 [0000:a4:00] NVIDIA H200");
    stub_said("0001:3B:00.1", "NVIDIA H100 80GB HBM3", 12, 128,
              "12 [0001:3b:00] NVIDIA H100 80GB HBM3");
    stub_said("0000:a4:00", "X", 0, 128, " 0 [0000:a4:00] X");    /* no function: kept whole */
    stub_said("0000:a4:00.0", NULL, 1, 128, " 1 [0000:a4:00]");   /* no name: none, no space */
    stub_said(NULL, "NVIDIA H200", 2, 128, " 2 [?] NVIDIA H200"); /* no address */
    stub_said("0000:a4:00.0", "NVIDIA H200", 3, 5, " 3 [");       /* cut to the room */
}

Test(device, table_and_unknown_kind)
{
    struct ct_mem m;
    struct ct_err err = {0};
    cr_assert_str_eq(ct_mem_kind_at(0)->name, "host");
    cr_assert_str_eq(ct_mem_kind_at(1)->name, "host-ipc");
    cr_assert_str_eq(ct_mem_kind_at(2)->name, "cuda");
    cr_assert_null(ct_mem_kind_at(3));
    cr_assert_str_eq(ct_mem_kind_names(), "host, host-ipc, cuda");
    cr_assert_eq(ct_mem_open(&m, "rocm", 0, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "unknown memory kind 'rocm'"), "%s", err.msg);
}

/* A missing CUDA runtime is one line naming it (real here: any host can run this). */
Test(device, missing_cudart_is_one_line_naming_it)
{
    struct ct_mem m;
    struct ct_err err = {0};
    setenv("COLLTUNE_CUDART", "/nonexistent/libcudart.so.13", 1);
    cr_assert_eq(ct_mem_open(&m, "cuda", 0, &err), CT_EUNSUPP);
    cr_expect(strstr(err.msg, "cannot load the CUDA runtime /nonexistent/libcudart.so.13"), "%s",
              err.msg);
    cr_expect_null(strchr(err.msg, '\n'), "%s", err.msg);
    unsetenv("COLLTUNE_CUDART");
}

/* Two stand-in runtimes: "new" answers cudaErrorInsufficientDriver (35), as CUDA 13's does on a
 * driver before 580; "old" works and sees no GPU. The list $COLLTUNE_CUDART (as the default
 * .so.13:.so.12:.so) moves on from the first to the second, which then says what it sees; the
 * first alone is kept and its error told. */
Test(device, a_runtime_newer_than_the_driver_falls_back_to_the_next)
{
    char dir[] = "/tmp/ct-cudart-XXXXXX", cmd[1024], list[256];
    cr_assert_not_null(mkdtemp(dir));
    static const char *const stubs[] = {"cudaSetDevice",
                                        "cudaMalloc",
                                        "cudaFree",
                                        "cudaMemcpy",
                                        "cudaDeviceSynchronize",
                                        "cudaHostRegister",
                                        "cudaHostUnregister",
                                        "cudaMemcpyPeer",
                                        "cudaDeviceCanAccessPeer",
                                        "cudaDeviceEnablePeerAccess",
                                        "cudaGetLastError",
                                        "cudaDeviceGetPCIBusId",
                                        "cudaMemcpyAsync",
                                        "cudaIpcGetMemHandle",
                                        "cudaIpcOpenMemHandle",
                                        "cudaIpcCloseMemHandle"};
    for (int v = 0; v < 2; v++) {
        snprintf(cmd, sizeof cmd, "%s/%s.c", dir, v ? "old" : "new");
        FILE *f = fopen(cmd, "w");
        cr_assert_not_null(f);
        for (size_t i = 0; i < sizeof stubs / sizeof stubs[0]; i++)
            fprintf(f, "int %s(void) { return 0; }\n", stubs[i]);
        fprintf(f, "int cudaGetDeviceCount(int *n) { *n = 0; return %d; }\n", v ? 0 : 35);
        fprintf(f, "const char *cudaGetErrorString(int e) { return e ? \"insufficient driver\" : "
                   "\"no error\"; }\n");
        fclose(f);
        snprintf(cmd, sizeof cmd, "cc -shared -fPIC -o %s/%s.so %s/%s.c", dir, v ? "old" : "new",
                 dir, v ? "old" : "new");
        cr_assert_eq(system(cmd), 0, "%s", cmd);
    }
    struct ct_mem m;
    struct ct_err err = {0};
    snprintf(list, sizeof list, "%s/new.so:/nonexistent/libcudart.so.12:%s/old.so", dir, dir);
    setenv("COLLTUNE_CUDART", list, 1);
    cr_expect_eq(ct_mem_open(&m, "cuda", 0, &err), CT_EUNSUPP);
    cr_expect(strstr(err.msg, "no CUDA GPU on this host"), "the second runtime's answer: %s",
              err.msg);
    snprintf(list, sizeof list, "%s/new.so", dir);
    setenv("COLLTUNE_CUDART", list, 1);
    cr_expect_eq(ct_mem_open(&m, "cuda", 0, &err), CT_EUNSUPP);
    cr_expect(strstr(err.msg, "cudaError 35"), "the only runtime's error: %s", err.msg);
    unsetenv("COLLTUNE_CUDART");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* With the real runtime and no GPU (or no driver): one line, CT_EUNSUPP, nothing leaked. */
Test(device, cuda_without_gpu_fails_cleanly)
{
    struct ct_mem m;
    struct ct_err err = {0};
    int rc = ct_mem_open(&m, "cuda", 0, &err);
    if (rc == 0) {
        ct_mem_close(&m);
        cr_skip_test("a GPU is present: the no-GPU path cannot be checked here");
    }
    cr_expect_eq(rc, CT_EUNSUPP, "%s", err.msg);
    cr_expect(strstr(err.msg, "CUDA"), "%s", err.msg);
    cr_expect_null(strchr(err.msg, '\n'), "%s", err.msg);
    cr_expect_null(m.state);
}

Test(device, gpu_map)
{
    struct ct_err err = {0};
    cr_expect_eq(ct_mem_gpu_of(NULL, 3, &err), 3);
    cr_expect_eq(ct_mem_gpu_of("", 5, &err), 5);
    cr_expect_eq(ct_mem_gpu_of("2,3,0,1", 0, &err), 2);
    cr_expect_eq(ct_mem_gpu_of("2,3,0,1", 3, &err), 1);
    cr_expect_eq(ct_mem_gpu_of("2,3,0,1", 6, &err), 0);
    cr_expect_eq(ct_mem_gpu_of("7", 4, &err), 7);
    cr_expect_eq(ct_mem_gpu_of("1,,2", 0, &err), CT_EINVAL);
    cr_expect(strstr(err.msg, "--gpu-map '1,,2'"), "%s", err.msg);
    cr_expect_eq(ct_mem_gpu_of("1,2,", 0, &err), CT_EINVAL);
    cr_expect_eq(ct_mem_gpu_of("a", 0, &err), CT_EINVAL);
    cr_expect_eq(ct_mem_gpu_of("-1", 0, &err), CT_EINVAL);
}
