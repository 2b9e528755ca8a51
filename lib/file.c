/* SPDX-License-Identifier: MIT */
/* Atomic file writes and whole-file reads. */
#include "file.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "thread.h"

/* The descriptor of this process's standard output or error when st is the file open there
 * (/dev/stdout, or the file stdout is redirected to), else -1. */
static int std_stream(const struct stat *st)
{
    struct stat s;
    for (int fd = 1; fd <= 2; fd++)
        if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
            return fd;
    return -1;
}

int ct_file_target(const char *path, char **real, int *mode, struct ct_err *err)
{
    struct stat st;
    *real = NULL;
    *mode = -1;
    if (stat(path, &st) < 0) {
        if (errno == ENOENT && lstat(path, &st) == 0) /* a link to nothing */
            return ct_err_set(err, CT_EINVAL, "cannot write '%s': a link to a missing file", path);
        if (errno != ENOENT)
            return ct_err_sys(err, CT_EINVAL, "cannot write '%s'", path);
        *real = ct_xstrdup(path); /* nothing there yet: path itself */
        return 1;
    }
    *mode = (int)(st.st_mode & 07777);
    /* written through path itself: a device, FIFO or socket (/dev/stdout on a pipe resolves
     * to no path), or the file a standard stream is open on (a rename would leave the stream
     * on the old file, and what it printed lost) */
    if ((!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) || std_stream(&st) >= 0) {
        *real = ct_xstrdup(path);
        return 0;
    }
    if (!(*real = realpath(path, NULL)))
        return ct_err_sys(err, CT_EINVAL, "cannot write '%s'", path);
    return 1;
}

int ct_file_write_all(int fd, const void *data, size_t len)
{
    for (const char *p = data; len;) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int ct_file_keep(int fd, const char *real, int mode)
{
    struct stat st;
    if (mode < 0)
        return 0;
    if (geteuid() == 0 && stat(real, &st) == 0) /* (another user's file, replaced by root) */
        (void)fchown(fd, st.st_uid, st.st_gid);
    return fchmod(fd, (mode_t)mode);
}

/* The REAL.tmp.PID files of writers that are gone (killed between writing and renaming):
 * removed, so that a folder a killed sweep wrote into is not left with them for good. Gone:
 * no such process here, and untouched for a minute (a PID of another host, on a shared
 * file system, is no process here: its writer's temporary file lives for one write). */
static void drop_stale(const char *real)
{
    const char *slash = strrchr(real, '/'), *base = slash ? slash + 1 : real;
    char *dir = slash ? ct_xstrdup(real) : NULL;
    if (dir)
        dir[slash - real > 0 ? slash - real : 1] = 0;
    DIR *d = opendir(dir ? dir : ".");
    size_t bl = strlen(base);
    for (struct dirent *e; d && (e = readdir(d));) {
        char *end;
        if (strncmp(e->d_name, base, bl) || strncmp(e->d_name + bl, ".tmp.", 5))
            continue;
        long pid = strtol(e->d_name + bl + 5, &end, 10);
        struct stat st;
        if (!*end && pid > 0 && pid != (long)getpid() && kill((pid_t)pid, 0) < 0 &&
            errno == ESRCH && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            st.st_mtime < time(NULL) - 60)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    if (d)
        closedir(d);
    free(dir);
}

int ct_file_write_atomic(const char *path, const void *data, size_t len, struct ct_err *err)
{
    char *real;
    int mode, kind = ct_file_target(path, &real, &mode, err), rc = 0;
    if (kind < 0)
        return CT_EIO;
    if (kind == 0) { /* a device or a FIFO (/dev/null, /dev/stdout): written through */
        struct stat st;
        int sfd = stat(real, &st) == 0 ? std_stream(&st) : -1; /* at its offset, after */
        fflush(sfd == 1 ? stdout : stderr);                    /* what it holds */
        int fd = sfd >= 0 ? sfd : open(real, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || ct_file_write_all(fd, data, len) < 0)
            rc = ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
        if (fd >= 0 && fd != sfd)
            close(fd);
        free(real);
        return rc;
    }
    size_t pl = strlen(real);
    char *tmp = ct_xmalloc(pl + 32);
    snprintf(tmp, pl + 32, "%s.tmp.%ld", real, (long)getpid());
    drop_stale(real);
    unlink(tmp); /* a stale one from a killed run of the same pid */
    /* a stop asked for (Ctrl-C, a launcher's SIGTERM) waits for the rename: not a .tmp left */
    sigset_t stops, old;
    ct_sigset_stops(&stops);
    pthread_sigmask(SIG_BLOCK, &stops, &old);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
    } else {
        /* through a link, the file it names is replaced */
        if (ct_file_keep(fd, real, mode) < 0 || ct_file_write_all(fd, data, len) < 0 ||
            (fsync(fd) < 0 && errno != EINVAL))
            rc = ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
        close(fd);
        if (rc == 0 && rename(tmp, real) < 0)
            rc = ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
        if (rc < 0)
            unlink(tmp);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    free(tmp);
    free(real);
    return rc;
}

int ct_file_write_doc(const char *path, char *text, const char *what, struct ct_err *err)
{
    if (!text)
        return ct_err_set(err, CT_ENOMEM, "cannot encode %s", what);
    size_t len = strlen(text);
    text = ct_xrealloc(text, len + 2);
    text[len] = '\n';
    int rc = ct_file_write_atomic(path, text, len + 1, err);
    free(text);
    return rc;
}

int ct_file_read(const char *path, char **data, size_t *len, struct ct_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ct_err_sys(err, CT_EIO, "cannot read '%s'", path);
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))) {
        fclose(f); /* /dev/zero never ends: read until memory ran out */
        return ct_err_set(err, CT_EINVAL, "cannot read '%s': it is a device, not a file", path);
    }
    size_t cap = 4096, n = 0;
    char *buf = ct_xmalloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            buf = ct_xrealloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0 || n > CT_FILE_READ_MAX)
            break;
    }
    int bad = ferror(f), why = errno; /* a folder opens, then fails to read: EISDIR */
    fclose(f);
    if (!bad && n > CT_FILE_READ_MAX) { /* a pipe that does not end */
        free(buf);
        return ct_err_set(err, CT_EINVAL, "cannot read '%s': more than %d MiB", path,
                          CT_FILE_READ_MAX >> 20);
    }
    if (bad) {
        free(buf);
        errno = why;
        return why == EISDIR ? ct_err_set(err, CT_EIO, "cannot read '%s': it is a folder", path)
                             : ct_err_sys(err, CT_EIO, "cannot read '%s'", path);
    }
    buf[n] = 0;
    *data = buf;
    if (len)
        *len = n;
    return 0;
}

