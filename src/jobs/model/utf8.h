/* utf8.h - the UTF-8 checks the job queue makes where text from another
 * program (a BullMQ script, a Node process) meets jansson, which takes
 * only well-formed UTF-8. The one implementation of them: other programs,
 * the `lanes` command among them, call these through the public
 * lanes/jobs_text.h (its calls are at the end of utf8.c). */
#ifndef LN_JOBS_UTF8_H
#define LN_JOBS_UTF8_H

#include <jansson.h>
#include <stddef.h>

/* The bytes of the well-formed UTF-8 sequence at p (left bytes there), as
 * jansson checks them (RFC 3629: no overlong form, no surrogate, at most
 * U+10FFFF), or 0 when p does not start one. left > 0. */
size_t ln__utf8_seq(const unsigned char *p, size_t left);

/* When ln__utf8_seq(p, left) is 0: the length (1..3) of the maximal
 * subpart of an ill-formed sequence at p, the bytes one U+FFFD replaces in
 * Unicode's recommended practice. left > 0. */
size_t ln__utf8_bad(const unsigned char *p, size_t left);

/* at, moved back over the continuation bytes (at most 3) of a sequence a
 * cut there would split, so s[0..result) ends on a character when s is
 * UTF-8. s[at] is read: at < the length, or s NUL-terminated at it. */
size_t ln__utf8_cut(const char *s, size_t at);

/* s[0..n) as a JSON string; when it is not UTF-8, each byte that starts no
 * well-formed sequence becomes U+FFFD (as a UTF-8 decoder reads it) rather
 * than the text being lost. NULL only when out of memory. */
json_t *ln__json_string_lossy(const char *s, size_t n);

#endif
