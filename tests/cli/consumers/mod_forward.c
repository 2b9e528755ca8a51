/* SPDX-License-Identifier: MIT */
/*
 * The engine module of t3100's MPICH spy build. MPICH's algorithm functions live only inside
 * its libraries, and its static archive (which -Wl,--wrap can reach) cannot go into a shared
 * module (initial-exec TLS), so the test links MPICH's engine, the archive and
 * consumers/mpich_spy.c into a copy of colltune itself, with the engine's entry point renamed
 * ct_mpich_spy_entry. colltune loads its engine module as always (COLLTUNE_LIB_DIR); this one
 * hands over to the engine inside the executable.
 */
#include <dlfcn.h>
#include <stddef.h>

struct ct_backend;
struct ct_err;

__attribute__((visibility("default"))) int ct_libmod_entry(int abi, struct ct_backend *be,
                                                           void **ctx, struct ct_err *err);
int ct_libmod_entry(int abi, struct ct_backend *be, void **ctx, struct ct_err *err)
{
    int (*entry)(int, struct ct_backend *, void **, struct ct_err *);
    *(void **)&entry = dlsym(RTLD_DEFAULT, "ct_mpich_spy_entry");
    return entry ? entry(abi, be, ctx, err) : -1;
}
