/* web-config internals shared by webconfig*.c: the parse context and the YAML accessors. */
#ifndef PERFSCOPE_EXPORTER_WEBCONFIG_INTERNAL_H
#define PERFSCOPE_EXPORTER_WEBCONFIG_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "webconfig.h"

struct tls_raw;

/* One parse of a web config: the document, where errors go, and how far it got. */
struct wc_ctx {
	yaml_document_t *doc;
	const char *name;
	const char *base_dir;
	char *err;
	size_t errlen;
	bool failed;
	struct tls_raw *raw; /* tls_server_config as written, before files are read */
};

/*
 * webconfig_yaml.c: YAML accessors. Each reports a problem through wc_yaml__fail, which keeps the
 * first message ("NAME:LINE: what is wrong") and marks the parse failed.
 */
void wc_yaml__fail(struct wc_ctx *c, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A scalar's text, NULL when n is no scalar. */
const char *wc_yaml__scalar(const yaml_node_t *n);
/* YAML null: "~", "null", or nothing at all (a key with no value), unquoted. */
bool wc_yaml__is_null(const yaml_node_t *n);
/* A copy of a string value; NULL with c failed when it is none. */
char *wc_yaml__get_string(struct wc_ctx *c, const yaml_node_t *n, const char *key);
bool wc_yaml__get_bool(struct wc_ctx *c, const yaml_node_t *n, const char *key);
/* Go's time.ParseDuration subset, in ns. */
int64_t wc_yaml__get_duration(struct wc_ctx *c, const yaml_node_t *n, const char *key);
/* Reads a whole (small) file, rel to the config's directory; NULL with c failed on error. */
char *wc_yaml__read_file(struct wc_ctx *c, const yaml_node_t *n, const char *key, const char *rel);

/* Calls fn for each key: value of a mapping node, refusing duplicate keys as yaml.v2 strict does.
 */
typedef void (*wc_pair_fn)(struct wc_ctx *c, struct webconfig *wc, const char *key,
			   yaml_node_t *keynode, yaml_node_t *val);
void wc_yaml__each_pair(struct wc_ctx *c, struct webconfig *wc, yaml_node_t *map, const char *what,
			wc_pair_fn fn);
/* A list of strings (NULL for null), *nr of them; free with wc_yaml__free_list. */
char **wc_yaml__get_string_list(struct wc_ctx *c, yaml_node_t *n, const char *key, int *nr);
void wc_yaml__free_list(char **list, int nr);

/* webconfig_auth.c: true when h is a bcrypt hash as crypt(3) writes it ($2a$/$2b$/$2y$). */
bool wc_auth__bcrypt_valid(const char *h);

#endif
