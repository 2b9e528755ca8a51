/* SPDX-License-Identifier: MIT */
/*
 * MPICH's part of its engine module (build/ct-lib-mpich.so).
 *
 * The algorithms: MPICH 4.0 has MPIR_CVAR_<COLL>_INTRA_ALGORITHM as an int control variable
 * without an MPI_T enum. Its values are the options its description lists, in that order
 * ("auto - Internal algorithm selection ...", "nb - Force nonblocking algorithm", ...: auto
 * is 0), which is how MPICH's generated mpir_cvars.h numbers them. So the rows are read from
 * that description, not from a list kept here.
 *
 * Reaching them: by default MPICH's device layer (ch4) takes the collective
 * (MPIR_CVAR_DEVICE_COLLECTIVES=percoll with MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE=1) and picks
 * its own composition; the MPIR-level algorithm variable is then not consulted. A forced row
 * therefore turns the device override off for its collective and sets
 * MPIR_CVAR_COLLECTIVE_FALLBACK=error, so that an algorithm that cannot run these arguments
 * (recursive doubling on 3 ranks) fails instead of silently running another. MPICH reads all
 * of these at every call and they are global, so they are written only around the point's
 * measured calls (ct_mod_lib_force): the engine's own collectives on MPI_COMM_WORLD, and the
 * allreduce inside MPI_Comm_dup, keep MPICH's start-up values. The row "mpich:default" is
 * MPICH as shipped; "mpich:auto" is the MPIR level's own selection (its JSON tree), without
 * the device.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mod.h"

struct coll_vars {
    int alg, dev;   /* MPIR_CVAR_<COLL>_INTRA_ALGORITHM, _DEVICE_COLLECTIVE; -1 when absent */
    int alg0, dev0; /* their values at start-up (the environment's, or MPICH's) */
    struct ct_mod_row rows[CT_MOD_ROWS];
    int n;
};

struct ct_mod_lib {
    struct coll_vars c[CT_COLL_COUNT];
    int fallback, fallback0;     /* MPIR_CVAR_COLLECTIVE_FALLBACK and its start-up value */
    const struct coll_vars *cur; /* the prepared point's collective and row */
    int cur_id;
};

/* MPICH's names of colltune's collectives, as in its variables' names */
static const char *const mpich_coll[CT_COLL_COUNT] = {"ALLREDUCE", "ALLGATHER", "REDUCE_SCATTER",
                                                      "ALLTOALL"};

/* What is wrong with a selection tree MPICH 4.0.2 would stop on (NULL: nothing seen): every
 * value is an object, a leaf ("algorithm=...") the empty one; the top one has a key. */
static const char *tree_fault(json_t *o, bool top)
{
    const char *k;
    json_t *v;
    if (!json_is_object(o))
        return top ? "not a JSON object" : "a value that is not an object";
    if (top && !json_object_size(o))
        return "an empty object";
    json_object_foreach(o, k, v)
    {
        const char *bad = tree_fault(v, false);
        if (bad)
            return bad;
    }
    return NULL;
}

/* The collectives MPICH 4.0.2 looks up in its MPIR tree (the top keys of its own
 * maint/tuning/coll/mpir/generic.json): one missing stops every call of it on an assertion
 * (mpir_coll.c: cnt), and MPI_Init on more than one rank (a singleton's trial does not). */
static const char *const mpir_colls[] = {"bcast",
                                         "allreduce",
                                         "allgather",
                                         "allgatherv",
                                         "reduce",
                                         "reduce_scatter",
                                         "reduce_scatter_block",
                                         "gather",
                                         "scatter",
                                         "gatherv",
                                         "scatterv",
                                         "scan",
                                         "exscan",
                                         "barrier",
                                         "alltoall",
                                         "alltoallv",
                                         "alltoallw",
                                         "neighbor_allgather",
                                         "neighbor_allgatherv",
                                         "neighbor_alltoall",
                                         "neighbor_alltoallv",
                                         "neighbor_alltoallw",
                                         "ibarrier",
                                         "iallreduce",
                                         "iallgather",
                                         "iallgatherv",
                                         "ibcast",
                                         "ireduce",
                                         "ireduce_scatter",
                                         "igather",
                                         "iscatter",
                                         "igatherv",
                                         "iscatterv",
                                         "iexscan",
                                         "ialltoall",
                                         "ialltoallv",
                                         "ialltoallw",
                                         "ireduce_scatter_block",
                                         "iscan",
                                         "ineighbor_allgather",
                                         "ineighbor_allgatherv",
                                         "ineighbor_alltoall",
                                         "ineighbor_alltoallv",
                                         "ineighbor_alltoallw"};

