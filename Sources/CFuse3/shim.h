// libfuse 3's high-level API, at version 3.1 (what Debian 12's libfuse3 3.14 serves to callers asking for it).
#define FUSE_USE_VERSION 31
#include <fuse.h>

// fuse_new and fuse_loop_mt are macros picking a versioned symbol; Swift imports functions, not macros.
static inline struct fuse *llvs_fuse_new(struct fuse_args *args, const struct fuse_operations *operations,
                                         void *private_data) {
    return fuse_new(args, operations, sizeof(*operations), private_data);
}

static inline int llvs_fuse_loop_mt(struct fuse *fuse) {
    return fuse_loop_mt(fuse, 0);
}