int ct_natcmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            char *ea, *eb;
            unsigned long x = strtoul(a, &ea, 10), y = strtoul(b, &eb, 10);
            if (x != y)
                return x < y ? -1 : 1;
            a = ea;
            b = eb;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int natcmp_p(const void *a, const void *b)
{
    return ct_natcmp(*(char *const *)a, *(char *const *)b);
}

size_t ct_dir_names(const char *path, char ***out)
{
    DIR *d = opendir(path);
    char **v = NULL;
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        v = ct_xrealloc(v, (n + 1) * sizeof *v);
        v[n++] = ct_xstrdup(e->d_name);
    }
    if (d)
        closedir(d);
    if (n > 1)
        qsort(v, n, sizeof *v, natcmp_p);
    *out = v;
    return n;
}

void ct_dir_names_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static int mkdir_p(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0755) < 0 && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0755) < 0 && errno != EEXIST ? -1 : 0;
}

int ct_file_check_regular(const char *path, struct ct_err *err)
{
    char *real;
    int mode, kind = ct_file_target(path, &real, &mode, err);
    free(real);
    if (kind == 0)
        return ct_err_set(err, CT_EINVAL,
                          "cannot write '%s': not a regular file (a device, FIFO or socket, "
                          "or the file standard output or error is open on)",
                          path);
    return kind < 0 ? kind : 0;
}

int ct_file_check_writable(const char *path, struct ct_err *err)
{
    struct stat st;
    char *real;
    int mode, kind = ct_file_target(path, &real, &mode, err);
    if (kind < 0)
        return kind;
    if (stat(real, &st) == 0 && S_ISDIR(st.st_mode)) {
        free(real);
        return ct_err_set(err, CT_EINVAL, "cannot write '%s': it is a folder", path);
    }
    if (kind == 0 && stat(real, &st) == 0 && S_ISSOCK(st.st_mode)) { /* open() fails: ENXIO */
        free(real);
        return ct_err_set(err, CT_EINVAL, "cannot write '%s': it is a socket", path);
    }
    /* written through (not opened here: a FIFO's reader would read its end), or read-only */
    if (kind == 0 || (mode >= 0 && access(real, W_OK) < 0)) {
        int rc = access(real, W_OK) < 0 ? ct_err_sys(err, CT_EINVAL, "cannot write '%s'", path) : 0;
        free(real);
        return rc;
    }
    size_t n = strlen(real) + 48;
    char *probe = ct_xmalloc(n);
    snprintf(probe, n, "%s.colltune-write-test.XXXXXX", real); /* unique, also across hosts */
    int rc = 0, fd = mkostemp(probe, O_CLOEXEC);
    if (fd < 0) {
        rc = ct_err_sys(err, CT_EINVAL, "cannot write '%s'", path);
    } else {
        close(fd);
        unlink(probe);
    }
    free(probe);
    free(real);
    return rc;
}

