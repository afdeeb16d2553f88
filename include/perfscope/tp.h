/* libperfscope: tracepoint formats, field access on PERF_SAMPLE_RAW payloads, print fmt, kernel
 * filters. */
#ifndef PERFSCOPE_TP_H
#define PERFSCOPE_TP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One tracepoint's format (the kernel's events/SYS/NAME/format file), parsed by libtraceevent.
 * Look fields up once (psc_tp_format__field), then read them per event with the inline
 * accessors below: they cost a bounds check and a load, no lookup, no allocation.
 *
 * Thread safety: a format and its fields may be read from any thread once loaded.
 * psc_tp_format__print() uses a scratch buffer inside the format: one thread at a time.
 */
struct psc_tp_format;

/* How a field's value is best shown (JSON type, text form). */
enum psc_tp_field_kind {
	PSC_TP_KIND_SIGNED, /* integer, sign-extended: int, long, pid_t, s32 ... */
	PSC_TP_KIND_UNSIGNED, /* integer: unsigned int, u64, size_t, gfp_t ... */
	PSC_TP_KIND_POINTER, /* address, shown in hex: void *, const char * (not a string) */
	PSC_TP_KIND_STRING, /* char[N] or __data_loc char[] */
	PSC_TP_KIND_ARRAY, /* array of integers, fixed or __data_loc; elem_size each */
};

/*
 * A field of a format. Owned by the format; valid until psc_tp_format__delete().
 * For __data_loc/__rel_loc fields, offset/size describe the 4-byte locator in the record and
 * the data lives elsewhere in the payload (the accessors follow it).
 */
struct psc_tp_field {
	const char *name; /* "prev_comm", "common_pid" */
	const char *type; /* C type as the kernel wrote it: "char[16]", "__data_loc char[]" */
	uint32_t offset; /* byte offset in the PERF_SAMPLE_RAW payload */
	uint32_t size; /* bytes at offset */
	uint32_t elem_size; /* arrays: bytes per element; otherwise == size */
	uint32_t array_len; /* fixed arrays: element count; 0 for scalars and dynamic arrays */
	enum psc_tp_field_kind kind;
	uint8_t is_signed;
	uint8_t is_string;
	uint8_t is_array;
	uint8_t is_dynamic; /* __data_loc (or __rel_loc): u32 = length << 16 | offset */
	uint8_t is_relative; /* __rel_loc: offset counts from the end of the locator */
	uint8_t is_pointer;
	uint8_t is_common; /* ftrace's common_type, common_flags, common_preempt_count, common_pid
			    */
};

/*
 * Loads SYS:NAME's format from tracefs, which must be mounted (psc_tracefs__mount, tracefs.h).
 * NULL + errno: ENODEV tracefs not mounted, ENOENT no such tracepoint, EACCES not readable (run
 * as root), EINVAL the kernel's format text did not parse.
 */
PSC_API struct psc_tp_format *psc_tp_format__load(const char *sys, const char *name);

/* Parses a format file's text (as read from tracefs); sys names the subsystem. NULL + errno. */
PSC_API struct psc_tp_format *psc_tp_format__parse(const char *format_text, const char *sys);

PSC_API void psc_tp_format__delete(struct psc_tp_format *fmt);

PSC_API const char *psc_tp_format__system(const struct psc_tp_format *fmt);
PSC_API const char *psc_tp_format__name(const struct psc_tp_format *fmt);
/* The tracepoint id: perf_event_attr.config for PERF_TYPE_TRACEPOINT. */
PSC_API int psc_tp_format__id(const struct psc_tp_format *fmt);

/* A field by name, common_* fields included; NULL + ENOENT when the event has no such field. */
PSC_API const struct psc_tp_field *psc_tp_format__field(const struct psc_tp_format *fmt,
							const char *name);

/*
 * Every field, in record order: the common_* fields first, then the event's own.
 * idx in [0, psc_tp_format__nr_fields()); NULL + ERANGE past the end.
 */
PSC_API int psc_tp_format__nr_fields(const struct psc_tp_format *fmt);
PSC_API const struct psc_tp_field *psc_tp_format__field_at(const struct psc_tp_format *fmt,
							   int idx);

