/* libFuzzer target for the CPU-list parser (psc_cpumap__parse_syntax). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/cpumap.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct psc_parse_error err = { .pos = -1 };
	struct psc_cpumap *map;
	char *str = malloc(size + 1);

	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';
	errno = 0;
	map = psc_cpumap__parse_syntax(str, &err);
	if (map) {
		/* The answer is sorted and free of duplicates. */
		for (int i = 1; i < psc_cpumap__nr(map); i++)
			if (psc_cpumap__cpu(map, i) <= psc_cpumap__cpu(map, i - 1))
				abort();
		psc_cpumap__put(map);
	} else if ((errno != EINVAL && errno != ENOMEM) ||
		   (errno == EINVAL && (!err.msg[0] || err.pos > (int)strlen(str)))) {
		abort();
	}
	free(str);
	return 0;
}
