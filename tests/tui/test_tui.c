/* SPDX-License-Identifier: MIT */
/*
 * The screen thread and its API (what run/sweep --tui call) on a real pseudo-terminal: a
 * child process opens the TUI on the pty, feeds progress, points, log lines and a cluster
 * grid; the parent reads what the terminal received, presses keys, and checks that every
 * way out (close, q, a fatal error, a signal) leaves the alternate screen.
 */
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include "tui/tui.h"
#include "tui_test.h"

#define RMCUP "\033[?1049l" /* xterm: leave the alternate screen */

struct child_out {
    char *text; /* everything the terminal received, escape sequences removed */
    char *raw;
    int status;
    struct termios modes; /* the pty's modes after the child ended (read on the master) */
    bool have_modes;
};

/* A fake sampler: two NICs, the second busier every sample. */
static int fake_sample(void *arg, struct ct_snapshot *s, struct ct_err *err)
{
    int *n = arg;
    (*n)++;
    free(s->nic);
    s->n_nic = 2;
    s->nic = calloc(2, sizeof *s->nic);
    snprintf(s->nic[0].name, sizeof s->nic[0].name, "eth0");
    snprintf(s->nic[1].name, sizeof s->nic[1].name, "mlx5_0:1");
    for (int i = 0; i < 2; i++) {
        snprintf(s->nic[i].state, sizeof s->nic[i].state, "up");
        s->nic[i].up = true;
        s->nic[i].line_gbps = 100;
        s->nic[i].tx_gbps = s->nic[i].rx_gbps = i ? 10.0 * *n : 0;
        s->nic[i].util = s->nic[i].tx_gbps / 100;
        s->nic[i].cnp_rate = -1;
    }
    snprintf(s->host, sizeof s->host, "ptyhost");
    s->seq = (uint64_t)*n;
    return 0;
}

static void strip(const char *raw, char *out)
{
    size_t o = 0;
    for (const char *p = raw; *p;) {
        if (*p == '\033') {
            p++;
            if (*p == '[') {
                p++;
                while (*p && !(*p >= '@' && *p <= '~'))
                    p++;
                if (*p)
                    p++;
            } else if (*p == '(' || *p == ')') {
                p += p[1] ? 2 : 1;
            } else if (*p) {
                p++;
            }
            continue;
        }
        if (*p != '\r' && *p != '\016' && *p != '\017')
            out[o++] = *p;
        p++;
    }
    out[o] = 0;
}

/* Run fn in a child on a 100x30 pty; keys are written after the first frame shows `ready`. */
static struct child_out on_pty(void (*fn)(void), const char *ready, const char *keys)
{
    int master;
    struct winsize ws = {.ws_row = 30, .ws_col = 100};
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    cr_assert(pid >= 0, "forkpty: %s", strerror(errno));
    if (pid == 0) {
        setenv("TERM", "xterm", 1);
        setenv("LC_ALL", "C.UTF-8", 1);
        unsetenv("NO_COLOR");
        fn();
        _exit(0);
    }
    size_t cap = 1 << 20, len = 0;
    char *raw = calloc(1, cap);
    bool sent = !keys;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct pollfd p = {master, POLLIN, 0};
        int r = poll(&p, 1, 100);
        if (r > 0) {
            ssize_t n = read(master, raw + len, cap - 1 - len);
            if (n <= 0)
                break; /* EIO: the child closed the pty */
            len += (size_t)n;
            raw[len] = 0;
        }
        if (!sent && strstr(raw, ready)) {
            usleep(100000);
            cr_assert(write(master, keys, strlen(keys)) == (ssize_t)strlen(keys));
            sent = true;
        }
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10)
            break;
    }
    struct child_out o = {calloc(1, len + 1), raw, 0, {0}, false};
    strip(raw, o.text);
    kill(pid, SIGKILL);
    waitpid(pid, &o.status, 0);
    o.have_modes = tcgetattr(master, &o.modes) == 0;
    close(master);
    return o;
}

static void release(struct child_out *o)
{
    free(o->text);
    free(o->raw);
}

/* ---- children ----------------------------------------------------------------------------- */

static struct ct_tui *open_tui(const char *view, int *counter, long frames)
{
    struct ct_tui_cfg cfg = {.title = "colltune sweep",
                             .first_view = view,
                             .interval_ms = 50,
                             .max_frames = frames,
                             .sample = fake_sample,
                             .sample_arg = counter};
    struct ct_tui *t;
    struct ct_err err = {0};
    if (ct_tui_open(&t, &cfg, &err) < 0) {
        fprintf(stderr, "open: %s\n", err.msg);
        _exit(3);
    }
    return t;
}

static void sweep_child(void)
{
    int n = 0;
    struct ct_tui *t = open_tui("progress", &n, 0);
    struct ct_progress p = {.cmd = "sweep",
                            .phase = "survey",
                            .coll = "allreduce",
                            .algo = "ring",
                            .size = 65536,
                            .total = 10,
                            .remaining_s = 9};
    for (int i = 1; i <= 5; i++) {
        p.done = i;
        p.elapsed_s = i;
        ct_tui_progress(t, &p);
        ct_tui_point(t, "allreduce", "ring", 1024u << i, 1.5 * i);
        ct_tui_log(t, "point %d", i);
        usleep(60000);
    }
    usleep(200000);
    struct ct_err err = {0};
    _exit(ct_tui_close(t, &err) == 0 && n >= 3 ? 0 : 4);
}

static void quit_child(void)
{
    int n = 0;
    struct ct_tui *t = open_tui("nics", &n, 0);
    for (int i = 0; i < 100 && !ct_tui_quit_requested(t); i++)
        usleep(50000);
    bool q = ct_tui_quit_requested(t);
    ct_tui_close(t, NULL);
    _exit(q ? 7 : 5);
}

