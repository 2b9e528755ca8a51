/* SPDX-License-Identifier: MIT */
/*
 * libfabric transport, set-up: choose a provider that every rank has, open a reliable
 * datagram endpoint, publish its name through the bootstrap, and connect one liveness
 * socket per peer pair.
 */
#ifdef HAVE_LIBFABRIC

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "../lib/clock.h"
#include "../lib/sock.h"
#include "boot.h"
#include "fabric_int.h"
#include "frame.h"

/*
 * Provider choice. Each rank asks fi_getinfo for every provider of `pref` (or only the one
 * named by COLLTUNE_FI_PROVIDER) with the capabilities the data path needs, in two
 * flavours tried in order: tagged messages (the sender's rank is in the tag, so no directed
 * receive is needed), then untagged messages with directed receive and send-after-send
 * order (COLLTUNE_FI_MSG=1 forces the latter, for tests). Memory registration modes offered:
 * FI_MR_LOCAL, VIRT_ADDR, ALLOCATED, PROV_KEY (not ENDPOINT, RAW or HMEM, so providers that
 * require those are not chosen). A job spanning hosts also asks for FI_LOCAL_COMM | FI_REMOTE_COMM,
 * which rules out intra-host providers such as shm. The availability bitmaps are allgathered and
 * the first provider every rank has wins, so ranks never disagree. Nothing depends on the
 * provider's name: only on what its fi_info says (mr_mode, sizes, wait objects, caps).
 *
 * Domain choice. A provider may list several domains (one per interface for tcp): the one
 * named by cfg->ifname, else the one whose IPv4 source address is the address this rank
 * publishes (127.0.0.1 when the job is on one host, else the source of the route to another
 * host, as the tcp transport does), else the first non-loopback one, else the first.
 *
 * Liveness. A reliable-datagram provider does not tell the application that a peer died:
 * its posted receives from that peer would wait forever. So each connected pair also
 * holds one plain TCP connection that carries nothing after its handshake (job id, ranks;
 * a stray connection is closed unread); its end of stream means the peer process is gone.
 */

#define PIECE_MAX (1u << 20)
#define QUEUE_CAP 4096 /* posted pieces per direction, whatever the provider says */
#define SHARE_MIN 16   /* posted pieces per peer and direction, at least */
#define FAB_API FI_VERSION(1, 10)
#define PROV_LEN 64

static const char *const pref[] = {"verbs;ofi_rxm", "efa", "tcp;ofi_rxm", "tcp", "shm", "sockets"};
#define NPREF ((int)(sizeof pref / sizeof pref[0]))

struct flavour {
    uint64_t caps;
    bool tagged;
};

static const struct flavour flavours[] = {
    {FI_TAGGED, true},
    {FI_MSG | FI_DIRECTED_RECV, false},
};
#define NFLAVOURS ((int)(sizeof flavours / sizeof flavours[0]))

const char *ct_fabric_host(const struct fab_tp *f, int rank)
{
    return f->base.boot && f->base.boot->hosts ? f->base.boot->hosts[rank] : "?";
}

static bool env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* fi_getinfo for one provider and flavour; NULL if it has none. */
static struct fi_info *query(const char *prov, const struct flavour *fl, bool remote)
{
    struct fi_info *h = fi_allocinfo(), *list = NULL;
    if (!h)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = fl->caps | FI_SEND | FI_RECV | (remote ? FI_LOCAL_COMM | FI_REMOTE_COMM : 0);
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    if (!fl->tagged) {
        h->tx_attr->msg_order = FI_ORDER_SAS;
        h->rx_attr->msg_order = FI_ORDER_SAS;
    }
    h->fabric_attr->prov_name = strdup(prov);
    if (fi_getinfo(FAB_API, NULL, NULL, 0, h, &list) != 0)
        list = NULL;
    fi_freeinfo(h);
    return list;
}

/* The first flavour prov offers; *fl_out its index. */
static struct fi_info *query_any(const char *prov, bool remote, bool msg_only, int *fl_out)
{
    for (int i = msg_only ? NFLAVOURS - 1 : 0; i < NFLAVOURS; i++) {
        struct fi_info *list = query(prov, &flavours[i], remote);
        if (list) {
            *fl_out = i;
            return list;
        }
    }
    return NULL;
}

