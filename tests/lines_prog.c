/* A traced command that prints while it runs: N getppid calls, and a short line of its own on the
 * shared stdout every EVERY calls (written at once, unbuffered), for the whole-lines test; then
 * creates DONE, when given, for a test's reader that must start once all calls were made. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n, every, i;
	char line[64];
	int len;

	if (argc < 3 || (n = atol(argv[1])) < 0 || (every = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: lines_prog N EVERY [DONE]\n");
		return 2;
	}
	for (i = 1; i <= n; i++) {
		syscall(SYS_getppid);
		if (i % every == 0) {
			len = snprintf(line, sizeof(line), "lines_prog %ld\n", i);
			if (write(STDOUT_FILENO, line, (size_t)len) != len)
				return 1;
		}
	}
	if (argc > 3) {
		int fd = open(argv[3], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (fd < 0)
			return 1;
		close(fd);
	}
	return 0;
}
