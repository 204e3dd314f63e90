// Linux calls the Glibc module leaves out (in libc itself, so nothing is linked).
#include <sys/xattr.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <errno.h>

// listxattrat(2), Linux 6.13 (one number on every architecture, as every call since 424): the attribute names of a
// file named relative to an open folder, without the path walk of /proc/self/fd/N/NAME. glibc has no wrapper yet,
// and Swift cannot call the variadic syscall(2). -1 with errno ENOSYS on older kernels.
static inline long llvs_listxattrat(int folder, const char *name, unsigned int flags, char *list, size_t size) {
    return syscall(465, folder, name, flags, list, size);
}