static bool src_is_ipv4(const struct fi_info *i, struct in_addr *a)
{
    if (i->addr_format != FI_SOCKADDR_IN || !i->src_addr ||
        i->src_addrlen < sizeof(struct sockaddr_in))
        return false;
    *a = ((const struct sockaddr_in *)i->src_addr)->sin_addr;
    return true;
}

/* Pick the domain: see "Domain choice" above. */
static struct fi_info *pick_domain(struct fi_info *list, const char *ifname, const char *host)
{
    struct in_addr want, a;
    bool have_want = inet_pton(AF_INET, host, &want) == 1;
    struct fi_info *nonloop = NULL;
    for (struct fi_info *i = list; i; i = i->next)
        if (ifname && *ifname && i->domain_attr->name && !strcmp(i->domain_attr->name, ifname))
            return i;
    for (struct fi_info *i = list; i; i = i->next) {
        if (!src_is_ipv4(i, &a))
            continue;
        if (have_want && a.s_addr == want.s_addr)
            return i;
        if (!nonloop && (ntohl(a.s_addr) >> 24) != 127)
            nonloop = i;
    }
    return nonloop ? nonloop : list;
}

/* The IPv4 address this rank publishes (the tcp transport's rule). */
static int choose_addr(struct ct_boot *b, const char *ifname, char *host, size_t len,
                       struct ct_err *err)
{
    if (ifname && *ifname && ct_sock_if_addr(ifname, host, len, NULL) == 0)
        return 0;
    if (b->nnodes <= 1) {
        snprintf(host, len, "127.0.0.1");
        return 0;
    }
    int target = -1;
    for (int r = 0; r < b->size && target < 0; r++)
        if (strcmp(b->hosts[r], b->host))
            target = r;
    if (strcmp(b->hosts[0], b->host))
        target = 0;
    struct ct_err e = {0};
    if (target >= 0 && ct_sock_route_addr(b->hosts[target], host, len, &e) == 0 &&
        !ct_sock_is_loopback(host))
        return 0;
    if (ct_sock_route_addr(b->host, host, len, &e) == 0 && !ct_sock_is_loopback(host))
        return 0;
    return ct_sock_first_addr(host, len, err);
}

/* ---------------------------------------------------------------- provider agreement */

struct avail_blob {
    uint32_t mask; /* bit i: candidate i is usable here */
    uint8_t msg_only;
    uint8_t pad[3];
    char forced[PROV_LEN];
};

