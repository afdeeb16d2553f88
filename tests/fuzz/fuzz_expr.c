/* libFuzzer target: an expression compiled against a format (a fixture or fuzzed format text) and
 * run over the rest of the input as the record. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "../unit/tp_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const fixtures[] = {
	fmt_sched_switch,	fmt_sched_wakeup,
	fmt_sched_process_exec, fmt_kmalloc,
	fmt_dma_map_sg,		fmt_sys_enter_openat,
	fmt_raw_sys_enter,	fmt_sched_switch_signed_char,
};
#define NR_FIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

static const char *comm(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid & 1 ? "odd" : NULL;
}

static const struct ksyms *no_ksyms(void *ctx)
{
	(void)ctx;
	return NULL; /* ksymbol() then answers "Unknown" */
}

/* The next NUL-terminated piece of the input, copied out (NULL at the end). */
static char *piece(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nul = memchr(*p, 0, (size_t)(end - *p));
	size_t len = nul ? (size_t)(nul - *p) : (size_t)(end - *p);
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	memcpy(s, *p, len);
	s[len] = 0;
	*p += nul ? len + 1 : len;
	return s;
}

/*
 * Input: a byte choosing the format (a fixture, or the text that follows up to a NUL), the
 * expression up to a NUL, then the record's bytes.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const vars[] = { "key", NULL };
	const uint8_t *p = data + 1, *end = data + size;
	struct psc_tp_format *fmt = NULL;
	struct expr_error err;
	struct expr_opts opts = { .vars = vars, .comm = comm, .ksyms = no_ksyms };
	struct psc_sample s = { .cpu = 1, .pid = 2, .tid = 3, .time = 4, .period = 5 };
	char *text = NULL, buf[300];
	struct expr *e;
	struct expr_val v;

	if (!size)
		return 0;
	if (data[0] % (NR_FIXTURES + 1) < NR_FIXTURES) {
		/* the fixtures are parsed once: libtraceevent's parse costs more than the rest */
		static struct psc_tp_format *parsed[NR_FIXTURES];
		unsigned int k = data[0] % (NR_FIXTURES + 1);

		if (!parsed[k])
			parsed[k] = psc_tp_format__parse(fixtures[k], "fuzz");
		opts.fmt = parsed[k];
	} else {
		char *ftext = piece(&p, end);

		fmt = ftext ? psc_tp_format__parse(ftext, "fuzz") : NULL;
		free(ftext);
		opts.fmt = fmt;
	}
	opts.want_int = data[0] & 0x80;
	text = piece(&p, end);
	if (!text)
		goto out;
	e = expr__compile(text, &opts, &err);
	if (!e) {
		/* an error points into the text or nowhere */
		if (err.pos < -1 || err.pos > (int)strlen(text))
			abort();
		goto out;
	}
	expr__set_var(e, 0, 0x1234);
	/* the record as given, and cut short: every read is checked against its size */
	for (uint32_t cut = 0; cut < 2; cut++) {
		uint32_t rsize = (uint32_t)(end - p);

		if (cut)
			rsize /= 2;
		if (!expr__eval(e, p, rsize, &s, &v)) {
			expr_val__snprint(expr__type(e), &v, buf, sizeof(buf));
			if (expr__type(e).kind == EXPR_STR && v.len)
				buf[0] ^= v.s[v.len - 1]; /* touch the last byte handed out */
		}
	}
	expr__delete(e);
out:
	free(text);
	psc_tp_format__delete(fmt);
	return 0;
}
