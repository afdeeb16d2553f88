/* Unit tests of common/out/live: a text view on a terminal (a pty here) is redrawn in place but
 * for its final frame, sized by the terminal; JSON, a pipe and a file never are. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <cmocka.h>

#include "live.h"
#include "output.h"

static void test_terminal(void **state)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY), s;
	struct winsize ws = { .ws_row = 40, .ws_col = 100 };
	struct live l;

	if (m < 0 || grantpt(m) || unlockpt(m)) {
		skip(); /* no pseudo-terminals here */
		return;
	}
	s = open(ptsname(m), O_RDWR | O_NOCTTY);
	assert_true(s >= 0);
	assert_int_equal(ioctl(s, TIOCSWINSZ, &ws), 0);
	live__init(&l, s, false);
	assert_true(live__redraws(&l, false));
	assert_false(live__redraws(&l, true)); /* the last frame stays on the screen */
	assert_int_equal(live__rows(&l, 5), 35);
	/* a terminal too small for the headings: all rows, as elsewhere */
	ws.ws_row = 6;
	assert_int_equal(ioctl(s, TIOCSWINSZ, &ws), 0);
	assert_int_equal(live__rows(&l, 5), 0);
	/* JSON on a terminal is a stream of objects, never redrawn */
	live__init(&l, s, true);
	assert_false(live__redraws(&l, false));
	assert_int_equal(live__rows(&l, 5), 0);
	close(s);
	close(m);
}

static void test_pipe_and_clear(void **state)
{
	int p[2];
	struct live l;
	struct out *o;
	char buf[16] = "";

	assert_int_equal(pipe(p), 0);
	live__init(&l, p[1], false);
	assert_false(live__redraws(&l, false));
	assert_int_equal(live__rows(&l, 5), 0);
	live__init(&l, -1, false);
	assert_false(live__redraws(&l, false));
	/* the clear is the cursor home, then the screen erased */
	o = out__new(p[1], 0);
	assert_non_null(o);
	live__clear(o);
	assert_int_equal(out__flush(o), 0);
	out__delete(o);
	assert_int_equal(read(p[0], buf, sizeof(buf) - 1), 7);
	assert_string_equal(buf, "\033[H\033[2J");
	close(p[0]);
	close(p[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_terminal),
		cmocka_unit_test(test_pipe_and_clear),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
