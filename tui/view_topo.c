/* SPDX-License-Identifier: MIT */
/* The topology view: the probe's text views (summary, GPU/NIC matrix, NICs, torus) from the
 * snapshot, scrollable and filterable. */
#include <stdlib.h>
#include <string.h>

#include "ui.h"

void ct_view_topo_draw(struct ct_canvas *c, struct ct_rect r, struct ct_ui *ui,
                       const struct ct_snapshot *s)
{
    int v = ct_view_def_find("topology");
    if (!s->topo) {
        ui->n_rows = ui->body_rows = r.h;
        ct_canvas_text(c, r.y + 1, r.x + 1, r.w - 2, CT_A_DIM,
                       "no topology: the probe did not run (see 'colltune probe')");
        return;
    }
    char *copy = ct_xstrdup(s->topo);
    const char **lines = NULL;
    size_t n = 0;
    for (char *p = copy, *nl; p && *p; p = nl ? nl + 1 : NULL) {
        nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        lines = ct_xrealloc(lines, (n + 1) * sizeof *lines);
        lines[n++] = p;
    }
    ct_draw_lines(c, r, ui, v, lines, n, false);
    free(lines);
    free(copy);
}
