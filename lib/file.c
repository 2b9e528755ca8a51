/* SPDX-License-Identifier: MIT */
/* Atomic file writes and whole-file reads. */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ct_file_write_atomic(const char *path, const void *data, size_t len, struct ct_err *err)
{
    size_t pl = strlen(path);
    char *tmp = ct_xmalloc(pl + 32);
    snprintf(tmp, pl + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
        free(tmp);
        return CT_EIO;
    }
    const char *p = data;
    size_t left = len;
    while (left) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
            close(fd);
            unlink(tmp);
            free(tmp);
            return CT_EIO;
        }
        p += n;
        left -= (size_t)n;
    }
    if (fsync(fd) < 0 && errno != EINVAL) {
        ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
        close(fd);
        unlink(tmp);
        free(tmp);
        return CT_EIO;
    }
    close(fd);
    if (rename(tmp, path) < 0) {
        ct_err_sys(err, CT_EIO, "cannot write '%s'", path);
        unlink(tmp);
        free(tmp);
        return CT_EIO;
    }
    free(tmp);
    return 0;
}

int ct_file_read(const char *path, char **data, size_t *len, struct ct_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return ct_err_sys(err, CT_EIO, "cannot read '%s'", path);
    size_t cap = 4096, n = 0;
    char *buf = ct_xmalloc(cap);
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap *= 2;
            buf = ct_xrealloc(buf, cap);
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return ct_err_set(err, CT_EIO, "cannot read '%s'", path);
    }
    buf[n] = 0;
    *data = buf;
    if (len)
        *len = n;
    return 0;
}
