/* SPDX-License-Identifier: MIT */
/*
 * Library engines: the table of MPI libraries colltune can measure (--lib), where each one's
 * module (build/ct-lib-<lib>.so, built by its own mpicc) and launcher are, and opening the
 * module in a rank (dlopen RTLD_NOW|RTLD_GLOBAL: Open MPI's own plugins need its symbols
 * global). The module fills a struct ct_backend like the native engine's.
 */
#ifndef CT_LIBMOD_H
#define CT_LIBMOD_H

#include "backend.h"

/* The symbol a module exports; abi must be CT_LIBMOD_ABI. MPI_Init happens there. */
#define CT_LIBMOD_ABI 9
#define CT_LIBMOD_ENTRY "ct_libmod_entry"
typedef int (*ct_libmod_entry_fn)(int abi, struct ct_backend *be, void **ctx, struct ct_err *err);

/* Set in the environment of ranks colltune started under the library's launcher. */
#define CT_LIBMOD_ENV "COLLTUNE_LIB_RANK"
/* HOST:PORT#TOKEN: where rank 0 says that the library started, sending TOKEN
 * (ct_libmod_notify) */
#define CT_LIBMOD_NOTIFY_ENV "COLLTUNE_LIB_NOTIFY"
#define CT_LIBMOD_TOKEN_LEN 16

struct ct_libmod {
    const char *name;     /* --lib value: "ompi", "mpich" */
    const char *title;    /* "Open MPI" */
    const char *launcher; /* on PATH: "mpirun.openmpi" */
    const char *np;       /* the launcher's rank-count flag */
    const char *hosts;    /* the launcher's host-list flag ("--host", "-hosts") */
    const char *extra;    /* further launcher flags (space-separated), or "" */
    /* flags for a launch on this host only (no host list), or NULL: Open MPI's
     * --oversubscribe (more --local ranks than cores); with a host list its slots place the
     * ranks, and Open MPI 5's mapper, told to oversubscribe, put every rank on the first
     * host */
    const char *local;
    /* the launcher's flags that leave the ranks unbound (--no-bind), or NULL where it binds
     * none by default: without them the ranks are bound as the library's jobs are */
    const char *unbound;
    /* The variables (fnmatch patterns, space-separated) that load rules or force algorithms:
     * left out of a rank's environment where the engine measures the library's defaults */
    const char *rules_env;
    /* NAME=VALUE (space-separated) set then, overriding what the library's parameter files
     * say (Open MPI reads a rules file named in mca-params.conf), or "" */
    const char *rules_off;
    const char *setenv; /* flag that passes NAME=VALUE to the ranks, or NULL (inherited) */
    /* the library's own parameter that passes NAME=VALUE;... to the ranks and refuses to be
     * mixed with setenv (Open MPI's mca_base_env_list, set in a site's mca-params.conf or the
     * environment): where it has a value, the ranks' variables are added to it on the
     * launcher's command line instead (its delimiter: the parameter's name + "_delimiter"),
     * or NULL */
    const char *env_list;
    const char *format; /* the export format the library loads: "ompi-rules" */
    /* NAME, VALUE that keep the library on its own defaults whatever its config files say
     * (an installed openmpi-mca-params.conf loading rules), or NULL */
    const char *own_name, *own_value;
    /* the prefixes (space-separated) of the library's own variables: what sweep --env may set;
     * and those of them (fnmatch patterns) it may not besides rules_env: they choose which
     * collective code runs, or load other parameter files */
    const char *env_prefix, *env_refused;
    /* a refused variable that may still exclude components ("^a,b"), and the component it may
     * not exclude: Open MPI's coll=^han (coll/han serves communicators across hosts on Open
     * MPI 5, and coll/tuned's rules reach only its sub-communicators there), or NULL */
    const char *env_exclude, *env_exclude_keep;
    /* the library's own program that lists its variables with their values, and the text
     * before a variable's value in its output (%s: the name without its prefix; a key not
     * ending in ':' is followed by spaces and '=') */
    const char *info, *info_key;
    /* the launcher's plain name where a site installs the library as its only MPI (modules,
     * a vendor's build: "mpirun"), taken where m->launcher is not on PATH and its --version
     * names the library (launcher_says: "Open MPI") */
    const char *launcher_alt, *launcher_says;
    /* the prefixes (space-separated) of the library's shared-memory transport's variables,
     * whose fragments its segment must hold (ct_libmod_shm_fits): Open MPI's vader (4.x) and
     * sm (5.x); NULL where none is known; and the variable that selects the transports
     * ("OMPI_MCA_btl": a list naming none of them, or "^" one, leaves the transport out) */
    const char *shm_prefix, *shm_select;
};

