/* `perfscope exporter`: the entry point the perfscope CLI table calls, and its help text. */
#ifndef PERFSCOPE_EXPORTER_EXPORTER_H
#define PERFSCOPE_EXPORTER_EXPORTER_H

/* Usage, options and examples, for --help and `perfscope help exporter`. */
extern const char exporter_help[];

/*
 * argv[0] is "exporter". Serves until SIGTERM/SIGINT. Returns 0 after a clean stop, 2 on a
 * usage error (bad flag, unknown tracepoint or profiler name, bad CPU list, bad web config),
 * 1 on a runtime failure (cannot listen, no event can be opened, cannot drop privileges).
 */
int exporter_main(int argc, char **argv);

#endif
