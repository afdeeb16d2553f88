/* Unit tests of the exporter's profile labels: the container id a cgroup path names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "collectors/cpuprof.h"

#define ID "3f5a0c1d2e4b6a7980f1e2d3c4b5a6978e9f0a1b2c3d4e5f60718293a4b5c6d7"

static void test_container_id(void **state)
{
	static const struct {
		const char *path, *id;
	} cases[] = {
		{ "/system.slice/docker-" ID ".scope", ID },
		{ "/docker/" ID, ID },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234_5678.slice/"
		  "cri-containerd-" ID ".scope",
		  ID },
		{ "/kubepods/besteffort/pod0a1b2c3d-aaaa-bbbb-cccc-0123456789ab/" ID, ID },
		{ "/machine.slice/libpod-" ID ".scope/container", ID },
		{ "/user.slice/user-0.slice/session-3.scope", "" },
		{ "/", "" },
		{ "", "" },
		/* 63 or 65 hex digits, or capitals: not an id */
		{ "/docker/" ID "0", "" },
		{ "/docker/3F5A0C1D2E4B6A7980F1E2D3C4B5A6978E9F0A1B2C3D4E5F60718293A4B5C6D7", "" },
	};
	char out[65];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cpuprof_container_id(cases[i].path, out);
		assert_string_equal(out, cases[i].id);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
