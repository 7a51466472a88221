/* Start-up and shut-down (rts_init, rts_exit in rtslab.h): the top of the runtime's layers
 * (runtime/README.md), which wires the layers' hooks together. The leaf utilities every
 * layer uses (rts_fatal, rts_die, the clocks, rts_cfg) are in base/util.h. */
#ifndef RTS_RTS_H
#define RTS_RTS_H

#include "base/util.h"

/* Sets the options as given (private to option parsing: Note [Options, resolved once] in
 * base/util.h; rts_options() reads them) to the defaults, then parses env and argv into them
 * as rts_options_parse (rtslab_options.h) does: 0, or -1 with a message in err. */
int rts_options_read(int *argc, char **argv, const char *env, char *err, size_t errlen);

/* Resolves the options as given into *rts_cfg (Note [Options, resolved once] in
 * base/util.h): once, after parsing, before anything reads rts_cfg (-? and --info do). */
void rts_config_resolve(void);

#endif
