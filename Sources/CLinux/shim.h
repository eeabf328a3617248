#ifndef HAUL_CLINUX_SHIM_H
#define HAUL_CLINUX_SHIM_H
#include <stdint.h>
#include <sys/types.h>

/* glibc declares copy_file_range and syncfs only under _GNU_SOURCE, which Swift's Glibc module is not
   built with; this is the same prototype with the LP64 types spelled out. */
extern int syncfs(int fd);
extern ssize_t copy_file_range(int fd_in, int64_t *off_in, int fd_out, int64_t *off_out, size_t len, unsigned int flags);
/* Extended attributes (fsetxattr, lgetxattr): the source mark of a published file. Swift's Glibc
   module does not include this header. */
#include <sys/xattr.h>
/* openat2(2) (Linux 5.6) has no glibc wrapper before 2.40: the raw system call, with its own copy of
   struct open_how so that no kernel header is needed. Returns the descriptor, or -1 with errno set
   (ENOSYS on an older kernel). */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
/* O_PATH is hidden behind _GNU_SOURCE too; this is its value on every architecture Swift targets. */
#define HAUL_O_PATH 010000000
/* O_TMPFILE's own bit (the flag is this | O_DIRECTORY), hidden the same way; the same value on
   every architecture Swift targets, while O_DIRECTORY itself differs (take Glibc's). */
#define HAUL_O_TMPFILE_BIT 020000000
#define HAUL_RESOLVE_NO_SYMLINKS 0x04
#define HAUL_RESOLVE_BENEATH 0x08
struct haul_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};
static inline int haul_openat2(int dirfd, const char *path, int flags, unsigned int mode, uint64_t resolve) {
    struct haul_open_how how = {(uint64_t)(unsigned int)flags, mode, resolve};
    return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}
/* renameat2(2) with RENAME_NOREPLACE (Linux 3.15; glibc hides the wrapper behind _GNU_SOURCE):
   renames `from` to `to` unless `to` exists (EEXIST). File systems without it answer EINVAL. */
static inline int haul_rename_noreplace(const char *from, const char *to) {
    return (int)syscall(SYS_renameat2, -100 /* AT_FDCWD */, from, -100, to, 1u /* RENAME_NOREPLACE */);
}
/* Gives the unnamed file fd (O_TMPFILE, opened without O_EXCL) the name `name` in the folder
   `folder`, never replacing what is there (EEXIST): 0, or -1 with errno set. Linux before 6.10
   allows linkat with AT_EMPTY_PATH only with CAP_DAC_READ_SEARCH (ENOENT without it), where
   haul_link_unnamed_through_proc links the file's /proc/self/fd entry instead. */
static inline int haul_link_unnamed(int fd, int folder, const char *name) {
    return linkat(fd, "", folder, name, 0x1000 /* AT_EMPTY_PATH */);
}
#include <stdio.h>
static inline int haul_link_unnamed_through_proc(int fd, int folder, const char *name) {
    char path[32];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return linkat(-100 /* AT_FDCWD */, path, folder, name, 0x400 /* AT_SYMLINK_FOLLOW */);
}
/* memfd_create(2) is hidden behind _GNU_SOURCE as well: an anonymous file in memory, close-on-exec. */
static inline int haul_memfd_create(const char *name) {
    return (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);
}
/* The file system type of an open file (statfs's f_type, e.g. TMPFS_MAGIC 0x01021994), or 0 when
   it cannot be read; <sys/vfs.h> is not part of Swift's Glibc module. */
#include <sys/vfs.h>
static inline long haul_file_system_type(int fd) {
    struct statfs info;
    return fstatfs(fd, &info) == 0 ? (long)info.f_type : 0;
}
/* Open file description locks (Linux 3.15), hidden behind _GNU_SOURCE too: a lock belongs to the
   open file description, not to the process, so two opens of one file conflict even in one process
   and closing another descriptor of the file does not drop it. */
#include <fcntl.h>
#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#define F_OFD_SETLK 37
#endif
/* Takes a write lock on the whole of fd's file without waiting: 0, or -1 with errno set (EAGAIN
   when another open file description holds a lock on it). */
static inline int haul_lock_whole_file(int fd) {
    struct flock lock = {0};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    return fcntl(fd, F_OFD_SETLK, &lock);
}
/* Whether another open file description holds a lock on fd's file that a write lock would meet:
   1, 0, or -1 with errno set. */
static inline int haul_file_is_locked(int fd) {
    struct flock lock = {0};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
    return lock.l_type != F_UNLCK;
}
#endif
