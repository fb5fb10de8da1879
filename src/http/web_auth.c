/* SPDX-License-Identifier: MIT */
/*
 * Basic-auth checks against the web configuration's bcrypt hashes, with their results
 * remembered: bcrypt is slow by design (~80 ms at cost 10, ~12 s at cost 18), and a scraper
 * sends the same credentials every time while an attacker may send the same wrong ones.
 *
 * Each check first makes a token, the SHA-256-crypt of "user:password" with the
 * configuration's own salt (1000 rounds, well under a millisecond). A token equal to the
 * user's last accepted one is accepted; one among the remembered failures is refused;
 * neither runs bcrypt. Only then does bcrypt run, at most WEB_AUTH_MAX_CHECKS at a time, and
 * its result is remembered. No password is kept, only tokens. A reloaded configuration
 * keeps the salt and each user's accepted token where the user's hash is unchanged
 * (web_config_keep_remembered()): else every reload, a certificate rotation included, sent
 * the scraper back to bcrypt, behind any guesses queued there.
 */
#include "webconfig.h"

#include <crypt.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "webconfig_internal.h"

/* Compares the whole of both strings whatever their contents, so the time does not say
 * where they differ. */
static bool equal_const_time(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b), n = MAX(la, lb);
    unsigned char diff = la != lb;

    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)((i < la ? a[i] : 0) ^ (i < lb ? b[i] : 0));
    return diff == 0;
}

/* What bcrypt reads of a password: its first BCRYPT_PASSWORD_MAX bytes. */
static void bcrypt_head(const char *password, char out[BCRYPT_PASSWORD_MAX + 1]) {
    size_t n = strnlen(password, BCRYPT_PASSWORD_MAX);

    memcpy(out, password, n);
    out[n] = '\0';
}

/* The token of user:password into out (CRYPT_OUTPUT_SIZE), password as bcrypt reads it.
 * 0 or -ENOMEM/-EINVAL. */
static int make_token(const struct web_config *c, const char *user, const char *password,
                      struct crypt_data *cd, char *out) {
    size_t lu = strlen(user), lp = strlen(password);
    char *pair = malloc(lu + lp + 2);
    const char *t;

    if (!pair)
        return -ENOMEM;
    memcpy(pair, user, lu);
    pair[lu] = ':';
    memcpy(pair + lu + 1, password, lp + 1);
    t = c->crypt->rn(pair, c->token_salt, cd, sizeof(*cd));
    explicit_bzero(pair, lu + lp + 2);
    free(pair);
    if (!t || t[0] == '*')
        return -EINVAL;
    (void)snprintf(out, CRYPT_OUTPUT_SIZE, "%s", t);
    return 0;
}

static struct web_user *find_user(struct web_config *c, const char *name) {
    struct web_user *u = NULL;

    /* Every name is compared, so the time does not say which one matched. */
    for (size_t i = 0; i < c->n_users; i++)
        if (strcmp(c->users[i].name, name) == 0)
            u = &c->users[i];
    return u;
}

/* Under the lock: 1 accepted, 0 refused, -ENOENT not remembered. */
static int remembered(struct web_config *c, const struct web_user *u, const char *token) {
    if (u && u->token[0] && equal_const_time(u->token, token))
        return 1;
    for (size_t i = 0; i < WEB_AUTH_FAILURES; i++)
        if (c->failures[i].token[0] && equal_const_time(c->failures[i].token, token)) {
            c->failures[i].used = ++c->clock;
            return 0;
        }
    return -ENOENT;
}

/* Under the lock: the failure replaces the least recently used one. */
static void remember_failure(struct web_config *c, const char *token) {
    struct web_failure *f = &c->failures[0];

    for (size_t i = 1; i < WEB_AUTH_FAILURES && f->token[0]; i++)
        if (!c->failures[i].token[0] || c->failures[i].used < f->used)
            f = &c->failures[i];
    memcpy(f->token, token, sizeof(f->token));
    f->used = ++c->clock;
}

/* The token of the pair and what is remembered of it: 1, 0, or -ENOENT (not remembered;
 * then, with `reserve`, a bcrypt check is counted as running, or -EBUSY when
 * WEB_AUTH_MAX_CHECKS already are). */
