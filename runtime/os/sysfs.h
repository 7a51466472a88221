/* Small files of the kernel's pseudo file systems (sysfs, procfs, cgroupfs), and the fixture
 * trees that stand for them in the tests (RTSLAB_SYSFS_ROOT, testsuite/topology/fixtures/).
 *
 * Invariant: only a regular file is read, and only whole. A directory, a FIFO or a device is
 * unreadable here (a FIFO that a fixture or a container's bind mount put in a file's place
 * would block a plain read forever; every sysfs, procfs and cgroupfs attribute is a regular
 * file), and so is a file longer than the caller's buffer: a value cut short would parse as
 * another value. */
#ifndef RTS_OS_SYSFS_H
#define RTS_OS_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

/* The whole contents of the regular file PATH in BUF (NUL-terminated; LEN >= 2); false if it
 * cannot be opened or read, is not a regular file, or does not fit in LEN - 1 bytes. */
bool sysfs_read_small(const char *path, char *buf, size_t len);

#endif