/* The first of mpir_colls the MPIR tree t has no "collective=NAME" key of (none where it has
 * "collective=any"), into key; false when it has every one. */
static bool mpir_missing(json_t *t, char *key, size_t len)
{
    if (json_object_get(t, "collective=any"))
        return false;
    for (size_t i = 0; i < sizeof mpir_colls / sizeof mpir_colls[0]; i++) {
        snprintf(key, len, "collective=%s", mpir_colls[i]);
        if (!json_object_get(t, key))
            return true;
    }
    return false;
}

static const char *const files[] = {"COLL_SELECTION_TUNING_JSON_FILE",
                                    "CH4_COLL_SELECTION_TUNING_JSON_FILE",
                                    "CH4_POSIX_COLL_SELECTION_TUNING_JSON_FILE"};
static const char *const prefix[] = {"MPIR_CVAR_", "MPIR_PARAM_", "MPICH_"};

/* Whether the environment entry e ("NAME=value") is named by one of the selection files'
 * variables other than keep (NULL: any of them). */
static bool other_file_var(const char *e, const char *keep)
{
    size_t n = strcspn(e, "=");
    if (keep && strlen(keep) == n && !strncmp(e, keep, n))
        return false;
    for (size_t p = 0; p < sizeof prefix / sizeof prefix[0]; p++) {
        size_t pl = strlen(prefix[p]);
        for (size_t i = 0; pl < n && i < sizeof files / sizeof files[0]; i++)
            if (!strncmp(e, prefix[p], pl) && strlen(files[i]) == n - pl &&
                !strncmp(e + pl, files[i], n - pl))
                return true;
    }
    return false;
}

/*
 * A trial MPI_Init in a child process (ct_err_child_output): MPICH on its own (the launcher's
 * PMI variables taken out: a singleton), with only the selection file keep names (NULL: none).
 * Its exit status, 0 when MPI_Init and MPI_Finalize returned.
 */
static int trial_init(void *keep)
{
    static const char *const launched[] = {"PMI_", "PMI2_", "PMIX_",
                                           "MPI_LOCALNRANKS=", "MPI_LOCALRANKID="};
    size_t n = 0, kept = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 1, sizeof *env); /* this child's environment, those left out */
    if (!env)
        return 1;
    for (size_t i = 0; i < n; i++) {
        bool drop = other_file_var(environ[i], keep);
        for (size_t k = 0; !drop && k < sizeof launched / sizeof launched[0]; k++)
            drop = !strncmp(environ[i], launched[k], strlen(launched[k]));
        if (!drop)
            env[kept++] = environ[i];
    }
    environ = env;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
        return 1;
    MPI_Finalize();
    return 0;
}

/*
 * MPICH's own words for why a trial stopped: the line before its "Assertion failed in file F
 * at line N: ..." (csel_container.c's "unrecognized key composition=...") with "F line N",
 * else its first line that is not a frame of the backtrace it prints; into why.
 */
static void trial_words(char *out, int status, char *why, size_t len)
{
    char *prev = NULL, *first = NULL;
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
        const char *a = "Assertion failed in file ";
        char file[160];
        int line;
        if (!strncmp(l, a, strlen(a)) &&
            sscanf(l + strlen(a), "%159s at line %d", file, &line) == 2) {
            if (prev)
                snprintf(why, len, "%.200s (%s line %d)", prev, file, line);
            else
                snprintf(why, len, "it fails at %s line %d", file, line);
            return;
        }
        bool frame = l[0] == '/' || l[0] == '[' || l[0] == '=';
        prev = frame ? NULL : l;
        if (!first && !frame)
            first = l;
    }
    if (first)
        snprintf(why, len, "%.240s", first);
    else if (WIFSIGNALED(status))
        snprintf(why, len, "it dies of signal %d", WTERMSIG(status));
    else
        snprintf(why, len, "it exits %d", WEXITSTATUS(status));
}

