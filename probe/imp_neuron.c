/* SPDX-License-Identifier: MIT */
/* Importer for `neuron-ls` output: the text tables (plain, --topology, several tables merged by
 * device number) and the JSON of `neuron-ls -j` (an array, or {"neuron_devices": [...]}). */
#include "probe_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#ifdef HAVE_JANSSON
#include <jansson.h>
#endif

#define NCOL 16

enum col { C_DEV, C_CORES, C_COREIDS, C_MEM, C_CONN, C_BDF, C_CPU, C_NUMA, C_EAST, C_WEST, C_N };

static const struct {
    const char *name;
    enum col col;
} col_names[] = {{"NEURON DEVICE", C_DEV},  {"LOGICAL ID", C_DEV},
                 {"NEURON CORES", C_CORES}, {"NEURON CORE IDS", C_COREIDS},
                 {"NEURON MEMORY", C_MEM},  {"CONNECTED DEVICES", C_CONN},
                 {"PCI BDF", C_BDF},        {"CPU AFFINITY", C_CPU},
                 {"NUMA NODE", C_NUMA},     {"EAST", C_EAST},
                 {"WEST", C_WEST}};

struct nls {
    struct ct_topo *t;
    const char *fname;
    struct ct_err *err;
    char model[32];
    char head[NCOL][64]; /* column titles being assembled from the header rows */
    int ncol;
    int role[NCOL];
    int tables; /* tables with a device column */
};

/* Split "| a | b |" into trimmed cells (in place); returns the count or -1. */
static int split_cells(char *s, char **cell)
{
    int n = 0;
    char *p = strchr(s, '|');
    if (!p)
        return -1;
    for (p++; *p;) {
        char *q = strchr(p, '|');
        if (!q)
            break;
        *q = 0;
        if (n == NCOL)
            return -1;
        cell[n++] = ct_str_trim(p);
        p = q + 1;
    }
    return n;
}

static int bad(struct nls *c, int line, const char *what, const char *v)
{
    return ct_err_set(c->err, CT_EINVAL, "'%s': line %d: %s '%s' is not valid", c->fname, line,
                      what, v);
}

static int parse_nbrs(struct nls *c, struct ct_accel *a, const char *v, int line)
{
    int tmp[64], n = 0;
    char buf[256];
    ct_strlcpy(buf, v, sizeof buf);
    char *save = NULL;
    for (char *p = strtok_r(buf, ", ", &save); p; p = strtok_r(NULL, ", ", &save)) {
        long d;
        if (ct_parse_long(p, 10, &d) < 0 || d < 0 || d > 4096 || n == 64)
            return bad(c, line, "CONNECTED DEVICES", v);
        tmp[n++] = (int)d;
    }
    free(a->nbrs);
    a->nbrs = n ? ct_xmalloc((size_t)n * sizeof *a->nbrs) : NULL;
    if (n)
        memcpy(a->nbrs, tmp, (size_t)n * sizeof *tmp);
    a->n_nbrs = (size_t)n;
    return 0;
}

static int set_field(struct nls *c, struct ct_accel *a, enum col col, const char *v, int line)
{
    long n;
    char *end;
    switch (col) {
    case C_CORES:
        if (ct_parse_long(v, 10, &n) < 0 || n < 0 || n > 1000000)
            return bad(c, line, "NEURON CORES", v);
        a->cores = (int)n;
        return 0;
    case C_COREIDS: ct_strlcpy(a->core_ids, v, sizeof a->core_ids); return 0;
    case C_MEM: {
        double gb = strtod(v, &end);
        while (*end == ' ')
            end++;
        if (end == v || !(gb >= 0 && gb < 1e9) || (strcmp(end, "GB") && strcmp(end, "MB")))
            return bad(c, line, "NEURON MEMORY", v);
        a->mem_gb = strcmp(end, "MB") ? gb : gb / 1024;
        return 0;
    }
    case C_CONN: return parse_nbrs(c, a, v, line);
    case C_BDF:
        if (ct_busid_canon(v, a->busid) < 0)
            return bad(c, line, "PCI BDF", v);
        return 0;
    case C_CPU:
        if (ct_cpulist_count(v) < 0)
            return bad(c, line, "CPU AFFINITY", v);
        ct_str_set(&a->cpus, v);
        return 0;
    case C_NUMA:
        if (ct_parse_long(v, 10, &n) < 0 || n < 0 || n > 65535)
            return bad(c, line, "NUMA NODE", v);
        a->numa = (int)n;
        return 0;
    default: return 0;
    }
}

