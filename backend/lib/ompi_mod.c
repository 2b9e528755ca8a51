/* SPDX-License-Identifier: MIT */
/*
 * Open MPI's part of its engine module (build/ct-lib-ompi.so). The algorithms are the enum
 * values of the MPI_T control variable coll_tuned_<coll>_algorithm (value 0, "ignore", is
 * Open MPI's own decision: the row "ompi:default"). A point runs on a communicator
 * duplicated after writing coll_tuned_<coll>_algorithm and _segmentsize: coll/tuned copies
 * the forced values when it enables its module on a new communicator (Open MPI 4.1), so the
 * duplicate keeps them; both are written back at once to what the default row runs: 0, Open
 * MPI's own decision, or what a forcing variable of the environment's that run --keep-rules
 * kept says (a parameter file's forcing is not the library's defaults). Needs
 * coll_tuned_use_dynamic_rules=1 at MPI_Init (set here unless the environment says): with 0
 * (the environment's; verify's defaults side) coll/tuned ignores every forced value, so a
 * forced row is refused then, never measured under a name it does not run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mod.h"

struct coll_vars {
    int alg, seg;   /* control variable indices, -1 when absent */
    int alg0, seg0; /* their values at start-up where the environment forces them, else 0 */
    struct ct_mod_row rows[CT_MOD_ROWS];
    int n;
};

struct ct_mod_lib {
    struct coll_vars c[CT_COLL_COUNT];
    bool dynamic; /* coll_tuned_use_dynamic_rules: forced values apply */
};

/* Open MPI's names of colltune's collectives. */
static const char *const ompi_coll[CT_COLL_COUNT] = {"allreduce", "allgather", "reduce_scatter",
                                                     "alltoall"};

int ct_mod_preinit(struct ct_err *err)
{
    (void)err;
    setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
    return 0;
}

const char *ct_mod_lib_title(void)
{
    return "Open MPI";
}

static int read_rows(struct coll_vars *v, enum ct_coll coll, struct ct_err *err)
{
    char name[256], desc[1024], ename[256];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope, items = 0;
    MPI_Datatype dt;
    MPI_T_enum en;
    if (MPI_T_cvar_get_info(v->alg, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) !=
            MPI_SUCCESS ||
        en == MPI_T_ENUM_NULL)
        return ct_err_set(err, CT_EUNSUPP, "Open MPI: coll_tuned_%s_algorithm has no enum",
                          ompi_coll[coll]);
    int el = sizeof ename;
    MPI_T_enum_get_info(en, &items, ename, &el);
    for (int k = 0; k < items && v->n < CT_MOD_ROWS; k++) {
        int val;
        char item[128];
        int il = sizeof item;
        /* an enum value the variable refuses is no candidate */
        if (MPI_T_enum_get_item(en, k, &val, item, &il) != MPI_SUCCESS ||
            ct_mod_cvar_write_int(v->alg, val, NULL) < 0)
            continue;
        struct ct_mod_row *r = &v->rows[v->n++];
        r->id = val;
        snprintf(r->name, sizeof r->name, "ompi:%.50s", val ? item : "default");
        snprintf(r->summary, sizeof r->summary, "Open MPI coll/tuned %s algorithm %d (%.80s)",
                 ompi_coll[coll], val, item);
        r->a.name = r->name;
        r->a.summary = r->summary;
        r->a.colls = CT_COLL_BIT(coll);
        r->a.lib_id = val;
        /* which algorithms read the segment size is not in MPI_T: the segmented ones do */
        r->a.params = val && v->seg >= 0 && strstr(item, "segment") ? CT_PBIT(CT_P_CHUNK) : 0;
    }
    ct_mod_cvar_write_int(v->alg, v->alg0, NULL);
    return 0;
}

/* classic rules-file COLLIDs of colltune's collectives (coll_base_functions.h) */
static const int file_coll_id[CT_COLL_COUNT] = {2, 0, 12, 3};

/* The largest algorithm id coll accepts (its enum's largest value), -1: not ours. */
static int max_alg(const struct ct_mod_lib *l, int collid)
{
    int m = -1;
    for (int c = 0; c < CT_COLL_COUNT; c++)
        for (int k = 0; file_coll_id[c] == collid && k < l->c[c].n; k++)
            m = l->c[c].rows[k].id > m ? l->c[c].rows[k].id : m;
    return m;
}