/* Choose a provider every rank has: *prov gets the candidate's name. */
static int agree_provider(struct fab_tp *f, const struct ct_tp_cfg *cfg, bool remote,
                          bool msg_only, char *prov, struct ct_err *err)
{
    struct ct_boot *b = f->base.boot;
    const char *forced = cfg && cfg->provider ? cfg->provider : getenv("COLLTUNE_FI_PROVIDER");
    if (forced && !*forced)
        forced = NULL;
    if (forced && strlen(forced) >= PROV_LEN)
        return ct_err_set(err, CT_EINVAL, "fabric: COLLTUNE_FI_PROVIDER is too long");
    const char *const *cand = forced ? &forced : pref;
    int ncand = forced ? 1 : NPREF;
    struct avail_blob mine;
    memset(&mine, 0, sizeof mine);
    mine.msg_only = msg_only;
    if (forced)
        snprintf(mine.forced, sizeof mine.forced, "%s", forced);
    for (int i = 0; i < ncand; i++) {
        int fl;
        struct fi_info *list = query_any(cand[i], remote, msg_only, &fl);
        if (list)
            mine.mask |= 1u << i;
        fi_freeinfo(list);
    }
    struct avail_blob *all = ct_xcalloc((size_t)b->size, sizeof *all);
    int rc = ct_boot_allgather(b, &mine, sizeof mine, all, err);
    uint32_t common = ~0u;
    for (int r = 0; rc == 0 && r < b->size; r++) {
        all[r].forced[PROV_LEN - 1] = 0;
        if (strcmp(all[r].forced, mine.forced) || all[r].msg_only != mine.msg_only)
            rc = ct_err_set(err, CT_EINVAL,
                            "fabric: rank %d (%s) sets COLLTUNE_FI_PROVIDER='%s' "
                            "COLLTUNE_FI_MSG=%d, rank %d sets '%s' %d",
                            r, f->base.boot->hosts[r], all[r].forced, all[r].msg_only, b->rank,
                            mine.forced, mine.msg_only);
        else if (!all[r].mask && forced)
            rc = ct_err_set(err, CT_EUNSUPP,
                            "fabric: provider '%s' is not available on rank %d (%s)%s", forced, r,
                            f->base.boot->hosts[r], remote ? " for a job across hosts" : "");
        else if (!all[r].mask)
            rc = ct_err_set(err, CT_EUNSUPP,
                            "fabric: no libfabric provider (verbs;ofi_rxm, efa, tcp;ofi_rxm, "
                            "tcp, shm, sockets) offers reliable messaging%s on rank %d (%s)",
                            remote ? " across hosts" : "", r, f->base.boot->hosts[r]);
        common &= all[r].mask;
    }
    free(all);
    CT_TRY(rc);
    for (int i = 0; i < ncand; i++)
        if (common & (1u << i)) {
            snprintf(prov, PROV_LEN, "%s", cand[i]);
            return 0;
        }
    char have[160] = "";
    for (int i = 0, off = 0; i < ncand; i++)
        if (mine.mask & (1u << i))
            off +=
                snprintf(have + off, sizeof have - (size_t)off, "%s%s", off ? ", " : "", cand[i]);
    return ct_err_set(err, CT_EUNSUPP,
                      "fabric: the ranks have no libfabric provider in common (rank %d has %s)",
                      b->rank, have);
}

/* ---------------------------------------------------------------- endpoint */

static int fi_fail(struct ct_err *err, const char *what, int rc)
{
    return ct_err_set(err, CT_EIO, "fabric: %s: %s", what, fi_strerror(rc < 0 ? -rc : rc));
}

static int open_cq(struct fab_tp *f, struct ct_err *err)
{
    struct fi_cq_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.format = FI_CQ_FORMAT_TAGGED;
    attr.size = (size_t)(f->tx_max + f->rx_max) + 64;
    attr.wait_obj = FI_WAIT_FD;
    f->cq_fd = -1;
    if (fi_cq_open(f->domain, &attr, &f->cq, NULL) == 0) {
        int fd = -1;
        if (fi_control(&f->cq->fid, FI_GETWAIT, &fd) == 0 && fd >= 0)
            f->cq_fd = fd;
        return 0;
    }
    attr.wait_obj = FI_WAIT_NONE; /* the provider has no wait fd: wait() spins briefly */
    int rc = fi_cq_open(f->domain, &attr, &f->cq, NULL);
    return rc ? fi_fail(err, "opening the completion queue", rc) : 0;
}

