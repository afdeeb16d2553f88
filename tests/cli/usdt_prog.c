/* A program with its own SDT notes (as sys/sdt.h writes them, which Debian ships only in
 * systemtap-sdt-dev): test:tick(i, v) with i in a register and v in memory, no semaphore, fired
 * argv[1] times. */
#include <stdlib.h>

#define NOTE(args, ...)                                                                  \
	__asm__ __volatile__("990: nop\n"                                                  \
			     ".pushsection .note.stapsdt,\"?\",\"note\"\n"                 \
			     ".balign 4\n"                                                 \
			     ".4byte 992f-991f, 994f-993f, 3\n"                           \
			     "991: .asciz \"stapsdt\"\n"                                  \
			     "992: .balign 4\n"                                            \
			     "993: .8byte 990b\n"                                          \
			     ".8byte _.stapsdt.base\n"                                     \
			     ".8byte 0\n"                                                  \
			     ".asciz \"test\"\n"                                           \
			     ".asciz \"tick\"\n"                                           \
			     ".asciz \"" args "\"\n"                                       \
			     "994: .balign 4\n"                                            \
			     ".popsection\n"                                               \
			     ".ifndef _.stapsdt.base\n"                                    \
			     ".pushsection .stapsdt.base,\"aG\",\"progbits\",.stapsdt.base,comdat\n" \
			     ".weak _.stapsdt.base\n"                                      \
			     ".hidden _.stapsdt.base\n"                                    \
			     "_.stapsdt.base: .space 1\n"                                  \
			     ".size _.stapsdt.base, 1\n"                                   \
			     ".popsection\n"                                               \
			     ".endif\n" ::__VA_ARGS__)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	volatile long v = 1000;

	for (int i = 0; i < n; i++, v++)
		NOTE("-4@%0 8@%1", "r"(i), "m"(v));
	return 0;
}
