/* Start-up and shut-down (rts_init, rts_exit in rtslab.h): the top of the runtime's layers
 * (runtime/README.md), which wires the layers' hooks together. The leaf utilities every
 * layer uses (rts_fatal, rts_die, the clocks, rts_opts) are in base/util.h. */
#ifndef RTS_RTS_H
#define RTS_RTS_H

#include "base/util.h"

#endif