/* Open fabric, domain, cq, av and endpoint on the chosen provider. */
static int open_endpoint(struct fab_tp *f, const struct ct_tp_cfg *cfg, const char *cand,
                         bool remote, bool msg_only, const char *host, struct ct_err *err)
{
    int fl;
    struct fi_info *list = query_any(cand, remote, msg_only, &fl);
    if (!list)
        return ct_err_set(err, CT_EUNSUPP, "fabric: provider '%s' vanished", cand);
    struct fi_info *pick = pick_domain(list, cfg ? cfg->ifname : NULL, host);
    f->info = fi_dupinfo(pick);
    fi_freeinfo(list);
    if (!f->info)
        return ct_err_set(err, CT_ENOMEM, "fabric: fi_dupinfo failed");
    struct fi_info *i = f->info;
    snprintf(f->prov, sizeof f->prov, "%s", i->fabric_attr->prov_name);
    f->tagged = flavours[fl].tagged;
    f->directed = !f->tagged;
    f->mr_local = (i->domain_attr->mr_mode & FI_MR_LOCAL) || env_on("COLLTUNE_FI_MR_LOCAL");
    f->mr_try = true;
    f->tx_max =
        i->tx_attr->size && i->tx_attr->size < QUEUE_CAP ? (int)i->tx_attr->size : QUEUE_CAP;
    f->rx_max =
        i->rx_attr->size && i->rx_attr->size < QUEUE_CAP ? (int)i->rx_attr->size : QUEUE_CAP;
    int rc = fi_fabric(i->fabric_attr, &f->fabric, NULL);
    if (rc)
        return fi_fail(err, "fi_fabric", rc);
    if ((rc = fi_domain(f->fabric, i, &f->domain, NULL)))
        return fi_fail(err, "fi_domain", rc);
    CT_TRY(open_cq(f, err));
    struct fi_av_attr av;
    memset(&av, 0, sizeof av);
    av.type = FI_AV_TABLE;
    av.count = (size_t)f->base.size;
    if ((rc = fi_av_open(f->domain, &av, &f->av, NULL)))
        return fi_fail(err, "opening the address vector", rc);
    if ((rc = fi_endpoint(f->domain, i, &f->ep, NULL)))
        return fi_fail(err, "opening the endpoint", rc);
    if ((rc = fi_ep_bind(f->ep, &f->av->fid, 0)) ||
        (rc = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV)))
        return fi_fail(err, "binding the endpoint", rc);
    if ((rc = fi_enable(f->ep)))
        return fi_fail(err, "enabling the endpoint", rc);
    return 0;
}

/* ---------------------------------------------------------------- exchange */

struct name_blob {
    uint8_t name[FAB_NAME_MAX];
    uint32_t namelen;
    uint32_t live_port;
    uint64_t max_msg;
    char live_host[48];
    char prov[PROV_LEN];
    uint8_t has_peers;
    uint8_t pad[7];
};

struct setup {
    struct fab_tp *f;
    struct ct_boot *boot;
    int64_t deadline;
    int lfd;
    struct name_blob *blobs;
};

/* Peer bitmaps: link[r] when this rank or r asked for the other (or either serves all). */
static int exchange_links(struct setup *su, const struct ct_tp_cfg *cfg, bool *link,
                          struct ct_err *err)
{
    int n = su->f->base.size;
    bool *has = ct_xcalloc((size_t)n, sizeof *has);
    for (int r = 0; r < n; r++)
        has[r] = su->blobs[r].has_peers != 0;
    int rc = ct_tp_peer_links(su->boot, cfg ? cfg->peers : NULL, has, link, err);
    free(has);
    return rc;
}

static int exchange(struct setup *su, const struct ct_tp_cfg *cfg, const char *host, int port,
                    bool *link, struct ct_err *err)
{
    struct fab_tp *f = su->f;
    int n = f->base.size;
    struct name_blob mine;
    memset(&mine, 0, sizeof mine);
    size_t len = sizeof mine.name;
    int rc = fi_getname(&f->ep->fid, mine.name, &len);
    if (rc)
        return fi_fail(err, "fi_getname", rc);
    mine.namelen = (uint32_t)len;
    mine.live_port = (uint32_t)port;
    mine.max_msg = f->info->ep_attr->max_msg_size;
    snprintf(mine.live_host, sizeof mine.live_host, "%s", host);
    snprintf(mine.prov, sizeof mine.prov, "%s", f->prov);
    mine.has_peers = cfg && cfg->peers ? 1 : 0;
    su->blobs = ct_xcalloc((size_t)n, sizeof *su->blobs);
    CT_TRY(ct_boot_allgather(su->boot, &mine, sizeof mine, su->blobs, err));
    uint64_t max_msg = mine.max_msg;
    for (int r = 0; r < n; r++) {
        struct name_blob *b = &su->blobs[r];
        b->live_host[sizeof b->live_host - 1] = 0;
        b->prov[sizeof b->prov - 1] = 0;
        if (strcmp(b->prov, f->prov))
            return ct_err_set(err, CT_EUNSUPP,
                              "fabric: rank %d (%s) opened provider '%s', rank %d opened '%s'", r,
                              ct_fabric_host(f, r), b->prov, f->base.rank, f->prov);
        if (b->namelen == 0 || b->namelen > FAB_NAME_MAX)
            return ct_err_set(err, CT_EPEER, "fabric: rank %d (%s) published a bad address", r,
                              ct_fabric_host(f, r));
        if (b->max_msg < max_msg)
            max_msg = b->max_msg;
    }
    f->piece = max_msg < PIECE_MAX ? (size_t)max_msg : PIECE_MAX;
    if (f->piece >= 4096)
        f->piece &= ~(size_t)4095;
    if (f->piece == 0)
        return ct_err_set(err, CT_EUNSUPP, "fabric: provider '%s' has max_msg_size 0", f->prov);
    return exchange_links(su, cfg, link, err);
}

