/* C++ and Rust (legacy and v0) symbol demangling through libiberty. */
#ifndef PERFSCOPE_COMMON_DEMANGLE_H
#define PERFSCOPE_COMMON_DEMANGLE_H

#include <stdbool.h>

/* True when name looks mangled (_Z..., _R..., __Z...), i.e. worth passing to demangle_name. */
bool is_mangled(const char *name);

/*
 * Demangled name in malloc'd memory ("foo::bar()", "std::vector<int>::push_back(int const&)",
 * Rust "core::fmt::write"; Rust legacy hashes are dropped), or NULL when name is not mangled
 * or is malformed (errno = EINVAL) or memory ran out (ENOMEM). The caller frees it.
 */
char *demangle_name(const char *name);

#endif
