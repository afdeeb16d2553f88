/* The exporter's log: "ts=... level=... msg=..." lines on stderr; one write(2) per line so threads
 * do not interleave. */
#include "exporter_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/common.h>

static enum xlog_level max_level = XLOG_INFO;

void xlog_set_level(enum xlog_level level)
{
	max_level = level;
}

int xlog_parse_level(const char *s)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

__attribute__((format(printf, 2, 0))) static void vxlog(enum xlog_level level, const char *fmt,
							va_list ap)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };
	char line[2048], msg[1600];
	struct timespec ts;
	struct tm tm;
	size_t n, i, o = 0;

	if (level > max_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "ts=%Y-%m-%dT%H:%M:%S", &tm);
	n += (size_t)snprintf(line + n, sizeof(line) - n, ".%03ldZ level=%s msg=\"",
			      ts.tv_nsec / 1000000, names[level]);
	/* logfmt: quote the message, escaping quotes, backslashes and line breaks. */
	for (i = 0; msg[i] && n + o + 4 < sizeof(line); i++) {
		char c = msg[i];

		if (c == '\n' && !msg[i + 1])
			break;
		if (c == '"' || c == '\\' || c == '\n') {
			line[n + o++] = '\\';
			c = c == '\n' ? 'n' : c;
		}
		line[n + o++] = c;
	}
	n += o;
	line[n++] = '"';
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}

void xlog(enum xlog_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vxlog(level, fmt, ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 0))) static void library_log(enum psc_log_level level,
							      const char *fmt, va_list ap)
{
	vxlog(level == PSC_LOG_WARN   ? XLOG_WARN
	      : level == PSC_LOG_INFO ? XLOG_INFO
				      : XLOG_DEBUG,
	      fmt, ap);
}

void xlog_attach_library(void)
{
	psc_set_log(library_log);
}