const struct ct_libmod *ct_libmod_find(const char *name); /* NULL when unknown */
const char *ct_libmod_names(void);                        /* "ompi or mpich" */

/* The module's path (new memory): $COLLTUNE_LIB_DIR, else the folder of the running
 * binary, else its build/ below it. CT_EUNSUPP with one line when absent. */
int ct_libmod_path(const struct ct_libmod *m, char **path, struct ct_err *err);
/* The launcher colltune runs: m->launcher where it is on PATH, else m->launcher_alt where it is
 * and says it is the library's; m->launcher where neither (chosen once per process). */
const char *ct_libmod_launcher(const struct ct_libmod *m);
/* CT_EUNSUPP with one line when neither launcher is on PATH. */
int ct_libmod_launcher_check(const struct ct_libmod *m, struct ct_err *err);
/* Before a launch: the launcher (ct_libmod_launcher_check), the hosts (ct_libmod_hosts_resolve)
 * and the job: a datatype (enum ct_dtype) and an op (enum ct_redop) MPI has (float16,
 * bfloat16 and avg are not; -1: not judged). 0, or the first refusal in err. */
int ct_libmod_launch_check(const struct ct_libmod *m, const char *hosts, int dtype, int op,
                           struct ct_err *err);
/*
 * A host list for the launcher: "HOST[:SLOTS],..." (SLOTS 1..1024 ranks, default 1; HOST a
 * name or address). The number of ranks it places, or -1 when malformed.
 */
int ct_libmod_hosts_ranks(const char *list);
/* The same, and the most and the fewest slots of one host. */
int ct_libmod_hosts_slots(const char *list, int *most, int *least);
/* Whether each host of a well-formed list resolves here, or ssh reaches it as an alias (its
 * HostName resolves, or a jump host or proxy command reaches it): 0, or CT_EINVAL naming the
 * first that does not (hydra waits on an ssh that failed at once). */
int ct_libmod_hosts_resolve(const char *list, struct ct_err *err);
/*
 * The command that starts n ranks of `self argv[0] argv[1]...` (argv[0]: the subcommand) under the
 * library's launcher with CT_LIBMOD_ENV=name and CT_LIBMOD_NOTIFY_ENV=notify (NULL: empty, no
 * word awaited) in their environment (by the launcher's flag, else set here for it to pass on);
 * with hosts (a host list as above, or NULL: this host) on those hosts; the ranks bound as the
 * launcher binds a job's, or with `unbound` (--no-bind) left free. glibc's allocator variables
 * of this environment (ct_libmod_env_libc) are passed by the launcher's flag too (where it has
 * one): each of them (3 markers and 5 names fill CT_LIBMOD_MARKS), NAME=VALUE up to
 * CT_LIBMOD_MARK bytes with its end, room for any launch setting (a name up to
 * CT_LIBMOD_ENV_NAME_MAX, a value up to 159 bytes). NULL-ended, new memory
 * (ct_libmod_argv_free).
 */
#define CT_LIBMOD_MARKS 8
#define CT_LIBMOD_MARK 256
char **ct_libmod_argv(const struct ct_libmod *m, int n, const char *hosts, bool unbound,
                      const char *notify, const char *self, int argc, char **argv);

/* backend/libstart.c: a socket the job's rank 0 reaches once its library started, listening
 * in port_range ("LO-HI", NULL: any port); what the ranks need in notify ("HOST:PORT#TOKEN",
 * pass it to ct_libmod_argv and ct_libmod_start): the address ifname's, else the route to the
 * first of hosts, else (hosts NULL: this host only) 127.0.0.1, and a random token. Returns the
 * socket or an error. */
