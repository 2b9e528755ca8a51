/* SPDX-License-Identifier: MIT */
/* tcp transport wire formats: frame header and handshake round trips, corruption, limits. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "transport/frame.h"

/* The checksum the formats specify (FNV-1a 32 over the bytes before it), to forge
 * headers whose checksum is right but whose fields are not. */
static uint32_t fnv(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 16777619u;
    }
    return h;
}

static void reseal(unsigned char *p, size_t bytes)
{
    uint32_t h = fnv(p, bytes - 4);
    for (int i = 0; i < 4; i++)
        p[bytes - 4 + (size_t)i] = (unsigned char)(h >> (8 * i));
}

static struct ct_frame sample_frame(void)
{
    struct ct_frame f = {.job = 0xdeadbeefu,
                         .stream = 3,
                         .seq = 0x0123456789abcdefull,
                         .offset = 4u << 20,
                         .len = 1u << 20,
                         .total = 9u << 20};
    return f;
}

static void expect_frame_rejected(const unsigned char *wire, const char *needle)
{
    struct ct_frame f;
    struct ct_err err = {0};
    cr_assert_eq(ct_frame_decode(wire, &f, &err), CT_EPEER, "accepted, expected '%s'", needle);
    cr_assert_eq(err.code, CT_EPEER);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
}

Test(frame, round_trip)
{
    struct ct_frame cases[] = {
        sample_frame(),
        {0, 0, 0, 0, 0, 0},
        {0xffffffffu, CT_FRAME_MAX_STREAMS - 1, UINT64_MAX, CT_FRAME_MAX_TOTAL - CT_FRAME_MAX_PIECE,
         CT_FRAME_MAX_PIECE, CT_FRAME_MAX_TOTAL},
        {1, 1, 1, 7, 0, 7},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char wire[CT_FRAME_BYTES];
        struct ct_frame got;
        struct ct_err err = {0};
        ct_frame_encode(&cases[i], wire);
        cr_assert_eq(ct_frame_decode(wire, &got, &err), 0, "case %zu: %s", i, err.msg);
        cr_assert_eq(got.job, cases[i].job);
        cr_assert_eq(got.stream, cases[i].stream);
        cr_assert_eq(got.seq, cases[i].seq);
        cr_assert_eq(got.offset, cases[i].offset);
        cr_assert_eq(got.len, cases[i].len);
        cr_assert_eq(got.total, cases[i].total);
        cr_assert_eq(ct_frame_check(&got, &cases[i], &err), 0, "case %zu: %s", i, err.msg);
    }
}

Test(frame, layout_is_little_endian)
{
    struct ct_frame f = sample_frame();
    unsigned char wire[CT_FRAME_BYTES];
    ct_frame_encode(&f, wire);
    cr_assert_eq(memcmp(wire, "CTF1", 4), 0);
    cr_assert_eq(wire[4], CT_FRAME_VERSION);
    cr_assert_eq(wire[6], 3);
    cr_assert_eq(wire[8], 0xef);
    cr_assert_eq(wire[11], 0xde);
    cr_assert_eq(wire[16], 0xef);
    cr_assert_eq(wire[23], 0x01);
}

/* Any change to any single byte (the checksum included) is detected. */
Test(frame, every_corrupted_byte_detected)
{
    struct ct_frame f = sample_frame();
    unsigned char good[CT_FRAME_BYTES];
    ct_frame_encode(&f, good);
    const unsigned char masks[] = {0x01, 0x10, 0x80, 0xff};
    for (size_t i = 0; i < CT_FRAME_BYTES; i++)
        for (size_t m = 0; m < sizeof masks; m++) {
            unsigned char bad[CT_FRAME_BYTES];
            struct ct_frame got;
            memcpy(bad, good, sizeof bad);
            bad[i] ^= masks[m];
            cr_assert_eq(ct_frame_decode(bad, &got, NULL), CT_EPEER, "byte %zu ^ %02x accepted", i,
                         masks[m]);
        }
}