/* ---------------------------------------------------------------- liveness sockets */

static void hello_wire(const struct fab_tp *f, int kind, int to, unsigned char *wire)
{
    struct ct_hello h;
    memset(&h, 0, sizeof h);
    h.kind = (uint8_t)kind;
    h.nstreams = 1;
    h.from = (uint32_t)f->base.rank;
    h.to = (uint32_t)to;
    h.size = (uint32_t)f->base.size;
    h.job_id = f->base.boot->job_id;
    ct_hello_encode(&h, wire);
}

static bool hello_ok(const struct fab_tp *f, const unsigned char *wire, int kind,
                     struct ct_hello *h)
{
    struct ct_err e = {0};
    static const unsigned char no_token[CT_HELLO_TOKEN_BYTES];
    return ct_hello_decode(wire, h, &e) == 0 && h->kind == kind &&
           h->job_id == f->base.boot->job_id && h->size == (uint32_t)f->base.size &&
           h->to == (uint32_t)f->base.rank && h->nstreams == 1 &&
           !memcmp(h->token, no_token, sizeof no_token);
}

static int live_missing(struct setup *su, const bool *link, struct ct_err *err)
{
    struct fab_tp *f = su->f;
    char list[200] = "";
    size_t off = 0;
    for (int r = 0; r < f->base.size && off < sizeof list - 40; r++)
        if (link[r] && r > f->base.rank && f->peers[r].live_fd < 0)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%d (%s)", off ? ", " : "", r,
                                    ct_fabric_host(f, r));
    return ct_err_set(err, CT_ETIMEDOUT,
                      "fabric: liveness connection setup timed out after %.1f s; missing peer "
                      "rank %s",
                      (double)su->boot->timeout_ns / 1e9, list);
}

/* Connect to every linked lower rank and send the CONNECT handshake. */
static int live_connect(struct setup *su, const bool *link, struct ct_err *err)
{
    struct fab_tp *f = su->f;
    for (int r = 0; r < f->base.rank; r++) {
        if (!link[r])
            continue;
        const struct name_blob *b = &su->blobs[r];
        int fd = ct_sock_connect(b->live_host, (int)b->live_port, su->deadline, err);
        if (fd < 0)
            return ct_err_wrap(err, "fabric: peer rank %d (%s): ", r, ct_fabric_host(f, r));
        f->peers[r].live_fd = fd;
        unsigned char wire[CT_HELLO_BYTES];
        hello_wire(f, CT_HELLO_CONNECT, r, wire);
        if (ct_sock_write_all(fd, wire, sizeof wire, su->deadline, err) < 0)
            return ct_err_wrap(err, "fabric: peer rank %d (%s): handshake: ", r,
                               ct_fabric_host(f, r));
    }
    return 0;
}

