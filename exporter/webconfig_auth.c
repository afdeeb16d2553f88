/* Request checks of the web config: basic-auth users against bcrypt hashes, the rate limit. */
#include <crypt.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

#include "webconfig_internal.h"

/* bcrypt as crypt(3) writes it: $2a$ / $2b$ / $2y$, two-digit cost 04..31, 53 characters more. */
bool wc_auth__bcrypt_valid(const char *h)
{
	size_t i;
	int cost;

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[6] != '$')
		return false;
	if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
			    h[i]))
			return false;
	return true;
}

static bool ct_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/* SHA-256 over user NUL password NUL hash: the cache key of a successful login. */
static bool auth_digest(const char *user, const char *password, const char *hash,
			unsigned char out[32])
{
	size_t lu = strlen(user), lp = strlen(password), lh = strlen(hash);
	char *buf = malloc(lu + lp + lh + 2);
	int ret;

	if (!buf)
		return false;
	memcpy(buf, user, lu + 1);
	memcpy(buf + lu + 1, password, lp + 1);
	memcpy(buf + lu + lp + 2, hash, lh);
	ret = gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, lu + lp + lh + 2, out);
	explicit_bzero(buf, lu + lp + lh + 2);
	free(buf);
	return ret == 0;
}

/* A valid bcrypt hash of nothing anyone knows, to spend the same time on unknown users. */
static const char dummy_hash[] = "$2b$10$OXwa1EpmGy9dV4ZbzILuE.35YD4L/mxA6xhMADj1vR6jUC6UOemgS";

bool webconfig_check_user(struct webconfig *wc, const char *user, const char *password)
{
	const struct webconfig_user *u = NULL;
	struct crypt_data *cd;
	unsigned char digest[32];
	bool have_digest, ok = false;
	const char *res;
	int i;

	if (!user || !password)
		return false;
	for (i = 0; i < wc->nr_users; i++)
		if (!strcmp(wc->users[i].name, user))
			u = &wc->users[i];
	have_digest = u && auth_digest(user, password, u->hash, digest);
	if (have_digest) {
		pthread_mutex_lock(&wc->lock);
		for (i = 0; i < wc->auth_cache_nr && !ok; i++)
			ok = ct_equal(wc->auth_cache[i], digest, sizeof(digest));
		pthread_mutex_unlock(&wc->lock);
		if (ok)
			return true;
	}
	/*
	 * struct crypt_data is ~32 KiB: too big for a server thread's stack. crypt_rn (libxcrypt)
	 * rather than crypt_r: it returns NULL on failure, and sanitizer runtimes intercept
	 * crypt_r, whose definition then satisfies the link so that --as-needed drops libcrypt and
	 * the interceptor calls a NULL "real" crypt_r.
	 */
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	res = crypt_rn(password, u ? u->hash : dummy_hash, cd, (int)sizeof(*cd));
	ok = u && res && res[0] != '*' && strlen(res) == strlen(u->hash) &&
	     ct_equal(res, u->hash, strlen(u->hash));
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok && have_digest) {
		pthread_mutex_lock(&wc->lock);
		memcpy(wc->auth_cache[wc->auth_cache_next], digest, sizeof(digest));
		wc->auth_cache_next = (wc->auth_cache_next + 1) % WC_AUTH_CACHE;
		if (wc->auth_cache_nr < WC_AUTH_CACHE)
			wc->auth_cache_nr++;
		pthread_mutex_unlock(&wc->lock);
	}
	return ok;
}

bool webconfig_rate_allow(struct webconfig *wc, int64_t now_ns)
{
	bool ok;

	if (!wc->rate_interval_ns)
		return true;
	pthread_mutex_lock(&wc->lock);
	if (!wc->rate_last_ns) {
		wc->rate_tokens = wc->rate_burst;
	} else if (now_ns > wc->rate_last_ns) {
		wc->rate_tokens +=
			(double)(now_ns - wc->rate_last_ns) / (double)wc->rate_interval_ns;
		if (wc->rate_tokens > wc->rate_burst)
			wc->rate_tokens = wc->rate_burst;
	}
	wc->rate_last_ns = now_ns;
	ok = wc->rate_tokens >= 1.0;
	if (ok)
		wc->rate_tokens -= 1.0;
	pthread_mutex_unlock(&wc->lock);
	return ok;
}
