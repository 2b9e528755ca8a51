/* SPDX-License-Identifier: MIT */
/* colltune top: live NIC utilization (ncurses), or one sample / a stream as text or JSON
 * for scripts; --replay shows recorded snapshots. */
#include <errno.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "../monitor/monitor.h"
#include "../lib/clock.h"
#include "../probe/topo.h"
#include "../tui/tui.h"
#include "../tui/ui.h"
#include "cmd.h"

#define CMD "top"


struct top_opts {
    long interval_ms, frames;
    const char *root, *replay, *view;
    bool once, json;
};

/* Returns -1 to go on, else an exit code. */
static int parse(struct top_opts *o, int argc, char **argv)
{
    enum { O_INTERVAL = 1000, O_ROOT, O_ONCE, O_JSON, O_FRAMES, O_REPLAY, O_VIEW };
    static const struct option lo[] = {
        {"interval", 1, 0, O_INTERVAL}, {"sysfs-root", 1, 0, O_ROOT}, {"once", 0, 0, O_ONCE},
        {"json", 0, 0, O_JSON},         {"frames", 1, 0, O_FRAMES},   {"replay", 1, 0, O_REPLAY},
        {"view", 1, 0, O_VIEW},         {"help", 0, 0, 'h'},          {0, 0, 0, 0}};
    o->interval_ms = 1000;
    optind = 1;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, ":h", lo, NULL)) != -1;) {
        switch (c) {
        case O_INTERVAL:
            if (ct_parse_int(optarg, 50, 60000, &o->interval_ms))
                return ct_cmd_fail(CMD, CT_EXIT_USAGE, "bad --interval '%s' (50..60000 ms)",
                                   optarg);
            break;
        case O_FRAMES:
            if (ct_parse_int(optarg, 1, 100000000, &o->frames))
                return ct_cmd_fail(CMD, CT_EXIT_USAGE, "bad --frames '%s' (a count >= 1)", optarg);
            break;
        case O_ROOT: o->root = optarg; break;
        case O_ONCE: o->once = true; break;
        case O_JSON: o->json = true; break;
        case O_REPLAY: o->replay = optarg; break;
        case O_VIEW: o->view = optarg; break;
        case 'h': fputs(ct_help_top, stdout); return CT_EXIT_OK;
        case ':':
            return ct_cmd_fail(CMD, CT_EXIT_USAGE, "option '%s' needs a value", argv[optind - 1]);
        default:
            return ct_cmd_fail(CMD, CT_EXIT_USAGE, "unknown option '%s' (see -h)",
                               argv[optind - 1]);
        }
    }
    if (optind < argc)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
    if (o->view && ct_view_def_find(o->view) < 0)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "unknown --view '%s' (see -h)", o->view);
    if (o->replay && o->root)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "--replay and --sysfs-root exclude each other");
    if ((o->once && o->frames) || (o->json && o->view)) /* were ignored */
        return ct_cmd_fail(CMD, CT_EXIT_USAGE, "%s",
                           o->once && o->frames
                               ? "--frames N counts a stream's samples; --once prints one"
                               : "--view is the screen's or --once's text, not --json's");
    if (o->view && !strcmp(o->view, "topology") && o->replay && o->once)
        return ct_cmd_fail(CMD, CT_EXIT_USAGE,
                           "--view topology is this host's probe: a "
                           "recording (--replay) holds none");
    return -1;
}

struct source {
    struct ct_monitor *mon;
    struct ct_replay *rep;
};

/* A sampling failure caused by what the user named (--sysfs-root, --replay) is a usage
 * error; on the live system it is a runtime failure. */
static bool bad_input(const struct top_opts *o, int rc)
{
    return rc == CT_EINVAL && (o->root || o->replay);
}

static int sample(struct source *src, struct ct_snapshot *s, struct ct_err *err)
{
    return src->rep ? ct_replay_next(src->rep, s, err) : ct_monitor_sample(src->mon, s, err);
}

