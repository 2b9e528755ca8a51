/* SPDX-License-Identifier: MIT */
/* libibverbs source (live only): device list and ibv_query_port attributes merged into the
 * ports sysfs found; where verbs sees nothing, the sysfs view stands and a note says so. */
#include "probe_int.h"

#include <string.h>

#ifdef HAVE_IBVERBS
#include <infiniband/verbs.h>

static double lane_gbps(uint32_t speed, char name[16])
{
    static const struct {
        uint32_t code;
        double gbps;
        const char *name;
    } tab[] = {{1, 2.5, "SDR"},  {2, 5, "DDR"},     {4, 10, "QDR"},
               {8, 10, "FDR10"}, {16, 14, "FDR"},   {32, 25, "EDR"},
               {64, 50, "HDR"},  {128, 100, "NDR"}, {256, 200, "XDR"}};
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].code == speed) {
            ct_strlcpy(name, tab[i].name, 16);
            return tab[i].gbps;
        }
    return 0;
}

static int width_lanes(uint8_t w)
{
    switch (w) {
    case 1: return 1;
    case 2: return 4;
    case 4: return 8;
    case 8: return 12;
    case 16: return 2;
    default: return 0;
    }
}

static void merge_port(struct ct_topo *t, const char *dev, int port, const struct ibv_port_attr *a)
{
    static const char *const states[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
    int i = ct_topo_find_nic(t, dev, port);
    if (i < 0)
        i = ct_topo_add_nic(t, dev, port, NULL);
    struct ct_nic *n = &t->nic[i];
    if (!n->state && a->state <= IBV_PORT_ACTIVE_DEFER) {
        n->state = a->state;
        ct_strlcpy(n->state_str, states[a->state], sizeof n->state_str);
    }
    if (!n->phys_state)
        n->phys_state = a->phys_state;
    if (!n->link_layer[0])
        ct_strlcpy(n->link_layer,
                   a->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand",
                   sizeof n->link_layer);
    if (!n->mtu && a->active_mtu >= IBV_MTU_256 && a->active_mtu <= IBV_MTU_4096)
        n->mtu = 128 << a->active_mtu;
    char name[16] = "";
    double lane = lane_gbps(a->active_speed, name);
    int lanes = width_lanes(a->active_width);
    if (!n->rate_gbps && lane > 0 && lanes > 0) {
        n->rate_gbps = lane * lanes;
        n->lanes = lanes;
        ct_strlcpy(n->speed, name, sizeof n->speed);
    }
    if (n->kind == CT_NIC_UNKNOWN)
        n->kind = a->link_layer == IBV_LINK_LAYER_ETHERNET ? CT_NIC_ROCE : CT_NIC_IB;
}

int ct_src_ibverbs(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    if (cfg && cfg->sysfs_root && strcmp(cfg->sysfs_root, "/"))
        return 0; /* captured tree: nothing live to ask */
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || n == 0) {
        ct_topo_note(t, "ibverbs: no RDMA device (sysfs view stands)");
        if (list)
            ibv_free_device_list(list);
        return 0;
    }
    for (int d = 0; d < n; d++) {
        struct ibv_context *ctx = ibv_open_device(list[d]);
        struct ibv_device_attr da;
        if (!ctx || ibv_query_device(ctx, &da)) {
            ct_topo_note(t, "ibverbs: cannot query '%s' (sysfs view stands)",
                         ibv_get_device_name(list[d]));
            if (ctx)
                ibv_close_device(ctx);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt; p++) {
            struct ibv_port_attr pa;
            if (ibv_query_port(ctx, (uint8_t)p, &pa) == 0)
                merge_port(t, ibv_get_device_name(list[d]), p, &pa);
        }
        ibv_close_device(ctx);
    }
    ibv_free_device_list(list);
    return 0;
}

#else

int ct_src_ibverbs(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err)
{
    if (!cfg || !cfg->sysfs_root || !strcmp(cfg->sysfs_root, "/"))
        ct_topo_note(t, "ibverbs: support not built (sysfs view stands)");
    return 0;
}

#endif
