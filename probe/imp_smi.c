/* SPDX-License-Identifier: MIT */
/* Importer for `nvidia-smi topo -m` text: tab-separated or space-aligned, with or without the
 * affinity columns, NIC rows without them, and the trailing "NIC Legend". Found anywhere in
 * the text (reports paste it between other outputs). */
#include "probe_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 160
#define MAX_COLS 128

struct line {
    const char *s;
    size_t len;
    int no;
};

struct toks {
    char buf[2048];
    char *tok[MAX_TOK];
    int n;
};

/* Split a line on whitespace (tabs and spaces alike). */
static void tokenize(const struct line *l, struct toks *tk)
{
    size_t n = l->len < sizeof tk->buf - 1 ? l->len : sizeof tk->buf - 1;
    memcpy(tk->buf, l->s, n);
    tk->buf[n] = 0;
    tk->n = 0;
    char *save = NULL;
    for (char *p = strtok_r(tk->buf, " \t\r", &save); p && tk->n < MAX_TOK;
         p = strtok_r(NULL, " \t\r", &save))
        tk->tok[tk->n++] = p;
}

static int is_label(const char *s)
{
    if (!strncmp(s, "GPU", 3) || !strncmp(s, "NIC", 3)) {
        long v;
        return ct_parse_long(s + 3, 10, &v) == 0 && v >= 0;
    }
    return !strncmp(s, "mlx", 3) || !strncmp(s, "efa", 3) || !strncmp(s, "bnxt", 4);
}

enum extra { EX_CPU, EX_NUMA, EX_GPUNUMA };

struct smi {
    struct ct_topo *t;
    const char *fname;
    struct ct_err *err;
    char *label[MAX_COLS];
    int ncols;
    enum extra ex[3];
    int nex;
    int ep[MAX_COLS]; /* GPU or NIC index per column */
    int is_gpu[MAX_COLS];
};

static int parse_header(struct smi *s, const struct toks *tk, int lineno)
{
    int i = 0;
    for (; i < tk->n && is_label(tk->tok[i]); i++) {
        if (s->ncols == MAX_COLS)
            return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: too many columns", s->fname,
                              lineno);
        for (int k = 0; k < s->ncols; k++)
            if (!strcmp(s->label[k], tk->tok[i]))
                return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: column '%s' appears twice",
                                  s->fname, lineno, tk->tok[i]);
        s->label[s->ncols++] = ct_xstrdup(tk->tok[i]);
    }
    while (i < tk->n) {
        const char *a = tk->tok[i], *b = i + 1 < tk->n ? tk->tok[i + 1] : "";
        const char *c = i + 2 < tk->n ? tk->tok[i + 2] : "";
        if (!strcmp(a, "CPU") && !strcmp(b, "Affinity")) {
            s->ex[s->nex++] = EX_CPU;
            i += 2;
        } else if (!strcmp(a, "NUMA") && !strcmp(b, "Affinity")) {
            s->ex[s->nex++] = EX_NUMA;
            i += 2;
        } else if (!strcmp(a, "GPU") && !strcmp(b, "NUMA") && !strcmp(c, "ID")) {
            s->ex[s->nex++] = EX_GPUNUMA;
            i += 3;
        } else {
            return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: unknown column '%s'", s->fname,
                              lineno, a);
        }
        if (s->nex == 3 && i < tk->n)
            return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: unknown column '%s'", s->fname,
                              lineno, tk->tok[i]);
    }
    return 0;
}

static int col_of(const struct smi *s, const char *label)
{
    for (int k = 0; k < s->ncols; k++)
        if (!strcmp(s->label[k], label))
            return k;
    return -1;
}

/* One GPU or NIC per column, numbered as its label says (GPU3 is GPU 3, NIC12 is NIC 12);
 * columns named by device (older layouts: mlx5_0) keep their column order. */
