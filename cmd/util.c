/* SPDX-License-Identifier: MIT */
/* Messages and argument parsing shared by subcommands. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/cpus.h"
#include "../lib/file.h"
#include "../output/sweep_out.h"
#include "../transport/boot.h"
#include "../transport/launch.h"
#include "cmd.h"

/* "colltune CMD: KIND: message\n" in one write: ranks of one job share stderr, and stderr is
 * unbuffered, so a line written in pieces interleaves with another rank's. */
static void say(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "colltune%s%s: %s: ", cmd ? " " : "", cmd ? cmd : "", kind);
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t len = m < 0 ? (size_t)n : (size_t)n + (size_t)m;
    if (len > sizeof line - 2) { /* cut, marked */
        len = sizeof line - 2;
        memcpy(line + len - 3, "...", 3);
    }
    line[len++] = '\n';
    for (size_t off = 0; off < len;) {
        ssize_t w = write(STDERR_FILENO, line + off, len - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

int ct_cmd_fail(const char *cmd, int code, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fflush(stderr);
    /* a runtime failure once standard output's reader left (| head; a forked rank's writes
     * then fail EPIPE): quiet, as a producer SIGPIPE ends */
    if (code == CT_EXIT_FAIL && ct_file_reader_left(STDOUT_FILENO))
        return CT_LAUNCH_READER_LEFT;
    va_start(ap, fmt);
    say(cmd, "error", fmt, ap);
    va_end(ap);
    return code;
}

void ct_cmd_warn(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fflush(stderr);
    va_start(ap, fmt);
    say(cmd, "warning", fmt, ap);
    va_end(ap);
}

static bool g_forks;      /* ct_cmd_forks_ranks */
static char g_made[4096]; /* the folder ct_cmd_out_dir made, "" if none */
static pid_t g_made_pid;  /* the process that made it */
static int g_refused;     /* ct_cmd_refused */

/* This colltune's node in a job of one --local N a node; -1 in any other (a command that forks
 * no ranks of its own: a library's launcher starts them, whatever the variables say) */
static int node_of_job(void)
{
    return g_forks ? ct_launch_env_node() : -1;
}

/* An output refused: said; where rank 0 of a job a launcher started refuses (its peers do not
 * check), the exit code kept for the job to leave with once it has formed, and 0 */
static int refuse(const char *cmd, bool launched, const char *why)
{
    int code = ct_cmd_fail(cmd, CT_EXIT_USAGE, "%s", why);
    /* (a launcher's one task, srun --pty: this process launches, or runs alone; node 0's
     * colltune of a job of one a node starts its ranks, and they tell the others') */
    if (!launched ||
        (node_of_job() != 0 && (ct_launch_env_rank() != 0 || ct_launch_env_size() == 1)))
        return code;
    g_refused = code;
    return 0;
}

void ct_cmd_forks_ranks(bool forks)
{
    g_forks = forks;
}

bool ct_cmd_not_first(bool launched)
{
    return launched && (ct_launch_env_rank() > 0 || node_of_job() > 0);
}

int ct_cmd_refused(void)
{
    return g_refused;
}

int ct_cmd_local_ranks(void)
{
    if ((ct_launch_env_rank() >= 0 && ct_launch_env_size() != 1) || getenv("COLLTUNE_ROOT"))
        return 0; /* the launcher's ranks (not its one task: srun -n 1 -c 8, srun --pty) */
    long n = ct_cpus_usable();
    return n < 2 ? 2 : n > 1024 ? 1024 : (int)n;
}

static void out_dir_undo(void)
{
    /* only in the process that made it (not a forked rank, whose exit comes before rank 0's
     * files) and only while empty: nothing was written there */
    if (g_made[0] && getpid() == g_made_pid)
        (void)rmdir(g_made);
}

int ct_cmd_out_dir(const char *cmd, const char *opt, const char *dir, bool launched)
{
    struct ct_err err = {0};
    if (ct_cmd_not_first(launched) || !dir)
        return 0;
    bool was = access(dir, F_OK) == 0;
    if (ct_dir_make_writable(dir, opt, &err) < 0 || ct_sweep_outputs_check(dir, &err) < 0) {
        if (!was)
            (void)rmdir(dir);
        return refuse(cmd, launched, err.msg);
    }
    snprintf(g_made, sizeof g_made, "%s", was ? "" : dir);
    g_made_pid = getpid();
    if (!was)
        atexit(out_dir_undo); /* a job that failed in its ranks */
    return 0;
}

int ct_cmd_open_fail(const char *cmd, const struct ct_boot *boot, const struct ct_err *err)
{
    int code = err->code == CT_EINVAL || err->code == CT_EUNSUPP ? CT_EXIT_USAGE : CT_EXIT_FAIL;
    /* a request this host cannot meet is refused alike by each of its ranks: said once */
    if (code == CT_EXIT_FAIL || boot->local_rank <= 0)
        ct_cmd_fail(cmd, code, "rank %d (%s): %s", boot->rank, boot->host, err->msg);
    return code;
}

int ct_cmd_out_check(const char *cmd, const char *opt, const char *path, bool launched)
{
    struct ct_err err = {0};
    if (ct_cmd_not_first(launched))
        return 0;
    if (path && !*path) { /* '' read as the current folder, or failed at the end (exit 1) */
        char why[64];
        snprintf(why, sizeof why, "--%s: an empty path", opt);
        return refuse(cmd, launched, why);
    }
    /* "-" is standard output for --json; for another option, a file of that name */
    if (path && (strcmp(path, "-") || strcmp(opt, "json")) &&
        ct_file_check_writable(path, &err) < 0) {
        char why[sizeof err.msg + 64];
        snprintf(why, sizeof why, "--%s: %s", opt, err.msg);
        return refuse(cmd, launched, why);
    }
    return 0;
}

int ct_cmd_refuse(const char *cmd, bool launched, const char *why)
{
    return refuse(cmd, launched, why);
}

int ct_cmd_in_check(const char *cmd, const char *opt, const char *path, bool launched)
{
    if (!path || ct_cmd_not_first(launched))
        return 0;
    FILE *f = fopen(path, "r");
    char why[4400];
    snprintf(why, sizeof why, "--%s: cannot read '%s': %s", opt, path, f ? "" : strerror(errno));
    struct stat st;
    if (f && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
        snprintf(why + strlen(why), sizeof why - strlen(why), "it is a folder");
    else if (f)
        why[0] = 0;
    if (f)
        fclose(f);
    return why[0] ? refuse(cmd, launched, why) : 0;
}

FILE *ct_cmd_report_stream(const char *json)
{
    return json && !strcmp(json, "-") ? stderr : stdout;
}

void ct_cmd_line(char *buf, size_t len, int argc, char **argv)
{
    size_t off = 0;
    buf[0] = 0;
    for (int i = 0; i < argc && off + 2 < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? " " : "", argv[i]);
}

int ct_cmd_bad_option(const char *cmd, const struct option *lo, const char *arg)
{
    const char *name = arg && !strncmp(arg, "--", 2) ? arg + 2 : NULL;
    size_t len = name ? strcspn(name, "=") : 0;
    char all[256] = "";
    int n = 0;
    for (int i = 0; len && lo && lo[i].name; i++)
        if (!strncmp(lo[i].name, name, len) && strlen(all) + strlen(lo[i].name) + 5 < sizeof all)
            snprintf(all + strlen(all), sizeof all - strlen(all), "%s--%s", n++ ? ", " : "",
                     lo[i].name);
    if (n > 1)
        return ct_cmd_fail(cmd, CT_EXIT_USAGE, "ambiguous option '%s' (%s)", arg, all);
    return ct_cmd_fail(cmd, CT_EXIT_USAGE, "unknown option '%s'", arg ? arg : "?");
}
