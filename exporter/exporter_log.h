/* The exporter's log: timestamped logfmt lines on stderr, like node_exporter's, with a level
 * filter. */
#ifndef PERFSCOPE_EXPORTER_LOG_H
#define PERFSCOPE_EXPORTER_LOG_H

enum xlog_level {
	XLOG_ERROR,
	XLOG_WARN,
	XLOG_INFO,
	XLOG_DEBUG,
};

/* Lines above this level are dropped (default XLOG_INFO). */
void xlog_set_level(enum xlog_level level);
/* Parses --log.level (debug, info, warn, error); -1 when unknown. */
int xlog_parse_level(const char *s);
void xlog(enum xlog_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Routes libperfscope's log callback into xlog. */
void xlog_attach_library(void);

#endif
