/* SPDX-License-Identifier: MIT */
/*
 * HTTP PUT/POST of an export through libcurl (built with HAVE_CURL), secret headers from files
 * or the environment, and the Prometheus text of a sweep's headline figures.
 */
#include "push.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/file.h"
#include "config.h"

#ifdef HAVE_CURL
#include <curl/curl.h>
#endif

void ct_push_opts_init(struct ct_push_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = "PUT";
    o->timeout_s = 30;
    o->connect_timeout_s = 10;
    o->retries = 3;
    o->backoff_s = 0.5;
}

bool ct_push_available(void)
{
#ifdef HAVE_CURL
    return true;
#else
    return false;
#endif
}

/* ---- URLs and headers -------------------------------------------------------------------- */

char *ct_push_url_redact(const char *url)
{
    const char *scheme = strstr(url, "://");
    const char *host = scheme ? scheme + 3 : url;
    size_t hostlen = strcspn(host, "/?#");
    const char *at = memchr(host, '@', hostlen);
    const char *rest = host + hostlen;
    size_t restlen = strcspn(rest, "?#");
    struct ct_text t;
    ct_text_init(&t);
    ct_text_printf(&t, "%.*s", (int)(host - url), url);
    if (at)
        ct_text_printf(&t, "***@%.*s", (int)(host + hostlen - at - 1), at + 1);
    else
        ct_text_printf(&t, "%.*s", (int)hostlen, host);
    ct_text_printf(&t, "%.*s%s", (int)restlen, rest, rest[restlen] ? "?***" : "");
    return t.s ? t.s : ct_xstrdup("");
}

int ct_push_url_check(const char *url, struct ct_err *err)
{
    const char *h = !strncmp(url, "http://", 7)    ? url + 7
                    : !strncmp(url, "https://", 8) ? url + 8
                                                   : NULL;
    int rc = 0;
    char *r = ct_push_url_redact(url);
    if (!h)
        rc = ct_err_set(err, CT_EINVAL, "URL '%s': expected http:// or https://", r);
    else if (!*h || *h == '/' || *h == ':')
        rc = ct_err_set(err, CT_EINVAL, "URL '%s' has no host", r);
    else if (strpbrk(url, " \t\r\n"))
        rc = ct_err_set(err, CT_EINVAL, "URL '%s' contains white space", r);
    free(r);
    return rc;
}

int ct_push_header_resolve(const char *spec, char **out, struct ct_err *err)
{
    const char *colon = strchr(spec, ':');
    if (!colon || colon == spec)
        return ct_err_set(err, CT_EINVAL, "--header: expected 'Name: @FILE' or 'Name: env:VAR'");
    int nl = (int)(colon - spec);
    for (int i = 0; i < nl; i++)
        if (!((spec[i] >= 'A' && spec[i] <= 'Z') || (spec[i] >= 'a' && spec[i] <= 'z') ||
              (spec[i] >= '0' && spec[i] <= '9') || spec[i] == '-' || spec[i] == '_'))
            return ct_err_set(err, CT_EINVAL, "--header: '%.*s' is not a header name", nl, spec);
    const char *src = colon + 1;
    while (*src == ' ' || *src == '\t')
        src++;
    char *val = NULL;
    if (*src == '@') {
        struct ct_err e2 = {0};
        size_t len;
        if (ct_file_read(src + 1, &val, &len, &e2) < 0)
            return ct_err_set(err, CT_EINVAL, "--header %.*s: %s", nl, spec, e2.msg);
        if (strlen(val) != len) {
            free(val);
            return ct_err_set(err, CT_EINVAL, "--header %.*s: '%s' holds a NUL byte", nl, spec,
                              src + 1);
        }
        val[strcspn(val, "\r\n")] = 0; /* the first line */
    } else if (!strncmp(src, "env:", 4)) {
        const char *v = getenv(src + 4);
        if (!src[4])
            return ct_err_set(err, CT_EINVAL, "--header %.*s: env: needs a variable name", nl,
                              spec);
        if (!v)
            return ct_err_set(err, CT_EINVAL,
                              "--header %.*s: environment variable '%s' is not "
                              "set",
                              nl, spec, src + 4);
        val = ct_xstrdup(v);
        if (strpbrk(val, "\r\n")) {
            free(val);
            return ct_err_set(err, CT_EINVAL, "--header %.*s: '%s' holds a line break", nl, spec,
                              src + 4);
        }
    } else {
        return ct_err_set(err, CT_EINVAL,
                          "--header %.*s: the value must come from @FILE or "
                          "env:VAR (never the command line, where ps shows it)",
                          nl, spec);
    }
    if (!*val) {
        free(val);
        return ct_err_set(err, CT_EINVAL, "--header %.*s: the value is empty", nl, spec);
    }
    size_t n = (size_t)nl + strlen(val) + 3;
    *out = ct_xmalloc(n);
    snprintf(*out, n, "%.*s: %s", nl, spec, val);
    memset(val, 0, strlen(val));
    free(val);
    return 0;
}

