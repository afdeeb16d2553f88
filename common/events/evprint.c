/* evprint: events as text lines and typed JSON objects; see evprint.h. */
#include "evprint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "ustr.h"

struct evprint {
	char *pbuf; /* scratch for print fmt text, grown to the longest line */
	size_t pbuf_len;
	const char *kallsyms;
	struct ksyms *ksyms; /* read at first need */
	bool ksyms_tried;
	struct callchain *cc;
	struct json json;
	evprint_str_fn str_fn;
	void *str_ctx;
	char str[USTR_MAX];
};

struct evprint *evprint__new(const char *kallsyms)
{
	struct evprint *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->kallsyms = kallsyms;
	p->pbuf_len = 4096;
	p->pbuf = malloc(p->pbuf_len);
	if (!p->pbuf) {
		free(p);
		return NULL;
	}
	return p;
}

void evprint__delete(struct evprint *p)
{
	if (!p)
		return;
	ksyms__delete(p->ksyms);
	free(p->pbuf);
	free(p);
}

void evprint__set_user_strings(struct evprint *p, evprint_str_fn fn, void *ctx)
{
	p->str_fn = fn;
	p->str_ctx = ctx;
}

void evprint__set_callchain(struct evprint *p, struct callchain *cc)
{
	p->cc = cc;
}

/*
 * Kernel functions in a print format (a timer's function, a kmalloc call site) are named as perf
 * script names them; kallsyms is read only once one is printed. Hidden kernel addresses
 * (kptr_restrict) leave an empty table: the addresses are printed bare.
 */
static const char *evprint_ksym(void *priv, uint64_t addr, uint64_t *start)
{
	struct evprint *p = priv;
	const struct ksym *sym;
	uint64_t off;

	if (!p->ksyms_tried) {
		p->ksyms_tried = true;
		p->ksyms = ksyms__load(p->kallsyms);
	}
	if (!p->ksyms || !(sym = ksyms__find(p->ksyms, addr, &off)))
		return NULL;
	*start = sym->addr;
	return sym->name;
}

void evprint_event__exit(struct evprint_event *ev)
{
	free(ev->fields);
	free(ev->json_name);
	for (int i = 0; ev->json_keys && i < ev->nr_fields; i++)
		free(ev->json_keys[i]);
	free(ev->json_keys);
	free(ev->json_key_lens);
	free(ev->user_str);
	memset(ev, 0, sizeof(*ev));
}

/* The event's JSON name and field keys, so that no event escapes the same text again. */
int evprint_event__init(struct evprint_event *ev, struct evprint *p, const char *name,
			struct psc_tp_format *fmt)
{
	size_t n;
	int i;

	memset(ev, 0, sizeof(*ev));
	ev->name = name;
	ev->fmt = fmt;
	ev->nr_fields = fmt ? psc_tp_format__nr_fields(fmt) : 0;
	if (ev->nr_fields < 0)
		ev->nr_fields = 0;
	n = ev->nr_fields > 0 ? (size_t)ev->nr_fields : 1;
	ev->fields = calloc(n, sizeof(*ev->fields));
	ev->json_keys = calloc(n, sizeof(*ev->json_keys));
	ev->json_key_lens = calloc(n, sizeof(*ev->json_key_lens));
	ev->json_name = json_render(name, false, &ev->json_name_len);
	ev->user_str = calloc(n, sizeof(*ev->user_str));
	if (!ev->fields || !ev->json_keys || !ev->json_key_lens || !ev->json_name || !ev->user_str)
		goto nomem;
	for (i = 0; i < ev->nr_fields; i++) {
		ev->fields[i] = psc_tp_format__field_at(fmt, i);
		ev->json_keys[i] = json_render(ev->fields[i]->name, true, &ev->json_key_lens[i]);
		if (!ev->json_keys[i])
			goto nomem;
	}
	if (fmt && psc_tp_format__set_ksym_resolver(fmt, evprint_ksym, p))
		goto nomem;
	if (fmt) {
		const struct psc_tp_field *strs[16];
		int nr = ustr__fields(fmt, strs, 16);

		for (i = 0; i < ev->nr_fields; i++)
			for (int k = 0; k < nr && k < 16; k++)
				if (ev->fields[i] == strs[k] && !ev->user_str[i]) {
					ev->user_str[i] = true;
					ev->nr_user_str++;
				}
	}
	return 0;
nomem:
	evprint_event__exit(ev);
	return -ENOMEM;
}

/* ---- text ---- */