/* Collective ids of a classic rules file: 0..COLLCOUNT-1 (coll_base_functions.h, 4.1 and 5.0:
 * 22); an id at or past it makes Open MPI drop the whole file (its reader's "invalid
 * collective id"), which runs its fixed decision everywhere: measured on 4.1.4, a file forcing
 * AllReduce's basic_linear ran it behind a section of id 21 and not behind one of id 22. */
#define OMPI_COLLCOUNT 22

/* Next number of a classic rules file ('#' to the end of a line is a comment); -1 at the end,
 * -2 on anything else. */
static long next_num(FILE *f)
{
    int ch;
    while ((ch = fgetc(f)) != EOF) {
        if (ch == '#')
            while ((ch = fgetc(f)) != EOF && ch != '\n')
                ;
        else if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
            break;
    }
    if (ch == EOF)
        return -1;
    ungetc(ch, f);
    long v;
    return fscanf(f, "%ld", &v) == 1 && v >= 0 ? v : -2;
}

/*
 * Open MPI 4.1 ignores a rules file it cannot open or parse without a word (its fixed
 * decision then runs): when coll_tuned_dynamic_rules_filename names one, read it as Open MPI
 * would and refuse what Open MPI would ignore, or an algorithm id its enum does not have.
 */
static int check_rules_file(const struct ct_mod_lib *l, struct ct_err *err)
{
    int idx = ct_mod_cvar_find("coll_tuned_dynamic_rules_filename"), count;
    char path[4096] = "";
    MPI_T_cvar_handle h;
    if (idx < 0 || MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS)
        return 0;
    int rc = MPI_T_cvar_read(h, path);
    MPI_T_cvar_handle_free(&h);
    if (rc != MPI_SUCCESS || !path[0])
        return 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return ct_err_sys(err, CT_EUNSUPP,
                          "Open MPI would ignore its rules file '%s' "
                          "(coll_tuned_dynamic_rules_filename)",
                          path);
    long ncoll = next_num(f);
    const char *bad = ncoll < 0 ? "no collective count" : NULL; /* 0: Open MPI reads none */
    char past[256];
    for (long c = 0; !bad && c < ncoll; c++) {
        long id = next_num(f), ncs = next_num(f);
        int top = max_alg(l, (int)id);
        bad = id < 0 || ncs < 1      ? "a collective's id and comm-size count"
              : id >= OMPI_COLLCOUNT ? "a collective id past Open MPI's (0-21)"
                                     : NULL;
        for (long s = 0; !bad && s < ncs; s++) {
            long cs = next_num(f), nms = next_num(f);
            bad = cs < 0 || nms < 1 ? "a comm-size section" : NULL;
            for (long m = 0; !bad && m < nms; m++) {
                long v[4];
                for (int k = 0; k < 4; k++)
                    v[k] = next_num(f);
                bad = v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0 ? "a message-size rule" : NULL;
                if (!bad && top >= 0 && v[1] > top) { /* a file of another release's ids */
                    char ver[MPI_MAX_LIBRARY_VERSION_STRING] = "";
                    int len;
                    MPI_Get_library_version(ver, &len);
                    ver[strcspn(ver, ",\n")] = '\0'; /* "Open MPI v4.1.4" */
                    snprintf(past, sizeof past,
                             "collective %ld's algorithm %ld, which %.80s does not have (its "
                             "last is %d): a file of another release's ids?",
                             id, v[1], ver, top);
                    bad = past;
                }
            }
        }
    }
    if (!bad && next_num(f) != -1)
        bad = "more than the collective count announces";
    fclose(f);
    if (bad)
        return ct_err_set(err, CT_EUNSUPP,
                          "Open MPI would ignore or reject its rules file '%s' "
                          "(coll_tuned_dynamic_rules_filename): %s",
                          path, bad);
    return 0;
}

