#include "rtslab_config.h"
#if RTS_PATCH_IDLE_OPTOUT
/* The interface between sync/stw.c and the idle-optout patch's part of the protocol,
 * sync/stw_idle_optout.c (Note [Idle opt-out] in stw.h): private to those two files, so
 * that no other module sees stw.c's members. */
#ifndef RTSLAB_SYNC_STW_IDLE_OPTOUT_H
#define RTSLAB_SYNC_STW_IDLE_OPTOUT_H

#include <stdbool.h>
#include <stdint.h>
#include "sync/stw.h"

/* The patch's code, as sync/stw.c calls it where the patch acts: stw_init (init),
 * stw_set_state (state: the word to store), stw_interrupt_all (leave_out: whether the leader
 * of sync `epoch` leaves member `no` out), stw_follow (at_go: whether `me` opts out at this
 * go, and so skips the leave barrier), stw_debug_set_sync_number. */
void stw_optout_init(unsigned n_caps);
uint32_t stw_optout_state(uint32_t state);
bool stw_optout_leave_out(unsigned no, uint32_t epoch);
bool stw_optout_at_go(unsigned me, uint32_t epoch);
void stw_optout_set_sync_number(uint32_t n);
/* stw.c lends the patch's file its members (sync/stw.c). */
StwMember *stw_member(unsigned no);

#endif
#endif