static int data_row(struct nls *c, char **cell, int n, int line)
{
    if (n != c->ncol)
        return ct_err_set(c->err, CT_EINVAL,
                          "'%s': line %d: row has %d cells, the table has %d "
                          "columns",
                          c->fname, line, n, c->ncol);
    int dev = -1;
    for (int k = 0; k < n; k++)
        if (c->role[k] == C_DEV)
            dev = k;
    if (dev < 0 || !cell[dev][0]) /* another table, or a process continuation row */
        return 0;
    long d;
    if (ct_parse_long(cell[dev], 10, &d) < 0 || d < 0 || d > 4096)
        return bad(c, line, "NEURON DEVICE", cell[dev]);
    int i = ct_topo_find_accel(c->t, (int)d);
    if (i < 0)
        i = ct_topo_add_accel(c->t, (int)d);
    struct ct_accel *a = &c->t->accel[i];
    ct_strlcpy(a->model, c->model, sizeof a->model);
    for (int k = 0; k < n; k++)
        if (cell[k][0] && c->role[k] != C_DEV && c->role[k] != C_EAST && c->role[k] != C_WEST)
            CT_TRY(set_field(c, a, (enum col)c->role[k], cell[k], line));
    return 0;
}

static void header_row(struct nls *c, char **cell, int n)
{
    if (!c->ncol)
        c->ncol = n;
    for (int k = 0; k < n && k < c->ncol; k++) {
        if (!cell[k][0])
            continue;
        size_t l = strlen(c->head[k]);
        snprintf(c->head[k] + l, sizeof c->head[k] - l, "%s%s", l ? " " : "", cell[k]);
    }
}

static void finish_header(struct nls *c)
{
    int has_dev = 0;
    for (int k = 0; k < c->ncol; k++) {
        c->role[k] = C_N;
        for (size_t j = 0; j < sizeof col_names / sizeof col_names[0]; j++)
            if (!strcmp(c->head[k], col_names[j].name))
                c->role[k] = col_names[j].col;
        has_dev |= c->role[k] == C_DEV;
    }
    c->tables += has_dev;
}

static void instance_line(struct nls *c, const char *s)
{
    static const struct {
        const char *prefix, *model;
    } m[] = {{"trn1", "Trainium"},
             {"trn2", "Trainium2"},
             {"trn3", "Trainium3"},
             {"inf1", "Inferentia"},
             {"inf2", "Inferentia2"}};
    const char *v = s + strlen("instance-type:");
    while (*v == ' ')
        v++;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strncmp(v, m[i].prefix, strlen(m[i].prefix)))
            ct_strlcpy(c->model, m[i].model, sizeof c->model);
    ct_topo_note(c->t, "neuron-ls '%s': instance type %s", c->fname, v);
}

/* One line of text; state: 0 outside a table, 1 in its header rows, 2 in its data rows. */
static int text_line(struct nls *c, char *s, int line, int *state)
{
    char *cell[NCOL + 1];
    ct_str_trim(s);
    if (!strncmp(s, "instance-type:", 14)) {
        instance_line(c, s);
        return 0;
    }
    if (!strncmp(s, "+-", 2)) {
        if (*state == 0) {
            memset(c->head, 0, sizeof c->head);
            c->ncol = 0;
        } else if (*state == 1) {
            finish_header(c);
        }
        *state = *state == 0 ? 1 : *state == 1 ? 2 : 0;
        return 0;
    }
    if (s[0] != '|') {
        *state = 0;
        return 0;
    }
    int n = split_cells(s, cell);
    if (n < 0)
        return ct_err_set(c->err, CT_EINVAL, "'%s': line %d: malformed table row", c->fname, line);
    if (*state == 1)
        header_row(c, cell, n);
    else if (*state == 2)
        return data_row(c, cell, n, line);
    return 0;
}

static int parse_text(struct nls *c, const char *buf, size_t len)
{
    int state = 0, line = 1;
    for (size_t i = 0; i < len; line++) {
        size_t j = i;
        while (j < len && buf[j] != '\n')
            j++;
        char s[1024];
        size_t n = j - i < sizeof s - 1 ? j - i : sizeof s - 1;
        memcpy(s, buf + i, n);
        s[n] = 0;
        CT_TRY(text_line(c, s, line, &state));
        i = j + 1;
    }
    return 0;
}

#ifdef HAVE_JANSSON
static int json_dev(struct nls *c, json_t *d, size_t idx)
{
    json_t *v = json_object_get(d, "neuron_device");
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 4096)
        return ct_err_set(c->err, CT_EINVAL,
                          "'%s': device %zu: neuron_device is missing or not "
                          "a number",
                          c->fname, idx);
    int i = ct_topo_find_accel(c->t, (int)json_integer_value(v));
    if (i < 0)
        i = ct_topo_add_accel(c->t, (int)json_integer_value(v));
    struct ct_accel *a = &c->t->accel[i];
