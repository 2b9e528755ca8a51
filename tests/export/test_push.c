/* SPDX-License-Identifier: MIT */
/*
 * Push: secret headers from files and the environment (never shown in messages), URL checks
 * and redaction, the Prometheus text and Pushgateway URL, and real connections that fail: a
 * refused port (retried with backoff) and a listener that never answers (timeout). Successful
 * pushes to nginx and a Pushgateway are in tests/cli/t3000-export.sh.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/file.h"
#include "output/config.h"
#include "output/push.h"

static char *tmpfile_with(const char *text, size_t len)
{
    char *p = strdup("/tmp/ct-push-XXXXXX");
    int fd = mkstemp(p);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return p;
}

Test(headers, from_a_file_first_line)
{
    char *f = tmpfile_with("Bearer abc.def\nsecond line\n", 27), spec[128], *h = NULL;
    struct ct_err err = {0};
    snprintf(spec, sizeof spec, "Authorization: @%s", f);
    cr_assert_eq(ct_push_header_resolve(spec, &h, &err), 0, "%s", err.msg);
    cr_assert_str_eq(h, "Authorization: Bearer abc.def");
    free(h);
    unlink(f);
    free(f);
}

Test(headers, from_the_environment)
{
    struct ct_err err = {0};
    char *h = NULL;
    setenv("CT_TEST_TOKEN", "t0ken-value", 1);
    cr_assert_eq(ct_push_header_resolve("X-Token:env:CT_TEST_TOKEN", &h, &err), 0, "%s", err.msg);
    cr_assert_str_eq(h, "X-Token: t0ken-value");
    free(h);
    setenv("CT_TEST_TOKEN", "a\r\nX-Evil: 1", 1);
    cr_assert_eq(ct_push_header_resolve("X-Token: env:CT_TEST_TOKEN", &h, &err), CT_EINVAL,
                 "line breaks would inject headers");
    cr_assert_null(strstr(err.msg, "Evil"), "the value is never shown: %s", err.msg);
    setenv("CT_TEST_TOKEN", "", 1);
    cr_assert_eq(ct_push_header_resolve("X-Token: env:CT_TEST_TOKEN", &h, &err), CT_EINVAL);
    unsetenv("CT_TEST_TOKEN");
    cr_assert_eq(ct_push_header_resolve("X-Token: env:CT_TEST_TOKEN", &h, &err), CT_EINVAL);
    cr_assert(strstr(err.msg, "CT_TEST_TOKEN"), "names the variable: %s", err.msg);
}

Test(headers, refused_forms_never_echo_values)
{
    struct ct_err err = {0};
    char *h = NULL;
    cr_assert_eq(ct_push_header_resolve("Authorization: Bearer hunter2", &h, &err), CT_EINVAL);
    cr_assert_null(strstr(err.msg, "hunter2"), "%s", err.msg);
    cr_assert(strstr(err.msg, "Authorization"), "names the header: %s", err.msg);
    cr_assert_eq(ct_push_header_resolve("no colon at all", &h, &err), CT_EINVAL);
    cr_assert_eq(ct_push_header_resolve("Bad Name: @/dev/null", &h, &err), CT_EINVAL);
    cr_assert_eq(ct_push_header_resolve("X: @/nonexistent/file", &h, &err), CT_EINVAL);
    char *f = tmpfile_with("ab\0cd\n", 6), spec[128];
    snprintf(spec, sizeof spec, "X: @%s", f);
    cr_assert_eq(ct_push_header_resolve(spec, &h, &err), CT_EINVAL, "a NUL byte in the file");
    unlink(f);
    free(f);
}

Test(urls, check_and_redact)
{
    struct ct_err err = {0};
    cr_assert_eq(ct_push_url_check("https://host.example:8443/a/b", &err), 0);
    cr_assert_eq(ct_push_url_check("http://127.0.0.1/x", &err), 0);
    cr_assert_eq(ct_push_url_check("ftp://host/x", &err), CT_EINVAL);
    cr_assert_eq(ct_push_url_check("http:///x", &err), CT_EINVAL);
    cr_assert_eq(ct_push_url_check("host/x", &err), CT_EINVAL);
    cr_assert_eq(ct_push_url_check("http://user:pw@host/x y", &err), CT_EINVAL);
    cr_assert_null(strstr(err.msg, "pw"), "credentials are not shown: %s", err.msg);
    char *r = ct_push_url_redact("https://user:secret@host:1/p/q?token=abc#f");
    cr_assert_str_eq(r, "https://***@host:1/p/q?***");
    free(r);
    r = ct_push_url_redact("http://host/plain");
    cr_assert_str_eq(r, "http://host/plain");
    free(r);
}

Test(metrics, text_and_url)
{
    struct ct_config c;
    struct ct_text t;
    struct ct_err err = {0};
    cr_assert_eq(ct_config_json_read("tests/fixtures/export/config-4ranks.json", &c, &err), 0,
                 "%s (run from the repository root)", err.msg);
    ct_text_init(&t);
    cr_assert_eq(ct_push_metrics_text(&c, "tests/fixtures/export/results-4ranks.json", &t, &err), 0,
                 "%s", err.msg);
    const char *s = ct_text_str(&t);
    cr_assert(strstr(s, "colltune_busbw_best_gbps{coll=\"allreduce\",size=\"65536\","
                        "nranks=\"4\",algo=\"ring\"} 6.25\n"),
              "the failed-verification point (9.75) is not the best: %s", s);
    cr_assert(strstr(s, "colltune_busbw_best_gbps{coll=\"allgather\",size=\"65536\",nranks=\"4\","
                        "algo=\"ring\"} 4.5\n"));
    cr_assert(strstr(s, "# TYPE colltune_rules gauge\n"));
    /* every sample line: name{labels} value, or name value */
    for (const char *p = s; *p; p = strchr(p, '\n') + 1) {
        if (*p == '#')
            continue;
        char line[512];
        snprintf(line, sizeof line, "%.*s", (int)(strchr(p, '\n') - p), p);
        char *sp = strrchr(line, ' '), *end;
        cr_assert_not_null(sp, "%s", line);
        cr_assert(strtod(sp + 1, &end) >= 0 && !*end, "value: %s", line);
        cr_assert(!strchr(line, '{') || sp[-1] == '}', "labels close before the value: %s", line);
    }
    struct ct_text bad;
    ct_text_init(&bad);
    cr_assert_eq(ct_push_metrics_text(&c, "tests/fixtures/export/config-4ranks.json", &bad, &err),
                 CT_EINVAL, "a config is not a results file");
    ct_text_release(&bad);
    ct_text_release(&t);
    ct_config_release(&c);

    char *u = ct_push_metrics_url("http://pg:9091", "node 1/a");
    cr_assert_str_eq(u, "http://pg:9091/metrics/job/colltune/instance/node%201%2Fa");
    free(u);
    u = ct_push_metrics_url("http://pg:9091/", "n1");
    cr_assert_str_eq(u, "http://pg:9091/metrics/job/colltune/instance/n1");
    free(u);
    u = ct_push_metrics_url("https://pg/metrics/job/x", "n1");
    cr_assert_str_eq(u, "https://pg/metrics/job/x");
    free(u);
}

