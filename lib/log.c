/* The library's only global state: the log callback. */
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