int ct_dir_make_writable(const char *dir, const char *opt, struct ct_err *err)
{
    if (mkdir_p(dir) < 0)
        return ct_err_set(err, CT_EIO, "cannot create --%s '%s': %s", opt, dir, strerror(errno));
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.colltune-write-test.XXXXXX", dir); /* unique, also on a
                                                                              shared folder */
    int fd = mkostemp(probe, O_CLOEXEC);
    if (fd < 0)
        return ct_err_set(err, CT_EIO, "cannot write in --%s '%s': %s", opt, dir, strerror(errno));
    close(fd);
    unlink(probe);
    return 0;
}

char *ct_path_absolute(const char *p)
{
    char cwd[4096];
    if (p[0] == '/' || !getcwd(cwd, sizeof cwd))
        return ct_xstrdup(p);
    size_t n = strlen(cwd) + strlen(p) + 2;
    char *a = ct_xmalloc(n);
    snprintf(a, n, "%s/%s", cwd, p[0] == '.' && p[1] == '/' ? p + 2 : p);
    return a;
}

char *ct_path_sibling(const char *path, const char *name)
{
    const char *slash = strrchr(path, '/');
    size_t n = strlen(path) + strlen(name) + 1;
    char *r = ct_xmalloc(n);
    snprintf(r, n, "%.*s%s", slash ? (int)(slash - path + 1) : 0, path, name);
    return r;
}

int ct_proc_stat(int pid, char *state, int *ppid, unsigned long long *start)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *e = strrchr(buf, ')'); /* the command name may hold spaces and ')' */
    char st;
    int pp;
    unsigned long long t;
    /* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
     * cutime cstime priority nice num_threads itrealvalue starttime */
    if (!e || sscanf(e + 1,
                     " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d "
                     "%*d %llu",
                     &st, &pp, &t) != 3)
        return -1;
    if (state)
        *state = st;
    if (ppid)
        *ppid = pp;
    if (start)
        *start = t;
    return 0;
}

char ct_proc_state(int pid)
{
    char st;
    return ct_proc_stat(pid, &st, NULL, NULL) == 0 ? st : 0;
}

int ct_self_path(char *buf, size_t len, int dir)
{
    if (len < 2)
        return -1;
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    if (n <= 0 || (size_t)n >= len - 1)
        return -1;
    buf[n] = 0;
    char *slash = dir ? strrchr(buf, '/') : NULL;
    if (slash)
        *slash = 0;
    return 0;
}

unsigned long long ct_random64(void)
{
    unsigned long long t = (unsigned long long)ct_now_ns() ^ ((unsigned long long)getpid() << 32);
    FILE *r = fopen("/dev/urandom", "re");
    if (r && fread(&t, sizeof t, 1, r) != 1)
        t ^= (unsigned long long)(uintptr_t)&t;
    if (r)
        fclose(r);
    return t;
}

bool ct_file_reader_left(int fd)
{
    struct stat st;
    struct pollfd p = {.fd = fd, .events = 0};
    /* the write end of a pipe with no reader polls POLLERR; a socket shut, POLLHUP */
    return fd >= 0 && fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
           poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP));
}

/* Why a stream's earlier write failed, once its errno is gone (a large output fails while
 * stdio drains its buffer; what runs after sets errno again): a reader that left, a full
 * file system, or /dev/full, which fails every write so; else EIO. */
static int lost_errno(int fd)
{
    struct stat st;
    struct statvfs vs;
    if (ct_file_reader_left(fd))
        return EPIPE;
    if (fd < 0 || fstat(fd, &st) < 0)
        return EIO;
    if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 7)
        return ENOSPC;
    if (S_ISREG(st.st_mode) && fstatvfs(fd, &vs) == 0 && vs.f_bavail == 0)
        return ENOSPC;
    return EIO;
}

int ct_file_stream_error(FILE *f)
{
    errno = 0;
    int e = fflush(f) ? errno : 0;
    return e ? e : ferror(f) ? lost_errno(fileno(f)) : 0;
}
