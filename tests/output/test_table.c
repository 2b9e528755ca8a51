/* SPDX-License-Identifier: MIT */
/*
 * The table's "Using devices" lines (output/table.c): each rank's device as nccl-tests names
 * it, and the note where ranks of one host share a GPU (the GPU then switches between their
 * processes unless MPS runs: measured on an H200, 435-575 us an AllReduce of 8 B on 2 ranks,
 * 26 us under MPS), said once, and not for host memory, other GPUs or other hosts.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/output.h"

static char *header(const struct ct_rank_info *ranks, int n)
{
    struct ct_run_meta m = {.coll = "allreduce",
                            .transport = "shm",
                            .version = "t",
                            .minbytes = 8,
                            .maxbytes = 8,
                            .stepfactor = 2,
                            .iters = 1,
                            .nranks = n,
                            .nnodes = 1,
                            .ranks = ranks};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    ct_table_header(f, &m);
    fclose(f);
    return buf;
}

#define H200 " 0 [0000:00:06] NVIDIA H200"

Test(table, device_lines_and_shared_gpu_note)
{
    struct ct_rank_info r[3] = {{0, 0, 0, 11, "a", H200, ""},
                                {1, 0, 1, 12, "a", " 1 [0000:00:07] NVIDIA H200", ""},
                                {2, 0, 2, 13, "a", H200, ""}};
    char *s = header(r, 3);
    cr_expect(strstr(s, "#  Rank  0 Group  0 Pid     11 on          a device  0 [0000:00:06] "
                        "NVIDIA H200 node 0 local 0\n"),
              "%s", s);
    cr_expect(strstr(s, "#  Rank  1 Group  0 Pid     12 on          a device  1 [0000:00:07] "),
              "%s", s);
    const char *note = strstr(s, "# 2 ranks of a share device 0 [0000:00:06] NVIDIA H200: unless "
                                 "MPS runs");
    cr_expect(note, "%s", s);
    cr_expect(note && !strstr(note + 20, "share device"), "said once: %s", s);
    free(s);
    /* one GPU each; the same GPU name on another host; host memory */
    r[2] = (struct ct_rank_info){2, 1, 0, 13, "b", H200, ""};
    s = header(r, 3);
    cr_expect(!strstr(s, "share device"), "%s", s);
    free(s);
    /* three ranks on one GPU numbered past 9, and two more on another: one line, the first */
    struct ct_rank_info g[5] = {{0, 0, 0, 11, "a", "12 [0000:8a:00] NVIDIA H200", ""},
                                {1, 0, 1, 12, "a", "12 [0000:8a:00] NVIDIA H200", ""},
                                {2, 0, 2, 13, "a", "12 [0000:8a:00] NVIDIA H200", ""},
                                {3, 0, 3, 14, "a", H200, ""},
                                {4, 0, 4, 15, "a", H200, ""}};
    s = header(g, 5);
    note = strstr(s, "# 3 ranks of a share device 12 [0000:8a:00] NVIDIA H200: unless MPS runs");
    cr_expect(note, "%s", s);
    cr_expect(note && !strstr(note + 20, "share device"), "said once: %s", s);
    free(s);
    struct ct_rank_info c[2] = {{0, 0, 0, 11, "a", " 0 [cpu]", ""},
                                {1, 0, 1, 12, "a", " 0 [cpu]", ""}};
    s = header(c, 2);
    cr_expect(strstr(s, "device  0 [cpu] node 0 local 1\n") && !strstr(s, "share device"), "%s", s);
    free(s);
}
