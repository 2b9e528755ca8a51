/* SPDX-License-Identifier: MIT */
/* Library engines: the table, finding a module and a launcher, loading the module. */
#include "libmod.h"

#include <ctype.h>
#include <errno.h>
#include <dlfcn.h>
#include <libgen.h>
#include <math.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/cpus.h"
#include "../lib/file.h"
#include "../lib/parse.h"
#include "../transport/launch.h"

/* glibc's allocator variables (mallopt(3)): a launch setting of either library, as they
 * decide whether a collective's temporary buffers are mapped and faulted in anew on every
 * call (above the mmap threshold, freed to the system) or kept by the ranks' heap. Not
 * MALLOC_CHECK_ or MALLOC_PERTURB_: checks, not settings. GLIBC_TUNABLES with the allocator's
 * tunables alone (glibc.malloc.*, tunables(7)): glibc.malloc.hugetlb=1 has the heap advised
 * for transparent huge pages where the kernel leaves them to madvise. */
static const char libc_env[] =
    "MALLOC_ARENA_MAX MALLOC_MMAP_MAX_ MALLOC_MMAP_THRESHOLD_ MALLOC_TOP_PAD_ "
    "MALLOC_TRIM_THRESHOLD_ GLIBC_TUNABLES";
#define LIBC_TUNABLES "GLIBC_TUNABLES"
#define LIBC_TUNABLE_PREFIX "glibc.malloc."

static const struct ct_libmod libs[] = {
    /* Open MPI binds a job's ranks to cores when there are at most 2 per host and no more than
     * its cores, else to sockets, and none when oversubscribed; hydra binds none. The ranks'
     * lines as they print them, over a site's mca-params.conf and environment (Open MPI 4.x's
     * names; tagged, timestamped or XML lines are not read by verify's and the search's
     * launches) */
    {"ompi",
     "Open MPI",
     "mpirun.openmpi",
     "-np",
     "--host",
     "--mca orte_tag_output 0 --mca orte_timestamp_output 0 --mca orte_xml_output 0",
     "--oversubscribe",
     "--bind-to none",
     "OMPI_MCA_coll_tuned_use_dynamic_rules OMPI_MCA_coll_tuned_dynamic_rules_filename "
     "OMPI_MCA_coll_tuned_*_algorithm*",
     "OMPI_MCA_coll_tuned_dynamic_rules_filename=",
     "-x",
     "mca_base_env_list",
     "ompi-rules",
     "OMPI_MCA_coll_tuned_use_dynamic_rules",
     "0",
     "OMPI_MCA_",
     "OMPI_MCA_coll OMPI_MCA_coll_* OMPI_MCA_mca_base_param_files "
     "OMPI_MCA_mca_base_envar_file_prefix OMPI_MCA_mca_base_param_file_prefix "
     "OMPI_MCA_mca_base_env_list*",
     "OMPI_MCA_coll",
     "tuned",
     "ompi_info --parsable --level 9 --param all all",
     ":param:%s:value:",
     "mpirun",
     "Open MPI",
     "OMPI_MCA_btl_vader_ OMPI_MCA_btl_sm_",
     "OMPI_MCA_btl"},
    /* MPICH reads a variable by three prefixes */
    {"mpich",
     "MPICH",
     "mpiexec.hydra",
     "-n",
     "-hosts",
     "",
     NULL,
     NULL,
     "MPIR_CVAR_*SELECTION_TUNING_JSON_FILE MPIR_CVAR_DEVICE_COLLECTIVES "
     "MPIR_CVAR_*_DEVICE_COLLECTIVE MPIR_CVAR_*_ALGORITHM MPICH_*SELECTION_TUNING_JSON_FILE "
     "MPICH_DEVICE_COLLECTIVES MPICH_*_DEVICE_COLLECTIVE MPICH_*_ALGORITHM "
     "MPIR_PARAM_*SELECTION_TUNING_JSON_FILE MPIR_PARAM_DEVICE_COLLECTIVES "
     "MPIR_PARAM_*_DEVICE_COLLECTIVE MPIR_PARAM_*_ALGORITHM",
     "",
     NULL,
     NULL,
     "mpich-json",
     NULL,
     NULL,
     "MPIR_CVAR_ MPICH_ MPIR_PARAM_",
     "MPIR_CVAR_*COMPOSITION* MPICH_*COMPOSITION* MPIR_PARAM_*COMPOSITION* "
     "MPIR_CVAR_COLLECTIVE_FALLBACK MPICH_COLLECTIVE_FALLBACK MPIR_PARAM_COLLECTIVE_FALLBACK",
     NULL,
     NULL,
     "mpivars -nodesc",
     "\tMPIR_CVAR_%s",
     "mpiexec",
     "HYDRA",
     NULL,
     NULL},
};

const struct ct_libmod *ct_libmod_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof libs / sizeof libs[0]; i++)
        if (!strcmp(libs[i].name, name))
            return &libs[i];
    return NULL;
}

const char *ct_libmod_names(void)
{
    return "ompi or mpich";
}

static bool readable(const char *p)
{
    return access(p, R_OK) == 0;
}