static void text_tp(struct evprint *p, struct out *o, const struct evprint_event *ev,
		    const struct psc_sample *s)
{
	int n = psc_tp_format__print(ev->fmt, s->raw.data, s->raw.size, p->pbuf, p->pbuf_len);

	if (n >= 0 && (size_t)n >= p->pbuf_len) {
		char *nb = realloc(p->pbuf, (size_t)n + 1);

		if (nb) {
			p->pbuf = nb;
			p->pbuf_len = (size_t)n + 1;
			n = psc_tp_format__print(ev->fmt, s->raw.data, s->raw.size, p->pbuf,
						 p->pbuf_len);
		}
	}
	if (n < 0) {
		out__printf(o, "<undecodable: %s>", strerror(-n));
		return;
	}
	out__write(o, p->pbuf, strnlen(p->pbuf, p->pbuf_len));
}

static void text_other(struct out *o, const struct psc_sample *s)
{
	if (s->sample_type & PERF_SAMPLE_IP) {
		out__puts(o, "ip=");
		out__hex(o, s->ip);
	}
	if (s->sample_type & PERF_SAMPLE_ADDR) {
		out__puts(o, " addr=");
		out__hex(o, s->addr);
	}
	if (s->sample_type & PERF_SAMPLE_PERIOD) {
		out__puts(o, " period=");
		out__u64(o, s->period);
	}
}

/* The user string at ptr for s, into p->str; its length or -1. */
static int user_str(struct evprint *p, const struct psc_sample *s, uint64_t ptr, bool *cut)
{
	if (!p->str_fn || !ptr)
		return -1;
	return p->str_fn(p->str_ctx, s->pid, s->tid, ptr, s->time, p->str, sizeof(p->str), cut);
}

/* s as C writes a string literal: printable ASCII and valid UTF-8 as they are, the rest escaped. */
static void text_quoted(struct out *o, const char *s, size_t n, bool cut)
{
	const unsigned char *u = (const unsigned char *)s;

	out__putc(o, '"');
	for (size_t i = 0; i < n; i++) {
		size_t m;

		if (u[i] == '"' || u[i] == '\\') {
			out__putc(o, '\\');
			out__putc(o, (char)u[i]);
		} else if (u[i] == '\n') {
			out__puts(o, "\\n");
		} else if (u[i] == '\t') {
			out__puts(o, "\\t");
		} else if (u[i] >= 0x20 && u[i] < 0x7f) {
			out__putc(o, (char)u[i]);
		} else if (u[i] >= 0x80 && (m = utf8_len(u + i, n - i))) {
			out__write(o, u + i, m);
			i += m - 1;
		} else {
			out__printf(o, "\\x%02x", u[i]);
		}
	}
	out__putc(o, '"');
	if (cut)
		out__puts(o, "...");
}

/*
 * A system call's entry with its string arguments read: the kernel's print fmt of system calls
 * ("dfd: 0x%08lx, filename: 0x%08lx, ..."), each string in place of its pointer. False when a
 * field cannot be decoded (the caller prints the kernel's text instead).
 */
static bool text_syscall(struct evprint *p, struct out *o, const struct evprint_event *ev,
			 const struct psc_sample *s)
{
	uint64_t v[16];
	int nr = 0;
	bool first = true;

	for (int i = 0; i < ev->nr_fields; i++) {
		const struct psc_tp_field *f = ev->fields[i];

		if (f->is_common || !strcmp(f->name, "__syscall_nr"))
			continue;
		if (nr == 16 || psc_tp_field__u64(f, s->raw.data, s->raw.size, &v[nr]))
			return false;
		nr++;
	}
	nr = 0;
	for (int i = 0; i < ev->nr_fields; i++) {
		const struct psc_tp_field *f = ev->fields[i];
		char hex[24];
		bool cut;
		int n;

		if (f->is_common || !strcmp(f->name, "__syscall_nr"))
			continue;
		if (!first)
			out__puts(o, ", ");
		first = false;
		out__puts(o, f->name);
		out__puts(o, ": ");
		if (ev->user_str[i] && (n = user_str(p, s, v[nr], &cut)) >= 0) {
			text_quoted(o, p->str, (size_t)n, cut);
		} else {
			snprintf(hex, sizeof(hex), "0x%08llx", (unsigned long long)v[nr]);
			out__puts(o, hex);
		}
		nr++;
	}
	return true;
}

void evprint__text_line(struct evprint *p, struct out *o, const struct evprint_event *ev, int cpu,
			const char *comm, const struct psc_sample *s)
{
	size_t len = strlen(comm);
	char us[16];

	for (; len < 16; len++)
		out__putc(o, ' ');
	out__puts(o, comm);
	out__putc(o, ' ');
	out__u64_width(o, s->pid, 7);
	out__putc(o, '/');
	out__u64(o, s->tid);
	out__puts(o, " [");
	snprintf(us, sizeof(us), "%03d", cpu);
	out__puts(o, us);
	out__puts(o, "] ");
	out__u64(o, s->time / 1000000000ull);
	snprintf(us, sizeof(us), ".%06u", (unsigned int)(s->time % 1000000000ull / 1000));
	out__puts(o, us);
	out__puts(o, ": ");
	out__puts(o, ev->name);
	out__puts(o, ": ");
	if (ev->fmt && (!ev->nr_user_str || !p->str_fn || !text_syscall(p, o, ev, s)))
		text_tp(p, o, ev, s);
	else if (!ev->fmt)
		text_other(o, s);
	out__putc(o, '\n');
}