int ct_libmod_notify_open(const char *hosts, const char *ifname, const char *port_range,
                          char *notify, size_t len, struct ct_err *err);
/* In rank 0, once the library started: tell the launching colltune (CT_LIBMOD_NOTIFY_ENV;
 * nothing when unset). */
int ct_libmod_notify(struct ct_err *err);
/* How a launcher's job went (ct_libmod_start). */
struct ct_libmod_end {
    bool started; /* rank 0 said the library started (on lfd, with notify's token) */
    int sig;      /* the last signal colltune received meanwhile, 0 if none */
    bool said;    /* its standard error had a line (passed on) */
    bool ours;    /* one of them a colltune rank's failure ("colltune ...error: ...") */
    int out_errno; /* writing its standard output on failed so (EPIPE: the reader left) */
};
/* Run the launcher command v and wait for it, its standard output captured in *out (new
 * memory, also on failure) when out is not NULL, else passed on to this standard output (a
 * write that fails there, a full disk or a reader gone, said in how->out_errno, the rest
 * read and dropped: the launcher would drop it unsaid), its standard error passed on to err_fd less
 * its own boxes about a rank that exited nonzero (backend/launcherr.h); SIGPIPE ignored
 * meanwhile (a closed err_fd loses the lines, not the job). If rank 0 has not
 * said the library started within boot_s seconds, the launcher is stopped (SIGTERM, SIGKILL 5
 * s later) and CT_ETIMEDOUT returned. A signal colltune receives meanwhile (SIGINT, SIGQUIT,
 * SIGTERM, SIGHUP) is passed on to the launcher, but the terminal's keys, which reach it too.
 * Returns its exit status (128 + N: killed by signal N; 127: it could not be started). */
int ct_libmod_start(char **v, int lfd, const char *notify, double boot_s, char **out, int err_fd,
                    struct ct_libmod_end *how, struct ct_err *err);
void ct_libmod_argv_free(char **v);

/* In a rank, before the library starts: leave every variable of m->rules_env out of this
 * process's environment and set m->rules_off, so that the library runs its defaults (an
 * export sourced, or named in its parameter files, would otherwise decide its own choice).
 * The names left out in left (comma-separated, "" when none; cut to len). Returns how many. */
int ct_libmod_defaults_env(const struct ct_libmod *m, char *left, size_t len);
/* The variables of m->rules_env this process's environment sets that force an algorithm
 * (*_algorithm*, *_ALGORITHM), as NAME=value in kept (comma-separated, as
 * ct_libmod_defaults_env), left set (run --keep-rules). Returns how many. */
int ct_libmod_forced_env(const struct ct_libmod *m, char *kept, size_t len);
#define CT_LIBMOD_ENV_NAME_MAX 95
/* Whether name is one of glibc's allocator variables (MALLOC_MMAP_MAX_, ...): a launch
 * setting of every library, which the ranks' C library reads (no library prefix; Open MPI's
 * launcher is told to pass it on, ct_libmod_argv). */
bool ct_libmod_env_libc(const char *name);
/* A launch setting for the library (sweep --env NAME=VALUE, a config's "env"): 0 when name is
 * a variable name with one of m->env_prefix's prefixes (or glibc's allocator's,
 * ct_libmod_env_libc), matching none of m->rules_env (the
 * export's own, which the engine leaves out) or m->env_refused, and value (NULL: not checked)
 * is a word of letters, digits and _.,:/+^@%=- (it goes into shell and Slurm files as it
 * is), else CT_EINVAL with one line. */
int ct_libmod_env_check(const struct ct_libmod *m, const char *name, const char *value,
                        struct ct_err *err);
/* Whether a and b name one variable of the library's (m NULL: the same name): MPICH reads
 * MPIR_CVAR_X, MPICH_X and MPIR_PARAM_X as one, so they compare without m->env_prefix's
 * prefixes. */
bool ct_libmod_env_same(const struct ct_libmod *m, const char *a, const char *b);
/* Sets name to value (NULL: unsets it) in this process's environment, which the launcher
 * passes to the ranks, after unsetting the same variable under the library's other prefixes
 * (ct_libmod_env_same): MPICH reads all three and the last one read wins, so a user's
 * MPICH_X would otherwise outlast an MPIR_CVAR_X cleared for the defaults' side. */