int ct_libmod_path(const struct ct_libmod *m, char **path, struct ct_err *err)
{
    char self[4096], cand[4][4200];
    int n = 0;
    const char *dir = getenv("COLLTUNE_LIB_DIR");
    if (dir && *dir)
        snprintf(cand[n++], sizeof cand[0], "%s/ct-lib-%s.so", dir, m->name);
    if (ct_self_path(self, sizeof self, 1) == 0) {
        snprintf(cand[n++], sizeof cand[0], "%s/ct-lib-%s.so", self, m->name);
        snprintf(cand[n++], sizeof cand[0], "%s/build/ct-lib-%s.so", self, m->name);
        /* where `make install` puts them: PREFIX/bin/colltune, PREFIX/lib/colltune/ */
        snprintf(cand[n++], sizeof cand[0], "%s/../lib/colltune/ct-lib-%s.so", self, m->name);
    }
    for (int i = 0; i < n; i++)
        if (readable(cand[i])) {
            *path = ct_xstrdup(cand[i]);
            return 0;
        }
    if (dir && *dir) /* the folder the user named first */
        return ct_err_set(err, CT_EUNSUPP,
                          "--lib %s: no engine module %s (COLLTUNE_LIB_DIR), nor beside "
                          "colltune: build it with 'make' where %s's mpicc is installed",
                          m->name, cand[0], m->title);
    return ct_err_set(err, CT_EUNSUPP,
                      "--lib %s: no engine module ct-lib-%s.so (%s, nor in build/ or "
                      "../lib/colltune/ beside it): build it with 'make' where %s's mpicc is "
                      "installed, or set COLLTUNE_LIB_DIR",
                      m->name, m->name, n ? cand[0] : "?", m->title);
}

/* Whether p is a program this process may run (not a folder). */
static bool runnable(const char *p)
{
    struct stat st;
    return access(p, X_OK) == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Program name's path on PATH (a name with a '/' as it is) in p; false when it is not there. */
static bool on_path(const char *name, char *p, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(p, len, "%s", name);
        return runnable(p);
    }
    const char *path = getenv("PATH");
    char *dup = ct_xstrdup(path ? path : "/usr/bin:/bin");
    bool found = false;
    for (char *s = NULL, *d = strtok_r(dup, ":", &s); d && !found; d = strtok_r(NULL, ":", &s)) {
        snprintf(p, len, "%s/%s", *d ? d : ".", name);
        found = runnable(p);
    }
    free(dup);
    return found;
}

/* Whether program path's --version says word (within 10 s). */
static bool version_says(const char *path, const char *word)
{
    char cmd[4400], *line = NULL;
    size_t cap = 0;
    bool said = false;
    if (strchr(path, '\''))
        return false;
    snprintf(cmd, sizeof cmd, "timeout 10 '%s' --version 2>&1 </dev/null", path);
    FILE *f = popen(cmd, "r");
    while (f && getline(&line, &cap, f) > 0) /* to the end: the program is not cut off */
        said |= strstr(line, word) != NULL;
    free(line);
    if (f)
        pclose(f);
    return said;
}

const char *ct_libmod_launcher(const struct ct_libmod *m)
{
    static char alt[sizeof libs / sizeof libs[0]][4200];
    static bool chosen[sizeof libs / sizeof libs[0]];
    size_t i = 0;
    while (i < sizeof libs / sizeof libs[0] && m != &libs[i])
        i++;
    if (i == sizeof libs / sizeof libs[0])
        return m->launcher;
    if (!chosen[i]) { /* the alternative by its path: the one whose --version was read runs */
        char p[4200];
        if (!on_path(m->launcher, p, sizeof p) && on_path(m->launcher_alt, p, sizeof p) &&
            version_says(p, m->launcher_says))
            snprintf(alt[i], sizeof alt[i], "%s", p);
        chosen[i] = true;
    }
    return *alt[i] ? alt[i] : m->launcher;
}

int ct_libmod_launcher_check(const struct ct_libmod *m, struct ct_err *err)
{
    char p[4200];
    if (!on_path(ct_libmod_launcher(m), p, sizeof p))
        return ct_err_set(err, CT_EUNSUPP,
                          "--lib %s: %s's launcher is not on PATH (neither %s nor a %s whose "
                          "--version says %s)",
                          m->name, m->title, m->launcher, m->launcher_alt, m->launcher_says);
    return 0;
}

int ct_libmod_launch_check(const struct ct_libmod *m, const char *hosts, int dtype, int op,
                           struct ct_err *err)
{
    CT_TRY(ct_libmod_launcher_check(m, err));
    CT_TRY(ct_libmod_hosts_resolve(hosts, err));
    if (dtype == CT_FLOAT16 || dtype == CT_BFLOAT16) /* MPI 4.0 has no such type */
        return ct_err_set(err, CT_EINVAL, "-d %s: MPI has no datatype for it (--lib %s)",
                          ct_dtype_name((enum ct_dtype)dtype), m->name);
    if (op == CT_AVG)
        return ct_err_set(err, CT_EINVAL,
                          "--op avg: MPI has no such reduction (--lib %s; allgather and alltoall "
                          "reduce nothing: leave --op out)",
                          m->name);
    return 0;
}

/* The folder of the launcher that runs (ct_libmod_launcher), its links resolved, in dir;
 * false when it is not on PATH. */
static bool launcher_dir(const struct ct_libmod *m, char *dir, size_t len)
{
    char p[4200], *real = on_path(ct_libmod_launcher(m), p, sizeof p) ? realpath(p, NULL) : NULL;
    if (real)
        snprintf(dir, len, "%s", dirname(real));
    free(real);
    return real != NULL;
}

/* The library's own list of its variables (the first word of m->info) as the launcher's
 * installation has it: beside the launcher where it is there (a site's module first on PATH
 * may have another library's), else by name on PATH; in prog. */
static void info_prog(const struct ct_libmod *m, char *prog, size_t len)
{
    char dir[4200];
    int w = (int)strcspn(m->info, " ");
    if (launcher_dir(m, dir, sizeof dir) &&
        snprintf(prog, len, "%s/%.*s", dir, w, m->info) < (int)len && runnable(prog) &&
        !strchr(prog, '\''))
        return;
    snprintf(prog, len, "%.*s", w, m->info);
}

