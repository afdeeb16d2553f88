/* tstate: prev_state bits and letters of sched_switch, probed through its print fmt. */
#include "tstate.h"

#include <errno.h>
#include <string.h>

/* The record size the fields span. */
static uint32_t record_size(struct psc_tp_format *fmt)
{
	uint32_t size = 0;

	for (int i = 0; i < psc_tp_format__nr_fields(fmt); i++) {
		const struct psc_tp_field *g = psc_tp_format__field_at(fmt, i);

		if (g && g->offset + g->size > size)
			size = g->offset + g->size;
	}
	return size;
}

/* "prev_state=S|D+ ==>": the letters printed (up to '+', ' ' or the end) and the '+'. */
static void state_text(const char *text, char *letters, size_t len, int *plus)
{
	const char *s = strstr(text, "prev_state=");
	size_t n = 0;

	*plus = 0;
	letters[0] = 0;
	if (!s)
		return;
	for (s += strlen("prev_state="); *s && *s != ' '; s++) {
		if (*s == '+')
			*plus = 1;
		else if (n + 1 < len)
			letters[n++] = *s;
	}
	letters[n] = 0;
}

int tstate_map__init(struct tstate_map *m, struct psc_tp_format *fmt)
{
	const struct psc_tp_field *f = psc_tp_format__field(fmt, "prev_state");
	char raw[512], text[1024], zero[8];
	uint32_t size;
	int plus;

	memset(m, 0, sizeof(*m));
	if (!f || f->size > 8 || !f->size)
		return -EINVAL;
	size = record_size(fmt);
	if (size > sizeof(raw))
		return -EINVAL;
	/* the value 0 must print as R: else this is not the print fmt we know how to read */
	memset(raw, 0, size);
	if (psc_tp_format__print(fmt, raw, size, text, sizeof(text)) <= 0)
		return -EINVAL;
	state_text(text, zero, sizeof(zero), &plus);
	if (strcmp(zero, "R") || plus)
		return -EINVAL;
	for (int bit = 0; bit < (int)f->size * 8 && bit < TSTATE_MAX_BITS; bit++) {
		uint64_t v = 1ull << bit;
		char letters[8];

		memset(raw, 0, size);
		memcpy(raw + f->offset, &v, f->size); /* little-endian: the low bytes first */
		if (psc_tp_format__print(fmt, raw, size, text, sizeof(text)) <= 0)
			continue;
		state_text(text, letters, sizeof(letters), &plus);
		if (plus && !strcmp(letters, "R")) {
			if (!m->preempt)
				m->preempt = v;
			continue;
		}
		/* a bit outside the printed mask prints R (or nothing): not a state */
		if (!letters[0] || !strcmp(letters, "R") || strchr(letters, '|'))
			continue;
		memcpy(m->letter[bit], letters, strlen(letters) + 1);
		m->known |= v;
	}
	return m->known ? 0 : -ENOENT;
}

int tstate_map__class(const struct tstate_map *m, uint64_t state)
{
	uint64_t named = state & m->known;

	if (!state || (m->preempt && (state & m->preempt)))
		return TSTATE_RUNNABLE;
	if (!named)
		return -1;
	return __builtin_ctzll(named) + 1;
}

const char *tstate_map__letter(const struct tstate_map *m, int cls)
{
	if (cls == TSTATE_RUNNABLE)
		return "R";
	if (cls < 1 || cls > TSTATE_MAX_BITS || !m->letter[cls - 1][0])
		return "?";
	return m->letter[cls - 1];
}

int tstate_map__find(const struct tstate_map *m, const char *s)
{
	for (int bit = 0; bit < TSTATE_MAX_BITS; bit++)
		if (m->letter[bit][0] && !strcmp(m->letter[bit], s))
			return bit + 1;
	return -1;
}
