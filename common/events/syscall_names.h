/* System call names by number, for syscall_name() in expressions. */
#ifndef PERFSCOPE_COMMON_SYSCALL_NAMES_H
#define PERFSCOPE_COMMON_SYSCALL_NAMES_H

#include <stdint.h>

/* The name of system call nr on this machine's architecture ("read"), NULL when unknown. */
const char *syscall__name(uint64_t nr);
/* The architecture whose table is built in, NULL when there is none (then every name is NULL). */
const char *syscall__arch(void);

#endif
