/* SPDX-License-Identifier: MIT */
/* Rails: shared subnets become rails in order, a subnet with the same address on two hosts
 * (a local bridge) or on one host only does not, hosts missing a rail sit it out. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "../../validate/rails.h"

static void add_if(struct ct_rail_host *h, const char *name, unsigned a, unsigned b, unsigned c,
                   unsigned d, int prefix)
{
    struct ct_ifaddr *x = &h->ifs[h->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    snprintf(x->addr, sizeof x->addr, "%u.%u.%u.%u", a, b, c, d);
    uint32_t addr = a << 24 | b << 16 | c << 8 | d;
    uint32_t mask = prefix ? ~0u << (32 - prefix) : 0;
    x->net = addr & mask;
    x->prefix = prefix;
}

Test(rails, two_rails_and_a_bridge)
{
    struct ct_rail_host h[3];
    memset(h, 0, sizeof h);
    for (unsigned i = 0; i < 3; i++) {
        add_if(&h[i], "docker0", 172, 17, 0, 1, 16);   /* same address everywhere */
        add_if(&h[i], "eth1", 10, 2, 0, 1 + i, 24);    /* rail 10.2.0.0/24 */
        add_if(&h[i], "eth0", 10, 1, 0, 1 + i, 24);    /* rail 10.1.0.0/24 */
    }
    add_if(&h[1], "mgmt", 192, 168, 9, 5, 24);         /* one host only */
    struct ct_rails r;
    ct_rails_build(h, 3, &r);
    cr_assert_eq(r.n, 2);
    char b[32];
    cr_expect_str_eq(ct_rails_name(&r, 0, b, sizeof b), "10.1.0.0/24");
    cr_expect_str_eq(ct_rails_name(&r, 1, b, sizeof b), "10.2.0.0/24");
    for (int i = 0; i < 3; i++) {
        cr_expect_str_eq(h[i].ifs[r.ifidx[i][0]].name, "eth0");
        cr_expect_str_eq(h[i].ifs[r.ifidx[i][1]].name, "eth1");
        cr_expect_eq(r.ifidx[i][2], -1);
    }
    ct_rails_release(&r);
}

Test(rails, host_without_a_rail_and_single_host)
{
    struct ct_rail_host h[3];
    memset(h, 0, sizeof h);
    add_if(&h[0], "eth0", 10, 1, 0, 1, 24);
    add_if(&h[0], "ib0", 10, 9, 0, 1, 16);
    add_if(&h[1], "eth0", 10, 1, 0, 2, 24);
    add_if(&h[1], "ib0", 10, 9, 3, 2, 16);
    add_if(&h[2], "eth0", 10, 1, 0, 3, 24); /* no ib0 */
    struct ct_rails r;
    ct_rails_build(h, 3, &r);
    cr_assert_eq(r.n, 2);
    cr_expect_eq(r.ifidx[2][1], -1, "host 2 sits out rail 10.9.0.0/16");
    cr_expect_eq(r.ifidx[1][1], 1);
    ct_rails_release(&r);
    ct_rails_build(h, 1, &r);
    cr_expect_eq(r.n, 0, "one host has no rail to another");
    ct_rails_release(&r);
    ct_rails_build(h, 0, &r);
    cr_expect_eq(r.n, 0);
    ct_rails_release(&r);
}

Test(rails, at_most_max_in_order)
{
    struct ct_rail_host h[2];
    memset(h, 0, sizeof h);
    for (unsigned i = 0; i < 2; i++)
        for (unsigned k = CT_RAIL_MAX; k-- > 0;) {
            char n[16];
            snprintf(n, sizeof n, "ib%u", k);
            add_if(&h[i], n, 10, 20 + k, 0, 1 + i, 24);
        }
    struct ct_rails r;
    ct_rails_build(h, 2, &r);
    cr_assert_eq(r.n, CT_RAIL_MAX);
    for (int k = 0; k < r.n; k++) {
        char want[16];
        snprintf(want, sizeof want, "ib%d", k);
        cr_expect_str_eq(h[0].ifs[r.ifidx[0][k]].name, want);
    }
    ct_rails_release(&r);
}

Test(rails, this_host_lists_usable_ipv4)
{
    struct ct_ifaddr ifs[CT_RAIL_MAX];
    struct ct_err err = {0};
    int n = ct_sock_if_list(ifs, CT_RAIL_MAX, &err);
    cr_assert_geq(n, 0, "%s", err.msg);
    for (int i = 0; i < n; i++) {
        cr_expect_str_neq(ifs[i].name, "lo");
        cr_expect(ifs[i].prefix >= 0 && ifs[i].prefix <= 32);
    }
}
