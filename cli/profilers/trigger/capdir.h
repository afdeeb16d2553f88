/* capdir: a directory of captures (files sharing a stem) kept under a disk budget, oldest out. */
#ifndef PERFSCOPE_COMMON_CAPDIR_H
#define PERFSCOPE_COMMON_CAPDIR_H

#include <stddef.h>
#include <stdint.h>

/*
 * A capture is every file of dir named "PREFIX<stamp>...<.ext>": the stem is the name up to its
 * first '.', and stems start with a UTC time stamp, so that sorting names sorts captures by age
 * (captures of earlier runs included: a service restarted keeps its budget).
 */
struct capdir_stats {
	uint64_t removed; /* captures removed to stay under the budget */
	uint64_t removed_bytes;
	uint64_t bytes; /* what the captures held after the last enforce */
	int captures;
};

/*
 * Creates dir (and its parents) when missing. 0 or -errno; a dir that cannot be written is
 * refused here, before anything runs.
 */
int capdir__prepare(const char *dir);
/*
 * Writes into stem (len bytes) "DIR/PREFIXYYYYmmdd-HHMMSS.mmm-TAG" for the wall-clock time
 * realtime_ns, TAG's characters other than [A-Za-z0-9_-] made '_'. snprintf-style return.
 */
int capdir__stem(char *stem, size_t len, const char *dir, const char *prefix, uint64_t realtime_ns,
		 const char *tag);
/*
 * Removes the oldest captures of dir named PREFIX... until they hold at most budget bytes, never
 * the one whose stem is keep (the newest, just written; NULL: none kept). budget 0: no limit,
 * only counts. 0 or -errno (dir unreadable); what was removed is added to st.
 */
int capdir__enforce(const char *dir, const char *prefix, uint64_t budget, const char *keep,
		    struct capdir_stats *st);
/* "100M", "2G", "512k", "1000": bytes, with binary multiples. 0 or -EINVAL. */
int capdir__parse_size(const char *text, uint64_t *bytes);

#endif
