/* SPDX-License-Identifier: MIT */
/* The log view: recent log lines from the snapshot, following the end unless scrolled. */
#include "ui.h"

void ct_view_log_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                      const struct ct_snapshot *s)
{
    int v = ct_view_def_find("log");
    if (!s->n_log) {
        ui->n_rows = ui->body_rows = r.h;
        ct_canvas_text(c, r.y + 1, r.x + 1, r.w - 2, CT_A_DIM, "no log lines");
        return;
    }
    ct_draw_lines(c, r, ui, v, (const char *const *)s->log, s->n_log, true);
}
