/* Start-up and shut-down (rts_init, rts_exit in rtslab.h): the top of the runtime's layers
 * (runtime/README.md), which wires the layers' hooks together. The leaf utilities every
 * layer uses (rts_fatal, rts_die, the clocks, rts_opts) are in base/util.h. */
#ifndef RTS_RTS_H
#define RTS_RTS_H

#include "base/util.h"

/* Resolves the options in rts_opts into *rts_cfg (Note [Options, resolved once] in
 * base/util.h): once, after parsing, before anything reads rts_cfg (-? and --info do). */
void rts_config_resolve(void);

#endif
