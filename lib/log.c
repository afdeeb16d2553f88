/* The library's only global state: the log callback, plus the option-struct size check. */
#include <stdio.h>

#include "internal.h"

static psc_log_fn log_fn;

psc_log_fn psc_set_log(psc_log_fn fn)
{
	psc_log_fn old = log_fn;

	log_fn = fn;
	return old;
}

void psc_log(enum psc_log_level level, const char *fmt, ...)
{
	va_list ap;

	if (!log_fn)
		return;
	va_start(ap, fmt);
	log_fn(level, fmt, ap);
	va_end(ap);
}

const char *psc_version(void)
{
	return "0.1.0";
}

bool psc_opts_valid(const void *opts, size_t known_sz, const char *type_name)
{
	const unsigned char *bytes = opts;
	size_t sz = *(const size_t *)opts;

	if (sz < sizeof(size_t)) {
		pr_warn("%s: sz %zu is too small; build it with PSC_OPTS()\n", type_name, sz);
		return false;
	}
	/* A newer caller's extra fields are fine only while they are zero (we cannot honour them).
	 */
	for (size_t i = known_sz; i < sz; i++) {
		if (bytes[i]) {
			pr_warn("%s: fields beyond what this libperfscope knows are set; upgrade the library\n",
				type_name);
			return false;
		}
	}
	return true;
}
