/* SPDX-License-Identifier: MIT */
/* File helpers. */
#ifndef CT_FILE_H
#define CT_FILE_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>

#include "err.h"

/* Write data to path atomically: a temp file in the same folder, fsync, rename. Nothing
 * half-written is ever left at path. A file replaced keeps its mode; a symbolic link is
 * followed (the file it names is replaced, the link kept); a device or a FIFO (/dev/null,
 * /dev/stdout) is written through, never replaced (a rename over /dev/null, as root, put a
 * regular file there). */
int ct_file_write_atomic(const char *path, const void *data, size_t len, struct ct_err *err);
/* All of data to fd (EINTR retried); 0 or -1 (errno). */
int ct_file_write_all(int fd, const void *data, size_t len);
/* A temp file fd about to replace real takes its mode (-1: nothing there, nothing kept) and,
 * as root, its owner; 0 or -1 (errno). */
int ct_file_keep(int fd, const char *real, int mode);
/* Where a write to path lands: its target (links followed, as open() follows them; path
 * itself where nothing is there yet), new memory in *real, and its mode in *mode (-1: none
 * yet). 1: a regular file, a folder or nothing yet (a rename may replace it); 0: something
 * else, written through path itself (a device, FIFO or socket, or the file standard output
 * or error is open on: /dev/stdout, or its redirection); CT_EINVAL: a link to a missing
 * file, or a path that cannot be resolved (*real NULL). */
int ct_file_target(const char *path, char **real, int *mode, struct ct_err *err);
/* Where a file that is read back later goes (a verified copy of a config): 0 where path is
 * a regular file, a folder or nothing yet; CT_EINVAL with one line where a write would land
 * in a device, FIFO or socket (ct_file_target's 0) or path cannot be resolved. */
int ct_file_check_regular(const char *path, struct ct_err *err);
/* Write an encoded document and a newline to path atomically. text is malloc'ed and taken
 * (freed here); NULL (the encoder failed): CT_ENOMEM "cannot encode WHAT". */
int ct_file_write_doc(const char *path, char *text, const char *what, struct ct_err *err);
/* Whether what was written to f reached it: f flushed; 0, else the failing flush's errno
 * (an earlier write's is gone: EIO where only f's error flag tells). */
int ct_file_stream_error(FILE *f);
/* fd is a pipe or socket whose reader left (| head that exited): its writes fail EPIPE. */
bool ct_file_reader_left(int fd);
/* Read a whole file (NUL-terminated; caller frees with free()): a device (/dev/zero never
 * ends) and more than CT_FILE_READ_MAX bytes (a pipe that does not end) are refused: CT_EINVAL
 * (unusable input); what cannot be opened or read, CT_EIO. */
#define CT_FILE_READ_MAX (1 << 30)
int ct_file_read(const char *path, char **data, size_t *len, struct ct_err *err);

/* Can path be written the way ct_file_write_atomic writes it (a new file beside it, then
 * renamed over it; a device or FIFO opened)? A file is created beside path and removed again;
 * an existing file at path is left untouched. CT_EINVAL "cannot write 'path': reason" (no
 * such folder, not writable, a read-only file, path is a folder). */
int ct_file_check_writable(const char *path, struct ct_err *err);

/* Create the folder dir (and its parents) and check that a file can be written in it;
 * CT_EIO with "cannot create/write in --<opt> 'dir': reason". */
int ct_dir_make_writable(const char *dir, const char *opt, struct ct_err *err);

/* p as an absolute path (from the working folder); new memory. */
char *ct_path_absolute(const char *p);
/* name in the folder of path ("a/b.json", "c" -> "a/c"); new memory. */
char *ct_path_sibling(const char *path, const char *name);

/* Natural order: digit runs compare by value ("mlx5_2" < "mlx5_10"). */
int ct_natcmp(const char *a, const char *b);
/* 64 bits from /dev/urandom; where it cannot be read, the clock and the pid mixed. */
unsigned long long ct_random64(void);
/* Entry names of the folder path (no dot files) in natural order; 0 and *out NULL when it
 * cannot be read. Free with ct_dir_names_free. */
size_t ct_dir_names(const char *path, char ***out);
void ct_dir_names_free(char **v, size_t n);

/* The running binary's path (/proc/self/exe), or its folder when dir is true, into buf of
 * len bytes; -1 when it cannot be read or does not fit. */
int ct_self_path(char *buf, size_t len, int dir);

/* The state letter of process pid from /proc/<pid>/stat ('R', 'S', 'T', 'Z', ...); 0 when it
 * cannot be read (no such process). */
char ct_proc_state(int pid);

/* From /proc/<pid>/stat: its state letter, its parent's pid and its start time (clock ticks
 * since boot: with the pid, it names the process, since pids are reused); each may be NULL.
 * -1 when it cannot be read (no such process) or parsed. */
int ct_proc_stat(int pid, char *state, int *ppid, unsigned long long *start);

#endif