static void make_endpoints(struct smi *s)
{
    for (int k = 0; k < s->ncols; k++) {
        long num = -1;
        s->is_gpu[k] = !strncmp(s->label[k], "GPU", 3);
        int named = !s->is_gpu[k] && strncmp(s->label[k], "NIC", 3) != 0;
        if (!named && ct_parse_long(s->label[k] + 3, 10, &num) < 0)
            num = -1;
        if (s->is_gpu[k]) {
            s->ep[k] = ct_topo_add_gpu(s->t, NULL);
            s->t->gpu[s->ep[k]].index = (int)num;
        } else {
            s->ep[k] = ct_topo_add_nic(s->t, named ? s->label[k] : NULL, 1, NULL);
            s->t->nic[s->ep[k]].index = (int)num;
        }
    }
}

static void set_extras(struct smi *s, int k, const struct toks *tk, int first, int lineno)
{
    struct ct_topo *t = s->t;
    struct ct_gpu *g = &t->gpu[s->ep[k]];
    for (int e = 0; e < s->nex && first + e < tk->n; e++) {
        const char *v = tk->tok[first + e];
        long n;
        if (s->ex[e] == EX_CPU && strcmp(v, "N/A") && ct_cpulist_count(v) > 0)
            ct_str_set(&g->cpus, v);
        else if (s->ex[e] == EX_NUMA && ct_parse_long(v, 10, &n) == 0 && n >= 0 && n <= 65535)
            g->numa = (int)n;
    }
    if (tk->n - first < s->nex)
        ct_topo_note(t, "nvidia-smi '%s': line %d: row '%s' lacks %d of the affinity columns",
                     s->fname, lineno, s->label[k], s->nex - (tk->n - first));
    if (g->numa >= 0 && ct_topo_find_numa(t, g->numa) < 0)
        ct_topo_add_numa(t, g->numa, g->cpus ? g->cpus : "");
}

static int parse_row(struct smi *s, const struct toks *tk, int lineno, enum ct_path *cls, int *nv,
                     int *seen)
{
    int k = col_of(s, tk->tok[0]);
    if (k < 0)
        return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: row '%s' is not a column", s->fname,
                          lineno, tk->tok[0]);
    if (seen[k]++)
        return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: row '%s' appears twice", s->fname,
                          lineno, tk->tok[0]);
    for (int j = 0; j < s->ncols; j++) {
        if (1 + j >= tk->n)
            return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: row '%s' has %d of %d columns",
                              s->fname, lineno, tk->tok[0], tk->n - 1, s->ncols);
        const char *v = tk->tok[1 + j];
        if (ct_path_parse(v, &cls[k * s->ncols + j], &nv[k * s->ncols + j]) < 0)
            return ct_err_set(s->err, CT_EINVAL,
                              "'%s': line %d: row '%s' column %s is '%s', expected X, NV#, PIX, "
                              "PXB, PHB, NODE or SYS (missing column?)",
                              s->fname, lineno, tk->tok[0], s->label[j], v);
    }
    if (cls[k * s->ncols + k] != CT_PATH_X)
        return ct_err_set(s->err, CT_EINVAL, "'%s': line %d: row '%s' is not X on the diagonal",
                          s->fname, lineno, tk->tok[0]);
    if (s->is_gpu[k])
        set_extras(s, k, tk, 1 + s->ncols, lineno);
    else if (tk->n > 1 + s->ncols)
        ct_topo_note(s->t, "nvidia-smi '%s': line %d: extra values after row '%s'", s->fname,
                     lineno, tk->tok[0]);
    return 0;
}

/* NV# between every pair of GPUs, same count, more links than a GPU has (18): that is an
 * NVSwitch fabric, not a mesh; model it as links to one switch so per-GPU totals stay right. */
static int switched(const struct smi *s, const enum ct_path *cls, const int *nv)
{
    int n = s->ncols, count = 0, gpus = 0;
    for (int i = 0; i < n; i++)
        gpus += s->is_gpu[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if (i == j || !s->is_gpu[i] || !s->is_gpu[j])
                continue;
            if (cls[i * n + j] != CT_PATH_NV || (count && nv[i * n + j] != count))
                return 0;
            count = nv[i * n + j];
        }
    return gpus >= 3 && count * (gpus - 1) > 18 ? count : 0;
}

