/* Start-up and shut-down (rts_init, rts_exit in rtslab.h): the top of the runtime's layers
 * (runtime/README.md), which wires the layers' hooks together. The leaf utilities every
 * layer uses (base_fatal, base_die, the clocks, base_cfg) are in base/util.h. */
#ifndef RTS_RTS_H
#define RTS_RTS_H

#include "base/util.h"

/* Sets the options as given (private to option parsing: Note [Options, resolved once] in
 * base/util.h; rts_options() reads them) to the defaults, then parses env and argv into them
 * as rts_options_parse (rtslab_options.h) does: 0, or -1 with a message in err. */
int opts_read(int *argc, char **argv, const char *env, char *err, size_t errlen);

/* Resolves the options as given into *base_cfg (Note [Options, resolved once] in
 * base/util.h): once, after parsing, before anything reads base_cfg (-? and --info do). */
void opts_resolve(void);

#endif
