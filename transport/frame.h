/* SPDX-License-Identifier: MIT */
/*
 * Wire formats of the tcp transport: the per-piece frame header and the connection
 * handshake. Kept apart from the socket code so both parsers can be unit-tested and fuzzed.
 */
#ifndef CT_FRAME_H
#define CT_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"

/*
 * Frame header: precedes every piece of every message on a stream. Fixed size, little
 * endian, ends with a checksum over the preceding bytes. A receiver always knows what it
 * expects next on a stream (job, stream, message sequence number, piece offset and length,
 * message length), so a header that decodes but does not match is also an error.
 */
#define CT_FRAME_BYTES 48
#define CT_FRAME_MAGIC 0x31465443u /* "CTF1" */
#define CT_FRAME_VERSION 1
#define CT_FRAME_MAX_STREAMS 256
#define CT_FRAME_MAX_PIECE (16u << 20)  /* bytes of payload after one header */
#define CT_FRAME_MAX_TOTAL (1ull << 40) /* bytes of one message */

struct ct_frame {
    uint32_t job;    /* low 32 bits of the job id */
    uint16_t stream; /* stream index within the peer connection */
    uint64_t seq;    /* message number on this ordered pair, from 0 */
    uint64_t offset; /* piece offset within the message */
    uint32_t len;    /* piece payload bytes following the header */
    uint64_t total;  /* message length */
};

/* Write the header of f into out. */
void ct_frame_encode(const struct ct_frame *f, unsigned char out[CT_FRAME_BYTES]);

/*
 * Parse in into f and check it on its own: magic, version, checksum, reserved bytes zero,
 * stream < CT_FRAME_MAX_STREAMS, len <= CT_FRAME_MAX_PIECE, total <= CT_FRAME_MAX_TOTAL,
 * offset + len <= total. Returns 0, or CT_EPEER with the reason in err ("bad frame: ...").
 */
int ct_frame_decode(const unsigned char in[CT_FRAME_BYTES], struct ct_frame *f, struct ct_err *err);

/*
 * Compare a decoded header with the one the receiver expects. Returns 0, or CT_EPEER naming
 * the first field that differs (job, stream, seq, total, offset, len); a differing total
 * reads "length mismatch: peer sent N bytes, receive posted for M".
 */
int ct_frame_check(const struct ct_frame *got, const struct ct_frame *want, struct ct_err *err);

/*
 * Handshake: the first bytes on every connection, in both directions (the connector sends
 * CONNECT, the acceptor answers ACCEPT). token is reserved for a per-job secret (all zero
 * until the bootstrap provides one); it is compared like the job id.
 */
#define CT_HELLO_BYTES 64
#define CT_HELLO_MAGIC 0x31485443u /* "CTH1" */
#define CT_HELLO_VERSION 1
#define CT_HELLO_TOKEN_BYTES 16

enum ct_hello_kind {
    CT_HELLO_CONNECT = 1,
    CT_HELLO_ACCEPT = 2,
};

struct ct_hello {
    uint8_t kind;      /* enum ct_hello_kind */
    uint16_t stream;   /* stream index of this connection */
    uint16_t nstreams; /* streams per peer pair the sender uses */
    uint32_t from, to; /* sender's rank, intended receiver's rank */
    uint32_t size;     /* job size */
    uint64_t job_id;
    unsigned char token[CT_HELLO_TOKEN_BYTES];
};

void ct_hello_encode(const struct ct_hello *h, unsigned char out[CT_HELLO_BYTES]);

/*
 * Parse in into h and check it on its own: magic, version, checksum, reserved bytes zero,
 * a known kind, 1 <= nstreams <= CT_FRAME_MAX_STREAMS, stream < nstreams, from and to
 * below size, from != to. Returns 0, or CT_EPEER with the reason ("bad handshake: ...").
 */
int ct_hello_decode(const unsigned char in[CT_HELLO_BYTES], struct ct_hello *h, struct ct_err *err);

#endif