int ct_mod_lib_open(struct ct_mod_lib **out, struct ct_err *err)
{
    struct ct_mod_lib *l = calloc(1, sizeof *l);
    if (!l)
        return ct_err_set(err, CT_ENOMEM, "no memory");
    char name[128];
    int dyn = 0;
    l->dynamic =
        ct_mod_cvar_read_int(ct_mod_cvar_find("coll_tuned_use_dynamic_rules"), &dyn) == 0 && dyn;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        struct coll_vars *v = &l->c[c];
        snprintf(name, sizeof name, "coll_tuned_%s_algorithm", ompi_coll[c]);
        v->alg = ct_mod_cvar_find(name);
        snprintf(name, sizeof name, "coll_tuned_%s_algorithm_segmentsize", ompi_coll[c]);
        v->seg = ct_mod_cvar_find(name);
        /* only what the environment forces (run --keep-rules kept it; else colltune left it
         * out): a parameter file's forcing is not Open MPI's defaults */
        char envn[160];
        snprintf(envn, sizeof envn, "OMPI_MCA_%s", name);
        if (!getenv(envn) || ct_mod_cvar_read_int(v->seg, &v->seg0) < 0)
            v->seg0 = 0;
        snprintf(envn, sizeof envn, "OMPI_MCA_coll_tuned_%s_algorithm", ompi_coll[c]);
        if (!getenv(envn) || ct_mod_cvar_read_int(v->alg, &v->alg0) < 0)
            v->alg0 = 0;
        if (v->alg >= 0 && read_rows(v, (enum ct_coll)c, err) < 0) {
            free(l);
            return CT_EUNSUPP;
        }
    }
    if (check_rules_file(l, err) < 0) {
        free(l);
        return CT_EUNSUPP;
    }
    *out = l;
    return 0;
}

int ct_mod_lib_agreed(struct ct_mod_lib *l)
{
    /* the same on every rank, a refusal said once. After the rules file's check on every
     * rank: this allreduce runs what a rules file --keep-rules kept names */
    int all = l->dynamic;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    l->dynamic = all;
    return 0;
}

void ct_mod_lib_close(struct ct_mod_lib *l)
{
    free(l);
}

int ct_mod_lib_rows(struct ct_mod_lib *l, enum ct_coll coll, struct ct_mod_row **rows,
                    struct ct_err *err)
{
    if (l->c[coll].alg < 0)
        return ct_err_set(err, CT_EUNSUPP,
                          "Open MPI has no control variable coll_tuned_%s_algorithm "
                          "(coll/tuned not loaded?)",
                          ompi_coll[coll]);
    *rows = l->c[coll].rows;
    return l->c[coll].n;
}

void ct_mod_lib_force(struct ct_mod_lib *lib, bool on)
{
    (void)lib; /* the duplicated communicator keeps the forced values */
    (void)on;
}

int ct_mod_lib_comm(struct ct_mod_lib *l, const struct ct_mod_row *r, const struct ct_job *j,
                    MPI_Comm *out, struct ct_err *err)
{
    const struct coll_vars *v = &l->c[j->coll];
    /* rows that do not segment keep Open MPI's own segment size */
    uint64_t seg = r->a.params & CT_PBIT(CT_P_CHUNK) ? j->params.v[CT_P_CHUNK] : 0;
    if (v->alg < 0)
        return ct_err_set(err, CT_EUNSUPP, "Open MPI: no coll_tuned_%s_algorithm",
                          ompi_coll[j->coll]);
    if (seg > (1u << 30))
        return ct_err_set(err, CT_EUNSUPP, "Open MPI: segment size %llu too large",
                          (unsigned long long)seg);
    if (r->id && !l->dynamic) /* every rank alike (ct_mod_lib_open) */
        return ct_err_set(err, CT_EINVAL,
                          "%s: Open MPI ignores forced algorithms with "
                          "coll_tuned_use_dynamic_rules=0 (set by the environment): it would run "
                          "Open MPI's own choice under that name",
                          r->name);
    /* the default row: 0, or what the environment forces (alg0, seg0) */
    CT_TRY(ct_mod_cvar_write_int(v->alg, r->id ? r->id : v->alg0, err));
    if (v->seg >= 0 && ct_mod_cvar_write_int(v->seg, r->id ? (int)seg : v->seg0, err) < 0) {
        ct_mod_cvar_write_int(v->alg, v->alg0, NULL); /* later communicators: as at start-up */
        return CT_EUNSUPP;
    }
    int rc = MPI_Comm_dup(MPI_COMM_WORLD, out);
    ct_mod_cvar_write_int(v->alg, v->alg0, NULL);
    if (v->seg >= 0)
        ct_mod_cvar_write_int(v->seg, v->seg0, NULL);
    if (rc != MPI_SUCCESS)
        return ct_err_set(err, CT_EIO, "Open MPI: MPI_Comm_dup failed");
    /* a forced algorithm that cannot run the arguments (allgather's two_proc on 4 ranks:
     * MPI_ERR_UNSUPPORTED_OPERATION) is a refusal for the planner, not an abort */
    MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return 0;
}