/*
 * Writes the event's text through the kernel's own `print fmt` line (as /sys/kernel/tracing/trace
 * shows it, e.g. "prev_comm=bash prev_pid=12 ... ==> next_comm=swapper/0 ...") into buf, always
 * NUL-terminated. Returns the full length (snprintf-style: >= len means truncated) or -errno
 * (-EINVAL when raw is too short for the event's fields).
 */
PSC_API int psc_tp_format__print(struct psc_tp_format *fmt, const void *raw, uint32_t raw_size,
				 char *buf, size_t len);

/*
 * Finds the kernel function holding addr: returns its name and sets *start to its first
 * address, or returns NULL when addr is in no known function. The name must stay valid while
 * the format that calls it is in use.
 */
typedef const char *(*psc_tp_ksym_resolver_fn)(void *priv, uint64_t addr, uint64_t *start);

/*
 * Kernel addresses that the print format shows as functions (%pS/%ps: a timer's function, a
 * kmalloc call site, a work item's function) are printed as name+0xoff or name, as perf script
 * and /sys/kernel/tracing/trace show them, through fn; without a resolver (the default, and
 * fn NULL) or when fn returns NULL, as bare addresses. The library reads no symbol table itself.
 * Returns 0 or -EINVAL (fmt NULL).
 */
PSC_API int psc_tp_format__set_ksym_resolver(struct psc_tp_format *fmt, psc_tp_ksym_resolver_fn fn,
					     void *priv);

/*
 * Formats one field's value as text: decimal integers, 0x-hex pointers, strings as-is, arrays
 * as "{1,2,3}". Same return convention as psc_tp_format__print.
 */
PSC_API int psc_tp_field__snprint(const struct psc_tp_field *f, const void *raw, uint32_t raw_size,
				  char *buf, size_t len);

/*
 * Checks an ftrace filter (e.g. "prev_pid > 0 && next_comm ~ \"kworker*\"") against the event's
 * fields without asking the kernel: syntax, unknown fields, operators a field's type does not
 * support. Returns 0 or -EINVAL with err (if non-NULL) saying which part is wrong, at which
 * position, and listing the event's fields.
 */
PSC_API int psc_tp__check_filter(const struct psc_tp_format *fmt, const char *filter,
				 struct psc_parse_error *err);

/*
 * Applies filter to an open tracepoint perf event fd (PERF_EVENT_IOC_SET_FILTER). When the kernel
 * refuses it, err explains why (the part psc_tp__check_filter finds wrong, or the kernel's errno
 * with the event's fields listed). fmt may be NULL (then the message cannot list fields).
 * The kernel keeps the first filter set on a perf event: another gives -EEXIST.
 * Returns 0 or -errno.
 */
PSC_API int psc_tp__apply_filter(const struct psc_tp_format *fmt, int fd, const char *filter,
				 struct psc_parse_error *err);

/*
 * Checks a filter in user space (psc_tp__check_filter) and then with the kernel, on a disabled
 * scratch event of the tracepoint opened on the calling thread, before any real event is opened.
 * The kernel refuses some filters the grammar allows (a number out of range, an unknown symbol
 * after .function, a bad CPUS{} list); it gives no position, so each predicate is tried alone and
 * err points at the first one refused, listing the event's fields. 0 when both accept it, -EINVAL
 * with err filled when either refuses it, another -errno when the scratch event cannot be opened
 * (the filter is then unverified: the real open will tell).
 */
PSC_API int psc_tp__verify_filter(const struct psc_tp_format *fmt, const char *filter,
				  struct psc_parse_error *err);

/*
 * Fast accessors. raw/raw_size: the PERF_SAMPLE_RAW payload of one sample. Every read is checked
 * against raw_size; a field that does not fit gives -ERANGE and leaves the output untouched.
 */

