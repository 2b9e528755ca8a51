/* SPDX-License-Identifier: MIT */
/* The keys table (htop conventions) and key dispatch. Reads the views table (views.c) to
 * switch views; the frame (frame.c) reads this table for the footer and the help box. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ui.h"

static const struct ct_view_def *cur(const struct ct_ui *ui)
{
    return ct_view_def_at((size_t)ui->view);
}

static int view_count(void)
{
    int n = 0;
    while (ct_view_def_at((size_t)n))
        n++;
    return n;
}

/* The current view's scroll position, resolving "following the end". */
static int *top_of(struct ct_ui *ui)
{
    int *t = &ui->top[ui->view];
    if (*t < 0)
        *t = ui->n_rows - ui->body_rows > 0 ? ui->n_rows - ui->body_rows : 0;
    return t;
}

static void move(struct ct_ui *ui, int d)
{
    if (cur(ui)->select)
        ui->sel += d;
    else
        *top_of(ui) += d;
}

static void act_quit(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->quit = true;
}
static void act_help(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->help = true;
    ui->help_top = 0;
}
static void switch_to(struct ct_ui *ui, int v)
{
    ui->view = v;
    ui->left = v == ct_view_def_find("plot") ? -1 : 0;
}
static void act_next(struct ct_ui *ui, const struct ct_snapshot *s)
{
    switch_to(ui, (ui->view + 1) % view_count());
}
static void act_prev(struct ct_ui *ui, const struct ct_snapshot *s)
{
    switch_to(ui, (ui->view + view_count() - 1) % view_count());
}
static void act_up(struct ct_ui *ui, const struct ct_snapshot *s)
{
    move(ui, -1);
}
static void act_down(struct ct_ui *ui, const struct ct_snapshot *s)
{
    move(ui, 1);
}
static void act_pgup(struct ct_ui *ui, const struct ct_snapshot *s)
{
    move(ui, -(ui->body_rows > 1 ? ui->body_rows - 1 : 1));
}
static void act_pgdn(struct ct_ui *ui, const struct ct_snapshot *s)
{
    move(ui, ui->body_rows > 1 ? ui->body_rows - 1 : 1);
}
static void act_home(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->sel = 0;
    ui->top[ui->view] = 0;
}
static void act_end(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->sel = ui->n_rows - 1;
    ui->top[ui->view] = cur(ui)->follow ? -1 : ui->n_rows;
}
/* Sideways: a column in the cluster grid, 8 characters in text views. */
static int side_step(const struct ct_ui *ui)
{
    return ui->view == ct_view_def_find("cluster") ? 1 : 8;
}
static void act_left(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->left = ui->left > side_step(ui) ? ui->left - side_step(ui) : 0;
}
static void act_right(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->left = (ui->left > 0 ? ui->left : 0) + side_step(ui);
}
static void act_sort(struct ct_ui *ui, const struct ct_snapshot *s)
{
    const char *const *sorts = cur(ui)->sorts;
    if (!sorts) {
        snprintf(ui->status, sizeof ui->status, "this view has no sort");
        return;
    }
    int n = 0;
    while (sorts[n])
        n++;
    ui->sort[ui->view] = (ui->sort[ui->view] + 1) % n;
    ui->sel = 0;
    ui->top[ui->view] = 0;
}
static void act_rev(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->rev = !ui->rev;
}
static void act_filter(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->editing = true;
    snprintf(ui->edit, sizeof ui->edit, "%s", ui->filter);
}
static void act_clear(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->filter[0] = 0;
}
static void act_redraw(struct ct_ui *ui, const struct ct_snapshot *s)
{
    ui->redraw = true;
}

static const struct ct_key_def keys[] = {
    {'q', "q", "quit", "quit", act_quit},
    {'h', "h F1 ?", "this help (Up/Down scroll it, other keys close it)", "help", act_help},
    {CT_KEY_F1, NULL, NULL, NULL, act_help},
    {'?', NULL, NULL, NULL, act_help},
    {CT_KEY_TAB, "Tab S-Tab", "next / previous view (or the view's number)", "view", act_next},
    {CT_KEY_BTAB, NULL, NULL, NULL, act_prev},
    {CT_KEY_UP, "Up Down", "move the selection or scroll", NULL, act_up},
    {CT_KEY_DOWN, NULL, NULL, NULL, act_down},
    {CT_KEY_PGUP, "PgUp PgDn", "scroll a page", NULL, act_pgup},
    {CT_KEY_PGDN, NULL, NULL, NULL, act_pgdn},
    {CT_KEY_HOME, "Home End", "first / last row (End follows the log)", NULL, act_home},
    {CT_KEY_END, NULL, NULL, NULL, act_end},
    {CT_KEY_LEFT, "Left Right", "scroll sideways; plot: previous / next collective", NULL,
     act_left},
    {CT_KEY_RIGHT, NULL, NULL, NULL, act_right},
    {'s', "s", "sort by the next column", "sort", act_sort},
    {'r', "r", "reverse the sort", NULL, act_rev},
    {'/', "/", "filter rows by name (Enter keeps, Esc clears)", "filter", act_filter},
    {CT_KEY_ESC, "Esc", "clear the filter", NULL, act_clear},
    {CT_KEY_CTRL_L, "^L", "redraw the screen", NULL, act_redraw},
};

const struct ct_key_def *ct_key_def_at(size_t i)
{
    return i < sizeof keys / sizeof keys[0] ? &keys[i] : NULL;
}

static void edit_key(struct ct_ui *ui, int key)
{
    size_t l = strlen(ui->edit);
    if (key == CT_KEY_ENTER || key == '\r') {
        snprintf(ui->filter, sizeof ui->filter, "%s", ui->edit);
        ui->editing = false;
        ui->sel = 0;
        ui->top[ui->view] = cur(ui)->follow ? -1 : 0;
    } else if (key == CT_KEY_ESC) {
        ui->editing = false;
        ui->filter[0] = 0;
    } else if (key == CT_KEY_BACKSPACE || key == 8) {
        if (l)
            ui->edit[l - 1] = 0;
    } else if (key >= 0x20 && key < 0x7f && l + 1 < sizeof ui->edit) {
        ui->edit[l] = (char)key;
        ui->edit[l + 1] = 0;
    }
}

void ct_ui_key(struct ct_ui *ui, int key, const struct ct_snapshot *s)
{
    ui->status[0] = 0;
    if (key == CT_KEY_NONE || key == CT_KEY_RESIZE)
        return;
    if (ui->editing) {
        edit_key(ui, key);
        return;
    }
    if (ui->help) {
        if (key == CT_KEY_UP || key == CT_KEY_DOWN)
            ui->help_top += key == CT_KEY_UP ? -1 : 1;
        else if (key == CT_KEY_PGUP || key == CT_KEY_PGDN)
            ui->help_top += key == CT_KEY_PGUP ? -10 : 10;
        else
            ui->help = false;
        if (ui->help_top < 0)
            ui->help_top = 0;
        if (key == 'q')
            ui->quit = true;
        return;
    }
    for (size_t i = 0; ct_view_def_at(i); i++)
        if (ct_view_def_at(i)->key == key) {
            switch_to(ui, (int)i);
            return;
        }
    const struct ct_view_def *v = cur(ui);
    if (v->on_key && v->on_key(ui, key, s))
        return;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].key == key) {
            keys[i].act(ui, s);
            return;
        }
}