/* One trial (keep: the file's variable; NULL: none) within what is left of *left_s, its
 * output in out and status in *status: 0, or -1 when it could not run or did not end in
 * time (then none is left: the trials after it say nothing either). */
static int trial(void *keep, char *out, size_t len, int *status, int *left_s)
{
    time_t t0 = time(NULL);
    if (*left_s <= 0 ||
        ct_err_child_output("MPICH trial", trial_init, keep, *left_s, out, len, status, NULL) < 0) {
        *left_s = 0;
        return -1;
    }
    *left_s -= (int)(time(NULL) - t0);
    return 0;
}

/*
 * What only MPICH knows of a tree: its keys ("collective=", "avg_msg_size<=", an algorithm
 * name MPICH has). On one it does not know, MPICH 4.0.2 prints "unrecognized key ..." and
 * fails an assertion in MPI_Init, in every rank. So MPICH reads the file first in a trial of
 * its own; a trial that fails is believed only where one without any selection file starts
 * (a trial that cannot start here says nothing of the file). The trials of all the files
 * take 20 s at most together (trial); one that does not end says nothing either, and the
 * job's own start is bounded by --boot-timeout.
 */
static int trial_file(const char *var, const char *path, int *left_s, struct ct_err *err)
{
    char out[8192], why[400];
    int status;
    if (trial((void *)var, out, sizeof out, &status, left_s) < 0 ||
        (WIFEXITED(status) && !WEXITSTATUS(status)))
        return 0;
    trial_words(out, status, why, sizeof why);
    char ctl[8192];
    int cstatus;
    if (trial(NULL, ctl, sizeof ctl, &cstatus, left_s) < 0 || !WIFEXITED(cstatus) ||
        WEXITSTATUS(cstatus))
        return 0;
    return ct_err_set(err, CT_EUNSUPP, "MPICH cannot use %s='%s': its MPI_Init stops on it: %s",
                      var, path, why);
}

/*
 * MPICH 4.0.2 reads the selection trees its variables name during MPI_Init and does not
 * survive a bad one: an MPIR file it cannot open segfaults (UCX's backtraces, hydra's "BAD
 * TERMINATION"), one that is not JSON or holds a value that is not an object fails csel.c's
 * assertions (the CH4 file too), an empty one an assertion in MPI_Comm_split_type, one with
 * a key it does not know an assertion in MPI_Init. So each file is read here first, and
 * refused alike where this build would select nothing by it (an empty CH4 tree) or not read
 * it (Debian's ch4:ucx ignores the POSIX file); then MPICH reads it (trial_file). MPICH takes
 * a variable from MPIR_CVAR_X, else MPIR_PARAM_X, else MPICH_X; empty is its built-in tree.
 */
static int check_files(struct ct_err *err)
{
    int left_s = 20; /* for every trial together: the job's start waits on them */
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char var[96];
        const char *path = NULL;
        for (size_t p = 0; !path && p < sizeof prefix / sizeof prefix[0]; p++) {
            snprintf(var, sizeof var, "%s%s", prefix[p], files[i]);
            path = getenv(var);
        }
        if (!path || !*path)
            continue;
        FILE *f = fopen(path, "r");
        if (!f)
            return ct_err_sys(err, CT_EUNSUPP, "MPICH cannot read %s='%s'", var, path);
        json_error_t je;
        json_t *t = json_loadf(f, 0, &je);
        fclose(f);
        const char *bad = t ? tree_fault(t, true) : NULL;
        char miss[64];
        bool missing = t && !bad && i == 0 && mpir_missing(t, miss, sizeof miss);
        json_decref(t);
        if (!t)
            return ct_err_set(err, CT_EUNSUPP, "MPICH cannot use %s='%s': not JSON (line %d: %s)",
                              var, path, je.line, je.text);
        if (bad)
            return ct_err_set(err, CT_EUNSUPP, "MPICH cannot use %s='%s': %s", var, path, bad);
        if (missing)
            return ct_err_set(err, CT_EUNSUPP,
                              "MPICH cannot use %s='%s': no \"%s\" at its top (MPICH 4.0 aborts "
                              "wherever a call finds no entry in the tree, MPI_Init on 2 "
                              "ranks among them)",
                              var, path, miss);
        CT_TRY(trial_file(var, path, &left_s, err));
    }
    return 0;
}

