// Linux calls Swift cannot import directly (variadic, or hidden behind _GNU_SOURCE), wrapped as
// plain functions. Header-only: nothing to link.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/prctl.h>
#include <unistd.h>

static inline int coffer_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0UL, 0UL, 0UL);
}

static inline int coffer_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

static inline int coffer_syncfs(int fd) {
    return syncfs(fd);
}

#include <errno.h>
#include <linux/openat2.h>
#include <sys/syscall.h>

/// openat2(2) resolving `path` beneath `dirfd`: no symbolic link in any component, no "..",
/// no absolute path, no /proc magic link (SPEC.md §3.4). -1 with ENOSYS on kernels before 5.6.
static inline int coffer_openat2_beneath(int dirfd, const char *path, unsigned long long flags, unsigned long long mode) {
#ifdef SYS_openat2
    struct open_how how = {
        .flags = flags, .mode = mode, .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof how);
#else
    errno = ENOSYS;
    return -1;
#endif
}

#include <fcntl.h>
#include <stdio.h>

/// renameat2(RENAME_NOREPLACE): a rename that never replaces an existing entry.
static inline int coffer_renameat_noreplace(int olddirfd, const char *oldpath, int newdirfd, const char *newpath) {
    return renameat2(olddirfd, oldpath, newdirfd, newpath, RENAME_NOREPLACE);
}

/// pipe2(O_CLOEXEC): both ends closed in every child spawned meanwhile.
static inline int coffer_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC);
}


#include <sys/vfs.h>

/// The magic number of the file system holding `path` (statfs's f_type), or -1 with errno.
static inline long long coffer_filesystem_type(const char *path) {
    struct statfs info;
    int result;
    do { result = statfs(path, &info); } while (result != 0 && errno == EINTR);
    return result == 0 ? (long long)info.f_type : -1;
}

#include <dirent.h>

/// Whether the directory open as `fd` holds nothing but "." and "..": getdents64(2) into a
/// small buffer on the stack, where readdir(3) would allocate 32 KiB and a second descriptor
/// (opening a vault asks this of `tmp/` on every command). 1 empty, 0 not, -1 with errno.
/// Reads from the start and leaves the offset moved.
static inline int coffer_directory_is_empty(int fd) {
    char buffer[1024] __attribute__((aligned(8)));
    if (lseek(fd, 0, SEEK_SET) < 0) return -1;
    for (;;) {
        ssize_t length = getdents64(fd, buffer, sizeof buffer);
        if (length < 0) return -1;
        if (length == 0) return 1;
        for (ssize_t at = 0; at < length; at += ((struct dirent64 *)(buffer + at))->d_reclen) {
            const char *name = ((struct dirent64 *)(buffer + at))->d_name;
            if (!(name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))) return 0;
        }
    }
}

/// getrandom(2): bytes from the kernel's generator, for names that must not collide (a temporary
/// file's); never for keys, which come from libsodium. Through syscall(2): <sys/random.h> pulls in
/// <sys/types.h>, whose fd_set under _GNU_SOURCE clashes with the other C modules' (a clean build
/// fails to merge them).
static inline long coffer_getrandom(void *buffer, unsigned long count) {
    return syscall(SYS_getrandom, buffer, count, 0);
}