/* Accept every linked higher rank; strays, foreign jobs and duplicates are closed unread. */
static int live_accept(struct setup *su, const bool *link, struct ct_err *err)
{
    struct fab_tp *f = su->f;
    int want = 0;
    for (int r = f->base.rank + 1; r < f->base.size; r++)
        want += link[r];
    while (want > 0) {
        struct ct_err e = {0};
        int fd = ct_sock_accept(su->lfd, su->deadline, &e);
        if (fd < 0) {
            if (e.code == CT_ETIMEDOUT)
                return live_missing(su, link, err);
            ct_err_wrap(&e, "fabric: liveness socket: ");
            if (err)
                *err = e;
            return e.code;
        }
        unsigned char wire[CT_HELLO_BYTES];
        struct ct_hello h;
        int64_t dl = ct_now_ns() + 2000000000LL;
        if (ct_sock_read_all(fd, wire, sizeof wire, dl < su->deadline ? dl : su->deadline, &e) <
                0 ||
            !hello_ok(f, wire, CT_HELLO_CONNECT, &h) || (int)h.from <= f->base.rank ||
            !link[h.from] || f->peers[h.from].live_fd >= 0) {
            close(fd);
            continue;
        }
        hello_wire(f, CT_HELLO_ACCEPT, (int)h.from, wire);
        if (ct_sock_write_all(fd, wire, sizeof wire, su->deadline, &e) < 0) {
            close(fd);
            continue;
        }
        f->peers[h.from].live_fd = fd;
        want--;
    }
    return 0;
}

/* Read the ACCEPT answers of the lower ranks. */
static int live_confirm(struct setup *su, const bool *link, struct ct_err *err)
{
    struct fab_tp *f = su->f;
    for (int r = 0; r < f->base.rank; r++) {
        if (!link[r])
            continue;
        unsigned char wire[CT_HELLO_BYTES];
        struct ct_hello h;
        if (ct_sock_read_all(f->peers[r].live_fd, wire, sizeof wire, su->deadline, err) < 0)
            return ct_err_wrap(err, "fabric: peer rank %d (%s): handshake: ", r,
                               ct_fabric_host(f, r));
        if (!hello_ok(f, wire, CT_HELLO_ACCEPT, &h) || h.from != (uint32_t)r)
            return ct_err_set(err, CT_EPEER,
                              "fabric: peer rank %d (%s) answered the handshake wrongly", r,
                              ct_fabric_host(f, r));
    }
    return 0;
}

static int live_register(struct fab_tp *f, struct ct_err *err)
{
    f->live_ep = epoll_create1(EPOLL_CLOEXEC);
    f->wait_ep = epoll_create1(EPOLL_CLOEXEC);
    if (f->live_ep < 0 || f->wait_ep < 0)
        return ct_err_sys(err, CT_EIO, "fabric: epoll_create1");
    for (int r = 0; r < f->base.size; r++) {
        int fd = f->peers[r].live_fd;
        if (fd < 0)
            continue;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u32 = (uint32_t)r};
        if (ct_sock_set_nonblock(fd, 1) < 0 || epoll_ctl(f->live_ep, EPOLL_CTL_ADD, fd, &ev) < 0)
            return ct_err_sys(err, CT_EIO, "fabric: registering a liveness socket");
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = 1};
    if (epoll_ctl(f->wait_ep, EPOLL_CTL_ADD, f->live_ep, &ev) < 0)
        return ct_err_sys(err, CT_EIO, "fabric: epoll_ctl");
    ev.data.u32 = 0;
    if (f->cq_fd >= 0 && epoll_ctl(f->wait_ep, EPOLL_CTL_ADD, f->cq_fd, &ev) < 0)
        return ct_err_sys(err, CT_EIO, "fabric: epoll_ctl on the completion queue's fd");
    return 0;
}

/* Insert the linked peers' names into the address vector. */
static int insert_peers(struct setup *su, const bool *link, struct ct_err *err)
{
    struct fab_tp *f = su->f;
    for (int r = 0; r < f->base.size; r++) {
        if (!link[r])
            continue;
        fi_addr_t a = FI_ADDR_NOTAVAIL;
        int rc = fi_av_insert(f->av, su->blobs[r].name, 1, &a, 0, NULL);
        if (rc != 1)
            return ct_err_set(err, CT_EIO,
                              "fabric: cannot insert the address of peer rank %d (%s): %s", r,
                              ct_fabric_host(f, r), fi_strerror(rc < 0 ? -rc : FI_EOTHER));
        f->peers[r].addr = a;
    }
    return 0;
}