static void push(char ***v, int *n, const char *s)
{
    *v = ct_xrealloc(*v, sizeof **v * (size_t)(*n + 2));
    (*v)[(*n)++] = ct_xstrdup(s);
    (*v)[*n] = NULL;
}

int ct_libmod_hosts_slots(const char *list, int *most, int *least)
{
    int n = 0;
    *most = 0;
    *least = 1 << 30;
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ","), name = strcspn(p, ":,");
        if (!name || len > 255)
            return -1;
        for (size_t i = 0; i < name; i++)
            if (!isalnum((unsigned char)p[i]) && !strchr(".-_", p[i]))
                return -1;
        long slots = 1;
        if (name < len) { /* ":SLOTS" */
            char num[16], *end;
            if (len - name - 1 == 0 || len - name - 1 >= sizeof num)
                return -1;
            memcpy(num, p + name + 1, len - name - 1);
            num[len - name - 1] = 0;
            slots = strtol(num, &end, 10);
            if (*end || slots < 1 || slots > 1024)
                return -1;
        }
        *most = slots > *most ? (int)slots : *most;
        *least = slots < *least ? (int)slots : *least;
        if ((n += (int)slots) > 65536)
            return -1;
        p += len;
        if (*p == ',' && !*++p)
            return -1; /* a trailing comma */
    }
    return n ? n : -1;
}

/* Whether name resolves here (a name or an address). */
static bool resolves(const char *name)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (getaddrinfo(name, NULL, &hints, &ai) != 0)
        return false;
    freeaddrinfo(ai);
    return true;
}

/* Whether ssh reaches name as an alias: a HostName that resolves, or a jump host or proxy
 * command that reaches it (`ssh -G`, within 10 s; name is [A-Za-z0-9._-]). */
static bool ssh_alias(const char *name)
{
    char cmd[400], *line = NULL;
    size_t cap = 0;
    bool via = false;
    snprintf(cmd, sizeof cmd, "timeout 10 ssh -G '%s' 2>/dev/null </dev/null", name);
    FILE *f = popen(cmd, "r");
    while (f && getline(&line, &cap, f) > 0) {
        line[strcspn(line, "\n")] = 0;
        char *v = strchr(line, ' ');
        if (!v)
            continue;
        *v++ = 0;
        if (!strcmp(line, "hostname") && strcmp(v, name))
            via |= resolves(v);
        else if (!strcmp(line, "proxyjump") || !strcmp(line, "proxycommand"))
            via |= strcmp(v, "none") != 0;
    }
    free(line);
    if (f)
        pclose(f);
    return via;
}

int ct_libmod_hosts_resolve(const char *list, struct ct_err *err)
{
    for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',') {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ":,"), p);
        if (!resolves(name) && !ssh_alias(name))
            return ct_err_set(err, CT_EINVAL,
                              "--hosts: cannot resolve host '%s' (nor is it an ssh alias of a "
                              "host that resolves)",
                              name);
    }
    return 0;
}

int ct_libmod_hosts_ranks(const char *list)
{
    int most, least;
    return ct_libmod_hosts_slots(list, &most, &least);
}

/* Whether path's text has word in it. */
static bool file_has(const char *path, const char *word)
{
    char *text = NULL;
    size_t n;
    bool has = ct_file_read(path, &text, &n, NULL) == 0 && strstr(text, word);
    free(text);
    return has;
}

/* Whether a parameter file Open MPI 4.1 reads may set m->env_list: those named by
 * $OMPI_MCA_mca_base_param_files (comma-separated, ~/ the home folder), else the user's
 * ~/.openmpi/mca-params.conf and the installation's openmpi-mca-params.conf, and the
 * installation's openmpi-mca-params-override.conf (its sysconfdir: $OPAL_SYSCONFDIR,
 * $OPAL_PREFIX/etc, Debian's /etc/openmpi, or beside its launcher's bin/); aggregate and
 * environment-prefix files, named by variables, count as may. Only then is the library's own
 * list asked (ompi_info, a quarter of a second). */
static bool env_list_maybe(const struct ct_libmod *m)
{
    static const char *const maybe_vars[] = {"mca_base_param_file_prefix",
                                             "mca_base_envar_file_prefix"};
    char env[CT_LIBMOD_ENV_NAME_MAX + 1], files[8192] = "", bin[4200], sys[4][4300];
    int pl = (int)strcspn(m->env_prefix, " "), ns = 0;
    for (size_t i = 0; i < sizeof maybe_vars / sizeof maybe_vars[0]; i++) {
        snprintf(env, sizeof env, "%.*s%s", pl, m->env_prefix, maybe_vars[i]);
        if (getenv(env))
            return true;
    }
    const char *home = getenv("HOME"), *sc = getenv("OPAL_SYSCONFDIR"),
               *pre = getenv("OPAL_PREFIX");
    if (sc)
        snprintf(sys[ns++], sizeof sys[0], "%s", sc);
    if (pre)
        snprintf(sys[ns++], sizeof sys[0], "%s/etc", pre);
    snprintf(sys[ns++], sizeof sys[0], "/etc/openmpi");
    snprintf(sys[ns++], sizeof sys[0], "%s/../etc",
             launcher_dir(m, bin, sizeof bin) ? bin : "/usr/bin");
    snprintf(env, sizeof env, "%.*smca_base_param_files", pl, m->env_prefix);
    const char *named = getenv(env);
    size_t off =
        (size_t)snprintf(files, sizeof files, "%s", named ? named : "~/.openmpi/mca-params.conf");
    for (int i = 0; i < ns && off < sizeof files; i++)
        off += (size_t)snprintf(files + off, sizeof files - off,
                                ",%s/openmpi-mca-params-override.conf", sys[i]);
    for (int i = 0; !named && i < ns && off < sizeof files; i++)
        off += (size_t)snprintf(files + off, sizeof files - off, ",%s/openmpi-mca-params.conf",
                                sys[i]);
    bool maybe = false;
    for (char *t = NULL, *f = strtok_r(files, ",", &t); f && !maybe; f = strtok_r(NULL, ",", &t)) {
        char path[8400];
        bool tilde = !strncmp(f, "~/", 2) && home;
        snprintf(path, sizeof path, "%s%s", tilde ? home : "", tilde ? f + 1 : f);
        maybe = file_has(path, m->env_list);
    }
    return maybe;
}

