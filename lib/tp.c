/* Tracepoint formats through libtraceevent: load from tracefs or text, field table, print fmt
 * output. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include "internal.h"
#include "tp_internal.h"

/* A format file is a few KiB; kmem's gfp print fmts reach ~10 KiB. */
#define TP_FORMAT_MAX (1u << 20)

static uint32_t type_elem_size(const char *type)
{
	/* __data_loc arrays: libtraceevent leaves elementsize unset; derive it from the C type. */
	static const struct {
		const char *prefix;
		uint32_t size;
	} types[] = {
		{ "u8", 1 },
		{ "s8", 1 },
		{ "char", 1 },
		{ "unsigned char", 1 },
		{ "signed char", 1 },
		{ "bool", 1 },
		{ "u16", 2 },
		{ "s16", 2 },
		{ "short", 2 },
		{ "unsigned short", 2 },
		{ "u32", 4 },
		{ "s32", 4 },
		{ "int", 4 },
		{ "unsigned int", 4 },
		{ "unsigned", 4 },
		{ "pid_t", 4 },
		{ "u64", 8 },
		{ "s64", 8 },
		{ "unsigned long", 8 },
		{ "long", 8 },
		{ "size_t", 8 },
		{ "unsigned long long", 8 },
		{ "long long", 8 },
	};
	const char *t = type;
	size_t best = 0;
	uint32_t size = 0;

	if (!strncmp(t, "__data_loc ", 11))
		t += 11;
	else if (!strncmp(t, "__rel_loc ", 10))
		t += 10;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		size_t n = strlen(types[i].prefix);

		/* longest matching C type wins ("unsigned long long" over "unsigned long") */
		if (!strncmp(t, types[i].prefix, n) && (t[n] == '[' || t[n] == ' ') && n > best) {
			best = n;
			size = types[i].size;
		}
	}
	if (size == 8 && sizeof(long) == 4 && strstr(t, "long") && !strstr(t, "long long"))
		size = 4;
	return size;
}

static void field_from_tep(struct psc_tp_field *f, const struct tep_format_field *tf, bool common)
{
	unsigned long fl = tf->flags;

	memset(f, 0, sizeof(*f));
	f->name = tf->name;
	f->type = tf->type;
	f->offset = (uint32_t)tf->offset;
	f->size = (uint32_t)tf->size;
	f->is_common = common;
	f->is_signed = !!(fl & TEP_FIELD_IS_SIGNED);
	/*
	 * libtraceevent calls u8/s8 arrays strings too; the kernel (filter_assign_type) and
	 * people see strings only in char arrays: __u8 saddr[4] is four numbers, not text.
	 */
	f->is_string = !!(fl & TEP_FIELD_IS_STRING) && strstr(tf->type, "char");
	f->is_dynamic = !!(fl & TEP_FIELD_IS_DYNAMIC);
	f->is_relative = !!(fl & TEP_FIELD_IS_RELATIVE);
	f->is_array = !!(fl & TEP_FIELD_IS_ARRAY) || f->is_dynamic;
	f->is_pointer = !!(fl & TEP_FIELD_IS_POINTER);

	if (f->is_dynamic) {
		f->elem_size = type_elem_size(f->type);
		if (!f->elem_size)
			f->elem_size = 1;
	} else if (f->is_array) {
		f->array_len = tf->arraylen;
		f->elem_size = tf->elementsize ? (uint32_t)tf->elementsize
					       : (tf->arraylen ? f->size / tf->arraylen : 1);
	} else {
		f->elem_size = f->size;
	}

	if (f->is_string)
		f->kind = PSC_TP_KIND_STRING;
	else if (f->is_array)
		f->kind = PSC_TP_KIND_ARRAY;
	else if (f->is_pointer)
		f->kind = PSC_TP_KIND_POINTER;
	else if (f->size != 1 && f->size != 2 && f->size != 4 && f->size != 8) {
		/* an odd-sized scalar (a struct by value): show its bytes */
		f->kind = PSC_TP_KIND_ARRAY;
		f->is_array = 1;
		f->elem_size = 1;
		f->array_len = f->size;
	} else
		f->kind = f->is_signed ? PSC_TP_KIND_SIGNED : PSC_TP_KIND_UNSIGNED;
}