/* Where a field's bytes are: follows __data_loc/__rel_loc. 0 or -ERANGE. */
static inline int psc_tp_field__data(const struct psc_tp_field *f, const void *raw,
				     uint32_t raw_size, const void **data, uint32_t *size)
{
	const uint8_t *p = (const uint8_t *)raw;
	uint32_t off = f->offset, len = f->size;

	if ((uint64_t)off + len > raw_size)
		return -ERANGE;
	if (f->is_dynamic) {
		uint32_t loc;

		if (len < 4)
			return -ERANGE;
		memcpy(&loc, p + off, 4);
		len = loc >> 16;
		off = f->is_relative ? f->offset + f->size + (loc & 0xffff) : (loc & 0xffff);
		if ((uint64_t)off + len > raw_size)
			return -ERANGE;
	}
	*data = p + off;
	*size = len;
	return 0;
}

/* Integer of 1, 2, 4 or 8 bytes at p, zero- or sign-extended. */
static inline uint64_t psc_tp__load_int(const void *p, uint32_t size, int is_signed)
{
	switch (size) {
	case 1: {
		uint8_t v;
		memcpy(&v, p, 1);
		return is_signed ? (uint64_t)(int64_t)(int8_t)v : v;
	}
	case 2: {
		uint16_t v;
		memcpy(&v, p, 2);
		return is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;
		memcpy(&v, p, 4);
		return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	default: {
		uint64_t v;
		memcpy(&v, p, 8);
		return v;
	}
	}
}

/*
 * Element idx of a numeric field (idx 0 for scalars). Sign-extends signed fields. 0, -ERANGE
 * (outside the payload or the array), -EINVAL (strings, or an element size other than 1/2/4/8).
 */
static inline int psc_tp_field__elem(const struct psc_tp_field *f, const void *raw,
				     uint32_t raw_size, uint32_t idx, uint64_t *val)
{
	const void *data;
	uint32_t size, es = f->elem_size;

	if (f->is_string || (es != 1 && es != 2 && es != 4 && es != 8))
		return -EINVAL;
	if (!f->is_array && !f->is_dynamic) {
		/* scalar: the hot path, one check and one load */
		if (idx || (uint64_t)f->offset + es > raw_size)
			return -ERANGE;
		*val = psc_tp__load_int((const uint8_t *)raw + f->offset, es, f->is_signed);
		return 0;
	}
	if (psc_tp_field__data(f, raw, raw_size, &data, &size))
		return -ERANGE;
	if (((uint64_t)idx + 1) * es > size)
		return -ERANGE;
	*val = psc_tp__load_int((const uint8_t *)data + (size_t)idx * es, es, f->is_signed);
	return 0;
}

static inline int psc_tp_field__u64(const struct psc_tp_field *f, const void *raw,
				    uint32_t raw_size, uint64_t *val)
{
	return psc_tp_field__elem(f, raw, raw_size, 0, val);
}

static inline int psc_tp_field__s64(const struct psc_tp_field *f, const void *raw,
				    uint32_t raw_size, int64_t *val)
{
	uint64_t v;
	int err = psc_tp_field__elem(f, raw, raw_size, 0, &v);

	if (!err)
		*val = (int64_t)v;
	return err;
}

/*
 * A string field (char[N] or __data_loc char[]): pointer into raw, *len = bytes before the first
 * NUL (the kernel pads char[N]; a full char[N] has no NUL, so always use len). Any field can be
 * read this way as bytes. NULL when the field lies outside the payload.
 */
static inline const char *psc_tp_field__str(const struct psc_tp_field *f, const void *raw,
					    uint32_t raw_size, uint32_t *len)
{
	const void *data;
	const char *nul;
	uint32_t size;

	if (psc_tp_field__data(f, raw, raw_size, &data, &size))
		return NULL;
	nul = (const char *)memchr(data, 0, size);
	*len = nul ? (uint32_t)(nul - (const char *)data) : size;
	return (const char *)data;
}

/* Number of elements of an array field in this record (fixed or dynamic); 1 for scalars. */
static inline uint32_t psc_tp_field__count(const struct psc_tp_field *f, const void *raw,
					   uint32_t raw_size)
{
	const void *data;
	uint32_t size;

	if (!f->is_array && !f->is_dynamic)
		return 1;
	if (psc_tp_field__data(f, raw, raw_size, &data, &size) || !f->elem_size)
		return 0;
	return size / f->elem_size;
}

#ifdef __cplusplus
}
#endif
#endif
