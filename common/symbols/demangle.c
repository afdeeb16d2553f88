/* C++ and Rust demangling: libiberty's cplus_demangle (GNU v3, Rust legacy and v0). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "demangle.h"

bool is_mangled(const char *name)
{
	if (!name)
		return false;
	if (name[0] == '_' && name[1] == '_' && name[2] == 'Z')
		return true;
	/* _Z: C++ and Rust legacy; _R: Rust v0 */
	return name[0] == '_' && (name[1] == 'Z' || name[1] == 'R') && name[2];
}

char *demangle_name(const char *name)
{
	char *out;

	if (!is_mangled(name)) {
		errno = EINVAL;
		return NULL;
	}
	if (name[0] == '_' && name[1] == '_')
		name++; /* Mach-O style extra underscore, seen in some cross-built objects */
	/*
	 * DMGL_AUTO lets libiberty recognise Rust legacy symbols (_ZN...17h<hash>E, hash dropped)
	 * and v0 symbols (_R...) as well as C++.
	 */
	out = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!out)
		errno = EINVAL;
	return out;
}