/* ---- HTTP ------------------------------------------------------------------------------ */

#ifdef HAVE_CURL
struct xfer {
    const char *data;
    size_t len, off;
    char reason[64]; /* from the status line */
    char body[160];  /* the start of the response, for messages */
    size_t body_len;
};

static size_t read_cb(char *buf, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t k = size * n < x->len - x->off ? size * n : x->len - x->off;
    memcpy(buf, x->data + x->off, k);
    x->off += k;
    return k;
}

static size_t write_cb(char *buf, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t k = size * n;
    size_t room = sizeof x->body - 1 - x->body_len;
    memcpy(x->body + x->body_len, buf, k < room ? k : room);
    x->body_len += k < room ? k : room;
    x->body[x->body_len] = 0;
    return k;
}

static size_t header_cb(char *buf, size_t size, size_t n, void *arg)
{
    struct xfer *x = arg;
    size_t k = size * n;
    if (k > 9 && !strncmp(buf, "HTTP/", 5)) { /* "HTTP/1.1 403 Forbidden\r\n" */
        const char *sp = memchr(buf, ' ', k);
        const char *sp2 = sp ? memchr(sp + 1, ' ', k - (size_t)(sp + 1 - buf)) : NULL;
        size_t l = sp2 ? k - (size_t)(sp2 + 1 - buf) : 0;
        while (l && (sp2[l] == '\r' || sp2[l] == '\n' || sp2[l] == 0))
            l--;
        snprintf(x->reason, sizeof x->reason, "%.*s", sp2 ? (int)l : 0, sp2 ? sp2 + 1 : "");
    }
    return k;
}

static bool retryable(CURLcode rc)
{
    switch (rc) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE: return true;
    default: return false;
    }
}

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* One attempt; fills *status and x; returns the curl code. */
static CURLcode attempt(const char *url, const struct ct_push_opts *o, struct curl_slist *hdrs,
                        struct xfer *x, long *status, char *ebuf)
{
    CURL *h = curl_easy_init();
    if (!h)
        return CURLE_FAILED_INIT;
    x->off = 0;
    x->reason[0] = 0;
    x->body[0] = 0;
    x->body_len = 0;
    ebuf[0] = 0;
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(h, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(o->timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout_s * 1000));
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L);
    if (o->cacert)
        curl_easy_setopt(h, CURLOPT_CAINFO, o->cacert);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "colltune");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
    if (!strcmp(o->method, "POST")) {
        curl_easy_setopt(h, CURLOPT_POST, 1L);
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, x->data);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->len);
    } else {
        curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(h, CURLOPT_READFUNCTION, read_cb);
        curl_easy_setopt(h, CURLOPT_READDATA, x);
        curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->len);
    }
    CURLcode rc = curl_easy_perform(h);
    *status = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    curl_easy_cleanup(h);
    return rc;
}

/* The response text for messages: one line, printable, or "". */
static void body_line(const struct xfer *x, char *buf, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < x->body_len && n + 1 < len; i++) {
        char ch = x->body[i];
        if (ch == '\n' || ch == '\r') {
            if (n)
                break;
            continue;
        }
        buf[n++] = (ch >= 32 && ch < 127) ? ch : '?';
    }
    buf[n] = 0;
    if (buf[0] == '<') /* an HTML error page says nothing the status does not */
        buf[0] = 0;
}