/* Runs the library's own list of its variables (m->info) to its end (*st: its status, -1
 * when it cannot run); whether it lists key, and its value in val: after the key's padding
 * and '=' where the key does not end in ':' (mpivars' NAME = VALUE; a tab or the end there:
 * listed without a value; mpivars also prints a line with ':' there, of no value); its first
 * word with `word`, else the rest of the line, one pair of quotes taken off (ompi_info quotes
 * a value with ':' in it). */
#define CT_LIBMOD_VAL 4096 /* the longest value read: a site's mca_base_env_list */
static int info_read_keys(const struct ct_libmod *m, const char *unset, const char *const *keys,
                          int n, bool word, char (*vals)[CT_LIBMOD_VAL], bool *found, int *st)
{
    char cmd[8600], prog[4200], *line = NULL;
    size_t cap = 0;
    int got = 0;
    for (int k = 0; k < n; k++)
        found[k] = false;
    info_prog(m, prog, sizeof prog);
    snprintf(cmd, sizeof cmd, "%s%stimeout %d '%s'%s 2>/dev/null", unset ? "env " : "",
             unset ? unset : "", CT_LIBMOD_INFO_S, prog, m->info + strcspn(m->info, " "));
    FILE *f = popen(cmd, "r");
    *st = -1;
    if (!f)
        return 0;
    while (getline(&line, &cap, f) > 0) /* to the end: the program is not cut off */
        for (int k = 0; k < n; k++) {
            size_t kl = strlen(keys[k]);
            bool eq = kl && keys[k][kl - 1] != ':';
            char *p = found[k] ? NULL : strstr(line, keys[k]);
            if (!p ||
                (eq && (!strchr(" \t=", p[kl]) || !strchr("=\t\r\n", p[kl + strspn(p + kl, " ")]))))
                continue;
            p += kl + (eq ? strspn(p + kl, " ") : 0);
            p += eq && *p == '=';
            size_t len = strcspn(p, word ? " \t\r\n" : "\r\n");
            if (!word && len >= 2 && p[0] == '"' && p[len - 1] == '"')
                p++, len -= 2;
            snprintf(vals[k], CT_LIBMOD_VAL, "%.*s", (int)len, p);
            found[k] = true;
            got++;
        }
    free(line);
    *st = pclose(f);
    return got;
}

static bool info_read(const struct ct_libmod *m, const char *key, bool word, char *val, size_t len,
                      int *st)
{
    char v[1][CT_LIBMOD_VAL];
    bool found;
    if (!info_read_keys(m, NULL, &key, 1, word, v, &found, st))
        return false;
    snprintf(val, len, "%s", v[0]);
    return true;
}

/* The text after parameter name's key in the library's own list (m->info) to the end of its
 * line, one pair of quotes around it taken off (ompi_info quotes a value with ':' in it), in
 * val: "" when not listed or the list cannot be had. */
static void info_value(const struct ct_libmod *m, const char *name, char *val, size_t len)
{
    char key[160];
    int st;
    snprintf(key, sizeof key, m->info_key, name);
    if (!info_read(m, key, false, val, len, &st))
        *val = 0;
}

/* m->env_list as a job of the library's gets it, in list, and its delimiter: from this
 * environment (under its first prefix; set, even empty, counts: mpirun refuses setenv beside
 * it), else from its parameter files (asked once per process). False where it is not set. */
static bool env_list_value(const struct ct_libmod *m, char *list, size_t len, char *delim,
                           size_t dlen)
{
    static char file_list[4096], file_sep[16];
    static bool asked;
    char env[CT_LIBMOD_ENV_NAME_MAX + 160], dname[128];
    int pl = (int)strcspn(m->env_prefix, " ");
    snprintf(dname, sizeof dname, "%s_delimiter", m->env_list);
    if (!asked) {
        if (env_list_maybe(m))
            info_value(m, m->env_list, file_list, sizeof file_list);
        if (*file_list)
            info_value(m, dname, file_sep, sizeof file_sep);
        asked = true;
    }
    snprintf(env, sizeof env, "%.*s%s", pl, m->env_prefix, dname);
    const char *d = getenv(env), *v;
    snprintf(delim, dlen, "%s", d && *d ? d : *file_sep ? file_sep : ";");
    snprintf(env, sizeof env, "%.*s%s", pl, m->env_prefix, m->env_list);
    snprintf(list, len, "%s", (v = getenv(env)) ? v : file_list);
    return v || *file_list;
}

/* The ranks' variables (mark, nm of them) and then the site's env list (list, split by its
 * delimiter sep) joined into all (len) with a delimiter Open MPI takes (one character, in
 * delim[2], passed as the list's delimiter) that is in none of them: the site's own where it
 * is such, else the first of ";,|!^~@" that is. A delimiter of more than one character makes
 * Open MPI ignore the site's list (its jobs get none of it): none of it is passed. */