/* A listening socket on a free loopback port; *port gets the port. */
static int listener(int *port, bool listen_too)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    *port = ntohs(a.sin_port);
    if (listen_too)
        cr_assert_eq(listen(fd, 4), 0);
    return fd;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(http, refused_port_is_retried_with_backoff)
{
    if (!ct_push_available())
        cr_skip_test("built without libcurl");
    int port, fd = listener(&port, false); /* bound, not listening: connections are refused */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
    struct ct_push_opts o;
    struct ct_push_result res;
    struct ct_err err = {0};
    ct_push_opts_init(&o);
    o.retries = 2;
    o.backoff_s = 0.05;
    double t0 = now_s();
    cr_assert_eq(ct_push_http(url, "data", 4, &o, &res, &err), CT_EIO);
    double dt = now_s() - t0;
    cr_assert_eq(res.attempts, 3);
    cr_assert_geq(dt, 0.15, "waited 0.05 + 0.1 s between attempts (%.3f)", dt);
    cr_assert(strstr(err.msg, "3 attempts") && strstr(err.msg, url), "%s", err.msg);
    close(fd);
}

Test(http, a_silent_server_times_out)
{
    if (!ct_push_available())
        cr_skip_test("built without libcurl");
    int port, fd = listener(&port, true); /* the kernel accepts, nobody answers */
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%d/x", port);
    struct ct_push_opts o;
    struct ct_push_result res;
    struct ct_err err = {0};
    ct_push_opts_init(&o);
    o.timeout_s = 0.3;
    o.retries = 0;
    cr_assert_eq(ct_push_http(url, "data", 4, &o, &res, &err), CT_ETIMEDOUT, "%s", err.msg);
    cr_assert(strstr(err.msg, "timed out"), "%s", err.msg);
    o.method = "DELETE";
    cr_assert_eq(ct_push_http(url, "data", 4, &o, &res, &err), CT_EINVAL);
    close(fd);
}