int ct_push_http(const char *url, const void *data, size_t len, const struct ct_push_opts *o,
                 struct ct_push_result *res, struct ct_err *err)
{
    CT_TRY(ct_push_url_check(url, err));
    if (strcmp(o->method, "PUT") && strcmp(o->method, "POST"))
        return ct_err_set(err, CT_EINVAL, "push method '%s': expected PUT or POST", o->method);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return ct_err_set(err, CT_EIO, "cannot initialise libcurl");
    struct curl_slist *hdrs = NULL;
    char ct[128];
    snprintf(ct, sizeof ct, "Content-Type: %s",
             o->content_type ? o->content_type : "text/plain; charset=utf-8");
    hdrs = curl_slist_append(hdrs, ct);
    hdrs = curl_slist_append(hdrs, "Expect:"); /* no 100-continue round trip */
    for (size_t i = 0; i < o->nheaders; i++)
        hdrs = curl_slist_append(hdrs, o->headers[i]);

    struct xfer x = {.data = data, .len = len};
    char ebuf[CURL_ERROR_SIZE], *shown = ct_push_url_redact(url);
    long status = 0;
    double wait = o->backoff_s;
    int tries = 0, rc = 0;
    CURLcode cc;
    for (;;) {
        tries++;
        cc = attempt(url, o, hdrs, &x, &status, ebuf);
        bool again = cc != CURLE_OK ? retryable(cc) : status >= 500 && status <= 599;
        if (!again || tries > o->retries)
            break;
        pause_s(wait);
        wait *= 2;
    }
    char line[160];
    body_line(&x, line, sizeof line);
    if (cc == CURLE_OPERATION_TIMEDOUT)
        rc = ct_err_set(err, CT_ETIMEDOUT,
                        "push to '%s': timed out (%g s per attempt, %d "
                        "attempt%s)",
                        shown, o->timeout_s, tries, tries > 1 ? "s" : "");
    else if (cc == CURLE_PEER_FAILED_VERIFICATION || cc == CURLE_SSL_CACERT_BADFILE ||
             cc == CURLE_SSL_CONNECT_ERROR)
        rc = ct_err_set(err, CT_EIO, "push to '%s': TLS: %s (--cacert FILE names the CA)", shown,
                        *ebuf ? ebuf : curl_easy_strerror(cc));
    else if (cc != CURLE_OK)
        rc = ct_err_set(err, CT_EIO, "push to '%s': %s (%d attempt%s)", shown,
                        *ebuf ? ebuf : curl_easy_strerror(cc), tries, tries > 1 ? "s" : "");
    else if (status < 200 || status > 299)
        rc = ct_err_set(err, CT_EIO, "push to '%s': HTTP %ld%s%s%s%s (%d attempt%s)", shown, status,
                        *x.reason ? " " : "", x.reason, *line ? ": " : "", line, tries,
                        tries > 1 ? "s" : "");
    if (res) {
        res->status = status;
        res->attempts = tries;
    }
    free(shown);
    curl_slist_free_all(hdrs);
    curl_global_cleanup();
    return rc;
}
#else
int ct_push_http(const char *url, const void *data, size_t len, const struct ct_push_opts *o,
                 struct ct_push_result *res, struct ct_err *err)
{
    return ct_err_set(err, CT_EUNSUPP, "colltune was built without libcurl: no --push");
}
#endif

/* ---- Prometheus metrics -------------------------------------------------------------------- */

/* A label value: backslash, quote and line feed escaped. */
static void label(struct ct_text *t, const char *name, const char *v, bool first)
{
    ct_text_printf(t, "%s%s=\"", first ? "" : ",", name);
    for (; *v; v++) {
        if (*v == '\\' || *v == '"')
            ct_text_printf(t, "\\%c", *v);
        else if (*v == '\n')
            ct_text_put(t, "\\n");
        else
            ct_text_printf(t, "%c", *v);
    }
    ct_text_put(t, "\"");
}

struct best {
    int coll;
    long long size;
    double busbw;
    char algo[64];
};