static int build_fields(struct psc_tp_format *fmt)
{
	const struct tep_format *tf = &fmt->event->format;
	int n = tf->nr_common + tf->nr_fields, i = 0;

	fmt->fields = calloc(n ? n : 1, sizeof(*fmt->fields));
	if (!fmt->fields)
		return -ENOMEM;
	for (const struct tep_format_field *f = tf->common_fields; f && i < n; f = f->next)
		field_from_tep(&fmt->fields[i++], f, true);
	for (const struct tep_format_field *f = tf->fields; f && i < n; f = f->next)
		field_from_tep(&fmt->fields[i++], f, false);
	fmt->nr_fields = i;
	fmt->min_size = 0;
	for (i = 0; i < fmt->nr_fields; i++) {
		uint32_t end = fmt->fields[i].offset + fmt->fields[i].size;

		if (end > fmt->min_size)
			fmt->min_size = end;
		if (!strcmp(fmt->fields[i].name, "common_type"))
			fmt->common_type = &fmt->fields[i];
	}
	return 0;
}

struct psc_tp_format *psc_tp_format__parse(const char *format_text, const char *sys)
{
	struct psc_tp_format *fmt;
	enum tep_errno terr;
	int err;

	if (!format_text || !sys || !*sys)
		return psc_errno_null(-EINVAL);
	fmt = calloc(1, sizeof(*fmt));
	if (!fmt)
		return psc_errno_null(-ENOMEM);
	fmt->tep = tep_alloc();
	if (!fmt->tep) {
		free(fmt);
		return psc_errno_null(-ENOMEM);
	}
	/* Records come from this machine: host byte order and long size. */
	tep_set_long_size(fmt->tep, sizeof(long));
	tep_set_page_size(fmt->tep, (int)sysconf(_SC_PAGESIZE));
	tep_set_file_bigendian(fmt->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
						 ? TEP_BIG_ENDIAN
						 : TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(fmt->tep, __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
						  ? TEP_BIG_ENDIAN
						  : TEP_LITTLE_ENDIAN);

	terr = tep_parse_format(fmt->tep, &fmt->event, format_text, strlen(format_text), sys);
	if (terr || !fmt->event) {
		char msg[128] = "";

		tep_strerror(fmt->tep, terr, msg, sizeof(msg));
		pr_debug("tracepoint format of %s did not parse: %s\n", sys, msg);
		err = -EINVAL;
		goto fail;
	}
	fmt->sys = strdup(sys);
	fmt->name = strdup(fmt->event->name);
	if (!fmt->sys || !fmt->name) {
		err = -ENOMEM;
		goto fail;
	}
	err = build_fields(fmt);
	if (err)
		goto fail;
	trace_seq_init(&fmt->seq);
	fmt->seq_ready = true;
	return fmt;
fail:
	psc_tp_format__delete(fmt);
	return psc_errno_null(err);
}

/* A tracepoint path component: no '/', no "..", not empty (names come from users). */
static bool tp_name_ok(const char *s)
{
	return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

static char *read_small_file(const char *path, int *err)
{
	size_t cap = 8192, len = 0;
	char *buf = malloc(cap);
	int fd;

	if (!buf) {
		*err = -ENOMEM;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len + 1 >= cap) {
			char *nb;

			if (cap >= TP_FORMAT_MAX) {
				*err = -EFBIG;
				goto fail;
			}
			nb = realloc(buf, cap * 2);
			if (!nb) {
				*err = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			*err = -errno;
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

struct psc_tp_format *psc_tp_format__load(const char *sys, const char *name)
{
	struct psc_tp_format *fmt;
	const char *dir;
	char path[4096];
	char *text;
	int err = 0;

	if (!tp_name_ok(sys) || !tp_name_ok(name))
		return psc_errno_null(-EINVAL);
	dir = psc_tracefs__dir();
	if (!dir)
		return NULL; /* ENODEV: not mounted, and loading a format never mounts it */
	if (snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sys, name) >=
	    (int)sizeof(path))
		return psc_errno_null(-ENAMETOOLONG);
	text = read_small_file(path, &err);
	if (!text) {
		pr_debug("cannot read %s: %s\n", path, strerror(-err));
		return psc_errno_null(err);
	}
	fmt = psc_tp_format__parse(text, sys);
	err = fmt ? 0 : -errno;
	free(text);
	if (!fmt)
		pr_warn("tracepoint %s:%s: format not understood (%s)\n", sys, name,
			strerror(-err));
	return fmt ? fmt : psc_errno_null(err);
}

void psc_tp_format__delete(struct psc_tp_format *fmt)
{
	if (!fmt)
		return;
	if (fmt->seq_ready)
		trace_seq_destroy(&fmt->seq);
	/* the event belongs to the tep handle */
	if (fmt->tep)
		tep_free(fmt->tep);
	free(fmt->scratch);
	free(fmt->fields);
	free(fmt->sys);
	free(fmt->name);
	free(fmt);
}

const char *psc_tp_format__system(const struct psc_tp_format *fmt)
{
	return fmt->sys;
}

const char *psc_tp_format__name(const struct psc_tp_format *fmt)
{
	return fmt->name;
}

int psc_tp_format__id(const struct psc_tp_format *fmt)
{
	return fmt->event->id;
}

const struct psc_tp_field *psc_tp_format__field(const struct psc_tp_format *fmt, const char *name)
{
	if (!fmt || !name)
		return psc_errno_null(-EINVAL);
	for (int i = 0; i < fmt->nr_fields; i++)
		if (!strcmp(fmt->fields[i].name, name))
			return &fmt->fields[i];
	return psc_errno_null(-ENOENT);
}

int psc_tp_format__nr_fields(const struct psc_tp_format *fmt)
{
	return fmt->nr_fields;
}

const struct psc_tp_field *psc_tp_format__field_at(const struct psc_tp_format *fmt, int idx)
{
	if (idx < 0 || idx >= fmt->nr_fields)
		return psc_errno_null(-ERANGE);
	return &fmt->fields[idx];
}

/*
 * libtraceevent trusts the record: it follows __data_loc offsets and reads strings up to a NUL.
 * Check every locator against raw_size and hand it a copy with zero padding behind the payload,
 * so nothing it reads can leave our buffer.
 */
static int print_prepare(struct psc_tp_format *fmt, const void *raw, uint32_t raw_size)
{
	const uint32_t pad = 16;

	if (raw_size < fmt->min_size)
		return -EINVAL;
	for (int i = 0; i < fmt->nr_fields; i++) {
		const struct psc_tp_field *f = &fmt->fields[i];
		const void *data;
		uint32_t size;

		if (f->is_dynamic && psc_tp_field__data(f, raw, raw_size, &data, &size))
			return -EINVAL;
	}
	if (fmt->scratch_cap < raw_size + pad) {
		size_t cap = (size_t)raw_size + pad < 256 ? 256 : (size_t)raw_size + pad;
		void *nb = realloc(fmt->scratch, cap);

		if (!nb)
			return -ENOMEM;
		fmt->scratch = nb;
		fmt->scratch_cap = cap;
	}
	memcpy(fmt->scratch, raw, raw_size);
	memset((char *)fmt->scratch + raw_size, 0, pad);
	/* libtraceevent finds the event by common_type: make it ours (synthetic payloads) */
	if (fmt->common_type && fmt->common_type->size == 2) {
		uint16_t id = (uint16_t)fmt->event->id;

		memcpy((char *)fmt->scratch + fmt->common_type->offset, &id, 2);
	}
	return 0;
}

static int seq_to_buf(struct trace_seq *s, char *buf, size_t len)
{
	size_t n;

	if (s->state != TRACE_SEQ__GOOD)
		return -ENOMEM;
	n = s->len;
	/* libtraceevent may end the text with a newline for some events: not ours to print */
	while (n && (s->buffer[n - 1] == '\n'))
		n--;
	if (len) {
		size_t c = n < len - 1 ? n : len - 1;

		memcpy(buf, s->buffer, c);
		buf[c] = '\0';
	}
	return (int)n;
}

/* libtraceevent's resolver: it moves *addrp to the function's start and prints the offset. */
static char *tep_ksym(void *priv, unsigned long long *addrp, char **modp)
{
	struct psc_tp_format *fmt = priv;
	uint64_t start = *addrp;
	const char *name = fmt->ksym_fn(fmt->ksym_priv, *addrp, &start);

	if (!name)
		return NULL;
	*addrp = start;
	*modp = NULL;
	return (char *)name; /* not freed by libtraceevent */
}

int psc_tp_format__set_ksym_resolver(struct psc_tp_format *fmt, psc_tp_ksym_resolver_fn fn,
				     void *priv)
{
	if (!fmt)
		return -EINVAL;
	fmt->ksym_fn = fn;
	fmt->ksym_priv = priv;
	if (!fn) {
		tep_reset_function_resolver(fmt->tep);
		return 0;
	}
	return tep_set_function_resolver(fmt->tep, tep_ksym, fmt) ? -ENOMEM : 0;
}

int psc_tp_format__print(struct psc_tp_format *fmt, const void *raw, uint32_t raw_size, char *buf,
			 size_t len)
{
	struct tep_record rec = { 0 };
	int err;

	if (!fmt || (!raw && raw_size) || (!buf && len))
		return -EINVAL;
	err = print_prepare(fmt, raw, raw_size);
	if (err)
		return err;
	rec.data = fmt->scratch;
	rec.size = (int)raw_size;
	rec.record_size = (int)raw_size;
	rec.cpu = -1;
	trace_seq_reset(&fmt->seq);
	tep_print_event(fmt->tep, &fmt->seq, &rec, "%s", TEP_PRINT_INFO);
	return seq_to_buf(&fmt->seq, buf, len);
}

/* snprintf into buf at *pos, tracking the full length even past the end. */
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

static void put_value(const struct psc_tp_field *f, uint64_t v, char *buf, size_t len, size_t *pos)
{
	if (f->is_pointer)
		put(buf, len, pos, "0x%" PRIx64, v);
	else if (f->is_signed)
		put(buf, len, pos, "%" PRId64, (int64_t)v);
	else
		put(buf, len, pos, "%" PRIu64, v);
}

int psc_tp_field__snprint(const struct psc_tp_field *f, const void *raw, uint32_t raw_size,
			  char *buf, size_t len)
{
	size_t pos = 0;

	if (!f || (!buf && len))
		return -EINVAL;
	if (len)
		buf[0] = '\0';
	if (f->kind == PSC_TP_KIND_STRING) {
		uint32_t n;
		const char *s = psc_tp_field__str(f, raw, raw_size, &n);

		if (!s)
			return -ERANGE;
		put(buf, len, &pos, "%.*s", (int)n, s);
	} else if (f->kind == PSC_TP_KIND_ARRAY) {
		uint32_t n = psc_tp_field__count(f, raw, raw_size);
		const void *data;
		uint32_t size;

		if (psc_tp_field__data(f, raw, raw_size, &data, &size))
			return -ERANGE;
		put(buf, len, &pos, "{");
		for (uint32_t i = 0; i < n; i++) {
			uint64_t v = 0;

			if (f->elem_size == 1 || f->elem_size == 2 || f->elem_size == 4 ||
			    f->elem_size == 8)
				psc_tp_field__elem(f, raw, raw_size, i, &v);
			put(buf, len, &pos, i ? "," : "");
			if (f->elem_size == 1 && !f->is_signed)
				put(buf, len, &pos, "0x%02" PRIx64, v);
			else
				put_value(f, v, buf, len, &pos);
		}
		put(buf, len, &pos, "}");
	} else {
		uint64_t v;
		int err = psc_tp_field__u64(f, raw, raw_size, &v);

		if (err)
			return err;
		put_value(f, v, buf, len, &pos);
	}
	return pos > INT32_MAX ? INT32_MAX : (int)pos;
}
