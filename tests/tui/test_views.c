/* SPDX-License-Identifier: MIT */
/*
 * Drawing without a terminal: fixed snapshots rendered into canvases of fixed sizes and
 * compared with text goldens (tests/golden/tui/; CT_REGEN_GOLDEN=1 rewrites them), key
 * handling, styles, every view at every size, and JSON replay of what is drawn.
 */
#include <time.h>

#include "tui/canvas.h"
#include "tui/ui.h"
#include "tui_test.h"

#define GOLDEN_DIR "tests/golden/tui"

static void utc(void)
{
    setenv("TZ", "UTC", 1);
    tzset();
}

TestSuite(views, .init = utc, .timeout = 20);

/* ---- fixed snapshots -------------------------------------------------------------------- */

static struct ct_nic_snap mk(const char *name, const char *dev, const char *netdev,
                             const char *kind, const char *state, double line, double tx, double rx)
{
    struct ct_nic_snap n;
    memset(&n, 0, sizeof n);
    snprintf(n.name, sizeof n.name, "%s", name);
    snprintf(n.dev, sizeof n.dev, "%s", dev);
    n.port = dev[0] ? 1 : 0;
    snprintf(n.netdev, sizeof n.netdev, "%s", netdev);
    snprintf(n.kind, sizeof n.kind, "%s", kind);
    snprintf(n.state, sizeof n.state, "%s", state);
    snprintf(n.src, sizeof n.src, "%s", dev[0] ? "counters" : "statistics");
    n.up = !strcmp(state, "ACTIVE") || !strcmp(state, "up");
    n.line_gbps = line;
    n.tx_gbps = tx;
    n.rx_gbps = rx;
    double hi = tx > rx ? tx : rx;
    n.util = line > 0 && hi >= 0 ? hi / line : -1;
    n.tx_pps = tx >= 0 ? tx * 1e9 / 8 / 4096 : -1;
    n.rx_pps = rx >= 0 ? rx * 1e9 / 8 / 4096 : -1;
    n.tx_bytes = (uint64_t)(tx > 0 ? tx * 1e11 : 0);
    n.rx_bytes = (uint64_t)(rx > 0 ? rx * 1e11 : 0);
    n.cnp_rate = -1;
    n.n_hist = 40;
    for (int i = 0; i < n.n_hist; i++)
        n.hist[i] = hi < 0 ? -1.0f : (float)(hi * ((i * 7) % 40) / 40.0);
    return n;
}

static void host_snapshot(struct ct_snapshot *s)
{
    ct_snapshot_init(s);
    snprintf(s->host, sizeof s->host, "node07");
    s->seq = 42;
    s->wall_s = 1700000000.0; /* 22:13:20 UTC */
    s->interval_s = 1.0;
    struct ct_nic_snap v[] = {
        mk("mlx5_0:1", "mlx5_0", "ib0", "IB", "ACTIVE", 200, 180.5, 120.25),
        mk("mlx5_1:1", "mlx5_1", "ib1", "IB", "ACTIVE", 200, 0, 0),
        mk("mlx4_0:1", "mlx4_0", "", "IB", "ACTIVE", 56, 40, 8),
        mk("mlx4_1:1", "mlx4_1", "", "IB", "ACTIVE", 40, -1, -1),
        mk("efa_0:1", "efa_0", "", "EFA", "ACTIVE", 100, 20, 40),
        mk("mlx5_2:1", "mlx5_2", "ens3", "RoCE", "DOWN", 0, 0, 0),
        mk("eth0", "", "eth0", "Eth", "up", 25, 0.5, 1.2),
        mk("lo", "", "lo", "lo", "up", 0, 3.2, 3.2),
        mk("veth1", "", "veth1", "virt", "gone", 10, -1, -1),
    };
    v[2].flags = CT_NICF_SATURATED | CT_NICF_FALLBACK;
    snprintf(v[2].src, sizeof v[2].src, "counters_ext");
    v[2].errors = 12;
    v[2].err_delta = 3;
    snprintf(v[2].err_last, sizeof v[2].err_last, "symbol_error");
    v[3].flags = CT_NICF_SATURATED;
    snprintf(v[3].src, sizeof v[3].src, "saturated");
    v[4].src[0] = 0;
    snprintf(v[4].src, sizeof v[4].src, "hw_counters");
    v[5].cnp_rate = 0;
    v[5].up = false;
    v[6].flags = CT_NICF_WRAPPED;
    v[6].errors = 5;
    v[8].flags = CT_NICF_GONE | CT_NICF_VIRTUAL;
    v[8].up = false;
    s->n_nic = sizeof v / sizeof v[0];
    s->nic = calloc(s->n_nic, sizeof *s->nic);
    memcpy(s->nic, v, sizeof v);
}