static int read_points(const char *path, struct best **out, size_t *nout, struct ct_err *err)
{
    json_error_t je;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!doc)
        return ct_err_set(err, CT_EINVAL, "results '%s': %s (line %d)", path, je.text, je.line);
    int rc = 0;
    const char *schema = json_string_value(json_object_get(doc, "schema"));
    json_t *pts = json_object_get(doc, "points");
    if (!schema || strcmp(schema, CT_SWEEP_SCHEMA))
        rc = ct_err_set(err, CT_EINVAL,
                        "results '%s': schema is not " CT_SWEEP_SCHEMA
                        " (the results.json of 'colltune sweep')",
                        path);
    else if (!json_is_array(pts))
        rc = ct_err_set(err, CT_EINVAL, "results '%s': no points array", path);
    struct best *b = NULL;
    size_t n = 0;
    for (size_t i = 0; rc == 0 && i < json_array_size(pts); i++) {
        json_t *p = json_array_get(pts, i);
        const char *coll = json_string_value(json_object_get(p, "coll"));
        const char *algo = json_string_value(json_object_get(p, "algo"));
        json_t *size = json_object_get(p, "size"), *bw = json_object_get(p, "busbw");
        json_t *wrong = json_object_get(p, "wrong");
        int c = coll ? ct_coll_find(coll) : -1;
        if (c < 0 || !algo || !json_is_integer(size) || !json_is_number(bw) ||
            !json_is_integer(wrong)) {
            rc = ct_err_set(err, CT_EINVAL, "results '%s': points[%zu] is malformed", path, i);
            break;
        }
        if (json_integer_value(wrong) != 0)
            continue; /* failed verification: not a figure to report */
        size_t k = 0;
        while (k < n && !(b[k].coll == c && b[k].size == json_integer_value(size)))
            k++;
        if (k == n) {
            b = ct_xrealloc(b, (n + 1) * sizeof *b);
            memset(&b[n], 0, sizeof *b);
            b[n].coll = c;
            b[n].size = json_integer_value(size);
            b[n].busbw = -1;
            n++;
        }
        if (json_number_value(bw) > b[k].busbw) {
            b[k].busbw = json_number_value(bw);
            snprintf(b[k].algo, sizeof b[k].algo, "%s", algo);
        }
    }
    json_decref(doc);
    if (rc < 0) {
        free(b);
        return rc;
    }
    *out = b;
    *nout = n;
    return 0;
}

static int by_coll_size(const void *a, const void *b)
{
    const struct best *x = a, *y = b;
    if (x->coll != y->coll)
        return x->coll - y->coll;
    return (x->size > y->size) - (x->size < y->size);
}