static void cluster_child(void)
{
    int n = 0;
    struct ct_tui *t = open_tui("cluster", &n, 6);
    struct ct_cluster c = {0};
    c.n_nodes = 2;
    c.n_cols = 1;
    c.node = calloc(2, sizeof *c.node);
    c.col = calloc(1, sizeof *c.col);
    c.util = calloc(2, sizeof *c.util);
    c.gbps = calloc(2, sizeof *c.gbps);
    c.errs = calloc(2, sizeof *c.errs);
    snprintf(c.node[0], sizeof c.node[0], "gpu-a17");
    snprintf(c.node[1], sizeof c.node[1], "gpu-b02");
    snprintf(c.col[0], sizeof c.col[0], "qsfp7:9");
    c.util[0] = 0.37f;
    c.util[1] = 0.0f;
    ct_tui_cluster(t, &c);
    ct_cluster_release(&c);
    ct_tui_wait(t); /* ends by itself after 6 frames */
    _exit(ct_tui_close(t, NULL) == 0 ? 0 : 6);
}

static void bug_child(void)
{
    int n = 0;
    open_tui("nics", &n, 0);
    usleep(300000);
    CT_BUG("deliberate failure with the screen open");
}

static void signal_child(void)
{
    int n = 0;
    open_tui("nics", &n, 0);
    usleep(300000);
    raise(SIGTERM);
    usleep(1000000);
    _exit(9);
}

static int fail_sample(void *arg, struct ct_snapshot *s, struct ct_err *err)
{
    return ct_err_set(err, CT_EIO, "sampler broke");
}

static void failing_sampler_child(void)
{
    struct ct_tui_cfg cfg = {.interval_ms = 50, .sample = fail_sample};
    struct ct_tui *t;
    if (ct_tui_open(&t, &cfg, NULL) < 0)
        _exit(3);
    ct_tui_wait(t);
    struct ct_err err = {0};
    int rc = ct_tui_close(t, &err);
    _exit(rc == CT_EIO && strstr(err.msg, "sampler broke") ? 0 : 8);
}

/* ---- tests -------------------------------------------------------------------------------- */

TestSuite(tui, .timeout = 30);

Test(tui, sweep_feeds_progress_points_and_log)
{
    struct child_out o = on_pty(sweep_child, "", NULL);
    cr_expect(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0, "child status %#x", o.status);
    cr_expect(strstr(o.text, "colltune sweep"), "title");
    /* curses sends only what changed: the first frame whole, later ones as differences */
    cr_expect(strstr(o.text, "point 1 of ~10"), "the first progress line");
    cr_expect(strstr(o.text, "32 KiB7.50"), "the fifth point reached the screen");
    cr_expect(strstr(o.text, "survey"));
    cr_expect(strstr(o.text, "allreduce"));
    cr_expect(strstr(o.text, "mlx5_0:1"), "the busiest NICs");
    cr_expect(strstr(o.raw, RMCUP), "the terminal left the alternate screen");
    release(&o);
}

Test(tui, q_quits_and_restores)
{
    struct child_out o = on_pty(quit_child, "mlx5_0:1", "q");
    cr_expect(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 7, "quit seen, status %#x", o.status);
    cr_expect(strstr(o.raw, RMCUP));
    release(&o);
}

Test(tui, cluster_grid_and_frames)
{
    struct child_out o = on_pty(cluster_child, "", NULL);
    cr_expect(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0, "status %#x", o.status);
    cr_expect(strstr(o.text, "gpu-a17") && strstr(o.text, "gpu-b02"));
    cr_expect(strstr(o.text, "qsfp"), "the gathered column");
    cr_expect(strstr(o.text, "37%"));
    cr_expect(strstr(o.raw, RMCUP));
    release(&o);
}

Test(tui, fatal_error_restores_the_terminal)
{
    struct child_out o = on_pty(bug_child, "", NULL);
    cr_expect(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT, "status %#x", o.status);
    char *rm = strstr(o.raw, RMCUP), *msg = strstr(o.raw, "deliberate failure");
    cr_expect(rm && msg && rm < msg, "the screen is restored before the message is printed");
    release(&o);
}

Test(tui, signal_restores_the_terminal)
{
    struct child_out o = on_pty(signal_child, "", NULL);
    cr_expect(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGTERM, "dies of the signal, %#x",
              o.status);
    cr_expect(strstr(o.raw, RMCUP));
    /* curses had turned echo and canonical input off; the handler put the modes back */
    cr_assert(o.have_modes, "the pty's modes cannot be read");
    cr_expect((o.modes.c_lflag & (ECHO | ICANON)) == (ECHO | ICANON), "modes %#x",
              (unsigned)o.modes.c_lflag);
    release(&o);
}

Test(tui, sampler_failure_ends_the_screen)
{
    struct child_out o = on_pty(failing_sampler_child, "", NULL);
    cr_expect(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0, "status %#x", o.status);
    cr_expect(strstr(o.raw, RMCUP));
    release(&o);
}

Test(tui, no_terminal_is_refused)
{
    /* Criterion's workers have no terminal on stdin/stdout */
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
        cr_skip_test("stdin/stdout are a terminal here");
    struct ct_tui *t = (struct ct_tui *)1;
    struct ct_err err = {0};
    struct ct_tui_cfg cfg = {0};
    cr_expect_eq(ct_tui_open(&t, &cfg, &err), CT_EIO);
    cr_expect_null(t);
    cr_expect(strstr(err.msg, "terminal"), "%s", err.msg);
}