/* A sweep under way: progress, points of two collectives with crossovers, a cluster. */
static void sweep_snapshot(struct ct_snapshot *s)
{
    host_snapshot(s);
    s->has_progress = true;
    struct ct_progress *p = &s->progress;
    snprintf(p->cmd, sizeof p->cmd, "sweep");
    snprintf(p->phase, sizeof p->phase, "tune");
    snprintf(p->coll, sizeof p->coll, "allreduce");
    snprintf(p->algo, sizeof p->algo, "rdh");
    snprintf(p->params, sizeof p->params, "chunk=128K pipeline=4 channels=2");
    p->size = 1 << 20;
    p->done = 137;
    p->total = 400;
    p->elapsed_s = 83;
    p->remaining_s = 250;
    /* ring wins large sizes, rdh small ones, mesh in between */
    for (uint64_t sz = 8; sz <= (64u << 20); sz *= 4) {
        double l = (double)sz;
        ct_snapshot_point(s, "allreduce", "ring", sz, 40.0 * l / (l + 2e6));
        ct_snapshot_point(s, "allreduce", "rdh", sz, 20.0 * l / (l + 2e4));
        if (sz >= 4096 && sz <= (4u << 20))
            ct_snapshot_point(s, "allreduce", "mesh", sz, 28.0 * l / (l + 2e5));
        ct_snapshot_point(s, "allgather", "ring", sz, 30.0 * l / (l + 1e6));
    }
    struct ct_cluster *c = &s->cluster;
    c->n_nodes = 4;
    c->n_cols = 4;
    c->node = calloc(4, sizeof *c->node);
    c->col = calloc(4, sizeof *c->col);
    c->util = calloc(16, sizeof *c->util);
    c->gbps = calloc(16, sizeof *c->gbps);
    c->errs = calloc(16, sizeof *c->errs);
    static const char *const cols[] = {"mlx5_0:1", "mlx5_1:1", "mlx5_2:1", "eth0"};
    for (int j = 0; j < 4; j++)
        snprintf(c->col[j], sizeof c->col[j], "%s", cols[j]);
    for (int i = 0; i < 4; i++) {
        snprintf(c->node[i], sizeof c->node[i], "node%02d", i + 1);
        for (int j = 0; j < 4; j++) {
            double u = j == 1 ? 0 : j == 3 ? -1 : i == 2 ? 0.12 : 0.85 - 0.1 * j;
            c->util[i * 4 + j] = (float)u;
            c->gbps[i * 4 + j] = j == 3 ? 0.8f : (float)(u * 200);
        }
    }
    c->util[3 * 4 + 2] = CT_CLUSTER_ABSENT;
    c->gbps[3 * 4 + 2] = CT_CLUSTER_ABSENT;
    c->errs[0 * 4 + 0] = 2;
    s->topo = strdup("node07: 2 x Xeon E5-2680, 8 GPUs, 4 NIC ports\n"
                     "\n"
                     "        GPU0  GPU1  mlx5_0  mlx5_1\n"
                     "GPU0     X    NV12  PIX     SYS\n"
                     "GPU1    NV12   X    SYS     PIX\n"
                     "mlx5_0  PIX   SYS    X      SYS\n"
                     "mlx5_1  SYS   PIX   SYS      X\n");
    for (int i = 0; i < 30; i++) {
        char line[64];
        snprintf(line, sizeof line, "sweep: point %d measured", i + 1);
        ct_snapshot_log(s, 500, line);
    }
}

