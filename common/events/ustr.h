/* ustr: the user-space strings that system call arguments point to (a path given to openat). */
#ifndef PERFSCOPE_COMMON_USTR_H
#define PERFSCOPE_COMMON_USTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfscope/tp.h>

/*
 * A syscalls:sys_enter_* tracepoint carries its arguments as numbers: a path is a pointer into
 * the caller's memory ("filename: 0x7ffd3a1c2e40"). What it points to is read two ways:
 *
 * - when the call is made, by a small BPF program attached to the tracepoint, which sends the
 *   string (up to USTR_MAX bytes) with its thread, pointer and time through a BPF ring buffer, as
 *   perf trace and bpftrace read it; each event then takes its own call's copy, even when the
 *   thread passed the same buffer with other contents since. This needs the rights to load BPF
 *   (root, or CAP_BPF and CAP_PERFMON); a string whose page is not in memory yet cannot be
 *   copied (BPF may not fault it in), and the program sees every process's calls, so copies are
 *   dropped when the machine makes more such calls than the ring holds between two events
 *   printed;
 * - else when the event is printed, from the process's memory (process_vm_readv), which may
 *   have changed since, and is gone once the process has exited: short-lived processes then
 *   keep their bare pointers.
 *
 * Each string read is best effort and bounded (USTR_MAX bytes); nothing here waits for the
 * traced process. Not thread-safe.
 */
#define USTR_MAX 256

struct ustr;

/* NULL + errno. */
struct ustr *ustr__new(void);
/* Detaches and frees. NULL is a no-op. */
void ustr__delete(struct ustr *u);

/*
 * The fields of fmt that point to user strings: the `const char *` arguments of a
 * syscalls:sys_enter_* event, but not data buffers (write's buf, mq_timedsend's u_msg_ptr).
 * Fills at most max of them, in record order, and returns how many there are.
 */
int ustr__fields(const struct psc_tp_format *fmt, const struct psc_tp_field **out, int max);

/*
 * Copies fmt's string arguments when its events happen, from now on. Returns 0, 0 when fmt has
 * none, or -errno when the copy cannot be set up here (no rights to load BPF: the strings are
 * then read when printed); why is then filled with what refused it.
 */
int ustr__watch(struct ustr *u, const struct psc_tp_format *fmt, char *why, size_t whylen);

/*
 * The string that ptr pointed to in thread tid of process pid when the event of time time_ns
 * (CLOCK_MONOTONIC) happened: the copy taken then, else what the process's memory holds now.
 * Writes it NUL-terminated into buf (len >= 2) and returns its length, or -1 when it cannot be
 * read. *cut is set when the string was longer than USTR_MAX - 1 bytes or buf.
 */
int ustr__read(struct ustr *u, uint32_t pid, uint32_t tid, uint64_t ptr, uint64_t time_ns,
	       char *buf, size_t len, bool *cut);

#endif
