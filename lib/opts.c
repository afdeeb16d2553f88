/* Option-struct checks: the sz a caller passed against the fields this library knows. */
#include "internal.h"

/*
 * <type>__last_field must name the last member: only tail padding may follow it. A field added
 * without moving the define would otherwise be neither read nor checked.
 */
#define LAST_FIELD_IS_LAST(type)                                                            \
	_Static_assert(sizeof(struct type) - offsetofend(struct type, type##__last_field) < \
			       _Alignof(struct type),                                       \
		       #type "__last_field is not the last member of struct " #type)

LAST_FIELD_IS_LAST(psc_evsel_open_opts);
LAST_FIELD_IS_LAST(psc_evlist_open_opts);
LAST_FIELD_IS_LAST(psc_meter_opts);
LAST_FIELD_IS_LAST(psc_parse_opts);
LAST_FIELD_IS_LAST(psc_ring_opts);
LAST_FIELD_IS_LAST(psc_mmap_opts);
LAST_FIELD_IS_LAST(psc_cpu_topology);

bool psc_opts_valid(const void *opts, size_t known_sz, const char *type_name)
{
	const unsigned char *bytes = opts;
	size_t sz = *(const size_t *)opts;

	if (sz < sizeof(size_t)) {
		pr_warn("%s: sz %zu is too small; declare it with PSC_OPTS()\n", type_name, sz);
		return false;
	}
	/*
	 * A newer caller's fields are fine only while they are zero: this library cannot honour
	 * them. Its tail padding counts too (PSC_OPTS zeroes it), so a field added in what is our
	 * padding today is not ignored silently.
	 */
	for (size_t i = known_sz; i < sz; i++) {
		if (bytes[i]) {
			pr_warn("%s: byte %zu is set, past the last field this libperfscope knows (%zu bytes); this program needs a newer libperfscope\n",
				type_name, i, known_sz);
			return false;
		}
	}
	return true;
}
