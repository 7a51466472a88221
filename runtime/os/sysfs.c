/* Small files of the kernel's pseudo file systems: see os/sysfs.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/sysfs.h"

bool sysfs_read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    size_t n = 0;
    while (ok) {
        char extra;
        /* Full: one more byte says whether the file goes on (then it does not fit). */
        ssize_t r = n < len - 1 ? read(fd, buf + n, len - 1 - n) : read(fd, &extra, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 || (r > 0 && n == len - 1))
            ok = false;
        else if (r == 0)
            break;
        else
            n += (size_t)r;
    }
    close(fd);
    buf[ok ? n : 0] = '\0';
    return ok;
}
