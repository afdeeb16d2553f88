/* USDT (SystemTap SDT) probes of an ELF file: its .note.stapsdt notes read with libelf, each
 * one's file offset, semaphore and arguments as a uprobe_events command. */
#ifndef PERFSCOPE_SDT_NOTES_H
#define PERFSCOPE_SDT_NOTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfscope/parse.h>

struct usdt_note {
	const char *provider, *name;
	const char *args; /* the SDT argument spec, "-4@%eax 8@-16(%rbp)"; "" if none */
	uint64_t pc, base, sem; /* as the note says them (sem 0: no semaphore) */
	uint64_t pc_off; /* where the probe is in the file */
	uint64_t sem_off; /* where the semaphore is in the file (ref_ctr_offset), 0 if none */
};

/*
 * Calls cb for each SDT note of the ELF file at path, in file order; stops at cb's first
 * non-zero return and returns it. Returns 0, -errno of open, -EINVAL (no ELF file), -ERANGE (a
 * note whose address is in no loaded segment: it is skipped and counted in *skipped).
 */
int usdt__for_each(const char *path, int (*cb)(const struct usdt_note *n, void *ctx), void *ctx,
		   int *skipped);

/*
 * One SDT argument ("-4@%eax", "8@-16(%rbp)", "4@$5") as a uprobe fetch argument
 * ("%ax:s32", "-16(%bp):u64", "\5:u32"), written to buf; loc_len gets the length of its
 * location (without ":TYPE"). Returns 0, or -EOPNOTSUPP for what uprobe_events cannot fetch
 * (%rip-relative, indexed, another architecture's), -EINVAL for what is no SDT argument.
 */
int usdt__fetch_arg(const char *arg, size_t len, char *buf, size_t buflen, size_t *loc_len);

/*
 * The fetch arguments of the probe: "arg1=... arg2=..." from its SDT spec, or, when user is
 * given, user with each "%s" replaced by the next argument's location (perf-prof's
 * "filename=+0(%s):string"). Arguments that cannot be fetched are left out and counted in
 * *dropped (with user, one that a %s names is an error: -EOPNOTSUPP). Returns 0 or -errno.
 */
int usdt__fetch_args(const struct usdt_note *n, const char *user, char *buf, size_t len,
		     int *dropped);

/*
 * psc_parse_opts' usdt_find: the first probe PROVIDER:NAME of the file at path, its offsets and
 * its arguments (arg1..argN) into probe; -ENOENT with the probes it has in msg.
 */
int usdt__find(const char *path, const char *provider, const char *name,
	       struct psc_probe_spec *probe, char *msg, size_t msg_len, void *ctx);

#endif