/* ---- goldens ---------------------------------------------------------------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = calloc(1, (size_t)n + 1);
    if (fread(b, 1, (size_t)n, f) != (size_t)n)
        n = 0;
    b[n] = 0;
    fclose(f);
    return b;
}

static void golden(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, GOLDEN_DIR "/%s.txt", name);
    if (getenv("CT_REGEN_GOLDEN")) {
        tt_mkdirs(GOLDEN_DIR);
        FILE *f = fopen(path, "w");
        cr_assert(f, "cannot write %s", path);
        fputs(text, f);
        fclose(f);
        return;
    }
    char *want = slurp(path);
    cr_assert(want, "missing golden %s (make it with CT_REGEN_GOLDEN=1)", path);
    if (strcmp(want, text)) {
        int line = 1;
        const char *a = want, *b = text;
        while (*a && *a == *b) {
            line += *a == '\n';
            a++;
            b++;
        }
        char got[512];
        snprintf(got, sizeof got, "build/%s.actual", name);
        FILE *f = fopen(got, "w");
        if (f) {
            fputs(text, f);
            fclose(f);
        }
        cr_assert_fail("%s differs from the golden at line %d (this run's output: %s)", path, line,
                       got);
    }
    free(want);
}

/* Render a frame after pressing keys (a string; '\x01' = Down, '\x02' = Tab). */
static char *frame(const struct ct_snapshot *s, int rows, int cols, bool utf8, const char *view,
                   const char *keys, struct ct_canvas *out)
{
    struct ct_ui ui;
    ct_ui_init(&ui, "colltune top", view);
    struct ct_canvas c;
    ct_canvas_init(&c, rows, cols, utf8);
    ct_ui_draw(&c, &ui, s); /* the first frame sets the page size, as on screen */
    for (const char *k = keys ? keys : ""; *k; k++) {
        int key = *k == 1 ? CT_KEY_DOWN : *k == 2 ? CT_KEY_TAB : *k == 3 ? CT_KEY_ENTER : *k;
        ct_ui_key(&ui, key, s);
        ct_ui_draw(&c, &ui, s);
    }
    char *text = ct_canvas_dump(&c);
    if (out)
        *out = c;
    else
        ct_canvas_release(&c);
    return text;
}

static void check(const char *name, const struct ct_snapshot *s, int rows, int cols, bool utf8,
                  const char *view, const char *keys)
{
    char *t = frame(s, rows, cols, utf8, view, keys, NULL);
    golden(name, t);
    free(t);
}

Test(views, nics_goldens)
{
    struct ct_snapshot s;
    host_snapshot(&s);
    check("nics-80x24", &s, 24, 80, true, "nics", NULL);
    check("nics-100x30", &s, 30, 100, true, "nics", NULL);
    check("nics-160x30", &s, 30, 160, true, "nics", NULL);
    check("nics-80x24-ascii", &s, 24, 80, false, "nics", NULL);
    /* sort by utilization, select the third row (its detail pane), filter "mlx" */
    check("nics-sort-util-select", &s, 24, 80, true, "nics", "s\x01\x01");
    check("nics-filter-mlx", &s, 24, 80, true, "nics", "/mlx\x03");
    check("nics-filter-typing", &s, 24, 80, true, "nics", "/ml");
    ct_snapshot_release(&s);
}

Test(views, other_view_goldens)
{
    struct ct_snapshot s;
    sweep_snapshot(&s);
    check("help-80x24", &s, 24, 80, true, "nics", "h");
    check("help-100x30-ascii", &s, 30, 100, false, "nics", "h");
    check("progress-100x30", &s, 30, 100, true, "progress", NULL);
    check("progress-80x24", &s, 24, 80, true, "progress", NULL);
    check("plot-100x30", &s, 30, 100, true, "plot", NULL);
    check("plot-80x24-ascii", &s, 24, 80, false, "plot", NULL);
    check("plot-allgather-100x30", &s, 30, 100, true, "plot", "c");
    check("cluster-100x30", &s, 30, 100, true, "cluster", NULL);
    check("cluster-80x24-ascii", &s, 24, 80, false, "cluster", NULL);
    check("topology-80x24", &s, 24, 80, true, "topology", NULL);
    check("log-80x24", &s, 24, 80, true, "log", NULL);
    check("too-small", &s, 6, 30, true, "nics", NULL);
    ct_snapshot_release(&s);
    /* top with no run attached: progress, plot and cluster say so / use this host */
    host_snapshot(&s);
    check("progress-idle-80x24", &s, 24, 80, true, "progress", NULL);
    check("plot-idle-80x24", &s, 24, 80, true, "plot", NULL);
    check("cluster-local-80x24", &s, 24, 80, true, "cluster", NULL);
    ct_snapshot_release(&s);
}

Test(views, once_text_golden)
{
    struct ct_snapshot s;
    host_snapshot(&s);
    char *t = ct_ui_render_text(&s, "nics", 100, false);
    golden("once-nics-100-ascii", t);
    cr_expect_eq(strchr(t, '\n') - t + 0 <= 100, 1);
    free(t);
    ct_snapshot_release(&s);
}

/* ---- behaviour -------------------------------------------------------------------------- */