static void sleep_until(int64_t t_ns)
{
    struct timespec ts = {(time_t)(t_ns / 1000000000), (long)(t_ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static int text_cols(void)
{
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col;
    long c;
    const char *e = getenv("COLUMNS");
    return e && ct_parse_int(e, 40, 1000, &c) == 0 ? (int)c : 100;
}

static int print_snapshot(const struct ct_snapshot *s, const struct top_opts *o, bool pretty)
{
    struct ct_err err = {0};
    if (o->json) {
        char *j = ct_snapshot_to_json(s, pretty ? CT_SNAP_JSON_PRETTY : 0, &err);
        if (!j)
            return ct_cmd_fail(CMD, CT_EXIT_FAIL, "%s", err.msg);
        printf("%s\n", j);
        free(j);
        return CT_EXIT_OK;
    }
    bool utf8 =
        isatty(STDOUT_FILENO) && setlocale(LC_CTYPE, "") && !strcmp(nl_langinfo(CODESET), "UTF-8");
    char *text = ct_ui_render_text(s, o->view ? o->view : "nics", text_cols(), utf8);
    fputs(text, stdout);
    free(text);
    return CT_EXIT_OK;
}

/* The probe's text views for the topology view; NULL (err says why) when the probe cannot
 * run. */
static char *topology_text(const struct top_opts *o, struct ct_err *err)
{
    struct ct_probe_cfg cfg = {.sysfs_root = o->root};
    struct ct_topo *topo = ct_topo_new();
    char *buf = NULL;
    size_t len = 0;
    if (ct_probe_local(topo, &cfg, err) < 0 && ct_err_wrap(err, "probe: ")) {
        ct_topo_free(topo);
        return NULL;
    }
    FILE *f = open_memstream(&buf, &len);
    if (f && ct_view_render_all(topo, f, err) < 0)
        ct_err_wrap(err, "probe views: ");
    if (f)
        fclose(f);
    ct_topo_free(topo);
    return buf;
}

/* --once and --json streams: no terminal involved. */
static int run_plain(struct source *src, const struct top_opts *o)
{
    if (!o->json && o->view && !strcmp(o->view, "topology")) { /* the probe's, as the screen's */
        struct ct_err err = {0};
        char *topo = topology_text(o, &err);
        if (topo)
            fputs(topo, stdout);
        free(topo);
        return topo ? CT_EXIT_OK : ct_cmd_fail(CMD, CT_EXIT_FAIL, "%s", err.msg);
    }
    struct ct_snapshot s;
    struct ct_err err = {0};
    ct_snapshot_init(&s);
    int64_t period = o->interval_ms * 1000000LL, next = ct_now_ns();
    int code = CT_EXIT_OK;
    for (long n = 0; !o->frames || n < o->frames;) {
        int rc = sample(src, &s, &err);
        if (rc < 0) {
            code = ct_cmd_fail(CMD, bad_input(o, rc) ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s", err.msg);
            break;
        }
        if (rc == 1)
            break; /* end of the replay */
        /* a live sample needs a second reading for rates */
        if (src->rep || s.seq > 1) {
            code = print_snapshot(&s, o, o->once);
            n++;
            if (o->once || code || fflush(stdout) || ferror(stdout))
                break;
        }
        if (!src->rep) {
            next += period;
            sleep_until(next);
        }
    }
    ct_snapshot_release(&s);
    return code;
}

static int run_screen(struct source *src, const struct top_opts *o)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return ct_cmd_fail(CMD, CT_EXIT_USAGE,
                           "not a terminal: the live screen needs one; scripts use "
                           "'colltune top --once --json' (one sample) or '--json' (a stream)");
    struct ct_tui_cfg cfg = {
        .title = "colltune top",
        .first_view = o->view ? o->view : "nics",
        .interval_ms = (int)o->interval_ms,
        .max_frames = o->frames,
        .sample = src->rep ? ct_replay_sample_cb : ct_monitor_sample_cb,
        .sample_arg = src->rep ? (void *)src->rep : (void *)src->mon,
    };
    struct ct_tui *t;
    struct ct_err err = {0};
    if (ct_tui_open(&t, &cfg, &err) < 0)
        return ct_cmd_fail(CMD, CT_EXIT_FAIL, "%s", err.msg);
    if (!src->rep) {
        char *topo = topology_text(o, &err);
        if (err.msg[0])
            ct_tui_log(t, "%s", err.msg);
        ct_tui_topology(t, topo);
        free(topo);
    }
    ct_tui_wait(t);
    if (ct_tui_close(t, &err) < 0)
        return ct_cmd_fail(CMD, bad_input(o, err.code) ? CT_EXIT_USAGE : CT_EXIT_FAIL, "%s",
                           err.msg);
    return CT_EXIT_OK;
}

int cmd_top(int argc, char **argv)
{
    struct top_opts o = {0};
    int rc = parse(&o, argc, argv);
    if (rc >= 0)
        return rc;
    struct source src = {0};
    struct ct_err err = {0};
    if (o.replay) {
        src.rep = ct_replay_open(o.replay, &err);
        if (!src.rep)
            return ct_cmd_fail(CMD, CT_EXIT_USAGE, "%s", err.msg);
    } else {
        src.mon = ct_monitor_new(o.root);
    }
    rc = o.once || o.json ? run_plain(&src, &o) : run_screen(&src, &o);
    ct_monitor_free(src.mon);
    ct_replay_free(src.rep);
    return rc;
}
