#ifndef HAUL_CLINUX_SHIM_H
#define HAUL_CLINUX_SHIM_H
#include <stdint.h>
#include <sys/types.h>

/* glibc declares copy_file_range and syncfs only under _GNU_SOURCE, which Swift's Glibc module is not
   built with; this is the same prototype with the LP64 types spelled out. */
extern int syncfs(int fd);
extern ssize_t copy_file_range(int fd_in, int64_t *off_in, int fd_out, int64_t *off_out, size_t len, unsigned int flags);
#endif