/* Idle NICs whose rate is unknown read 0.0G, not "?" (no reading): every cell at 0 Gb/s. */
Test(views, cluster_idle_without_rate_reads_zero)
{
    struct ct_snapshot s;
    memset(&s, 0, sizeof s);
    struct ct_cluster *c = &s.cluster;
    c->n_nodes = 1, c->n_cols = 2;
    c->node = calloc(1, sizeof *c->node);
    c->col = calloc(2, sizeof *c->col);
    c->util = calloc(2, sizeof *c->util);
    c->gbps = calloc(2, sizeof *c->gbps);
    c->errs = calloc(2, sizeof *c->errs);
    snprintf(c->node[0], sizeof c->node[0], "vm");
    snprintf(c->col[0], sizeof c->col[0], "eth0");
    snprintf(c->col[1], sizeof c->col[1], "eth1");
    c->util[0] = c->util[1] = -1; /* no line rate */
    c->gbps[1] = -1;              /* eth1: no reading at all */
    char *t = ct_ui_render_text(&s, "cluster", 100, false);
    const char *row = strstr(t, " vm ");
    cr_assert(row, "%s", t);
    cr_expect(strstr(row, "0.0G") != NULL, "%s", t);
    cr_expect(strchr(row, '?') != NULL, "eth1 without a reading: %s", t);
    free(t);
    ct_snapshot_release(&s);
}

static int row_of(const struct ct_canvas *c, const char *needle)
{
    for (int y = 0; y < c->rows; y++) {
        char line[2048] = "";
        size_t l = 0;
        for (int x = 0; x < c->cols && l + 5 < sizeof line; x++) {
            const char *ch = ct_canvas_at(c, y, x)->ch;
            memcpy(line + l, ch, strlen(ch));
            l += strlen(ch);
        }
        line[l] = 0;
        if (strstr(line, needle))
            return y;
    }
    return -1;
}

Test(views, styles_mark_errors_selection_and_down_links)
{
    struct ct_snapshot s;
    host_snapshot(&s);
    struct ct_canvas c;
    free(frame(&s, 24, 100, true, "nics", NULL, &c));
    int y = row_of(&c, "mlx4_0:1");
    cr_assert(y > 0);
    int err_attr = -1, sel_row = row_of(&c, "mlx5_0:1 ib0");
    for (int x = c.cols - 1; x >= 0; x--)
        if (!strcmp(ct_canvas_at(&c, y, x)->ch, "2") &&
            !strcmp(ct_canvas_at(&c, y, x - 1)->ch, "1"))
            err_attr = ct_canvas_at(&c, y, x)->attr;
    cr_expect_eq(err_attr, CT_A_BAD, "new errors are highlighted");
    cr_expect_eq(ct_canvas_at(&c, sel_row, 1)->attr, CT_A_SEL, "the first row is selected");
    int down = row_of(&c, "mlx5_2:1 ens3");
    for (int x = 0; x < c.cols; x++)
        if (!strcmp(ct_canvas_at(&c, down, x)->ch, "D")) {
            cr_expect_eq(ct_canvas_at(&c, down, x)->attr, CT_A_WARN, "a down link stands out");
            break;
        }
    cr_expect_eq(ct_canvas_at(&c, 0, 0)->attr, CT_A_TITLE);
    ct_canvas_release(&c);
    ct_snapshot_release(&s);
}

