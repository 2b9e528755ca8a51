/* SPDX-License-Identifier: MIT */
/* The frame around the current view: title bar, tabs (from the views table), footer (from
 * the keys table) and the help box (from both tables). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ui.h"

void ct_ui_init(struct ct_ui *ui, const char *title, const char *first_view)
{
    memset(ui, 0, sizeof *ui);
    snprintf(ui->title, sizeof ui->title, "%s", title ? title : "colltune");
    int v = ct_view_def_find(first_view);
    ui->view = v >= 0 ? v : 0;
    ui->left = -1;
    for (size_t i = 0; ct_view_def_at(i); i++)
        ui->top[i] = ct_view_def_at(i)->follow ? -1 : 0;
}

static void draw_title(struct ct_canvas *c, const struct ct_ui *ui, const struct ct_snapshot *s)
{
    char when[16] = "--:--:--", right[64];
    if (s->wall_s > 0) {
        time_t t = (time_t)s->wall_s;
        struct tm tm;
        localtime_r(&t, &tm);
        strftime(when, sizeof when, "%H:%M:%S", &tm);
    }
    ct_canvas_fill(c, 0, 0, c->cols, CT_A_TITLE, " ");
    if (s->interval_s > 0)
        ct_canvas_printf(c, 0, 1, c->cols - 2, CT_A_TITLE, "%s   %s   %s   interval %.2fs",
                         ui->title, s->host, when, s->interval_s);
    else
        ct_canvas_printf(c, 0, 1, c->cols - 2, CT_A_TITLE, "%s   %s   %s", ui->title, s->host,
                         when);
    snprintf(right, sizeof right, "%ssample %llu", ui->ended ? "end of replay   " : "",
             (unsigned long long)s->seq);
    ct_canvas_rtext(c, 0, c->cols - 1 - ct_text_width(right), ct_text_width(right), CT_A_TITLE,
                    right);
}

static void draw_tabs(struct ct_canvas *c, const struct ct_ui *ui)
{
    int x = 1;
    for (size_t i = 0; ct_view_def_at(i); i++) {
        char b[32];
        snprintf(b, sizeof b, " %c %s ", ct_view_def_at(i)->key, ct_view_def_at(i)->name);
        x += ct_canvas_text(c, 1, x, c->cols - x, (int)i == ui->view ? CT_A_TAB_ON : CT_A_TAB, b);
        x++;
    }
}

static void draw_footer(struct ct_canvas *c, const struct ct_ui *ui)
{
    int y = c->rows - 1, x = 1;
    const struct ct_view_def *v = ct_view_def_at((size_t)ui->view);
    if (ui->editing) {
        int w = ct_canvas_printf(c, y, 1, c->cols - 2, CT_A_KEY, "filter: %s_", ui->edit);
        ct_canvas_text(c, y, 1 + w, -1, CT_A_DIM, "   (Enter keeps, Esc clears)");
        return;
    }
    for (size_t i = 0; ct_key_def_at(i); i++) {
        const struct ct_key_def *k = ct_key_def_at(i);
        if (!k->hint || !k->label)
            continue;
        if (k->key == 's' && !v->sorts)
            continue;
        char word[48];
        if (k->key == 's')
            snprintf(word, sizeof word, "%s:%s%s", k->hint, v->sorts[ui->sort[ui->view]],
                     ui->rev ? "-" : "");
        else
            snprintf(word, sizeof word, "%s", k->hint);
        const char *label = k->label;
        char first[16];
        size_t l = strcspn(label, " ");
        snprintf(first, sizeof first, "%.*s", (int)(l < sizeof first ? l : sizeof first - 1),
                 label);
        x += ct_canvas_text(c, y, x, c->cols - x, CT_A_KEY, first);
        x += ct_canvas_text(c, y, x + 1, c->cols - x - 1, CT_A_NORMAL, word) + 3;
    }
    if (ui->filter[0])
        x += ct_canvas_printf(c, y, x, c->cols - x, CT_A_WARN, "filter '%s'", ui->filter) + 2;
    if (ui->status[0])
        ct_canvas_text(c, y, x, c->cols - x, CT_A_WARN, ui->status);
}

static void draw_help(struct ct_canvas *c, struct ct_ui *ui)
{
    char **lines;
    size_t n = ct_ui_help_lines(c->utf8, &lines);
    int w = 0;
    for (size_t i = 0; i < n; i++) {
        int lw = ct_text_width(lines[i]);
        w = lw > w ? lw : w;
    }
    w += 4;
    if (w > c->cols - 2)
        w = c->cols - 2;
    int room = c->rows - 4, h = (int)n + 2 > room ? room : (int)n + 2;
    int inner = h - 2;
    if (ui->help_top > (int)n - inner)
        ui->help_top = (int)n - inner;
    if (ui->help_top < 0)
        ui->help_top = 0;
    int y = 2 + (room - h) / 2, x = (c->cols - w) / 2;
    bool u = c->utf8;
    for (int r = 0; r < h; r++) {
        ct_canvas_fill(c, y + r, x, w, CT_A_NORMAL, " ");
        ct_canvas_text(c, y + r, x, 1, CT_A_HEAD, u ? "│" : "|");
        ct_canvas_text(c, y + r, x + w - 1, 1, CT_A_HEAD, u ? "│" : "|");
    }
    ct_canvas_fill(c, y, x, w, CT_A_HEAD, u ? "─" : "-");
    ct_canvas_fill(c, y + h - 1, x, w, CT_A_HEAD, u ? "─" : "-");
    ct_canvas_text(c, y, x, 1, CT_A_HEAD, u ? "┌" : "+");
    ct_canvas_text(c, y, x + w - 1, 1, CT_A_HEAD, u ? "┐" : "+");
    ct_canvas_text(c, y + h - 1, x, 1, CT_A_HEAD, u ? "└" : "+");
    ct_canvas_text(c, y + h - 1, x + w - 1, 1, CT_A_HEAD, u ? "┘" : "+");
    ct_canvas_printf(c, y, x + 2, w - 4, CT_A_HEAD, " %s help ", ui->title);
    if (ui->help_top + inner < (int)n)
        ct_canvas_text(c, y + h - 1, x + w - 10, 8, CT_A_HEAD, u ? " ↓ more " : " v more ");
    for (int r = 0; r < inner && ui->help_top + r < (int)n; r++) {
        const char *l = lines[ui->help_top + r];
        bool section = l[0] && l[0] != ' ';
        ct_canvas_text(c, y + 1 + r, x + 2, w - 4, section ? CT_A_HEAD : CT_A_NORMAL, l);
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i]);
    free(lines);
}

void ct_ui_draw(struct ct_canvas *c, struct ct_ui *ui, const struct ct_snapshot *s)
{
    ct_canvas_clear(c);
    if (c->rows < 8 || c->cols < 40) {
        ct_canvas_text(c, 0, 0, -1, CT_A_WARN, "too small: 40x8 needed");
        return;
    }
    draw_title(c, ui, s);
    draw_tabs(c, ui);
    struct ct_rect body = {2, 0, c->rows - 3, c->cols};
    ct_view_def_at((size_t)ui->view)->draw(c, body, ui, s);
    draw_footer(c, ui);
    if (ui->help)
        draw_help(c, ui);
}

char *ct_ui_render_text(const struct ct_snapshot *s, const char *view, int cols, bool utf8)
{
    struct ct_ui ui;
    ct_ui_init(&ui, NULL, view);
    ui.plain = true;
    int rows = ui.view == ct_view_def_find("nics") ? (int)s->n_nic + 1 : 60;
    struct ct_canvas c;
    ct_canvas_init(&c, rows < 2 ? 2 : rows, cols, utf8);
    ct_view_def_at((size_t)ui.view)->draw(&c, (struct ct_rect){0, 0, c.rows, c.cols}, &ui, s);
    char *text = ct_canvas_dump(&c);
    ct_canvas_release(&c);
    size_t l = strlen(text);
    while (l > 1 && text[l - 1] == '\n' && text[l - 2] == '\n')
        text[--l] = 0;
    return text;
}

static void add(char ***v, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(char ***v, size_t *n, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    *v = ct_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = ct_xstrdup(buf);
}

size_t ct_ui_help_lines(bool utf8, char ***out)
{
    char **v = NULL;
    size_t n = 0;
    add(&v, &n, "keys");
    for (size_t i = 0; ct_key_def_at(i); i++)
        if (ct_key_def_at(i)->label)
            add(&v, &n, "  %-11s %s", ct_key_def_at(i)->label, ct_key_def_at(i)->help);
    add(&v, &n, "views");
    for (size_t i = 0; ct_view_def_at(i); i++)
        add(&v, &n, "  %c %-9s %s", ct_view_def_at(i)->key, ct_view_def_at(i)->name,
            ct_view_def_at(i)->summary);
    add(&v, &n, "marks after RX Gb/s");
    add(&v, &n, "  *  from fallback counters (the 32-bit one saturated)   ! saturated");
    add(&v, &n, "  w  a counter wrapped   r  a counter reset   ERRORS red: new errors");
    *out = v;
    return n;
}
