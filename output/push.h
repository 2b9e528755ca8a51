/* SPDX-License-Identifier: MIT */
/*
 * Sending exports where sites keep them: an HTTP PUT or POST through libcurl (TLS verified
 * unless told otherwise, timeouts, retries with exponential backoff on connection errors and
 * 5xx), and the sweep's headline figures in Prometheus text format for a Pushgateway.
 */
#ifndef CT_OUTPUT_PUSH_H
#define CT_OUTPUT_PUSH_H

#include <stdbool.h>
#include <stddef.h>

#include "../tune/tune.h"
#include "../lib/err.h"
#include "export.h"

struct ct_push_opts {
    const char *method;       /* "PUT" (default) or "POST" */
    const char *content_type; /* NULL: text/plain; charset=utf-8 */
    const char *cacert;       /* CA certificates (PEM file) to verify the server; NULL: system */
    bool insecure;            /* skip TLS verification: only when the user asked for it */
    char **headers;           /* "Name: value", resolved (values are secrets: never shown) */
    size_t nheaders;
    double timeout_s;         /* per attempt, whole transfer (default 30) */
    double connect_timeout_s; /* per attempt (default 10) */
    int retries;              /* attempts after the first, on connection errors and 5xx (3) */
    double backoff_s;         /* wait before the first retry, doubled each time (0.5) */
};
void ct_push_opts_init(struct ct_push_opts *o);

struct ct_push_result {
    long status; /* HTTP status of the last attempt (0: none) */
    int attempts;
};

/* True when colltune was built with libcurl. */
bool ct_push_available(void);

/* http:// or https:// with a host; CT_EINVAL otherwise (the message shows the URL redacted). */
int ct_push_url_check(const char *url, struct ct_err *err);
/* The URL for messages: user:password@ and the query string replaced by "***" (new memory). */
char *ct_push_url_redact(const char *url);

/*
 * A --header argument "Name: @FILE" (the value is the file's first line) or "Name: env:VAR"
 * into "Name: value" (new memory, caller frees). Values never come from the command line
 * itself, and no message ever contains one. CT_EINVAL with the header name on any problem.
 */
int ct_push_header_resolve(const char *spec, char **out, struct ct_err *err);

/*
 * Send len bytes of data to url with o->method. 2xx: 0. Connection errors, timeouts and 5xx
 * are retried (o->retries times, backoff doubling); then, and on any other status, CT_EIO
 * (CT_ETIMEDOUT for a timeout) with a message naming the status ("HTTP 403 Forbidden") or
 * the connection problem. res (may be NULL) gets the last status and the attempt count.
 */
int ct_push_http(const char *url, const void *data, size_t len, const struct ct_push_opts *o,
                 struct ct_push_result *res, struct ct_err *err);

/*
 * The sweep's headline figures in Prometheus text exposition format (version 0.0.4): best
 * bus bandwidth per collective and measured size from the results file (colltune-sweep/1;
 * points that failed verification are left out), and per collective the number of tuned size
 * ranges, plus the sweep's points, time and an info series from the config.
 */
int ct_push_metrics_text(const struct ct_config *c, const char *results_path, struct ct_text *t,
                         struct ct_err *err);
/* A Pushgateway URL: a URL with no path gets /metrics/job/colltune/instance/<instance>
 * (escaped); one with a path is kept. New memory. */
char *ct_push_metrics_url(const char *url, const char *instance);

/* Free the headers (wiped first: they may hold credentials). */
void ct_push_opts_release(struct ct_push_opts *o);

/* Push the text t (what: "metrics", a format name) to url, then log "<prefix>pushed what
 * (N bytes) to URL (credentials hidden): HTTP status". */
int ct_push_text(FILE *log, const char *prefix, const char *what, const char *url,
                 const struct ct_text *t, const struct ct_push_opts *po, struct ct_err *err);

/* The sweep's headline figures (config c, its results file) pushed to the Pushgateway at
 * url under this host's job, logged as ct_push_text does. */
int ct_push_metrics(FILE *log, const char *prefix, const char *url, const struct ct_config *c,
                    const char *results, const struct ct_push_opts *po, struct ct_err *err);

#endif
