/* SPDX-License-Identifier: MIT */
/* The views table: the one list of views that keys (switching), the frame (tabs, help)
 * and the screen read. It reads no other table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ui.h"

static const char *const nic_sorts[] = {"name", "util", "tx", "rx", "errors", NULL};
static const char *const node_sorts[] = {"node", "total", NULL};

static const struct ct_view_def views[] = {
    {.name = "nics",
     .key = '1',
     .summary = "NIC ports: TX/RX, utilization, packets, errors, history",
     .sorts = nic_sorts,
     .select = true,
     .draw = ct_view_nics_draw},
    {.name = "progress",
     .key = '2',
     .summary = "run or sweep progress, busiest NICs, latest points",
     .draw = ct_view_progress_draw},
    {.name = "plot",
     .key = '3',
     .summary = "bus bandwidth vs size per algorithm, crossovers",
     .draw = ct_view_plot_draw,
     .on_key = ct_view_plot_key},
    {.name = "cluster",
     .key = '4',
     .summary = "node x NIC utilization heat grid",
     .sorts = node_sorts,
     .draw = ct_view_cluster_draw},
    {.name = "topology",
     .key = '5',
     .summary = "the probe's views: summary, GPU/NIC matrix, NICs, torus",
     .draw = ct_view_topo_draw},
    {.name = "log", .key = '6', .summary = "log lines", .follow = true, .draw = ct_view_log_draw},
};
#define NVIEWS (sizeof views / sizeof views[0])
_Static_assert(NVIEWS <= CT_UI_MAX_VIEWS, "raise CT_UI_MAX_VIEWS");

const struct ct_view_def *ct_view_def_at(size_t i)
{
    return i < NVIEWS ? &views[i] : NULL;
}

int ct_view_def_find(const char *name)
{
    for (size_t i = 0; name && i < NVIEWS; i++)
        if (!strcmp(views[i].name, name))
            return (int)i;
    return -1;
}