static int lookup(struct web_config *c, const char *user, const char *password, bool reserve,
                  struct crypt_data *cd, char token[CRYPT_OUTPUT_SIZE], struct web_user **ret_u) {
    struct web_user *u;
    int r;

    r = make_token(c, user, password, cd, token);
    if (r < 0)
        return r;
    u = find_user(c, user);
    (void)pthread_mutex_lock(&c->lock);
    r = remembered(c, u, token);
    if (r == -ENOENT && reserve) {
        if (c->checks >= WEB_AUTH_MAX_CHECKS)
            r = -EBUSY;
        else
            c->checks++;
    }
    (void)pthread_mutex_unlock(&c->lock);
    *ret_u = u;
    return r;
}

void web_config_keep_remembered(struct web_config *c, struct web_config *old) {
    if (!c || !old || c == old || c->n_users == 0 || old->n_users == 0)
        return;
    /* Only the reload takes two configurations' locks, always in this order. */
    (void)pthread_mutex_lock(&old->lock);
    (void)pthread_mutex_lock(&c->lock);
    memcpy(c->token_salt, old->token_salt, sizeof(c->token_salt));
    for (size_t i = 0; i < c->n_users; i++)
        for (size_t k = 0; k < old->n_users; k++)
            if (strcmp(c->users[i].name, old->users[k].name) == 0 &&
                strcmp(c->users[i].hash, old->users[k].hash) == 0)
                memcpy(c->users[i].token, old->users[k].token, sizeof(c->users[i].token));
    (void)pthread_mutex_unlock(&c->lock);
    (void)pthread_mutex_unlock(&old->lock);
}

int web_config_check_remembered(struct web_config *c, const char *user, const char *password) {
    _cleanup_(freep) struct crypt_data *cd = NULL;
    char token[CRYPT_OUTPUT_SIZE], head[BCRYPT_PASSWORD_MAX + 1];
    struct web_user *u;
    int r;

    if (!c || c->n_users == 0 || !user || !password || strlen(user) > WEB_USER_NAME_MAX)
        return 0;
    cd = calloc(1, sizeof(*cd));
    if (!cd)
        return -ENOMEM;
    bcrypt_head(password, head);
    r = lookup(c, user, head, false, cd, token, &u);
    explicit_bzero(token, sizeof(token));
    explicit_bzero(head, sizeof(head));
    explicit_bzero(cd, sizeof(*cd));
    return r;
}

int web_config_check_password(struct web_config *c, const char *user, const char *password) {
    _cleanup_(freep) struct crypt_data *cd = NULL;
    char token[CRYPT_OUTPUT_SIZE], head[BCRYPT_PASSWORD_MAX + 1];
    struct web_user *u;
    const char *out;
    bool ok;
    int r;

    if (!c || c->n_users == 0 || !user || !password || strlen(user) > WEB_USER_NAME_MAX)
        return 0; /* (no user has such a name: said at load) */
    cd = calloc(1, sizeof(*cd));
    if (!cd)
        return -ENOMEM;
    bcrypt_head(password, head);
    r = lookup(c, user, head, true, cd, token, &u);
    if (r != -ENOENT)
        goto done;

    /* An unknown user is checked against the first user's hash, then refused, so timing
     * does not tell which user names exist where the users' hashes have one cost (with
     * several costs it can, as exporter-toolkit's fixed-cost check can: the costliest
     * would make every unknown name cost that much). */
    out = c->crypt->rn(head, u ? u->hash : c->users[0].hash, cd, sizeof(*cd));
    ok = u && out && out[0] != '*' && equal_const_time(out, u->hash);
    (void)pthread_mutex_lock(&c->lock);
    c->checks--;
    if (ok)
        memcpy(u->token, token, sizeof(token));
    else
        remember_failure(c, token);
    (void)pthread_mutex_unlock(&c->lock);
    r = ok;
done:
    explicit_bzero(token, sizeof(token));
    explicit_bzero(head, sizeof(head));
    explicit_bzero(cd, sizeof(*cd));
    return r;
}
