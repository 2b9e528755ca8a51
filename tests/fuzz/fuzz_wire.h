/* SPDX-License-Identifier: MIT */
/*
 * One input through one of the parsers of bytes that arrive from the network: the tcp
 * frame header and connection handshake (transport/frame.h), the bootstrap hello
 * (transport/boot.h), and PMI-1 response lines with the root record they carry. Used by the
 * libFuzzer harnesses (fuzz_frame.c ...; tests/fuzz/run-wire.sh) and by the corpus replay
 * test (tests/transport/test_boot_replay.c). Invariants of accepted inputs abort().
 */
#ifndef CT_FUZZ_WIRE_H
#define CT_FUZZ_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/boot.h"
#include "transport/boot_int.h"
#include "transport/frame.h"

#define FUZZ_CHECK(x)                                                                              \
    do {                                                                                           \
        if (!(x))                                                                                  \
            abort();                                                                               \
    } while (0)

/* The first n bytes of the input, zero-padded. When the input has a byte beyond them with
 * its low bit set, the trailing checksum (FNV-1a of the bytes before it, little endian) is
 * recomputed, so the fuzzer also reaches the field checks behind it. */
static inline void fuzz_take(unsigned char *out, size_t n, const uint8_t *data, size_t size)
{
    memset(out, 0, n);
    memcpy(out, data, size < n ? size : n);
    if (size > n && (data[n] & 1)) {
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n - 4; i++) {
            h ^= out[i];
            h *= 16777619u;
        }
        for (int i = 0; i < 4; i++)
            out[n - 4 + i] = (unsigned char)(h >> (8 * i));
    }
}

static inline int fuzz_frame(const uint8_t *data, size_t size)
{
    unsigned char in[CT_FRAME_BYTES], again[CT_FRAME_BYTES];
    struct ct_frame f, g;
    struct ct_err err = {0};
    fuzz_take(in, sizeof in, data, size);
    if (ct_frame_decode(in, &f, &err) < 0) {
        FUZZ_CHECK(err.code == CT_EPEER && err.msg[0]);
        return 0;
    }
    FUZZ_CHECK(f.stream < CT_FRAME_MAX_STREAMS && f.len <= CT_FRAME_MAX_PIECE);
    FUZZ_CHECK(f.total <= CT_FRAME_MAX_TOTAL && f.offset <= f.total);
    FUZZ_CHECK(f.len <= f.total - f.offset);
    ct_frame_encode(&f, again);
    FUZZ_CHECK(memcmp(in, again, sizeof in) == 0); /* one encoding per header */
    FUZZ_CHECK(ct_frame_decode(again, &g, NULL) == 0 && ct_frame_check(&g, &f, NULL) == 0);
    g.seq++;
    FUZZ_CHECK(ct_frame_check(&g, &f, NULL) == CT_EPEER);
    return 1;
}

static inline int fuzz_hello(const uint8_t *data, size_t size)
{
    unsigned char in[CT_HELLO_BYTES], again[CT_HELLO_BYTES];
    struct ct_hello h;
    struct ct_err err = {0};
    fuzz_take(in, sizeof in, data, size);
    if (ct_hello_decode(in, &h, &err) < 0) {
        FUZZ_CHECK(err.code == CT_EPEER && err.msg[0]);
        return 0;
    }
    FUZZ_CHECK(h.kind == CT_HELLO_CONNECT || h.kind == CT_HELLO_ACCEPT);
    FUZZ_CHECK(h.nstreams >= 1 && h.nstreams <= CT_FRAME_MAX_STREAMS && h.stream < h.nstreams);
    FUZZ_CHECK(h.from < h.size && h.to < h.size && h.from != h.to);
    ct_hello_encode(&h, again);
    FUZZ_CHECK(memcmp(in, again, sizeof in) == 0);
    return 1;
}

static inline int fuzz_boot_hello(const uint8_t *data, size_t size)
{
    unsigned char in[CT_BOOT_HELLO_BYTES], again[CT_BOOT_HELLO_BYTES];
    struct ct_boot_hello h;
    struct ct_err err = {0};
    fuzz_take(in, sizeof in, data, size);
    if (ct_boot_hello_decode(in, &h, &err) < 0) {
        FUZZ_CHECK(err.code == CT_EPEER && err.msg[0]);
        return 0;
    }
    FUZZ_CHECK(h.size >= 1 && h.size <= CT_BOOT_MAX_RANKS && h.rank < h.size);
    size_t hl = strnlen(h.host, sizeof h.host);
    FUZZ_CHECK(hl > 0 && hl < sizeof h.host);
    for (size_t i = 0; i < hl; i++)
        FUZZ_CHECK(h.host[i] > ' ' && h.host[i] <= '~');
    ct_boot_hello_encode(&h, again);
    FUZZ_CHECK(memcmp(in, again, sizeof in) == 0);
    return 1;
}

/* A PMI-1 response line (up to the first newline); its value, if any, as a root record. */
static inline int fuzz_pmi1(const uint8_t *data, size_t size)
{
    static const char *const keys[] = {"cmd",     "rc",         "msg",         "value",
                                       "kvsname", "vallen_max", "pmi_version", ""};
    char *line = malloc(size + 1);
    memcpy(line, data, size);
    line[size] = 0;
    char *nl = strchr(line, '\n');
    if (nl)
        *nl = 0;
    int accepted = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        char small[8], big[1024];
        int a = ct_pmi1_field(line, keys[k], small, sizeof small);
        int b = ct_pmi1_field(line, keys[k], big, sizeof big);
        FUZZ_CHECK(a == 0 || a == -1 || a == CT_EPEER);
        FUZZ_CHECK(b == 0 || b == -1 || b == CT_EPEER);
        FUZZ_CHECK(a != 0 || strlen(small) < sizeof small);
        FUZZ_CHECK(b != 0 || strlen(big) < sizeof big);
        FUZZ_CHECK((a == -1) == (b == -1)); /* found does not depend on the buffer */
        if (a == 0)
            FUZZ_CHECK(b == 0 && !strcmp(small, big));
    }
    struct ct_err err = {0};
    if (ct_pmi1_check(line, "get_result", &err) == 0) {
        char value[1024];
        struct ct_boot_root_rec r;
        if (ct_pmi1_field(line, "value", value, sizeof value) == 0 &&
            ct_boot_root_rec_parse(value, &r, &err) == 0) {
            accepted = 1;
            FUZZ_CHECK(r.host[0] && strlen(r.host) < sizeof r.host && r.addrs[0]);
            FUZZ_CHECK(strlen(r.addrs) < sizeof r.addrs);
        }
    } else {
        FUZZ_CHECK(err.code < 0 && err.msg[0]);
    }
    free(line);
    return accepted;
}

/* target: "frame", "hello", "boot_hello", "pmi1". 1 accepted, 0 refused, -1 no such. */
static inline int fuzz_wire(const char *target, const uint8_t *data, size_t size)
{
    if (!strcmp(target, "frame"))
        return fuzz_frame(data, size);
    if (!strcmp(target, "hello"))
        return fuzz_hello(data, size);
    if (!strcmp(target, "boot_hello"))
        return fuzz_boot_hello(data, size);
    if (!strcmp(target, "pmi1"))
        return fuzz_pmi1(data, size);
    return -1;
}

#ifdef FUZZ_WIRE
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_wire(FUZZ_WIRE, data, size);
    return 0;
}
#endif

#endif