static void env_list_join(char mark[][CT_LIBMOD_MARK], int nm, const char *list, const char *sep,
                          char *all, size_t len, char *delim)
{
    char marks[CT_LIBMOD_MARKS * (CT_LIBMOD_MARK + 1)] = "";
    bool one = strlen(sep) == 1;
    for (int i = 0; i < nm; i++)
        snprintf(marks + strlen(marks), sizeof marks - strlen(marks), "%s ", mark[i]);
    delim[0] = one && !strchr(marks, *sep) ? *sep : 0;
    for (const char *c = ";,|!^~@"; !delim[0] && *c; c++)
        if (!strchr(marks, *c) && !(one && strchr(list, *c)))
            delim[0] = *c;
    delim[0] = delim[0] ? delim[0] : ';'; /* every one taken: Open MPI's own */
    delim[1] = 0;
    size_t off = 0;
    for (int i = 0; i < nm && off < len; i++)
        off += (size_t)snprintf(all + off, len - off, "%s%s", i ? delim : "", mark[i]);
    for (const char *p = one ? list : ""; *p && off < len;) { /* the site's, one by one */
        size_t w = strcspn(p, sep);
        if (w)
            off += (size_t)snprintf(all + off, len - off, "%s%.*s", delim, (int)w, p);
        p += w + (p[w] != 0);
    }
}

char **ct_libmod_argv(const struct ct_libmod *m, int n, const char *hosts, bool unbound,
                      const char *notify, const char *self, int argc, char **argv)
{
    char **v = NULL, num[16];
    int k = 0;
    push(&v, &k, ct_libmod_launcher(m));
    snprintf(num, sizeof num, "%d", n);
    push(&v, &k, m->np);
    push(&v, &k, num);
    if (hosts) {
        push(&v, &k, m->hosts);
        push(&v, &k, hosts);
    }
    const char *flags[] = {m->extra, hosts ? NULL : m->local, unbound ? m->unbound : NULL};
    for (int f = 0; f < 3; f++) {
        if (!flags[f])
            continue;
        char *extra = ct_xstrdup(flags[f]);
        for (char *s = NULL, *t = strtok_r(extra, " ", &s); t; t = strtok_r(NULL, " ", &s))
            push(&v, &k, t);
        free(extra);
    }
    if (!strcmp(m->name, "ompi") && geteuid() == 0)
        push(&v, &k, "--allow-run-as-root");
    /* the library, rank 0's word's address, the launching process's cores (for ranks on its
     * host) */
    char marker[CT_LIBMOD_MARKS][CT_LIBMOD_MARK];
    int nm = 3;
    snprintf(marker[0], sizeof marker[0], "%s=%s", CT_LIBMOD_ENV, m->name);
    snprintf(marker[1], sizeof marker[1], "%s=%s", CT_LIBMOD_NOTIFY_ENV, notify ? notify : "");
    snprintf(marker[2], sizeof marker[2], "%s=%d", CT_CPUS_ENV, hosts ? 0 : ct_cpus_usable());
    /* glibc's allocator variables set here (a launch setting): a launcher that passes only
     * its own library's variables on (Open MPI's mpirun to other hosts) is told them too */
    extern char **environ;
    for (char **e = environ; m->setenv && *e && nm < CT_LIBMOD_MARKS; e++) {
        char name[CT_LIBMOD_MARK];
        size_t n = strcspn(*e, "=");
        snprintf(name, sizeof name, "%.*s", (int)n, *e);
        if ((*e)[n] && strlen(*e) < CT_LIBMOD_MARK && ct_libmod_env_libc(name))
            snprintf(marker[nm++], sizeof marker[0], "%s", *e);
    }
    char sep[16], list[4096], all[sizeof list + sizeof marker + CT_LIBMOD_MARKS], delim[2] = "";
    bool listed = m->setenv && m->env_list && env_list_value(m, list, sizeof list, sep, sizeof sep);
    if (listed) { /* the ranks' variables first (Open MPI stops at a name it cannot pass on),
                   * then the site's: one way of passing them */
        char name[128];
        env_list_join(marker, nm, list, sep, all, sizeof all, delim);
        snprintf(name, sizeof name, "%s_delimiter", m->env_list);
        push(&v, &k, "--mca");
        push(&v, &k, name);
        push(&v, &k, delim);
        push(&v, &k, "--mca");
        push(&v, &k, m->env_list);
        push(&v, &k, all);
    }
    for (int i = 0; i < nm && !listed; i++) {
        if (m->setenv) {
            push(&v, &k, m->setenv);
            push(&v, &k, marker[i]);
        } else { /* the launcher passes its environment on */
            char *eq = strchr(marker[i], '=');
            *eq = 0;
            setenv(marker[i], eq + 1, 1);
        }
    }
    push(&v, &k, self);
    for (int i = 0; i < argc; i++)
        push(&v, &k, argv[i]);
    return v;
}

static bool listed(const char *list, const char *name, bool prefix)
{
    return ct_words_match(list, name, prefix) > 0;
}

bool ct_libmod_env_libc(const char *name)
{
    return listed(libc_env, name, false);
}

/* Unsets every variable of this process's environment that pick(m, name, value, arg)
 * chooses (keeps them where keep), named in left (", "-separated, NAME=value where keep; cut
 * to len; "" when none). Returns how many. */
typedef bool (*env_pick_fn)(const struct ct_libmod *m, const char *name, const char *value,
                            const char *arg);
static int env_scan(const struct ct_libmod *m, env_pick_fn pick, const char *arg, char *left,
                    size_t len, bool keep)
{
    extern char **environ;
    char *gone[64];
    int n = 0;
    size_t off = 0;
    for (char **e = environ; *e && n < 64; e++) {
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(*e, "="), *e);
        if (pick(m, name, *e + strlen(name) + 1, arg))
            gone[n++] = ct_xstrdup(keep ? *e : name);
    }
    if (len)
        left[0] = 0;
    for (int i = 0; i < n; i++) { /* after the scan: unsetenv moves environ's entries */
        if (!keep)
            unsetenv(gone[i]);
        if (off < len)
            off += (size_t)snprintf(left + off, len - off, "%s%s", i ? ", " : "", gone[i]);
        free(gone[i]);
    }
    return n;
}

