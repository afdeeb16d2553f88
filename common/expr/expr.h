/* The expression language over event fields (key=, top-by=, num=, printkey=, user-space filters).
 */
#ifndef PERFSCOPE_COMMON_EXPR_H
#define PERFSCOPE_COMMON_EXPR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <perfscope/record.h>
#include <perfscope/tp.h>

struct ksyms;

/*
 * A C expression over one event, compiled once against the event's tracepoint format and run
 * per event as bytecode:
 *
 *   prev_pid + 1          (_cpu << 16) | vec          runtime / 1000         pid < prio
 *   prev_comm ~ "kworker*" && prev_state == 0        filename != "/bin/sh"    args[1]
 *   comm == next_comm     ksymbol(call_site)         printf("0x%x", key)     _time > 10ms
 *
 * C's operators with C's precedence: ?: || && | ^ & (== !=) (< <= > >= ~) (<< >>) (+ -) (* / %),
 * unary + - ! ~ and casts to integer types, [] on array fields. Integers are 64 bits wide:
 * operands are widened (sign-extended when signed) and the result is unsigned when one side is
 * an unsigned 64-bit type (unsigned long, pointers, _time), signed otherwise, as C does on a
 * machine whose int is 64 bits; kernel pointers stay exact. A field's size and signedness come
 * from the format. Strings (char arrays, __data_loc char[], literals, what ksymbol() and the
 * other functions return) compare with == and != and match a glob with ~ (* ? [a-z] [!a]),
 * whatever the format says of char's signedness. Numbers may carry a time unit: 10ms, 1.5us
 * (ns, us, ms, s: the nanoseconds they stand for).
 *
 * Names: the event's fields (common_* included), the caller's variables (opts.vars: "key" for
 * printkey=), _cpu, _pid, _tid (int), _time, _period (unsigned long) from the sample. Functions:
 * ksymbol(addr), syscall_name(id), comm_get(pid), printf(fmt, ...), ntohl(x), ntohs(x); the
 * string ones return text valid until the expression runs again.
 */
struct expr;

enum expr_kind {
	EXPR_INT,
	EXPR_STR,
};

/* The type of an expression's value. */
struct expr_type {
	enum expr_kind kind;
	uint8_t size; /* integers: 1, 2, 4 or 8 bytes */
	bool is_signed;
	bool is_ptr; /* an address: shown in hex */
	/* a pointer into the event (its offset in the record): the size of what it points to, 0
	 * for any other value; '*' reads it (expr_ptr.c) */
	uint8_t elem;
	bool elem_signed;
};

/* One value: integers in i (sign-extended when signed), strings as s/len (no NUL needed). */
struct expr_val {
	uint64_t i;
	const char *s;
	uint32_t len;
};

/* Where a compilation failed: pos is a byte offset into the text (-1: none). */
struct expr_error {
	int pos;
	bool unknown_name; /* an unknown name: show the names there are (expr_print_names) */
	char msg[512];
};

struct expr_opts {
	/* The event's format: its fields are names. NULL: not a tracepoint, no fields. */
	const struct psc_tp_format *fmt;
	/* More names the caller sets per run (expr__set_var), NULL-terminated; NULL: none. */
	const char *const *vars;
	/* ksymbol(): the kernel's symbols, asked for once when an expression calls it. */
	const struct ksyms *(*ksyms)(void *ctx);
	/* comm_get(pid): a thread's name; NULL makes comm_get() a compile error. */
	const char *(*comm)(void *ctx, uint32_t pid);
	void *ctx;
	/* What the caller takes: integers only (filters, key=, num=), or strings too. */
	bool want_int;
};

/*
 * Compiles text. NULL + errno (EINVAL with *err filled: where and what; ENOMEM). opts->fmt must
 * outlive the expression.
 */
struct expr *expr__compile(const char *text, const struct expr_opts *opts, struct expr_error *err);
void expr__delete(struct expr *e);

struct expr_type expr__type(const struct expr *e);
/* "int", "unsigned long", "void *", "string". */
const char *expr_type__name(struct expr_type t);
/* True when the value is a constant (no field, no function, no sample value). */
bool expr__is_const(const struct expr *e);

/* Sets caller variable idx (in opts.vars) for the next runs. */
void expr__set_var(struct expr *e, int idx, uint64_t value);

/*
 * Runs the expression over one event: raw/size its PERF_SAMPLE_RAW payload (may be NULL/0 when
 * the expression reads no field), s its sample (_cpu, _pid, _tid, _time, _period; NULL: all 0).
 * 0, or -ERANGE (a field or an element outside the record), -EDOM (division by zero). One
 * thread at a time per expression (strings returned live in it).
 */
int expr__eval(struct expr *e, const void *raw, uint32_t size, const struct psc_sample *s,
	       struct expr_val *out);

/* Failed runs so far, and the error of the last one (0 when none failed). */
uint64_t expr__nr_errors(const struct expr *e, int *last_err);

/* The value as text: decimal, hex for addresses, strings as they are. snprintf's return. */
int expr_val__snprint(struct expr_type t, const struct expr_val *v, char *buf, size_t len);

/* The bytecode, one instruction a line (perfscope expr -v). */
void expr__dump(const struct expr *e, FILE *f);

/*
 * "INDENT NAME has fields: a, b, c\nINDENT and: _cpu, ..." after an unknown name; event names
 * the event (fmt's name when NULL).
 */
void expr_print_names(FILE *f, const char *indent, const char *event, const struct expr_opts *opts);

#endif
