/* Unit tests of common/sched_state: the preempted prev_state read from sched_switch formats of
 * 6.18, 5.10 and 4.9 kernels (where it moved from 2048 to 0x100), not assumed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "sched_state.h"
#include "tp_formats.h"

/* sched_switch as a 4.9 kernel writes it: TASK_STATE_MAX 2048 printed as "+" */
static const char fmt_sched_switch_4_9[] =
	"name: sched_switch\n"
	"ID: 287\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:1;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
	"next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
	"REC->prev_state & (2048-1) ? __print_flags(REC->prev_state & (2048-1), \"|\", { 1, \"S\"} "
	", { 2, \"D\" }, { 4, \"T\" }, { 8, \"t\" }, { 16, \"Z\" }, { 32, \"X\" }, { 64, \"x\" }, "
	"{ 128, \"K\" }, { 256, \"W\" }, { 512, \"P\" }, { 1024, \"N\" }) : \"R\", REC->prev_state & "
	"2048 ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

/* a format with no prev_state (another event) */
static const char fmt_no_state[] = "name: sched_wakeup\n"
				   "ID: 9\n" TP_FORMAT_COMMON_FIELDS
				   "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n"
				   "\n"
				   "print fmt: \"pid=%d\", REC->pid\n";

static uint64_t state_of(const char *text)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(text, "sched");
	uint64_t v;

	assert_non_null(fmt);
	v = sched_switch__preempted_state(fmt);
	psc_tp_format__delete(fmt);
	return v;
}

static void t_6_18(void **state)
{
	(void)state;
	assert_int_equal(state_of(fmt_sched_switch), 0x100);
}

static void t_5_10(void **state)
{
	(void)state;
	assert_int_equal(state_of(fmt_sched_switch_signed_char), 0x100);
}

static void t_4_9(void **state)
{
	(void)state;
	assert_int_equal(state_of(fmt_sched_switch_4_9), 2048);
}

static void t_none(void **state)
{
	(void)state;
	assert_int_equal(state_of(fmt_no_state), 0);
	assert_int_equal(sched_switch__preempted_state(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_6_18),
		cmocka_unit_test(t_5_10),
		cmocka_unit_test(t_4_9),
		cmocka_unit_test(t_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