/* A rules or forcing variable, but the setting that keeps the library on its defaults
 * (verify's side B) */
static bool rules_var(const struct ct_libmod *m, const char *name, const char *value,
                      const char *arg)
{
    (void)arg;
    bool own = m->own_name && !strcmp(name, m->own_name) && !strcmp(value, m->own_value);
    return !own && listed(m->rules_env, name, false);
}

/* arg under any of the library's prefixes (a name with none of them is not its variable) */
static bool same_var(const struct ct_libmod *m, const char *name, const char *value,
                     const char *arg)
{
    (void)value;
    return listed(m->env_prefix, name, true) && ct_libmod_env_same(m, name, arg);
}

int ct_libmod_defaults_env(const struct ct_libmod *m, char *left, size_t len)
{
    int n = env_scan(m, rules_var, NULL, left, len, false);
    char *set = ct_xstrdup(m->rules_off ? m->rules_off : "");
    for (char *s = NULL, *t = strtok_r(set, " ", &s); t; t = strtok_r(NULL, " ", &s)) {
        char *eq = strchr(t, '=');
        if (eq) {
            *eq = 0;
            setenv(t, eq + 1, 1);
        }
    }
    free(set);
    return n;
}

/* a rules or forcing variable the environment sets to something (colltune's own empty
 * rules file, m->rules_off, is none) */
static bool kept_var(const struct ct_libmod *m, const char *name, const char *value,
                     const char *arg)
{
    return *value && rules_var(m, name, value, arg);
}

/* a variable of the environment's that forces an algorithm (not a rules file's) */
static bool forcing_var(const struct ct_libmod *m, const char *name, const char *value,
                        const char *arg)
{
    return rules_var(m, name, value, arg) &&
           (strstr(name, "_algorithm") || strstr(name, "_ALGORITHM"));
}

int ct_libmod_forced_env(const struct ct_libmod *m, char *kept, size_t len)
{
    return env_scan(m, forcing_var, NULL, kept, len, true);
}

void ct_libmod_argv_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}

bool ct_libmod_in_rank(void)
{
    return getenv(CT_LIBMOD_ENV) || getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") ||
           getenv("PMIX_RANK");
}

int ct_libmod_cores(void)
{
    return ct_libmod_in_rank() ? ct_cpus_host() : ct_cpus_usable();
}

int ct_libmod_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    r = r ? r : getenv("PMI_RANK");
    r = r ? r : getenv("PMIX_RANK");
    return r ? atoi(r) : 0;
}

int ct_libmod_local_rank(void)
{
    const char *r = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    r = r ? r : getenv("MPI_LOCALRANKID");
    r = r ? r : getenv("SLURM_LOCALID");
    return r ? atoi(r) : -1;
}

int ct_libmod_open(const struct ct_libmod *m, int refused, struct ct_backend *be, void **ctx,
                   struct ct_err *err)
{
    char *path = NULL;
    memset(be, 0, sizeof *be);
    be->refused = refused;
    *ctx = NULL;
    CT_TRY(ct_libmod_path(m, &path, err));
    /* the library's spy beside the module (ct-spy-<lib>.so, where one is built), loaded first
     * so that its entry points come before the library's: without it the engine cannot tell
     * which algorithm a call ran, and says nothing about it */
    char name[64], *spy;
    snprintf(name, sizeof name, "ct-spy-%s.so", m->name);
    spy = ct_path_sibling(path, name);
    if (readable(spy))
        (void)dlopen(spy, RTLD_NOW | RTLD_GLOBAL);
    free(spy);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        int rc =
            ct_err_set(err, CT_EUNSUPP, "--lib %s: cannot load %s: %s", m->name, path, dlerror());
        free(path);
        return rc;
    }
    free(path);
    ct_libmod_entry_fn entry;
    *(void **)&entry = dlsym(h, CT_LIBMOD_ENTRY);
    if (!entry)
        return ct_err_set(err, CT_EUNSUPP, "--lib %s: the module has no %s", m->name,
                          CT_LIBMOD_ENTRY);
    /* the ranks' places name where each answers whether it runs: a rank whose library calls
     * do not return asks its peers on other hosts (cmd/libwatch.c); without it (no interface
     * but loopback, no socket) it cannot, and runs on */
    char reach[CT_ALIVE_LEN];
    struct ct_err ignored = {0};
    be->reach = ct_alive_start(reach, sizeof reach, &ignored) == 0 && *reach ? reach : NULL;
    /* the handle stays open: the library lives until the process ends */
    int rc = entry(CT_LIBMOD_ABI, be, ctx, err);
    be->reach = NULL; /* this frame's */
    /* MPICH refusing a value of a forcing variable run --keep-rules kept (an _ALGORITHM name
     * it lacks) says nothing but that MPI_Init failed: what the environment sets is named (not
     * the empty rules file colltune sets to keep the defaults, m->rules_off) */
    char set[320];
    size_t l = err ? strlen(err->msg) : 0;
    if (rc == CT_EIO && err && strstr(err->msg, "MPI_Init failed") &&
        env_scan(m, kept_var, NULL, set, sizeof set, true) > 0)
        snprintf(err->msg + l, sizeof err->msg - l,
                 " (with %s of the environment: a value %s does not take?)", set, m->title);
    /* a launcher the library does not speak to (MPICH's hydra starting Open MPI, srun without
     * --mpi): each process a job of its own, every table one rank's */
    int want = ct_launch_env_size();
    if (rc == 0 && want > 1 && be->shape.nranks == 1)
        return ct_err_set(err, CT_EUNSUPP,
                          "%s started a job of 1 rank where its launcher started %d processes: "
                          "start it with %s (or srun --mpi=pmix|pmi2), or colltune --local N",
                          m->title, want, ct_libmod_launcher(m));
    return rc;
}