static void store_pairs(struct smi *s, const enum ct_path *cls, const int *nv)
{
    int n = s->ncols, sw = switched(s, cls, nv);
    if (sw) {
        int k = ct_topo_add_nvswitch(s->t, "nvswitch");
        for (int i = 0; i < n; i++)
            if (s->is_gpu[i])
                ct_topo_add_nvlink(s->t, s->ep[i], CT_END_NVSWITCH, k, sw);
        ct_topo_note(s->t,
                     "nvidia-smi '%s': NV%d between every GPU pair: modelled as an NVSwitch "
                     "fabric (%d links per GPU)",
                     s->fname, sw, sw);
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            enum ct_path p = cls[i * n + j];
            if (p != cls[j * n + i] || nv[i * n + j] != nv[j * n + i])
                ct_topo_note(s->t, "nvidia-smi '%s': matrix is not symmetric at %s/%s", s->fname,
                             s->label[i], s->label[j]);
            if (p == CT_PATH_NV && s->is_gpu[i] && s->is_gpu[j] && !sw)
                ct_topo_add_nvlink(s->t, s->ep[i], CT_END_GPU, s->ep[j], nv[i * n + j]);
            else if (p != CT_PATH_NV)
                ct_topo_add_hint(s->t, s->is_gpu[i] ? CT_EP_GPU : CT_EP_NIC, s->ep[i],
                                 s->is_gpu[j] ? CT_EP_GPU : CT_EP_NIC, s->ep[j], p);
        }
}

/* "  NIC0: mlx5_0" lines after "NIC Legend:"; our own view may write "NIC0: BUSID (EFA)". */
static void legend_entry(struct smi *s, int k, const struct toks *tk)
{
    struct ct_nic *n = &s->t->nic[s->ep[k]];
    char bus[CT_BUSID_LEN];
    if (ct_busid_canon(tk->tok[1], bus) == 0)
        ct_strlcpy(n->busid, bus, sizeof n->busid);
    else
        ct_strlcpy(n->dev, tk->tok[1], sizeof n->dev);
    static const enum ct_nic_kind kinds[] = {CT_NIC_IB, CT_NIC_ROCE, CT_NIC_EFA};
    for (size_t i = 0; tk->n == 3 && i < sizeof kinds / sizeof kinds[0]; i++) {
        char want[16];
        snprintf(want, sizeof want, "(%s)", ct_nic_kind_name(kinds[i]));
        if (!strcmp(tk->tok[2], want))
            n->kind = kinds[i];
    }
}

static void parse_legend(struct smi *s, const struct line *ln, int nl, int from)
{
    int in = 0;
    for (int i = from; i < nl; i++) {
        struct toks tk;
        tokenize(&ln[i], &tk);
        if (tk.n >= 2 && !strcmp(tk.tok[0], "NIC") && !strncmp(tk.tok[1], "Legend", 6)) {
            in = 1;
            continue;
        }
        if (!in || tk.n < 2 || tk.n > 3)
            continue;
        size_t l = strlen(tk.tok[0]);
        if (l < 2 || tk.tok[0][l - 1] != ':')
            continue;
        tk.tok[0][l - 1] = 0;
        int k = col_of(s, tk.tok[0]);
        if (k >= 0 && !s->is_gpu[k])
            legend_entry(s, k, &tk);
    }
}

static int split_lines(const char *buf, size_t len, struct line **out)
{
    int n = 0, cap = 64, no = 1;
    struct line *l = ct_xmalloc((size_t)cap * sizeof *l);
    for (size_t i = 0; i <= len;) {
        size_t j = i;
        while (j < len && buf[j] != '\n')
            j++;
        if (n == cap)
            l = ct_xrealloc(l, (size_t)(cap *= 2) * sizeof *l);
        l[n++] = (struct line){buf + i, j - i, no++};
        i = j + 1;
    }
    *out = l;
    return n;
}

static int find_header(const struct line *ln, int nl)
{
    for (int i = 0; i < nl; i++) {
        struct toks tk;
        tokenize(&ln[i], &tk);
        if (tk.n >= 2 && !strcmp(tk.tok[0], "GPU0") &&
            (is_label(tk.tok[1]) || !strcmp(tk.tok[1], "CPU")))
            return i;
    }
    return -1;
}

