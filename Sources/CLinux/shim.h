// Linux calls the Glibc module leaves out: extended attributes (in libc itself, so nothing is linked).
#include <sys/xattr.h>
