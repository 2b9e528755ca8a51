/* SPDX-License-Identifier: MIT */
/*
 * A library's launch settings, as sweep --lib LIB gives them (--env NAME=VALUE, --env-search
 * NAME=V1,V2,...) and a config carries them: a search's values split, and whether the
 * settings leave the library's shared-memory transport room (backend/libshm.c), for the
 * option checks (cmd/), a config's verify (both of its sides) and --each-setting's passes.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "../backend/libmod.h"
#include "libverify.h"

int ct_lib_env_values(const struct ct_lib_env *e, char (*v)[sizeof e->value])
{
    int n = 0;
    for (const char *p = e->value;; p++) {
        size_t len = strcspn(p, ",");
        if (!len || n == CT_ENV_SEARCH_MAX)
            return -1;
        snprintf(v[n], sizeof v[n], "%.*s", (int)len, p);
        for (int i = 0; i < n; i++)
            if (!strcmp(v[i], v[n]))
                return -1;
        n++;
        p += len;
        if (!*p)
            return n;
    }
}

int ct_lib_env_fits(const struct ct_libmod *m, const struct ct_lib_env *env, int n,
                    const struct ct_lib_env *search, int ns, const char **by, struct ct_err *err)
{
    struct ct_libmod_shm c = {0};
    enum { MAX = CT_LIB_ENV_MAX + CT_ENV_SEARCH_VARS };
    const char *names[MAX], *values[MAX];
    n = n < CT_LIB_ENV_MAX ? n : CT_LIB_ENV_MAX;
    ns = ns < CT_ENV_SEARCH_VARS ? ns : CT_ENV_SEARCH_VARS;
    for (int i = 0; i < n; i++)
        names[i] = env[i].name, values[i] = env[i].value;
    for (int s = 0; s < ns; s++) /* unset where not searched: the search unsets them */
        names[n + s] = search[s].name, values[n + s] = NULL;
    int code = ct_libmod_shm_fits(m, &c, names, values, n + ns, err);
    for (int s = 0; !code && s < ns; s++) {
        char v[CT_ENV_SEARCH_MAX][sizeof search[s].value];
        int nv = search[s].value[0] ? ct_lib_env_values(&search[s], v) : 0;
        for (int i = 0, j = n; i < ns; i++) /* the other unset, the one searched last */
            if (i != s)
                names[j] = search[i].name, values[j++] = NULL;
        names[n + ns - 1] = search[s].name;
        for (int k = 0; !code && k < nv; k++) {
            values[n + ns - 1] = v[k];
            code = ct_libmod_shm_fits(m, &c, names, values, n + ns, err);
        }
    }
    *by = !code || c.named < 0 ? NULL : c.named < n ? "--env" : "--env-search";
    return code;
}

/* Whether every item of value (the whole, or each of a search's comma-parted values: list)
 * is a number: digits with a sign, and a k, m or g after them where suffix; or, where
 * boolean, one of the words a 0/1 setting takes (MPICH's yes, no, true, false...). */
static bool numbers(const char *value, bool list, bool suffix, bool boolean)
{
    static const char *const words[] = {"yes", "no", "true", "false", "on", "off"};
    for (const char *p = value;;) {
        size_t len = list ? strcspn(p, ",") : strlen(p), d = (*p == '-') + 0;
        bool ok = len > d && isdigit((unsigned char)p[d]);
        while (ok && d < len && isdigit((unsigned char)p[d]))
            d++;
        ok = ok && (d == len || (suffix && d + 1 == len && strchr("kKmMgG", p[d])));
        for (size_t w = 0; !ok && boolean && w < sizeof words / sizeof words[0]; w++)
            ok = strlen(words[w]) == len && !strncasecmp(p, words[w], len);
        if (!ok)
            return false;
        if (!p[len])
            return true;
        p += len + 1;
    }
}

int ct_lib_env_known(const struct ct_libmod *m, const struct ct_lib_env *env, int n,
                     const struct ct_lib_env *search, int ns, const char **by, struct ct_err *err)
{
    enum { MAX = CT_LIB_ENV_MAX + CT_ENV_SEARCH_VARS };
    const char *names[MAX];
    const struct ct_lib_env *of[MAX];
    char val[MAX][CT_LIBMOD_DVAL];
    bool listed[MAX];
    int k = 0;
    *by = NULL;
    for (int i = 0; i < n + ns && i < MAX; i++) {
        const struct ct_lib_env *e = i < n ? &env[i] : &search[i - n];
        bool libc = ct_libmod_env_libc(e->name), tun = !strcmp(e->name, "GLIBC_TUNABLES");
        /* glibc reads its allocator's variables as numbers: another word is no setting */
        if (libc && !tun && e->value[0] && !numbers(e->value, i >= n, false, false))
            return *by = i < n ? "--env" : "--env-search",
                   ct_err_set(err, CT_EINVAL, "%s='%s': glibc reads a whole number", e->name,
                              e->value);
        if (!libc && k < CT_LIBMOD_DEFAULTS_MAX && (i < n || e->value[0])) /* NAME alone: */
            names[k] = e->name, of[k++] = e; /* the search reads its value (libsearch.c) */
    }
    struct ct_err ignored = {0}; /* a list that cannot run: nothing judged */
    if (!k || ct_libmod_env_defaults(m, names, k, val, listed, &ignored) < 0)
        return 0;
    for (int i = 0; i < k; i++) {
        const struct ct_lib_env *e = of[i];
        bool list = !(e >= env && e < env + n);
        *by = list ? "--env-search" : "--env";
        if (!listed[i])
            return ct_err_set(err, CT_EINVAL,
                              "%.*s does not list %s: not one of %s's variables here",
                              (int)strcspn(m->info, " "), m->info, e->name, m->title);
        /* a number where the library's value is one (a word read as 0: Open MPI then stops
         * in MPI_Init with a page of its own); 0 or 1 may be a yes or no */
        if (numbers(val[i], false, true, false) &&
            !numbers(e->value, list, true, !strcmp(val[i], "0") || !strcmp(val[i], "1")))
            return ct_err_set(err, CT_EINVAL, "%s='%s': %s's value is a number (%s)", e->name,
                              e->value, m->title, val[i]);
    }
    *by = NULL;
    return 0;
}

int ct_lib_env_ok(const struct ct_libmod *m, const struct ct_lib_env *env, int n,
                  const struct ct_lib_env *search, int ns, const char **by, struct ct_err *err)
{
    CT_TRY(ct_lib_env_known(m, env, n, search, ns, by, err));
    return ct_lib_env_fits(m, env, n, search, ns, by, err);
}

int ct_lib_config_fits(const struct ct_libmod *m, const struct ct_librules *l, bool *theirs,
                       struct ct_err *err)
{
    struct ct_libmod_shm c = {0}; /* one run of the library's list for both sides */
    const char *names[CT_LIB_ENV_MAX], *values[CT_LIB_ENV_MAX], *unset[CT_LIB_ENV_MAX] = {0};
    int n = l->nenv < CT_LIB_ENV_MAX ? l->nenv : CT_LIB_ENV_MAX;
    for (int i = 0; i < n; i++)
        names[i] = l->env[i].name, values[i] = l->env[i].value;
    int code = ct_libmod_shm_fits(m, &c, names, values, n, err); /* A: with them */
    *theirs = code && c.named >= 0;
    return code ? code : ct_libmod_shm_fits(m, &c, names, unset, n, err); /* B: them unset */
}