/* Headers with a correct checksum but wrong fields: each field is named. */
Test(frame, check_names_each_field)
{
    const struct ct_frame want = sample_frame();
    struct {
        const char *needle;
        struct ct_frame f;
    } cases[] = {
        {"job", want},   {"stream", want}, {"message", want}, {"length mismatch", want},
        {"piece", want}, {"piece", want},
    };
    cases[0].f.job ^= 1;
    cases[1].f.stream = 4;
    cases[2].f.seq++;
    cases[3].f.total += 1;
    cases[4].f.offset -= 4096;
    cases[5].f.len = 12345;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char wire[CT_FRAME_BYTES];
        struct ct_frame got;
        struct ct_err err = {0};
        ct_frame_encode(&cases[i].f, wire);
        cr_assert_eq(ct_frame_decode(wire, &got, &err), 0, "%s", err.msg);
        cr_assert_eq(ct_frame_check(&got, &want, &err), CT_EPEER, "case %zu accepted", i);
        cr_assert(strstr(err.msg, cases[i].needle), "case %zu: '%s' lacks '%s'", i, err.msg,
                  cases[i].needle);
    }
}

Test(frame, length_mismatch_message)
{
    struct ct_frame got = sample_frame(), want = sample_frame();
    struct ct_err err = {0};
    got.total = 100;
    want.total = 200;
    cr_assert_eq(ct_frame_check(&got, &want, &err), CT_EPEER);
    cr_assert_str_eq(err.msg, "length mismatch: peer sent 100 bytes, receive posted for 200");
}

Test(frame, limits_rejected)
{
    struct ct_frame f;
    unsigned char wire[CT_FRAME_BYTES];

    f = (struct ct_frame){.len = CT_FRAME_MAX_PIECE + 1, .total = CT_FRAME_MAX_TOTAL};
    ct_frame_encode(&f, wire);
    expect_frame_rejected(wire, "piece of");

    f = (struct ct_frame){.total = CT_FRAME_MAX_TOTAL + 1};
    ct_frame_encode(&f, wire);
    expect_frame_rejected(wire, "limit");

    f = (struct ct_frame){.offset = 100, .len = 10, .total = 105};
    ct_frame_encode(&f, wire);
    expect_frame_rejected(wire, "beyond message");

    f = (struct ct_frame){.offset = 200, .len = 0, .total = 100};
    ct_frame_encode(&f, wire);
    expect_frame_rejected(wire, "beyond message");

    /* offset + len wraps around 2^64 */
    f = (struct ct_frame){.offset = UINT64_MAX - 3, .len = 8, .total = CT_FRAME_MAX_TOTAL};
    ct_frame_encode(&f, wire);
    expect_frame_rejected(wire, "beyond message");

    f = (struct ct_frame){.stream = CT_FRAME_MAX_STREAMS};
    ct_frame_encode(&f, wire);
    expect_frame_rejected(wire, "stream");
}

Test(frame, version_and_reserved_rejected)
{
    struct ct_frame f = sample_frame();
    unsigned char wire[CT_FRAME_BYTES];

    ct_frame_encode(&f, wire);
    wire[4] = CT_FRAME_VERSION + 1;
    reseal(wire, sizeof wire);
    expect_frame_rejected(wire, "version");

    ct_frame_encode(&f, wire);
    wire[5] = 1;
    reseal(wire, sizeof wire);
    expect_frame_rejected(wire, "reserved");

    ct_frame_encode(&f, wire);
    wire[42] = 1;
    reseal(wire, sizeof wire);
    expect_frame_rejected(wire, "reserved");

    ct_frame_encode(&f, wire);
    memcpy(wire, "CTF2", 4);
    reseal(wire, sizeof wire);
    expect_frame_rejected(wire, "magic");
}

/* Deterministic garbage: random bytes, and random bytes behind a valid magic. */
Test(frame, garbage_rejected)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int n = 0; n < 20000; n++) {
        unsigned char wire[CT_FRAME_BYTES];
        for (size_t i = 0; i < sizeof wire; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            wire[i] = (unsigned char)x;
        }
        if (n & 1)
            memcpy(wire, "CTF1", 4);
        struct ct_frame f;
        cr_assert_eq(ct_frame_decode(wire, &f, NULL), CT_EPEER, "garbage %d accepted", n);
        unsigned char hello[CT_HELLO_BYTES] = {0};
        memcpy(hello, wire, sizeof wire);
        if (n & 1)
            memcpy(hello, "CTH1", 4);
        struct ct_hello h;
        cr_assert_eq(ct_hello_decode(hello, &h, NULL), CT_EPEER, "garbage hello %d accepted", n);
    }
}

/* ---------------------------------------------------------------- handshake */