int ct_push_metrics_text(const struct ct_config *c, const char *results_path, struct ct_text *t,
                         struct ct_err *err)
{
    struct best *b = NULL;
    size_t n = 0;
    char v[32];
    CT_TRY(read_points(results_path, &b, &n, err));
    qsort(b, n, sizeof *b, by_coll_size);
    snprintf(v, sizeof v, "%d", c->fp.nranks);
    ct_text_put(t, "# HELP colltune_busbw_best_gbps Best bus bandwidth colltune measured per "
                   "collective and size (GB/s, nccl-tests busbw; verified points only).\n"
                   "# TYPE colltune_busbw_best_gbps gauge\n");
    for (size_t i = 0; i < n; i++) {
        char sz[32];
        snprintf(sz, sizeof sz, "%lld", b[i].size);
        ct_text_put(t, "colltune_busbw_best_gbps{");
        label(t, "coll", ct_coll_name((enum ct_coll)b[i].coll), true);
        label(t, "size", sz, false);
        label(t, "nranks", v, false);
        label(t, "algo", b[i].algo, false);
        ct_text_printf(t, "} %.6g\n", b[i].busbw);
    }
    free(b);
    ct_text_put(t, "# HELP colltune_rules Size ranges in the tuned config per collective and "
                   "communicator size.\n# TYPE colltune_rules gauge\n");
    for (int i = 0; i < c->nsets; i++) {
        char nr[16];
        snprintf(nr, sizeof nr, "%d", c->sets[i].nranks);
        ct_text_put(t, "colltune_rules{");
        label(t, "coll", ct_coll_name(c->sets[i].coll), true);
        label(t, "nranks", nr, false);
        ct_text_printf(t, "} %d\n", c->sets[i].nrules);
    }
    ct_text_printf(t,
                   "# HELP colltune_sweep_points Distinct points the sweep measured.\n"
                   "# TYPE colltune_sweep_points gauge\ncolltune_sweep_points %ld\n"
                   "# HELP colltune_sweep_seconds Wall time of the sweep's measuring.\n"
                   "# TYPE colltune_sweep_seconds gauge\ncolltune_sweep_seconds %.6g\n"
                   "# HELP colltune_sweep_partial 1 if the sweep stopped early.\n"
                   "# TYPE colltune_sweep_partial gauge\ncolltune_sweep_partial %d\n",
                   c->sweep.points, c->sweep.elapsed_s, c->partial ? 1 : 0);
    ct_text_put(t, "# HELP colltune_config_info Where the tuned config was measured.\n"
                   "# TYPE colltune_config_info gauge\ncolltune_config_info{");
    label(t, "version", c->version, true);
    label(t, "date", c->date, false);
    label(t, "transport", c->fp.transport, false);
    label(t, "nic_kinds", c->fp.nic_kinds, false);
    label(t, "gpu_model", c->fp.gpu_model, false);
    label(t, "nranks", v, false);
    ct_text_put(t, "} 1\n");
    return 0;
}

char *ct_push_metrics_url(const char *url, const char *instance)
{
    const char *h = strstr(url, "://");
    h = h ? h + 3 : url;
    const char *path = h + strcspn(h, "/?#");
    bool bare = !*path || !strcmp(path, "/");
    size_t n = strlen(url) + 3 * strlen(instance) + 64;
    char *out = ct_xmalloc(n);
    if (!bare) {
        snprintf(out, n, "%s", url);
        return out;
    }
    size_t off =
        (size_t)snprintf(out, n, "%.*s/metrics/job/colltune/instance/", (int)(path - url), url);
    for (const char *p = *instance ? instance : "unknown"; *p; p++) {
        unsigned char ch = (unsigned char)*p;
        bool plain = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
                     (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' || ch == '_';
        if (plain)
            off += (size_t)snprintf(out + off, n - off, "%c", ch);
        else
            off += (size_t)snprintf(out + off, n - off, "%%%02X", ch);
    }
    return out;
}

void ct_push_opts_release(struct ct_push_opts *o)
{
    for (size_t i = 0; i < o->nheaders; i++) { /* headers may hold credentials */
        memset(o->headers[i], 0, strlen(o->headers[i]));
        free(o->headers[i]);
    }
    free(o->headers);
    o->headers = NULL;
    o->nheaders = 0;
}

int ct_push_text(FILE *log, const char *prefix, const char *what, const char *url,
                 const struct ct_text *t, const struct ct_push_opts *po, struct ct_err *err)
{
    struct ct_push_result res = {0};
    CT_TRY(ct_push_http(url, ct_text_str(t), t->len, po, &res, err));
    char *shown = ct_push_url_redact(url);
    fprintf(log, "%spushed %s (%zu bytes) to %s: HTTP %ld\n", prefix, what, t->len, shown,
            res.status);
    free(shown);
    return 0;
}

int ct_push_metrics(FILE *log, const char *prefix, const char *url, const struct ct_config *c,
                    const char *results, const struct ct_push_opts *po, struct ct_err *err)
{
    struct ct_text m;
    ct_text_init(&m);
    int rc = ct_push_metrics_text(c, results, &m, err);
    if (rc < 0)
        rc = err->code = CT_EINVAL; /* the input, not the push */
    if (rc == 0) {
        char *full = ct_push_metrics_url(url, c->fp.host);
        struct ct_push_opts o = *po;
        o.content_type = "text/plain; version=0.0.4; charset=utf-8";
        rc = ct_push_text(log, prefix, "metrics", full, &m, &o, err);
        free(full);
    }
    ct_text_release(&m);
    return rc;
}
