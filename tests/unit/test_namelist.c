/* Unit tests of common/namelist (one summary line of names) and the public suggester's
 * psc_suggest__best and PSC_SUGGEST_PREFIX, through <perfscope/suggest.h> alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <perfscope/suggest.h>

#include "namelist.h"

static void test_namelist(void **state)
{
	struct namelist l;
	char buf[700], name[32];

	(void)state;
	namelist__init(&l, NAMELIST_SHORT);
	assert_string_equal(namelist__str(&l, buf, sizeof(buf)), "");
	namelist__add(&l, "a");
	namelist__add(&l, "bb");
	assert_int_equal(l.nr, 2);
	assert_string_equal(namelist__str(&l, buf, sizeof(buf)), "a, bb");

	/* 344 names: the first ones that fit, in order, then the count of the rest */
	namelist__init(&l, NAMELIST_SHORT);
	for (int i = 0; i < 344; i++) {
		snprintf(name, sizeof(name), "sys_enter_%03d", i);
		namelist__add(&l, name);
	}
	namelist__str(&l, buf, sizeof(buf));
	assert_int_equal(l.nr, 344);
	assert_true(l.more > 300 && l.more < 344);
	assert_true(strlen(buf) < NAMELIST_SHORT + 24);
	assert_non_null(strstr(buf, "sys_enter_000, sys_enter_001, "));
	snprintf(name, sizeof(name), " and %d more", l.more);
	assert_non_null(strstr(buf, name));
	/* a long name that does not fit keeps the later short ones out too: the order holds */
	namelist__init(&l, 16);
	namelist__add(&l, "abc");
	namelist__add(&l, "a-name-too-long-for-it");
	namelist__add(&l, "d");
	assert_string_equal(namelist__str(&l, buf, sizeof(buf)), "abc and 2 more");
	/* a limit past the buffer is the buffer */
	namelist__init(&l, 100000);
	assert_int_equal(l.limit, sizeof(l.buf));
}

static void test_suggest_public(void **state)
{
	struct psc_suggest s;
	char buf[256];

	(void)state;
	psc_suggest__init(&s, "intervall", 9);
	assert_null(psc_suggest__best(&s));
	psc_suggest__add(&s, "interval", "--interval");
	psc_suggest__add(&s, "duration", "--duration");
	assert_string_equal(psc_suggest__best(&s), "--interval");
	psc_suggest__format(&s, buf, sizeof(buf));
	assert_string_equal(buf, PSC_SUGGEST_PREFIX "'--interval'?");
	assert_int_equal(psc_edit_distance("top-bi", 6, "top-by", 6), 1);
	/* nothing close: no suggestion at all */
	psc_suggest__init(&s, "zzzzzz", 6);
	psc_suggest__add(&s, "stack", NULL);
	psc_suggest__format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_namelist),
		cmocka_unit_test(test_suggest_public),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