#define IN(x, lo, hi)                                                                              \
    (json_is_integer(x) && json_integer_value(x) >= (lo) && json_integer_value(x) <= (hi))
    if (IN(v = json_object_get(d, "nc_count"), 0, 1000000))
        a->cores = (int)json_integer_value(v);
    if (IN(v = json_object_get(d, "memory_size"), 0, (json_int_t)1 << 50))
        a->mem_gb = (double)json_integer_value(v) / (1024.0 * 1024 * 1024);
    if (IN(v = json_object_get(d, "numa_node"), 0, 65535))
        a->numa = (int)json_integer_value(v);
    if (json_is_string(v = json_object_get(d, "bdf")) &&
        ct_busid_canon(json_string_value(v), a->busid) < 0)
        return ct_err_set(c->err, CT_EINVAL, "'%s': device %zu: bdf '%s' is not valid", c->fname,
                          idx, json_string_value(v));
    json_t *conn = json_object_get(d, "connected_to");
    if (conn && !json_is_array(conn) && !json_is_null(conn))
        return ct_err_set(c->err, CT_EINVAL, "'%s': device %zu: connected_to is not an array",
                          c->fname, idx);
    size_t k, n = json_array_size(conn);
    free(a->nbrs);
    a->n_nbrs = 0;
    a->nbrs = n ? ct_xmalloc(n * sizeof *a->nbrs) : NULL;
    json_array_foreach(conn, k, v)
    {
        if (!IN(v, 0, 4096))
            return ct_err_set(c->err, CT_EINVAL,
                              "'%s': device %zu: connected_to[%zu] is not a "
                              "device number",
                              c->fname, idx, k);
        a->nbrs[a->n_nbrs++] = (int)json_integer_value(v);
    }
    ct_strlcpy(a->model, c->model, sizeof a->model);
    return 0;
#undef IN
}

static int parse_json(struct nls *c, const char *buf, size_t len)
{
    json_error_t je;
    json_t *root = json_loadb(buf, len, 0, &je);
    if (!root)
        return ct_err_set(c->err, CT_EINVAL, "'%s': line %d: %s", c->fname, je.line, je.text);
    json_t *arr = json_is_array(root) ? root : json_object_get(root, "neuron_devices");
    int rc = 0;
    if (!json_is_array(arr))
        rc = ct_err_set(c->err, CT_EINVAL, "'%s': expected an array of devices", c->fname);
    size_t i;
    json_t *d;
    json_array_foreach(arr, i, d)
    {
        if (rc)
            break;
        json_t *it = json_object_get(d, "instance_type");
        if (json_is_string(it)) {
            char s[96];
            snprintf(s, sizeof s, "instance-type: %s", json_string_value(it));
            instance_line(c, s);
        }
        rc = json_is_object(d) ? json_dev(c, d, i)
                               : ct_err_set(c->err, CT_EINVAL,
                                            "'%s': device %zu is not an "
                                            "object",
                                            c->fname, i);
    }
    json_decref(root);
    return rc;
}
#else
static int parse_json(struct nls *c, const char *buf, size_t len)
{
    return ct_err_set(c->err, CT_EUNSUPP, "'%s': JSON input needs jansson (not built)", c->fname);
}
#endif

int ct_imp_neuron(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                  struct ct_err *err)
{
    struct nls c = {.t = t, .fname = fname, .err = err};
    if (memchr(buf, 0, len))
        return ct_err_set(err, CT_EINVAL, "'%s': NUL byte in text", fname);
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i]))
        i++;
    int json = i < len && (buf[i] == '[' || buf[i] == '{');
    CT_TRY(json ? parse_json(&c, buf, len) : parse_text(&c, buf, len));
    if (!t->n_accel)
        return ct_err_set(err, CT_EINVAL, "'%s': no neuron-ls device table found", fname);
    for (size_t k = 0; k < t->n_accel; k++) { /* NUMA nodes as the device affinity shows them */
        const struct ct_accel *a = &t->accel[k];
        if (a->numa >= 0 && ct_topo_find_numa(t, a->numa) < 0)
            ct_topo_add_numa(t, a->numa, a->cpus ? a->cpus : "");
    }
    for (size_t k = 0; k < t->n_accel; k++)
        for (size_t j = 0; j < t->accel[k].n_nbrs; j++)
            if (ct_topo_find_accel(t, t->accel[k].nbrs[j]) < 0)
                ct_topo_note(t,
                             "neuron-ls '%s': device %d lists neighbour %d, which is not in "
                             "the file",
                             fname, t->accel[k].index, t->accel[k].nbrs[j]);
    return 0;
}