bool ct_libmod_env_same(const struct ct_libmod *m, const char *a, const char *b)
{
    if (!m)
        return !strcmp(a, b);
    return !strcmp(a + ct_words_match(m->env_prefix, a, true),
                   b + ct_words_match(m->env_prefix, b, true));
}

void ct_libmod_env_put(const struct ct_libmod *m, const char *name, const char *value)
{
    if (m)
        env_scan(m, same_var, name, NULL, 0, false);
    value ? setenv(name, value, 1) : unsetenv(name);
}

void ct_libmod_env_winning(const struct ct_libmod *m, const char *name, char *out, size_t len)
{
    size_t n = m ? ct_words_match(m->env_prefix, name, true) : 0;
    if (n)
        snprintf(out, len, "%.*s%s", (int)strcspn(m->env_prefix, " "), m->env_prefix, name + n);
    else
        snprintf(out, len, "%s", name);
}

/* The library's own list (prog, as a user knows it) that ended with status st (not 0; -1: it
 * could not run): CT_EUNSUPP with one line saying how */
static int info_failed(const struct ct_libmod *m, const char *prog, int st, struct ct_err *err)
{
    if (st < 0)
        return ct_err_set(err, CT_EUNSUPP, "cannot run %s (%s's own list of its variables)", prog,
                          m->title);
    if (st == 124 << 8)
        return ct_err_set(err, CT_EUNSUPP,
                          "%s (%s's own list of its variables) did not end within %d s", prog,
                          m->title, CT_LIBMOD_INFO_S);
    return ct_err_set(err, CT_EUNSUPP, "%s (%s's own list of its variables) %s", prog, m->title,
                      st == 127 << 8 ? "is not installed" : "failed");
}

int ct_libmod_env_default(const struct ct_libmod *m, const char *name, char *val, size_t len,
                          struct ct_err *err)
{
    char key[160], prog[64]; /* named as a user knows it, wherever it ran from */
    int st;
    if (ct_libmod_env_libc(name))
        return ct_err_set(err, CT_EINVAL,
                          "%s is glibc's allocator's, not one %s lists: give its values "
                          "(NAME=V1,V2,...)",
                          name, m->title);
    snprintf(key, sizeof key, m->info_key, name + ct_words_match(m->env_prefix, name, true));
    snprintf(prog, sizeof prog, "%.*s", (int)strcspn(m->info, " "), m->info);
    ct_libmod_env_put(m, name, NULL); /* the library's own value, not this environment's */
    if (info_read(m, key, true, val, len, &st))
        return 0;
    if (st)
        return info_failed(m, prog, st, err);
    return ct_err_set(err, CT_EINVAL, "%s does not list %s: not one of %s's variables here", prog,
                      name, m->title);
}

