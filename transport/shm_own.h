/* SPDX-License-Identifier: MIT */
/*
 * The names of this process's shared-memory objects, and who removes them when the process
 * ends without removing them itself (transport/shm_own.c).
 */
#ifndef CT_TRANSPORT_SHM_OWN_H
#define CT_TRANSPORT_SHM_OWN_H

/* As a transport opens, before its first object: the signal handlers (once) and the process
 * that removes what is left when this one ends (while any transport is open; safe to call
 * from several threads). ct_shm_own_stop as it closes, after its objects are gone. */
void ct_shm_own_start(void);
void ct_shm_own_stop(void);
/* A name made (shm_open O_CREAT), to be removed if the process ends holding it. */
void ct_shm_own_add(const char *name);
/* shm_unlink, and the name out of the list. */
void ct_shm_own_unlink(const char *name);

#endif
