/* sched_switch's preempted prev_state, found by printing candidate values through the format. */
#include "sched_state.h"

#include <string.h>

/* v as an integer of size bytes at p, in this machine's byte order. */
static int store(char *p, uint32_t size, uint64_t v)
{
	uint8_t u8 = (uint8_t)v;
	uint16_t u16 = (uint16_t)v;
	uint32_t u32 = (uint32_t)v;

	switch (size) {
	case 1:
		memcpy(p, &u8, 1);
		return 0;
	case 2:
		memcpy(p, &u16, 2);
		return 0;
	case 4:
		memcpy(p, &u32, 4);
		return 0;
	case 8:
		memcpy(p, &v, 8);
		return 0;
	}
	return -1;
}

uint64_t sched_switch__preempted_state(struct psc_tp_format *fmt)
{
	const struct psc_tp_field *f = fmt ? psc_tp_format__field(fmt, "prev_state") : NULL;
	char raw[512], text[1024];
	uint32_t size = 0;

	if (!f || f->size > 8 || f->is_string || f->is_array)
		return 0;
	for (int i = 0; i < psc_tp_format__nr_fields(fmt); i++) {
		const struct psc_tp_field *g = psc_tp_format__field_at(fmt, i);

		if (g && g->offset + g->size > size)
			size = g->offset + g->size;
	}
	if (size > sizeof(raw))
		return 0;
	for (int bit = 0; bit < (int)f->size * 8 && bit < 32; bit++) {
		uint64_t v = 1ull << bit;

		memset(raw, 0, size);
		if (store(raw + f->offset, f->size, v))
			return 0;
		if (psc_tp_format__print(fmt, raw, size, text, sizeof(text)) > 0 &&
		    strstr(text, "prev_state=R+ "))
			return v;
	}
	return 0;
}