void ct_libmod_env_put(const struct ct_libmod *m, const char *name, const char *value);
/* name under the prefix the library reads last, so that its value wins (the first of
 * m->env_prefix's: MPICH reads MPICH_X, then MPIR_PARAM_X, then MPIR_CVAR_X), into out (len):
 * what an export sets, so that the same variable under another prefix in a job's environment
 * does not decide instead. m NULL, or a name without one of its prefixes: name as it is. */
void ct_libmod_env_winning(const struct ct_libmod *m, const char *name, char *out, size_t len);
/* The value the library gives variable name (one of its own, ct_libmod_env_check) when no
 * environment sets it, as its own program m->info lists it (name is cleared first,
 * ct_libmod_env_put): into val (len), 0; CT_EINVAL with one line when the program does not
 * list it, CT_EUNSUPP when the program cannot run or does not end within CT_LIBMOD_INFO_S. */
int ct_libmod_env_default(const struct ct_libmod *m, const char *name, char *val, size_t len,
                          struct ct_err *err);
#define CT_LIBMOD_INFO_S 60 /* m->info's time limit: then CT_EUNSUPP */
/* The same for n variables (at most CT_LIBMOD_DEFAULTS_MAX) in one run of m->info, which runs
 * without them (under each of the library's prefixes) while this environment keeps them:
 * val[i] and listed[i] ("" and false where it does not list it). 0, or CT_EUNSUPP where the
 * program cannot run, fails or is cut off and listed none. */
#define CT_LIBMOD_DEFAULTS_MAX 16
#define CT_LIBMOD_DVAL 64
int ct_libmod_env_defaults(const struct ct_libmod *m, const char *const *names, int n,
                           char (*val)[CT_LIBMOD_DVAL], bool *listed, struct ct_err *err);
/* sweep --env-search NAME without values: the values to search, spaced around the library's
 * default d (ct_libmod_env_default) by factors of 2 (d/2, 2d, 4d, 8d: the eager limits'
 * gains lay within 8x of Open MPI's own), comma-separated into list (len), and d into dflt
 * (dlen). CT_EINVAL with one line when d is not a whole number from 2 up (a switch, a name, a
 * library's "auto"): such a variable's values are the user's to give. */
int ct_libmod_env_around(const struct ct_libmod *m, const char *name, char *list, size_t len,
                         char *dflt, size_t dlen, struct ct_err *err);
/* sweep --env-search's finer step: v[best] (n values; ok[i]: value i ran) and its nearest
 * neighbours, below and above, among the other values that ran and the library's own (own:
 * NULL or not a whole number, not known): the geometric midpoint toward each, rounded to a
 * multiple of the largest power of two at most a quarter of it (16384 and 8192: 12288), where
 * that lies strictly between; into out, the one below first. ends[0] (ends[1]): v[best] is a
 * whole number with none of those below (above) it, the search's end; there, with past (the
 * values were spaced by factors of 2, ct_libmod_env_around), the next one past it (half, or
 * twice v[best]). A value already among v (one that failed) is not given again. Returns how
 * many (0: v[best] not a whole number, no neighbour, or no room between). */
int ct_libmod_env_between(const char *const *v, const bool *ok, int n, int best, const char *own,
                          bool past, unsigned long long out[2], bool ends[2]);

/* backend/libshm.c: whether the launch settings leave room in the library's shared-memory
 * segment for the fragments its transport carves at MPI_Init. Open MPI's vader/sm takes
 * free_list_num (at most free_list_max) of each list (inline, eager_limit, and max_send_size
 * where the single copy is not XPMEM's), each its size and a descriptor, from a rank's segment
 * (segment_size, at least 2 MiB), and where they do not fit the transport does not start and
 * the ranks of a host talk over TCP without a word (4.1.4: an eager limit of 1 MiB in an 8
 * MiB segment, AllReduce 512 KiB 4.4x slower than in a 9 MiB one). */