static int setup_run(struct setup *su, const struct ct_tp_cfg *cfg, struct ct_err *err)
{
    struct fab_tp *f = su->f;
    struct ct_boot *b = su->boot;
    bool remote = b->nnodes > 1;
    bool msg_only = env_on("COLLTUNE_FI_MSG");
    char cand[PROV_LEN], host[48];
    if (b->size > FAB_MAX_RANKS)
        return ct_err_set(err, CT_EUNSUPP, "fabric: at most %d ranks", FAB_MAX_RANKS);
    CT_TRY(agree_provider(f, cfg, remote, msg_only, cand, err));
    CT_TRY(choose_addr(b, cfg ? cfg->ifname : NULL, host, sizeof host, err));
    CT_TRY(open_endpoint(f, cfg, cand, remote, msg_only, host, err));
    int lo = 0, hi = 0, port = 0;
    const char *range = getenv("COLLTUNE_PORT_RANGE");
    if (range && *range && ct_sock_parse_range(range, &lo, &hi, err) < 0)
        return ct_err_wrap(err, "fabric: COLLTUNE_PORT_RANGE: ");
    su->lfd =
        ct_sock_listen_range(host, lo, hi, (unsigned)b->local_rank, b->size + 16, 0, &port, err);
    if (su->lfd < 0)
        return ct_err_wrap(err, "fabric: liveness socket: ");
    bool *link = ct_xcalloc((size_t)b->size, sizeof *link);
    int rc = exchange(su, cfg, host, port, link, err);
    if (rc == 0)
        rc = insert_peers(su, link, err);
    if (rc == 0)
        rc = live_connect(su, link, err);
    if (rc == 0)
        rc = live_accept(su, link, err);
    if (rc == 0)
        rc = live_confirm(su, link, err);
    int nlinked = 0;
    for (int r = 0; r < b->size; r++) {
        f->peers[r].linked = link[r];
        nlinked += link[r];
    }
    free(link);
    nlinked = nlinked ? nlinked : 1;
    f->tx_share = f->tx_max / nlinked > SHARE_MIN ? f->tx_max / nlinked : SHARE_MIN;
    f->rx_share = f->rx_max / nlinked > SHARE_MIN ? f->rx_max / nlinked : SHARE_MIN;
    CT_TRY(rc);
    return live_register(f, err);
}

int ct_fabric_setup(struct fab_tp *f, const struct ct_tp_cfg *cfg, struct ct_err *err)
{
    struct ct_boot *b = f->base.boot;
    struct setup su = {.f = f, .boot = b, .lfd = -1};
    su.deadline = ct_now_ns() + (b->timeout_ns > 0 ? b->timeout_ns : 60000000000LL);
    int rc = setup_run(&su, cfg, err);
    if (su.lfd >= 0)
        close(su.lfd);
    free(su.blobs);
    return rc;
}

void ct_fabric_close_ep(struct fab_tp *f)
{
    if (f->ep)
        fi_close(&f->ep->fid);
    f->ep = NULL;
}

void ct_fabric_teardown(struct fab_tp *f)
{
    ct_fabric_close_ep(f);
    if (f->av)
        fi_close(&f->av->fid);
    if (f->cq)
        fi_close(&f->cq->fid);
    if (f->domain)
        fi_close(&f->domain->fid);
    if (f->fabric)
        fi_close(&f->fabric->fid);
    fi_freeinfo(f->info);
    f->av = NULL;
    f->cq = NULL;
    f->domain = NULL;
    f->fabric = NULL;
    f->info = NULL;
    for (int r = 0; f->peers && r < f->base.size; r++)
        if (f->peers[r].live_fd >= 0) {
            close(f->peers[r].live_fd);
            f->peers[r].live_fd = -1;
        }
    if (f->live_ep >= 0)
        close(f->live_ep);
    if (f->wait_ep >= 0)
        close(f->wait_ep);
    f->live_ep = f->wait_ep = -1;
}

#else
typedef int ct_fabric_open_not_built;
#endif /* HAVE_LIBFABRIC */