static struct ct_hello sample_hello(void)
{
    struct ct_hello h = {.kind = CT_HELLO_CONNECT,
                         .stream = 2,
                         .nstreams = 4,
                         .from = 5,
                         .to = 1,
                         .size = 8,
                         .job_id = 0x1122334455667788ull};
    for (int i = 0; i < CT_HELLO_TOKEN_BYTES; i++)
        h.token[i] = (unsigned char)(0xa0 + i);
    return h;
}

static void expect_hello_rejected(const struct ct_hello *h, const char *needle)
{
    unsigned char wire[CT_HELLO_BYTES];
    struct ct_hello got;
    struct ct_err err = {0};
    ct_hello_encode(h, wire);
    cr_assert_eq(ct_hello_decode(wire, &got, &err), CT_EPEER, "accepted, expected '%s'", needle);
    cr_assert(strstr(err.msg, needle), "message '%s' lacks '%s'", err.msg, needle);
}

Test(hello, round_trip)
{
    struct ct_hello h = sample_hello(), got;
    unsigned char wire[CT_HELLO_BYTES];
    struct ct_err err = {0};
    ct_hello_encode(&h, wire);
    cr_assert_eq(memcmp(wire, "CTH1", 4), 0);
    cr_assert_eq(ct_hello_decode(wire, &got, &err), 0, "%s", err.msg);
    cr_assert_eq(got.kind, h.kind);
    cr_assert_eq(got.stream, h.stream);
    cr_assert_eq(got.nstreams, h.nstreams);
    cr_assert_eq(got.from, h.from);
    cr_assert_eq(got.to, h.to);
    cr_assert_eq(got.size, h.size);
    cr_assert_eq(got.job_id, h.job_id);
    cr_assert_eq(memcmp(got.token, h.token, CT_HELLO_TOKEN_BYTES), 0);
    h.kind = CT_HELLO_ACCEPT;
    ct_hello_encode(&h, wire);
    cr_assert_eq(ct_hello_decode(wire, &got, &err), 0, "%s", err.msg);
    cr_assert_eq(got.kind, CT_HELLO_ACCEPT);
}

Test(hello, every_corrupted_byte_detected)
{
    struct ct_hello h = sample_hello(), got;
    unsigned char good[CT_HELLO_BYTES];
    ct_hello_encode(&h, good);
    for (size_t i = 0; i < CT_HELLO_BYTES; i++)
        for (unsigned m = 1; m < 256; m <<= 1) {
            unsigned char bad[CT_HELLO_BYTES];
            memcpy(bad, good, sizeof bad);
            bad[i] ^= (unsigned char)m;
            cr_assert_eq(ct_hello_decode(bad, &got, NULL), CT_EPEER, "byte %zu ^ %02x accepted", i,
                         m);
        }
}

Test(hello, fields_checked)
{
    struct ct_hello h;
    h = sample_hello();
    h.kind = 3;
    expect_hello_rejected(&h, "kind");
    h = sample_hello();
    h.kind = 0;
    expect_hello_rejected(&h, "kind");
    h = sample_hello();
    h.stream = 4;
    expect_hello_rejected(&h, "stream");
    h = sample_hello();
    h.nstreams = 0;
    h.stream = 0;
    expect_hello_rejected(&h, "stream");
    h = sample_hello();
    h.nstreams = CT_FRAME_MAX_STREAMS + 1;
    expect_hello_rejected(&h, "stream");
    h = sample_hello();
    h.from = 8;
    expect_hello_rejected(&h, "ranks");
    h = sample_hello();
    h.to = 9;
    expect_hello_rejected(&h, "ranks");
    h = sample_hello();
    h.to = h.from;
    expect_hello_rejected(&h, "ranks");
}

Test(hello, version_and_reserved_rejected)
{
    struct ct_hello h = sample_hello(), got;
    unsigned char wire[CT_HELLO_BYTES];
    const size_t spots[] = {4, 10, 11, 48, 59};
    for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
        struct ct_err err = {0};
        ct_hello_encode(&h, wire);
        wire[spots[i]] ^= 0x40;
        reseal(wire, sizeof wire);
        cr_assert_eq(ct_hello_decode(wire, &got, &err), CT_EPEER, "byte %zu accepted", spots[i]);
        cr_assert(strstr(err.msg, spots[i] == 4 ? "version" : "reserved"), "%s", err.msg);
    }
}