enum {
    CT_SHM_SEGMENT,
    CT_SHM_EAGER,
    CT_SHM_MAX_SEND,
    CT_SHM_INLINE,
    CT_SHM_FREE_LIST,
    CT_SHM_FREE_LIST_MAX,
    CT_SHM_XPMEM,
    CT_LIBMOD_SHM_VARS
};
/* The bytes a segment must hold for the values v (indexed as above; v[CT_SHM_XPMEM]: 1 where
 * the single copy is XPMEM's): per list its count x its fragment (size + 256, to 64 bytes),
 * and the FIFO's 128. Saturates at ULLONG_MAX. */
unsigned long long ct_libmod_shm_need(const unsigned long long v[CT_LIBMOD_SHM_VARS]);
/* A size as Open MPI reads one (decimal, 0x hex or 0 octal, a k, m or g suffix: KiB, MiB,
 * GiB), capped at 2^40: 0, or -1 when s is not one. */
int ct_libmod_shm_size(const char *s, unsigned long long *x);
/* The library's own values read so far (one ct_libmod_shm per command: zeroed) */
struct ct_libmod_shm {
    int named;       /* the setting the last refusal named (its index; -1: this environment's) */
    char prefix[32]; /* the BTL's prefix they are of */
    char select[CT_LIBMOD_DVAL]; /* the library's own list of transports (a site's file's) */
    bool asked;      /* its list was run for them */
    bool listed[CT_LIBMOD_SHM_VARS];
    unsigned long long dflt[CT_LIBMOD_SHM_VARS];
};
/* The n settings names[i]=values[i] (the --env settings, a searched value beside them, last;
 * or a config's; a NULL value: the variable unset for the ranks, not this environment's), with
 * this environment, which the ranks inherit: 0 when neither sets one of m->shm_prefix's rule's
 * variables, when they leave the transport out (m->shm_select: a setting's list, else this
 * environment's, else the library's own, a site's file's), or when the segment holds what they
 * make it carve, each variable not set at the library's own value (m->info, run once into c for
 * all of them; a variable it does not list, or a value that is no size: 0, not judged).
 * CT_EINVAL with one line naming the setting (the last one given where it is the transport's,
 * else the first given in the order eager limit, max send, inline, counts, segment, single
 * copy; else this environment's), its index in c->named (-1: this environment's), and the
 * segment size that holds the fragments (to a whole MiB), or that no segment can (more than an
 * int). */
int ct_libmod_shm_fits(const struct ct_libmod *m, struct ct_libmod_shm *c, const char *const *names,
                       const char *const *values, int n, struct ct_err *err);

/* True in a process a launcher started as a rank (CT_LIBMOD_ENV, or Open MPI's, a PMI or a
 * PMIx launcher's variables): it measures instead of launching. */
bool ct_libmod_in_rank(void);

/* The cores each host's ranks share: in the process that launches them, its own
 * (ct_cpus_usable: its affinity, the cgroup's cpuset and quota), which ct_libmod_argv tells
 * the ranks of a launch on this host in CT_CPUS_ENV; in a rank, its host's (ct_cpus_host:
 * the cpuset and quota, not the binding its launcher gave it, or fewer when told so). More
 * ranks on a host time the scheduler. */
int ct_libmod_cores(void);

/* This rank's number as its launcher says (Open MPI's, PMI's or PMIx's variables); 0 if none. */
int ct_libmod_rank(void);
/* Its number among the ranks of its host (Open MPI's, Hydra's or Slurm's variables); -1 if
 * the launcher does not say. */
int ct_libmod_local_rank(void);

/* In a rank: load the module and bring the library up (MPI_Init). be->close ends it. On
 * failure be->close may be set too: report the error, then call it (it is collective).
 * refused: this rank refused the job before it started (be->refused). */
int ct_libmod_open(const struct ct_libmod *m, int refused, struct ct_backend *be, void **ctx,
                   struct ct_err *err);

/* The variables an export's loader lines set, in order: what a job sources to load the file
 * (ct_export_loader; sweep --verify --lib sets them itself, ct_verify_side_env). */
#define CT_LOADER_MAX 24 /* a section's settings (MPICH's under two names each) and the rules' */
struct ct_loader {
    char name[CT_LOADER_MAX][128], value[CT_LOADER_MAX][4200];
    int n;
};

#endif
