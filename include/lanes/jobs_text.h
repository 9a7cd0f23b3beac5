/* lanes/jobs_text.h - part of <lanes/jobs.h>: the UTF-8 checks the job
 * queue makes where text another program wrote (a job program's output,
 * a BullMQ process's data or reasons) meets a JSON library, which takes
 * only well-formed UTF-8. A program that shows or stores such text (the
 * `lanes` command does) checks it as the queue does with these. Include
 * <lanes/jobs.h>, which includes this header.
 *
 * Well-formed is RFC 3629's UTF-8, as jansson checks it: no overlong
 * form, no surrogate (U+D800..U+DFFF), nothing above U+10FFFF. Every call
 * here is a pure function of its arguments: no handle, no allocation, no
 * errno; any thread. */
#ifndef LANES_JOBS_TEXT_H
#define LANES_JOBS_TEXT_H

#include <lanes/jobs.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes (1..4) of the well-formed UTF-8 sequence at p, of which left
 * bytes may be read, or 0 when p does not start one (also when p is NULL
 * or left is 0). An ASCII byte, NUL included, is a sequence of 1. */
LN_EXTERN size_t ln_utf8_seq(const char *p, size_t left);

/* When ln_utf8_seq(p, left) is 0: the bytes (1..3) of the maximal subpart
 * of an ill-formed sequence at p, those one U+FFFD replaces in Unicode's
 * recommended practice ("\xe2\x82" before 'A' is 2, "\xff" is 1). 0 when p
 * starts a well-formed sequence, and when p is NULL or left is 0. */
LN_EXTERN size_t ln_utf8_bad(const char *p, size_t left);

/* Where to cut s (len bytes) at most at bytes so no UTF-8 sequence is
 * split: at, moved back over the continuation bytes (at most 3) of the
 * sequence a cut at at would split, so s[0..result) ends on a whole
 * character when s is UTF-8. len when at >= len; 0 when s is NULL. */
LN_EXTERN size_t ln_utf8_cut(const char *s, size_t len, size_t at);

/* s[0..n) made well-formed: each byte that starts no well-formed sequence
 * becomes U+FFFD ("\xef\xbf\xbd", as a UTF-8 decoder reads it), all else
 * is copied as it is. Returns the result's length in bytes (n when s is
 * UTF-8 already; at most 3 * n), or SIZE_MAX when it and its NUL do not
 * fit a size_t. The result and a terminating NUL are written to out only when
 * size is more than that length; otherwise out is not touched (so a first
 * call with out NULL and size 0 measures). s may be NULL when n is 0. */
LN_EXTERN size_t ln_utf8_lossy(const char *s, size_t n, char *out, size_t size);

#ifdef __cplusplus
}
#endif
#endif /* LANES_JOBS_TEXT_H */
