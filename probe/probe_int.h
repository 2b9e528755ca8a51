/* SPDX-License-Identifier: MIT */
/* Internals shared by probe/ files only: XML tokenizer, file and sysfs helpers, the source,
 * importer and view entry points that the tables in sources.c / views.c list. */
#ifndef CT_PROBE_INT_H
#define CT_PROBE_INT_H

#include <stddef.h>

#include "../lib/file.h"
#include "topo.h"

/* ---- small string helpers (topo.c) ---- */
char *ct_str_trim(char *s);                   /* trims in place, returns s */
void ct_str_set(char **dst, const char *src); /* free *dst, store a copy (NULL ok) */
void ct_strlcpy(char *dst, const char *src, size_t size);
int ct_parse_long(const char *s, int base, long *out); /* whole string, trimmed; -1 garbage */
/* "0 1 2 3 8" (numactl) -> "0-3,8" (caller frees); NULL on garbage. */
char *ct_cpus_from_words(const char *s);

/* out = a "/" b; an empty string when it does not fit (opening it then fails). Returns out. */
const char *ct_path_cat(char *out, size_t len, const char *a, const char *b);

/* ---- whole files ---- */
/* Read a file into a NUL-terminated buffer (caller frees). CT_EIO + message naming path. */
int ct_read_file(const char *path, char **buf, size_t *len, struct ct_err *err);

/* ---- sysfs (src_sysfs.c, sysfs_pci.c) ---- */
/* Read root + rel into buf, newline stripped. -1 when missing or unreadable. */
int ct_sysfs_read(const char *root, const char *rel, char *buf, size_t len);
/* Entries of the directory root/rel (no dot files) in natural order ("mlx5_2" < "mlx5_10");
 * *out is NULL when it cannot be read. Free with ct_dir_names_free. */
size_t ct_sysfs_list(const char *root, const char *rel, char ***out);
/* Resolve a symlink under root (relative or absolute-from-root target) into a path relative to
 * root ("sys/devices/pci0000:80/..."); -1 when the link or its target is missing. */
int ct_sysfs_resolve(const char *root, const char *rel, char *out, size_t len);
/* Add (or find) the PCI node for a sysfs device path "sys/devices/pci0000:80/0000:80:02.2/
 * 0000:82:00.0[/...]" and every bridge above it; returns the device's pci index or -1. */
int ct_sysfs_pci_chain(struct ct_topo *t, const char *root, const char *devpath);
int ct_sysfs_cpus(struct ct_topo *t, const char *root);
int ct_sysfs_pci_scan(struct ct_topo *t, const char *root);
/* Device class helpers shared by PCI sources. */
int ct_class_is_gpu(uint32_t class_code, uint16_t vendor);
int ct_class_is_nvswitch(uint32_t class_code, uint16_t vendor);

/* ---- XML tokenizer (xml.c) ---- */
struct ct_xml_attr {
    char *name, *value;
};
struct ct_xml {
    char *name; /* NULL for the document node */
    struct ct_xml_attr *attr;
    size_t n_attr;
    struct ct_xml **kid;
    size_t n_kid;
    int line;
};
/* Parse a document (comments, declarations, CDATA and text are skipped). Returns the document
 * node whose single child is the root element; NULL + err "line N: ..." on malformed input. */
struct ct_xml *ct_xml_parse(const char *buf, size_t len, struct ct_err *err);
void ct_xml_free(struct ct_xml *x);
const char *ct_xml_attr(const struct ct_xml *x, const char *name);

/* ---- sources ---- */
int ct_src_hwloc(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err);
int ct_src_sysfs(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err);
int ct_src_ibverbs(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err);
int ct_src_nvml(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err);
int ct_src_neuron(struct ct_topo *t, const struct ct_probe_cfg *cfg, struct ct_err *err);

/* ---- importers ---- */
int ct_imp_hwloc_xml(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                     struct ct_err *err);
int ct_imp_nccl_xml(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                    struct ct_err *err);
int ct_imp_smi(struct ct_topo *t, const char *buf, size_t len, const char *fname,
               struct ct_err *err);
int ct_imp_neuron(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                  struct ct_err *err);
int ct_imp_report(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                  struct ct_err *err);
int ct_imp_json(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                struct ct_err *err);
/* nvidia-smi matrix scan used by the report importer: 0 parsed, 1 not present, < 0 error. */
int ct_smi_scan(struct ct_topo *t, const char *buf, size_t len, const char *fname,
                struct ct_err *err);
/* Move everything from src into dst (dst must be empty); src is freed. */
void ct_topo_move(struct ct_topo *dst, struct ct_topo *src);

/* ---- JSON names (topo_json.c) ---- */
#define CT_TOPO_SCHEMA "colltune-topo/1"
extern const char *const ct_json_pci_kinds[4];
extern const char *const ct_json_nic_kinds[5];
extern const char *const ct_json_end_kinds[3];
extern const char *const ct_json_ep_kinds[2];

/* ---- views ---- */
int ct_view_summary(const struct ct_topo *t, FILE *out, struct ct_err *err);
int ct_view_matrix(const struct ct_topo *t, FILE *out, struct ct_err *err);
int ct_view_nics(const struct ct_topo *t, FILE *out, struct ct_err *err);
int ct_view_torus(const struct ct_topo *t, FILE *out, struct ct_err *err);
int ct_view_rails(const struct ct_topo *t, FILE *out, struct ct_err *err);
int ct_view_ceilings(const struct ct_topo *t, FILE *out, struct ct_err *err);
int ct_view_warnings(const struct ct_topo *t, FILE *out, struct ct_err *err);

/* Short label of a matrix endpoint ("GPU3", "NIC0"). */
const char *ct_matrix_label(const struct ct_matrix *m, size_t i, char *buf, size_t len);
/* Per-link NVLink GB/s guessed from a GPU model name or sm (probe/nvlink_gen.csv); 0 unknown. */
double ct_nvlink_gbps_guess(const char *model, int sm);
/* "NVLink4, inferred from NV18", "NVLink3 by the GPU model", "NVLink4, a guess from sm 90", ""
 * (no generation) for a ct_gpu's nvlink_gen/nvlink_basis or the topology's NVSwitch pair. */
const char *ct_nvlink_basis(const char *gen, const char *basis, char *buf, size_t len);

#endif