void evprint__text(struct evprint *p, struct out *o, const struct evprint_event *ev, int cpu,
		   const char *comm, const struct psc_sample *s)
{
	evprint__text_line(p, o, ev, cpu, comm, s);
	if (p->cc && (s->sample_type & PERF_SAMPLE_CALLCHAIN))
		callchain__text(p->cc, o, s);
}

/* ---- JSON ---- */

static void json_field(struct json *j, const struct evprint_event *ev, int idx,
		       const struct psc_sample *s)
{
	const struct psc_tp_field *f = ev->fields[idx];
	uint32_t len, i, nr;
	const char *str;
	uint64_t v;

	json__raw_key(j, ev->json_keys[idx], ev->json_key_lens[idx]);
	switch (f->kind) {
	case PSC_TP_KIND_STRING:
		str = psc_tp_field__str(f, s->raw.data, s->raw.size, &len);
		if (str)
			json__strn(j, str, len);
		else
			json__null(j);
		return;
	case PSC_TP_KIND_ARRAY:
		nr = psc_tp_field__count(f, s->raw.data, s->raw.size);
		json__arr(j);
		for (i = 0; i < nr; i++) {
			if (psc_tp_field__elem(f, s->raw.data, s->raw.size, i, &v))
				break;
			if (f->is_signed)
				json__i64(j, (int64_t)v);
			else
				json__u64(j, v);
		}
		json__end(j);
		return;
	default:
		if (psc_tp_field__u64(f, s->raw.data, s->raw.size, &v))
			json__null(j);
		else if (f->kind == PSC_TP_KIND_POINTER)
			json__hex(j, v);
		else if (f->kind == PSC_TP_KIND_SIGNED)
			json__i64(j, (int64_t)v);
		else
			json__u64(j, v);
	}
}

/* "strings":{"filename":"/etc/hostname",...}: the user strings that could be read, if any. */
static void json_strings(struct evprint *p, struct json *j, const struct evprint_event *ev,
			 const struct psc_sample *s)
{
	bool open = false;

	for (int i = 0; i < ev->nr_fields; i++) {
		uint64_t ptr;
		bool cut;
		int n;

		if (!ev->user_str[i] ||
		    psc_tp_field__u64(ev->fields[i], s->raw.data, s->raw.size, &ptr) ||
		    (n = user_str(p, s, ptr, &cut)) < 0)
			continue;
		if (!open) {
			JSON_KEY(j, "strings");
			json__obj(j);
			open = true;
		}
		json__raw_key(j, ev->json_keys[i], ev->json_key_lens[i]);
		json__strn(j, p->str, (size_t)n);
	}
	if (open)
		json__end(j);
}

void evprint__json_members(struct evprint *p, struct json *j, const struct evprint_event *ev,
			   int cpu, const char *comm, const struct psc_sample *s)
{
	int i;

	JSON_KEY(j, "time");
	json__u64(j, s->time);
	JSON_KEY(j, "cpu");
	json__i64(j, cpu);
	JSON_KEY(j, "pid");
	json__u64(j, s->pid);
	JSON_KEY(j, "tid");
	json__u64(j, s->tid);
	JSON_KEY(j, "comm");
	json__str(j, comm);
	JSON_KEY(j, "event");
	json__raw(j, ev->json_name, ev->json_name_len);
	if (!ev->fmt) {
		if (s->sample_type & PERF_SAMPLE_IP) {
			JSON_KEY(j, "ip");
			json__hex(j, s->ip);
		}
		if (s->sample_type & PERF_SAMPLE_ADDR) {
			JSON_KEY(j, "addr");
			json__hex(j, s->addr);
		}
		if (s->sample_type & PERF_SAMPLE_PERIOD) {
			JSON_KEY(j, "period");
			json__u64(j, s->period);
		}
	} else {
		JSON_KEY(j, "fields");
		json__obj(j);
		for (i = 0; i < ev->nr_fields; i++)
			json_field(j, ev, i, s);
		json__end(j);
		if (ev->nr_user_str && p->str_fn)
			json_strings(p, j, ev, s);
	}
	if (p->cc && (s->sample_type & PERF_SAMPLE_CALLCHAIN)) {
		JSON_KEY(j, "stack");
		callchain__json(p->cc, j, s);
	}
}

void evprint__json(struct evprint *p, struct out *o, const struct evprint_event *ev, int cpu,
		   const char *comm, const struct psc_sample *s)
{
	json__begin(&p->json, o);
	evprint__json_members(p, &p->json, ev, cpu, comm, s);
	json__end_line(&p->json);
}
