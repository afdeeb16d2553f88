/* libperfscope: uprobes and kprobes as trace events: created from parsed specs, removed again,
 * and what a binary offers to probe. */
#ifndef PERFSCOPE_PROBE_H
#define PERFSCOPE_PROBE_H

#include <stddef.h>
#include <stdint.h>
#include <perfscope/common.h>
#include <perfscope/parse.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The probes one call created; removing them is the owner's job (psc_probes__delete). */
struct psc_probes;

struct psc_probes_opts {
	size_t sz;
	/* Where tracefs is; NULL: where it is mounted (psc_tracefs__dir). Never mounts. */
	const char *tracefs_dir;
	/*
	 * The trace-event group the probes are made in; NULL: "perfscope_<pid>", the name
	 * psc_probes__remove_stale recognises once that process is gone.
	 */
	const char *group;
};
#define psc_probes_opts__last_field group

/*
 * Makes every PSC_EVENT_UPROBE/KPROBE spec of list a dynamic trace event (tracefs
 * uprobe_events/kprobe_events) and turns the spec into that tracepoint (parse.h). Each probe
 * fetches what a caller of the function passed and got: on entry arg1..arg6, the integer
 * arguments by register (x86-64 System V: rdi, rsi, rdx, rcx, r8, r9) and caller, the return
 * address (which a frame-pointer stack taken at the entry lacks), on return ret, the return
 * value (rax); fields of type u64. Event names are the function's, "_ret" for return
 * probes, made unique in the group.
 * Returns 0 with *out (NULL when the list has no probe), or a negative errno with *err saying
 * which probe and why (the kernel's error_log line when it has one); on failure the probes
 * made so far are removed. Needs CAP_SYS_ADMIN (or write access to tracefs).
 */
PSC_API int psc_probes__create(struct psc_event_list *list, const struct psc_probes_opts *opts,
			       struct psc_probes **out, struct psc_parse_error *err);
/*
 * Removes the probes from the kernel; the perf events opened on them must be closed first
 * (the kernel refuses with EBUSY otherwise). Returns 0 or the first error; idempotent.
 */
PSC_API int psc_probes__remove(struct psc_probes *probes);
/* psc_probes__remove, then frees. NULL is a no-op. */
PSC_API void psc_probes__delete(struct psc_probes *probes);
PSC_API int psc_probes__nr(const struct psc_probes *probes);
PSC_API const char *psc_probes__group(const struct psc_probes *probes);

/*
 * Removes the probes of groups "perfscope_<pid>" whose process is gone (killed before it
 * could remove them). Returns how many were removed, or a negative errno (-ENODEV: no
 * tracefs). tracefs_dir NULL: where tracefs is mounted.
 */
PSC_API int psc_probes__remove_stale(const char *tracefs_dir);

/*
 * The file "uprobe:...@NAME" means: NAME itself when it holds '/', else the library ld.so
 * would load (ld.so.cache, then /lib64, /usr/lib64, /lib/<triplet>, /usr/lib/<triplet>, /lib,
 * /usr/lib, checking the ELF machine), else a program in $PATH. Writes the path to buf.
 * Returns 0, -ENOENT, -ENAMETOOLONG.
 */
PSC_API int psc_probe__find_binary(const char *name, char *buf, size_t len);

/*
 * Calls cb for every function defined in the ELF file at path (its .symtab, or .dynsym when
 * it was stripped), with its address and size as the file says them;
 * stops at the first non-zero return of cb and returns it. Returns 0, or -ENOENT, -EINVAL (no
 * ELF64 file of this machine), -ENOMEM.
 */
PSC_API int psc_probe__for_each_func(const char *path,
				     int (*cb)(const char *name, uint64_t addr, uint64_t size,
					       void *ctx),
				     void *ctx);

#ifdef __cplusplus
}
#endif
#endif