int ct_mod_preinit(struct ct_err *err)
{
    int rc = check_files(err);
    /* a refused file: this rank starts MPICH without any (it measures nothing), so that the
     * job starts and every rank fails with its line (mpi_mod.c), not the others waiting in
     * MPI_Init for a rank that left before it */
    for (size_t i = 0; rc < 0 && i < sizeof files / sizeof files[0]; i++)
        for (size_t p = 0; p < sizeof prefix / sizeof prefix[0]; p++) {
            char var[96];
            snprintf(var, sizeof var, "%s%s", prefix[p], files[i]);
            unsetenv(var);
        }
    return rc;
}

const char *ct_mod_lib_title(void)
{
    return "MPICH";
}

static void add_row(struct coll_vars *v, enum ct_coll coll, int id, const char *opt,
                    const char *what)
{
    if (v->n == CT_MOD_ROWS)
        return;
    struct ct_mod_row *r = &v->rows[v->n++];
    r->id = id;
    snprintf(r->name, sizeof r->name, "mpich:%.50s", opt);
    snprintf(r->summary, sizeof r->summary, "MPICH %s: %.120s", mpich_coll[coll], what);
    r->a.name = r->name;
    r->a.summary = r->summary;
    r->a.colls = CT_COLL_BIT(coll);
    r->a.lib_id = id;
}

/*
 * The options of an algorithm variable's description, numbered in order: each is a word
 * before " - ". MPI_T gives the description without its line breaks, so an option follows
 * the text before it directly ("... select allreduce algorithmauto - Internal ...",
 * "... Force nonblocking algorithmsmp - Force smp ..."): a leading "algorithm" is dropped.
 */
static int read_rows(struct coll_vars *v, enum ct_coll coll, struct ct_err *err)
{
    char name[256] = "?", desc[4096];
    int nl = sizeof name, dl = sizeof desc, verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum en;
    if (MPI_T_cvar_get_info(v->alg, name, &nl, &verb, &dt, &en, desc, &dl, &bind, &scope) !=
            MPI_SUCCESS ||
        dt != MPI_INT)
        return ct_err_set(err, CT_EUNSUPP, "MPICH: %s is not an int variable", name);
    add_row(v, coll, 0, "default", "as shipped (the device layer's choice)");
    int val = 0;
    for (const char *p = strstr(desc, " - "); p; p = strstr(p + 3, " - "), val++) {
        const char *e = p;
        while (e > desc && e[-1] == ' ')
            e--;
        const char *b = e;
        while (b > desc &&
               (islower((unsigned char)b[-1]) || isdigit((unsigned char)b[-1]) || b[-1] == '_'))
            b--;
        if (e - b > 9 && !strncmp(b, "algorithm", 9))
            b += 9;
        const char *what = p + 3, *end = strstr(what, " - ");
        char opt[64], text[128];
        snprintf(opt, sizeof opt, "%.*s", (int)(e - b), b);
        /* the option's text runs up to the next option's word */
        int tl = end ? (int)(end - what) : (int)strlen(what);
        while (end && tl > 0 && what[tl - 1] == ' ')
            tl--;
        while (end && tl > 0 &&
               (islower((unsigned char)what[tl - 1]) || isdigit((unsigned char)what[tl - 1]) ||
                what[tl - 1] == '_'))
            tl--;
        snprintf(text, sizeof text, "%.*s", tl, what);
        if (!opt[0])
            return ct_err_set(err, CT_EUNSUPP, "MPICH: cannot read the options of %s", name);
        add_row(v, coll, val + 1, opt, text);
    }
    if (val < 2)
        return ct_err_set(err, CT_EUNSUPP, "MPICH: %s lists %d options", name, val);
    return 0;
}

