/* SPDX-License-Identifier: MIT */
/* Encode and validate the tcp transport's frame header and connection handshake. */
#include "frame.h"

#include <string.h>

#include "../lib/wire.h"

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- frame */

/*
 * Layout: 0 magic u32 | 4 version u8 | 5 flags u8 (0) | 6 stream u16 | 8 job u32 |
 * 12 len u32 | 16 seq u64 | 24 offset u64 | 32 total u64 | 40 reserved u32 (0) | 44 csum u32
 */
void ct_frame_encode(const struct ct_frame *f, unsigned char out[CT_FRAME_BYTES])
{
    memset(out, 0, CT_FRAME_BYTES);
    ct_put32(out, CT_FRAME_MAGIC);
    out[4] = CT_FRAME_VERSION;
    ct_put16(out + 6, f->stream);
    ct_put32(out + 8, f->job);
    ct_put32(out + 12, f->len);
    ct_put64(out + 16, f->seq);
    ct_put64(out + 24, f->offset);
    ct_put64(out + 32, f->total);
    ct_put32(out + 44, ct_fnv1a(out, 44));
}

int ct_frame_decode(const unsigned char in[CT_FRAME_BYTES], struct ct_frame *f, struct ct_err *err)
{
    uint32_t magic = ct_get32(in);
    if (magic != CT_FRAME_MAGIC)
        return ct_err_set(err, CT_EPEER, "bad frame: magic 0x%08x (expected 0x%08x)", magic,
                          CT_FRAME_MAGIC);
    if (ct_get32(in + 44) != ct_fnv1a(in, 44))
        return ct_err_set(err, CT_EPEER, "bad frame: header checksum mismatch");
    if (in[4] != CT_FRAME_VERSION)
        return ct_err_set(err, CT_EPEER, "bad frame: version %u (expected %u)", in[4],
                          CT_FRAME_VERSION);
    if (in[5] || !all_zero(in + 40, 4))
        return ct_err_set(err, CT_EPEER, "bad frame: reserved bytes are not zero");
    f->stream = ct_get16(in + 6);
    f->job = ct_get32(in + 8);
    f->len = ct_get32(in + 12);
    f->seq = ct_get64(in + 16);
    f->offset = ct_get64(in + 24);
    f->total = ct_get64(in + 32);
    if (f->stream >= CT_FRAME_MAX_STREAMS)
        return ct_err_set(err, CT_EPEER, "bad frame: stream %u (limit %d)", f->stream,
                          CT_FRAME_MAX_STREAMS);
    if (f->len > CT_FRAME_MAX_PIECE)
        return ct_err_set(err, CT_EPEER, "bad frame: piece of %u bytes (limit %u)", f->len,
                          CT_FRAME_MAX_PIECE);
    if (f->total > CT_FRAME_MAX_TOTAL)
        return ct_err_set(err, CT_EPEER, "bad frame: message of %llu bytes (limit %llu)",
                          (unsigned long long)f->total, (unsigned long long)CT_FRAME_MAX_TOTAL);
    if (f->offset > f->total || f->len > f->total - f->offset)
        return ct_err_set(err, CT_EPEER, "bad frame: piece %llu+%u beyond message of %llu bytes",
                          (unsigned long long)f->offset, f->len, (unsigned long long)f->total);
    return 0;
}

int ct_frame_check(const struct ct_frame *got, const struct ct_frame *want, struct ct_err *err)
{
    if (got->job != want->job)
        return ct_err_set(err, CT_EPEER, "frame of job %08x (this job is %08x)", got->job,
                          want->job);
    if (got->stream != want->stream)
        return ct_err_set(err, CT_EPEER, "frame for stream %u arrived on stream %u", got->stream,
                          want->stream);
    if (got->seq != want->seq)
        return ct_err_set(err, CT_EPEER,
                          "frame of message %llu where message %llu was expected "
                          "(message lengths disagree?)",
                          (unsigned long long)got->seq, (unsigned long long)want->seq);
    if (got->total != want->total)
        return ct_err_set(err, CT_EPEER,
                          "length mismatch: peer sent %llu bytes, receive posted for %llu",
                          (unsigned long long)got->total, (unsigned long long)want->total);
    if (got->offset != want->offset || got->len != want->len)
        return ct_err_set(err, CT_EPEER, "frame piece %llu+%u where %llu+%u was expected",
                          (unsigned long long)got->offset, got->len,
                          (unsigned long long)want->offset, want->len);
    return 0;
}

/* ---------------------------------------------------------------- handshake */

/*
 * Layout: 0 magic u32 | 4 version u8 | 5 kind u8 | 6 stream u16 | 8 nstreams u16 |
 * 10 reserved u16 (0) | 12 from u32 | 16 to u32 | 20 size u32 | 24 job u64 | 32 token[16] |
 * 48 reserved[12] (0) | 60 csum u32
 */
void ct_hello_encode(const struct ct_hello *h, unsigned char out[CT_HELLO_BYTES])
{
    memset(out, 0, CT_HELLO_BYTES);
    ct_put32(out, CT_HELLO_MAGIC);
    out[4] = CT_HELLO_VERSION;
    out[5] = h->kind;
    ct_put16(out + 6, h->stream);
    ct_put16(out + 8, h->nstreams);
    ct_put32(out + 12, h->from);
    ct_put32(out + 16, h->to);
    ct_put32(out + 20, h->size);
    ct_put64(out + 24, h->job_id);
    memcpy(out + 32, h->token, CT_HELLO_TOKEN_BYTES);
    ct_put32(out + 60, ct_fnv1a(out, 60));
}

int ct_hello_decode(const unsigned char in[CT_HELLO_BYTES], struct ct_hello *h, struct ct_err *err)
{
    uint32_t magic = ct_get32(in);
    if (magic != CT_HELLO_MAGIC)
        return ct_err_set(err, CT_EPEER, "bad handshake: magic 0x%08x (expected 0x%08x)", magic,
                          CT_HELLO_MAGIC);
    if (ct_get32(in + 60) != ct_fnv1a(in, 60))
        return ct_err_set(err, CT_EPEER, "bad handshake: checksum mismatch");
    if (in[4] != CT_HELLO_VERSION)
        return ct_err_set(err, CT_EPEER, "bad handshake: version %u (expected %u)", in[4],
                          CT_HELLO_VERSION);
    if (!all_zero(in + 10, 2) || !all_zero(in + 48, 12))
        return ct_err_set(err, CT_EPEER, "bad handshake: reserved bytes are not zero");
    h->kind = in[5];
    h->stream = ct_get16(in + 6);
    h->nstreams = ct_get16(in + 8);
    h->from = ct_get32(in + 12);
    h->to = ct_get32(in + 16);
    h->size = ct_get32(in + 20);
    h->job_id = ct_get64(in + 24);
    memcpy(h->token, in + 32, CT_HELLO_TOKEN_BYTES);
    if (h->kind != CT_HELLO_CONNECT && h->kind != CT_HELLO_ACCEPT)
        return ct_err_set(err, CT_EPEER, "bad handshake: kind %u", h->kind);
    if (h->nstreams < 1 || h->nstreams > CT_FRAME_MAX_STREAMS || h->stream >= h->nstreams)
        return ct_err_set(err, CT_EPEER, "bad handshake: stream %u of %u", h->stream, h->nstreams);
    if (h->from >= h->size || h->to >= h->size || h->from == h->to)
        return ct_err_set(err, CT_EPEER, "bad handshake: ranks %u -> %u in a job of %u", h->from,
                          h->to, h->size);
    return 0;
}