Test(views, keys_move_switch_quit)
{
    struct ct_snapshot s;
    sweep_snapshot(&s);
    struct ct_ui ui;
    struct ct_canvas c;
    ct_ui_init(&ui, "t", NULL);
    ct_canvas_init(&c, 24, 80, true);
    ct_ui_draw(&c, &ui, &s);
    cr_expect_eq(ui.view, 0);
    cr_expect_eq(ui.n_rows, 9);
    for (int i = 0; i < 20; i++) {
        ct_ui_key(&ui, CT_KEY_DOWN, &s);
        ct_ui_draw(&c, &ui, &s);
    }
    cr_expect_eq(ui.sel, 8, "the selection stops at the last row");
    ct_ui_key(&ui, CT_KEY_HOME, &s);
    ct_ui_draw(&c, &ui, &s);
    cr_expect_eq(ui.sel, 0);
    ct_ui_key(&ui, CT_KEY_PGDN, &s);
    ct_ui_draw(&c, &ui, &s);
    cr_expect_eq(ui.sel, 8);
    int views = 0;
    while (ct_view_def_at((size_t)views))
        views++;
    for (int i = 0; i < views; i++) {
        ct_ui_key(&ui, CT_KEY_TAB, &s);
        ct_ui_draw(&c, &ui, &s);
    }
    cr_expect_eq(ui.view, 0, "Tab cycles through every view");
    ct_ui_key(&ui, CT_KEY_BTAB, &s);
    cr_expect_eq(ui.view, views - 1);
    ct_ui_key(&ui, '4', &s);
    cr_expect_eq(ui.view, ct_view_def_find("cluster"));
    ct_ui_key(&ui, 's', &s);
    cr_expect_eq(ui.sort[ui.view], 1);
    ct_ui_key(&ui, 's', &s);
    cr_expect_eq(ui.sort[ui.view], 0, "sort wraps around");
    ct_ui_key(&ui, 'h', &s);
    cr_expect(ui.help);
    ct_ui_key(&ui, CT_KEY_DOWN, &s);
    cr_expect(ui.help, "Down scrolls the help");
    ct_ui_key(&ui, 'x', &s);
    cr_expect(!ui.help, "another key closes it");
    ct_ui_key(&ui, '/', &s);
    ct_ui_key(&ui, 'n', &s);
    ct_ui_key(&ui, CT_KEY_BACKSPACE, &s);
    ct_ui_key(&ui, 'x', &s);
    ct_ui_key(&ui, CT_KEY_ENTER, &s);
    cr_expect_str_eq(ui.filter, "x");
    ct_ui_key(&ui, CT_KEY_ESC, &s);
    cr_expect_str_eq(ui.filter, "");
    ct_ui_key(&ui, 'q', &s);
    cr_expect(ui.quit);
    /* the help lists every key with a label and every view */
    char **lines;
    size_t n = ct_ui_help_lines(true, &lines);
    size_t labelled = 0;
    for (size_t i = 0; ct_key_def_at(i); i++)
        labelled += ct_key_def_at(i)->label != NULL;
    cr_expect_eq(n, 1 + labelled + 1 + (size_t)views + 3);
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
    ct_canvas_release(&c);
    ct_snapshot_release(&s);
}

/* Every view of the table draws at every size without writing outside the canvas. */
Test(views, every_view_every_size)
{
    static const int sizes[][2] = {{8, 40}, {24, 80}, {30, 100}, {50, 200}, {100, 300}};
    struct ct_snapshot s[2];
    host_snapshot(&s[0]);
    sweep_snapshot(&s[1]);
    for (size_t v = 0; ct_view_def_at(v); v++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
            for (int j = 0; j < 2; j++) {
                char *t = frame(&s[j], sizes[k][0], sizes[k][1], k % 2, ct_view_def_at(v)->name,
                                "\x01\x01hs", NULL);
                int lines = 0;
                for (char *p = t; *p; p++)
                    lines += *p == '\n';
                cr_expect_eq(lines, sizes[k][0]);
                free(t);
            }
    ct_snapshot_release(&s[0]);
    ct_snapshot_release(&s[1]);
}

/* What is drawn from a snapshot is drawn the same from its JSON (top --replay). */
Test(views, replayed_snapshot_draws_the_same)
{
    struct ct_snapshot s, back;
    sweep_snapshot(&s);
    ct_snapshot_init(&back);
    struct ct_err err = {0};
    char *j = ct_snapshot_to_json(&s, 0, &err);
    cr_assert(j, "%s", err.msg);
    cr_assert_eq(ct_snapshot_from_json(j, strlen(j), &back, &err), 0, "%s", err.msg);
    for (size_t v = 0; ct_view_def_at(v); v++) {
        char *a = frame(&s, 30, 100, true, ct_view_def_at(v)->name, NULL, NULL);
        char *b = frame(&back, 30, 100, true, ct_view_def_at(v)->name, NULL, NULL);
        cr_expect_str_eq(b, a, "view %s", ct_view_def_at(v)->name);
        free(a);
        free(b);
    }
    free(j);
    ct_snapshot_release(&s);
    ct_snapshot_release(&back);
}

Test(views, canvas_clips_and_sanitizes)
{
    struct ct_canvas c;
    ct_canvas_init(&c, 2, 5, false);
    cr_expect_eq(ct_canvas_text(&c, 0, 3, -1, 0, "abcdef"), 2);
    ct_canvas_text(&c, 1, 0, -1, 0, "x\ty\033é");
    char *d = ct_canvas_dump(&c);
    cr_expect_str_eq(d, "   ab\nx y??\n");
    free(d);
    ct_canvas_release(&c);
    ct_canvas_init(&c, 1, 4, true);
    ct_canvas_text(&c, 0, 0, -1, 0, "é█\xff");
    d = ct_canvas_dump(&c);
    cr_expect_str_eq(d, "é█?\n");
    free(d);
    ct_canvas_release(&c);
}