int ct_mod_lib_open(struct ct_mod_lib **out, struct ct_err *err)
{
    struct ct_mod_lib *l = calloc(1, sizeof *l);
    if (!l)
        return ct_err_set(err, CT_ENOMEM, "no memory");
    char name[128];
    l->fallback = ct_mod_cvar_find("MPIR_CVAR_COLLECTIVE_FALLBACK");
    if (l->fallback >= 0 && ct_mod_cvar_read_int(l->fallback, &l->fallback0) < 0)
        l->fallback = -1;
    for (int c = 0; c < CT_COLL_COUNT; c++) {
        struct coll_vars *v = &l->c[c];
        snprintf(name, sizeof name, "MPIR_CVAR_%s_INTRA_ALGORITHM", mpich_coll[c]);
        v->alg = ct_mod_cvar_find(name);
        snprintf(name, sizeof name, "MPIR_CVAR_%s_DEVICE_COLLECTIVE", mpich_coll[c]);
        v->dev = ct_mod_cvar_find(name);
        if (v->dev >= 0 && ct_mod_cvar_read_int(v->dev, &v->dev0) < 0)
            v->dev = -1;
        if (v->alg >= 0 && ct_mod_cvar_read_int(v->alg, &v->alg0) < 0)
            v->alg = -1;
        if (v->alg >= 0 && read_rows(v, (enum ct_coll)c, err) < 0) {
            free(l);
            return CT_EUNSUPP;
        }
    }
    *out = l;
    return 0;
}

int ct_mod_lib_agreed(struct ct_mod_lib *l)
{
    (void)l; /* each rank's variables are its own; none is agreed on */
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
                          "MPICH has no control variable MPIR_CVAR_%s_INTRA_ALGORITHM",
                          mpich_coll[coll]);
    *rows = l->c[coll].rows;
    return l->c[coll].n;
}

/* Write the forced row's values (on) or the start-up ones (off). */
static int apply(const struct ct_mod_lib *l, const struct coll_vars *v, int id, struct ct_err *err)
{
    CT_TRY(ct_mod_cvar_write_int(v->alg, id > 0 ? id - 1 : v->alg0, err));
    if (v->dev >= 0)
        CT_TRY(ct_mod_cvar_write_int(v->dev, id > 0 ? 0 : v->dev0, err));
    if (l->fallback >= 0) /* 0: error */
        CT_TRY(ct_mod_cvar_write_int(l->fallback, id > 0 ? 0 : l->fallback0, err));
    return 0;
}

void ct_mod_lib_force(struct ct_mod_lib *l, bool on)
{
    if (l->cur && l->cur_id > 0)
        apply(l, l->cur, on ? l->cur_id : 0, NULL);
}

int ct_mod_lib_comm(struct ct_mod_lib *l, const struct ct_mod_row *r, const struct ct_job *j,
                    MPI_Comm *out, struct ct_err *err)
{
    const struct coll_vars *v = &l->c[j->coll];
    if (v->alg < 0)
        return ct_err_set(err, CT_EUNSUPP, "MPICH: no MPIR_CVAR_%s_INTRA_ALGORITHM",
                          mpich_coll[j->coll]);
    if (r->id > 0 && v->dev < 0)
        return ct_err_set(err, CT_EUNSUPP,
                          "MPICH: no MPIR_CVAR_%s_DEVICE_COLLECTIVE, so a forced algorithm "
                          "might not be reached",
                          mpich_coll[j->coll]);
    /* check now that the variables take the values; they hold only during the point's
     * measured calls (ct_mod_lib_force) */
    int rc = apply(l, v, r->id, err);
    int rc0 = apply(l, v, 0, rc < 0 ? NULL : err); /* the start-up values, also after a failure */
    if (rc < 0 || rc0 < 0)
        return rc < 0 ? rc : rc0;
    l->cur = v;
    l->cur_id = r->id;
    if (MPI_Comm_dup(MPI_COMM_WORLD, out) != MPI_SUCCESS)
        return ct_err_set(err, CT_EIO, "MPICH: MPI_Comm_dup failed");
    /* a forced algorithm that cannot run these arguments returns its error to the engine */
    MPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
    return 0;
}