int ct_libmod_env_defaults(const struct ct_libmod *m, const char *const *names, int n,
                           char (*val)[CT_LIBMOD_DVAL], bool *listed, struct ct_err *err)
{
    char prog[64];
    int st = -1;
    if (n < 1 || n > CT_LIBMOD_DEFAULTS_MAX)
        return ct_err_set(err, CT_EINVAL, "%d variables asked at once", n);
    const char *keys[CT_LIBMOD_DEFAULTS_MAX];
    char key[CT_LIBMOD_DEFAULTS_MAX][160], (*v)[CT_LIBMOD_VAL] = ct_xmalloc(sizeof *v * (size_t)n);
    char unset[4096] = ""; /* the program's own values, not this environment's, which stays */
    size_t u = 0;
    for (int i = 0; i < n; i++)
        listed[i] = false;
    for (int i = 0; i < n; i++) {
        if (names[i][strspn(names[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                      "0123456789_")]) {
            free(v);
            return ct_err_set(err, CT_EINVAL, "'%s' is not a variable name", names[i]);
        }
        size_t pl = ct_words_match(m->env_prefix, names[i], true);
        snprintf(key[i], sizeof key[i], m->info_key, names[i] + pl);
        keys[i] = key[i];
        for (const char *p = m->env_prefix; *p && u < sizeof unset; p += strspn(p, " ")) {
            size_t l = strcspn(p, " "); /* the name under each of the library's prefixes */
            u += (size_t)snprintf(unset + u, sizeof unset - u, "-u %.*s%s ", (int)l, p,
                                  names[i] + pl);
            p += l;
        }
    }
    int got = u < sizeof unset ? info_read_keys(m, unset, keys, n, true, v, listed, &st) : 0;
    for (int i = 0; i < n; i++)
        snprintf(val[i], CT_LIBMOD_DVAL, "%s", listed[i] ? v[i] : "");
    free(v);
    snprintf(prog, sizeof prog, "%.*s", (int)strcspn(m->info, " "), m->info);
    return st && !got ? info_failed(m, prog, st, err) : 0;
}

/* s as a whole number up to 2^59 (a limit's room for 8x): false when it is not one */
static bool whole(const char *s, unsigned long long *x)
{
    long v;
    if (ct_parse_int(s, 0, 1L << 59, &v))
        return false;
    *x = (unsigned long long)v;
    return true;
}

int ct_libmod_env_around(const struct ct_libmod *m, const char *name, char *list, size_t len,
                         char *dflt, size_t dlen, struct ct_err *err)
{
    CT_TRY(ct_libmod_env_default(m, name, dflt, dlen, err));
    unsigned long long d;
    if (!whole(dflt, &d) || d < 2)
        return ct_err_set(err, CT_EINVAL,
                          "%s's own value of %s is '%s', not a whole number to space values "
                          "around: give them (NAME=V1,V2,...)",
                          m->title, name, dflt);
    snprintf(list, len, "%llu,%llu,%llu,%llu", d / 2, 2 * d, 4 * d, 8 * d);
    return 0;
}

/* The geometric midpoint of a < b, rounded to a multiple of the largest power of two no more
 * than a quarter of it (11585 to 12288, 5793 to 6144): 0 when that is not strictly between. */
static unsigned long long midpoint(unsigned long long a, unsigned long long b)
{
    double m = sqrt((double)a * (double)b);
    unsigned long long q = 1;
    while ((double)(q * 2) <= m / 4)
        q *= 2;
    unsigned long long r = (unsigned long long)llround(m / (double)q) * q;
    return r > a && r < b ? r : 0;
}

int ct_libmod_env_between(const char *const *v, const bool *ok, int n, int best, const char *own,
                          bool past, unsigned long long out[2], bool ends[2])
{
    unsigned long long x, y, lo = 0, hi = 0;
    bool below = false, above = false; /* a neighbour: lo, hi */
    ends[0] = ends[1] = false;
    if (best < 0 || best >= n || !whole(v[best], &x))
        return 0;
    for (int i = 0; i <= n; i++) /* the values that ran, and the library's own */
        if (i == n ? whole(own, &y) : ok[i] && i != best && whole(v[i], &y)) {
            if (y < x && (!below || y > lo))
                lo = y, below = true;
            if (y > x && (!above || y < hi))
                hi = y, above = true;
        }
    int k = 0;
    ends[0] = !below;
    ends[1] = !above;
    unsigned long long m[2] = {below  ? midpoint(lo, x)
                               : past ? x / 2
                                      : 0,
                               above                       ? midpoint(x, hi)
                               : past && x <= (1ULL << 58) ? 2 * x
                                                           : 0};
    for (int j = 0; j < 2; j++) {
        bool judged = !m[j]; /* none, or one of the values already (a value that failed) */
        for (int i = 0; i < n && !judged; i++)
            judged = whole(v[i], &y) && y == m[j];
        if (!judged)
            out[k++] = m[j];
    }
    return k;
}

/* Whether value excludes components ("^a,b,...") and not keep. */
static bool excludes_only(const char *value, const char *keep)
{
    if (!value || value[0] != '^' || !value[1])
        return false;
    char *dup = ct_xstrdup(value + 1);
    bool ok = true;
    for (char *s = NULL, *t = strtok_r(dup, ",", &s); t && ok; t = strtok_r(NULL, ",", &s))
        ok = strcmp(t, keep) != 0;
    free(dup);
    return ok && !strstr(value, ",,") && value[strlen(value) - 1] != ',';
}

int ct_libmod_env_check(const struct ct_libmod *m, const char *name, const char *value,
                        struct ct_err *err)
{
    bool word = *name && (isalpha((unsigned char)*name) || *name == '_');
    for (const char *p = name; word && *p; p++)
        word = isalnum((unsigned char)*p) || *p == '_';
    if (!word || strlen(name) > CT_LIBMOD_ENV_NAME_MAX)
        return ct_err_set(err, CT_EINVAL, "'%s' is not a variable name", name);
    if (!listed(m->env_prefix, name, true) && !ct_libmod_env_libc(name))
        return ct_err_set(err, CT_EINVAL,
                          "%s is not one of %s's variables (%s...) nor one of glibc's allocator's "
                          "(%s)",
                          name, m->title, m->env_prefix, libc_env);
    bool exclude = m->env_exclude && !strcmp(name, m->env_exclude);
    if (exclude && value && !excludes_only(value, m->env_exclude_keep))
        return ct_err_set(err, CT_EINVAL,
                          "%s='%s': only components excluded ('^han'), and not %s, whose "
                          "algorithms the rules choose",
                          name, value, m->env_exclude_keep);
    if (!exclude && (listed(m->rules_env, name, false) || listed(m->env_refused, name, false) ||
                     (m->own_name && !strcmp(name, m->own_name))))
        return ct_err_set(err, CT_EINVAL,
                          "%s loads rules or chooses the collective code (or loads parameter "
                          "files, or what the ranks are passed): the export's or the site's own "
                          "(a launch setting is a transport or protocol variable)",
                          name);
    bool val = value && *value;
    for (const char *p = value; val && *p; p++)
        val = isalnum((unsigned char)*p) || strchr("_.,:/+^@%=-", *p);
    if (value && !val)
        return ct_err_set(err, CT_EINVAL,
                          "%s='%s': a value is a word of letters, digits and _.,:/+^@%%=-", name,
                          value);
    /* tunables are NAME=VALUE pairs parted by ':'; only the allocator's are launch settings */
    for (const char *p = value; p && !strcmp(name, LIBC_TUNABLES);) {
        size_t n = strcspn(p, ":"), k = strlen(LIBC_TUNABLE_PREFIX);
        const char *eq = memchr(p, '=', n);
        if (n <= k || strncmp(p, LIBC_TUNABLE_PREFIX, k) || !eq || eq == p + k || eq == p + n - 1)
            return ct_err_set(err, CT_EINVAL,
                              "%s='%s': only the allocator's tunables, as %sNAME=VALUE parted by "
                              "':' (tunables(7))",
                              name, value, LIBC_TUNABLE_PREFIX);
        p = p[n] ? p + n + 1 : NULL;
    }
    return 0;
}