static int parse_matrix(struct smi *s, const struct line *ln, int nl, int h)
{
    struct toks tk;
    tokenize(&ln[h], &tk);
    CT_TRY(parse_header(s, &tk, ln[h].no));
    int n = s->ncols, rc = 0, i = h + 1;
    enum ct_path *cls = ct_xcalloc((size_t)(n * n), sizeof *cls);
    int *nv = ct_xcalloc((size_t)(n * n), sizeof *nv), *seen = ct_xcalloc((size_t)n, sizeof *seen);
    make_endpoints(s);
    for (; i < nl && !rc; i++) {
        tokenize(&ln[i], &tk);
        if (!tk.n || !is_label(tk.tok[0]))
            break;
        rc = parse_row(s, &tk, ln[i].no, cls, nv, seen);
    }
    for (int k = 0; k < n && !rc; k++)
        if (!seen[k])
            rc = ct_err_set(s->err, CT_EINVAL,
                            "'%s': no row for column '%s' (matrix ends at "
                            "line %d)",
                            s->fname, s->label[k], i < nl ? ln[i].no : ln[nl - 1].no);
    if (!rc) {
        store_pairs(s, cls, nv);
        parse_legend(s, ln, nl, i);
    }
    free(cls);
    free(nv);
    free(seen);
    return rc;
}

/* buf without terminal escapes (ESC [ parameters final): nvidia-smi underlines the matrix's
 * header line (ESC[4m ... ESC[0m) also when its output goes to a file, so a capture made
 * with `nvidia-smi topo -m > topo.txt` has them. Lines and their numbers are kept. */
static char *strip_csi(const char *buf, size_t len, size_t *out_len)
{
    char *o = ct_xmalloc(len + 1);
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (buf[i] == '\x1b' && i + 1 < len && buf[i + 1] == '[') {
            size_t j = i + 2;
            while (j < len && buf[j] >= 0x20 && buf[j] <= 0x3f)
                j++;
            if (j < len && buf[j] >= 0x40 && buf[j] <= 0x7e) {
                i = j;
                continue;
            }
        }
        o[n++] = buf[i];
    }
    o[n] = 0;
    *out_len = n;
    return o;
}

int ct_smi_scan(struct ct_topo *t, const char *raw, size_t raw_len, const char *fname,
                struct ct_err *err)
{
    if (memchr(raw, 0, raw_len))
        return ct_err_set(err, CT_EINVAL, "'%s': NUL byte in text", fname);
    size_t len;
    char *buf = strip_csi(raw, raw_len, &len);
    struct line *ln;
    int nl = split_lines(buf, len, &ln);
    int h = find_header(ln, nl);
    if (h < 0) {
        free(ln);
        free(buf);
        return 1;
    }
    struct smi s = {.t = t, .fname = fname, .err = err};
    int rc = parse_matrix(&s, ln, nl, h);
    for (int k = 0; k < s.ncols; k++)
        free(s.label[k]);
    free(ln);
    free(buf);
    if (!rc) {
        int ngpu = 0;
        for (int k = 0; k < s.ncols; k++)
            ngpu += s.is_gpu[k];
        if (!ngpu)
            ct_topo_note(t, "nvidia-smi '%s': matrix has no GPU column", fname);
        if (t->n_nvlink)
            ct_topo_note(t,
                         "nvidia-smi '%s': PCIe paths between NVLink-connected GPUs are not "
                         "in the text",
                         fname);
    }
    return rc;
}

int ct_imp_smi(struct ct_topo *t, const char *buf, size_t len, const char *fname,
               struct ct_err *err)
{
    int rc = ct_smi_scan(t, buf, len, fname, err);
    if (rc == 1)
        return ct_err_set(err, CT_EINVAL,
                          "'%s': no `nvidia-smi topo -m` matrix found (a line "
                          "starting with GPU0 followed by column names)",
                          fname);
    return rc;
}
